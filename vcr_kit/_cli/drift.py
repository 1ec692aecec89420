"""Send recorded requests to the live API again and say how each answer moved:
identical, benign (other wording, same structure), regression (stop reason, tool
calls, tool input shape, block kinds, truncation, success against error) or API
drift (fields new, gone or retyped, another content type, SSE event types).

The live API is the host of ANTHROPIC_BASE_URL, else https://api.anthropic.com,
with ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); an OpenAI or Gemini fixture goes to
its provider (OPENAI_BASE_URL / GOOGLE_GEMINI_BASE_URL, else its default host) with
its key (OPENAI_API_KEY; GEMINI_API_KEY or GOOGLE_API_KEY): a provider whose key is
not set is skipped with a line saying so. In CI (CI set) it refuses unless
--allow-ci. The cost is estimated from the recorded usage and the prices before
anything is sent; --budget refuses a run whose estimate is higher, --dry-run prints
the plan and sends nothing. --model NEW (or OLD=NEW) asks another model instead.

Nothing is written unless asked: --update re-records in place every fixture whose
answer differs, --into FOLDER writes every live answer (and a copy of every fixture
whose answer is not written), for the suite to replay. A live answer is written only
under the name of the request that earned it: a request --model changed goes under
its own name (beside the fixture, or in FOLDER), never over the fixture it came from.
An answer about the key or the moment (401, 403, 429, 5xx, an HTML page, no answer)
is "unanswered", never a change. Every answer not written is listed, with why.

Exit status: 0 when no answer regressed or drifted, 1 when one did (or could not be
had), 2 on a usage error or a refusal.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import random
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from filelock import Timeout

from .._core.answer_verdict import IDENTICAL, Verdict, compare_answers
from .._core.config import in_ci, lock_timeout
from .._core.credentials import live_secrets
from .._core.drift_rules import asked_request, destination, unusable
from .._core.paths import display_path
from .._core.schema import FORMAT_KEY, FORMAT_VERSION, problems
from .._ledger.cost import cost_of, price_for
from .._ledger.prices import BATCH_RATE
from .._ledger.run_records import read_runs
from .._store.files import save
from .._store.locks import lock_for
from .._store.scan import scan
from ..errors import VCRError
from ._common import USAGE_ERROR, add_folder, fail, folder_of, plural
from ._drift_report import SKIPPED, UNANSWERED, Row, print_plan, print_report, report_of
from ._drift_targets import Target, provider_of_doc, target_for, targets_text

NAME = "drift"
HELP = "re-send recorded requests to the live API: identical, benign, regression, API drift"

KINDS: Final = ("message", "stream", "token_count", "batch", "other")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)
    pick = parser.add_argument_group("which fixtures")
    pick.add_argument("--select", action="append", default=[], metavar="GLOB",
                      help="a fixture path or glob, relative to the folder (repeat for more)")
    pick.add_argument("--kind", action="append", default=[], choices=KINDS,
                      help="only fixtures of this kind (repeat for more)")
    pick.add_argument("--since", metavar="DATE",
                      help="only fixtures written on or after DATE (YYYY-MM-DD or ISO time)")
    pick.add_argument("--sample", type=_at_least_one, metavar="N",
                      help="send exactly N of the selected requests, picked at random")
    pick.add_argument("--seed", type=int, default=0, help="the --sample pick (default 0)")
    run = parser.add_argument_group("how")
    run.add_argument("--budget", metavar="$X",
                     help="refuse before any call when the estimated cost exceeds X dollars")
    run.add_argument("--jobs", type=_at_least_one, default=4, metavar="N",
                     help="requests in flight at once (default 4)")
    run.add_argument("--model", action="append", default=[], metavar="NEW|OLD=NEW",
                     help="ask another model: every request (NEW) or one model's (OLD=NEW)")
    run.add_argument("--dry-run", action="store_true",
                     help="print the plan and the cost estimate, send nothing")
    run.add_argument("--allow-ci", action="store_true", help="run even when CI is set")
    run.add_argument("--timeout", type=_seconds, default=600.0, metavar="SECONDS",
                     help="seconds per request, above 0 (default 600)")
    out = parser.add_argument_group("what is written")
    out.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE")
    out.add_argument("--update", action="store_true",
                     help="re-record in place every fixture whose live answer differs (a "
                     "request --model changed: under its own name, beside)")
    out.add_argument("--into", metavar="FOLDER",
                     help="write every live answer (and the fixtures not sent) to FOLDER, "
                     "each under its request's own name")


#: A model id as the API and the clouds spell them (``claude-sonnet-4-6``,
#: ``claude-3-5-sonnet@20240620``, ``anthropic.claude-3-5-sonnet-20241022-v2:0``).
_MODEL_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,199}")


def _at_least_one(text: str) -> int:
    """A count of 1 or more (``--jobs``, ``--sample``); argparse names the option."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: not a whole number (say 4)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 or more")
    return value


def _seconds(text: str) -> float:
    """A time-out in seconds: finite and above 0 (0 would fail every request at once)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"{text!r}: not a number of seconds above 0 (say 30 or 2.5)"
        )
    return value


# --------------------------------------------------------------------------- #
# The plan
# --------------------------------------------------------------------------- #


def kind_of(doc: dict[str, Any]) -> str:
    """The kind a user selects by: what the request asks of the API."""
    if doc.get("kind") != "http":
        return str(doc.get("kind"))
    request = doc.get("request") or {}
    path = str(request.get("path", ""))
    body = request.get("body")
    if provider_of_doc(doc) is not None:
        return _provider_kind(path, body)
    if path.rstrip("/") == "/v1/messages":
        return "stream" if isinstance(body, dict) and body.get("stream") is True else "message"
    if path.startswith("/v1/messages/count_tokens"):
        return "token_count"
    if path.startswith("/v1/messages/batches"):
        return "batch"
    return "other"


def _provider_kind(path: str, body: Any) -> str:
    """Another provider's request: a generation is a message or a stream (by its body's
    ``stream``, or Gemini's ``:streamGenerateContent``), a token count is one."""
    if path.endswith(":countTokens"):
        return "token_count"
    if path.endswith(":streamGenerateContent") or (
        isinstance(body, dict) and body.get("stream") is True
    ):
        return "stream"
    if path.endswith(("/chat/completions", "/responses", ":generateContent", "/completions")):
        return "message"
    return "other"


def _skip_reason(doc: dict[str, Any]) -> str | None:
    from .._engine.resend import sendable

    if doc.get("kind") != "http":
        return (
            f"a {doc.get('kind')} cassette keeps only the conversation (no model, no "
            "max_tokens): drift re-sends the HTTP fixtures"
        )
    return sendable(doc.get("request"))


def _since(text: str) -> float:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise VCRError(f"--since {text!r}: not a date (YYYY-MM-DD or an ISO time)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def _budget(text: str) -> float:
    try:
        value = float(text.strip().lstrip("$"))
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise VCRError(f"--budget {text!r}: not an amount of dollars (say 0.50 or $0.50)")
    return value


def _model_map(given: Sequence[str]) -> dict[str, str]:
    """``--model`` values: ``{"*": NEW}`` and ``{OLD: NEW}`` pairs."""
    found: dict[str, str] = {}
    for item in given:
        old, equal, new = item.partition("=")
        old, new = (old.strip(), new.strip()) if equal else ("*", old.strip())
        if not old or not new:
            raise VCRError(f"--model {item!r}: say NEW or OLD=NEW (a model id on each side)")
        for model in {old, new} - {"*"}:
            if not _MODEL_ID.fullmatch(model):
                raise VCRError(
                    f"--model {item!r}: {model!r} is not a model id (letters, digits and "
                    ". _ : @ / + -, such as claude-sonnet-4-6)"
                )
        if found.get(old, new) != new:
            which = "every model" if old == "*" else old
            raise VCRError(
                f"--model {item!r}: {which} is already asked as {found[old]}; give one "
                "new model for each"
            )
        found[old] = new
    return found


def _conflict(args: argparse.Namespace) -> str | None:
    """Why the options asked cannot go together, or None."""
    if args.update and args.into:
        return (
            "--update and --into: --update writes in the fixtures folder, --into in "
            "another; give one"
        )
    if args.dry_run:
        given = [f"--{name}" for name in ("update", "into", "json") if getattr(args, name)]
        if given:
            return (
                f"--dry-run with {' and '.join(given)}: a dry run sends nothing, so it has "
                "nothing to write; drop one"
            )
    return None


def _outputs_refusal(args: argparse.Namespace, folder: Path) -> str | None:
    """Why ``--into`` or ``--json`` cannot be written, said before anything is sent
    (a report lost after the calls were paid for is money gone), or None."""
    if args.into:
        into = Path(args.into)
        if into.exists() and not into.is_dir():
            return f"--into {display_path(into)}: not a folder"
        if into.resolve() == folder.resolve():
            return (
                f"--into {display_path(into)} is the fixtures folder itself: use --update to "
                "re-record in place"
            )
        if folder.resolve() in into.resolve().parents:
            return (
                f"--into {display_path(into)} is inside the fixtures folder "
                f"{display_path(folder)}: its answers would be fixtures of the suite; "
                "give a folder outside it"
            )
    if args.json:
        report = Path(args.json)
        if report.is_dir():
            return f"--json {display_path(report)}: a folder, not a file"
        if not report.resolve().parent.is_dir():
            return f"--json {display_path(report)}: its folder does not exist"
        if folder.resolve() in report.resolve().parents:
            return (
                f"--json {display_path(report)} is inside the fixtures folder "
                f"{display_path(folder)}: check would find a file that is no fixture; "
                "give a file outside it"
            )
    return None


def _selected(
    folder: Path, args: argparse.Namespace, since: float | None
) -> tuple[list[Row], list[str]]:
    """The fixtures asked for (and their kinds), and the files that could not be read."""
    rows: list[Row] = []
    unreadable: list[str] = []
    for fixture in scan(folder):
        relative = fixture.path.relative_to(folder).as_posix()
        if args.select and not any(
            fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(fixture.name, pattern)
            for pattern in (_relative_pattern(folder, p) for p in args.select)
        ):
            continue
        if fixture.doc is None:
            unreadable.append(f"{display_path(fixture.path)}: {fixture.error}")
            continue
        # What replay would refuse is not re-sent or compared either: said, as a file
        # that cannot be read is.
        broken = problems(fixture.doc, fixture.name, replay=True)
        if not isinstance(fixture.doc.get("request"), dict):  # nothing to re-send
            broken.append("request: missing or not an object")
        if broken:
            unreadable.append(f"{display_path(fixture.path)}: {broken[0]}")
            continue
        kind = kind_of(fixture.doc)
        if args.kind and kind not in args.kind:
            continue
        if since is not None and fixture.path.stat().st_mtime < since:
            continue
        rows.append(Row(fixture, relative, kind))
    return rows, unreadable


def _relative_pattern(folder: Path, pattern: str) -> str:
    """A path given from the current folder (``fixtures/post-...json``) as one from
    the fixtures folder; a glob is taken as it is."""
    path = Path(pattern)
    if path.exists():
        try:
            return path.resolve().relative_to(folder.resolve()).as_posix()
        except ValueError:
            return pattern
    return pattern


def _model_for(models: dict[str, str]) -> Any:
    def model_for(old: str) -> str:
        return models.get(old, models.get("*", old))

    return model_for


def _cost(
    entries: Iterable[dict[str, Any]], model_for: Any, unpriced: set[str]
) -> dict[str, float]:
    """Tokens and dollars of usage entries, each at the price of ``model_for(model)``."""
    total = {"input_tokens": 0.0, "output_tokens": 0.0, "usd": 0.0}
    for entry in entries:
        usage = entry.get("usage")
        if not isinstance(usage, dict):
            continue
        model = model_for(str(entry.get("model") or "unknown"))
        if price_for(model) is None:
            unpriced.add(model)
            continue
        cost = cost_of(model, usage)
        prompt = cost.input_tokens + cost.cache_write_tokens + cost.cache_read_tokens
        total["input_tokens"] += prompt
        total["output_tokens"] += cost.output_tokens
        total["usd"] += cost.usd * (BATCH_RATE if entry.get("batch") else 1.0)
    return total


def _tests_of(folder: Path) -> dict[str, list[str]]:
    """fixture name -> the tests that used it, as the run records tell (newest run
    first); empty when they do not."""
    tests: dict[str, list[str]] = {}
    for run in reversed(read_runs([folder])):
        for name, ids in run.tests.get(folder, {}).items():
            for test in sorted(ids):
                if test not in tests.setdefault(name, []):
                    tests[name].append(test)
    return tests


# --------------------------------------------------------------------------- #
# The run
# --------------------------------------------------------------------------- #


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return USAGE_ERROR
    try:  # a bad value is a usage error, said before anything is read or sent
        models = _model_map(args.model)
        budget = _budget(args.budget) if args.budget is not None else None
        since = _since(args.since) if args.since else None
    except VCRError as exc:
        return fail(exc.message, USAGE_ERROR)
    refusal = _conflict(args) or _outputs_refusal(args, folder)
    if refusal is not None:
        return fail(refusal, USAGE_ERROR)
    into = Path(args.into) if args.into else None
    rows, unreadable = _selected(folder, args, since)
    for line in unreadable:
        print(f"vcr_kit: skipped {line}", file=sys.stderr)
    to_send: list[Row] = []
    for row in rows:
        reason = _skip_reason(row.doc)
        if reason is None:
            to_send.append(row)
        else:
            row.verdict, row.reasons = SKIPPED, [reason]
    if args.sample is not None:
        if not 0 < args.sample <= len(to_send):
            return fail(
                f"--sample {args.sample}: {plural(len(to_send), 'request')} can be sent from "
                "this selection; ask for 1 to that many",
                USAGE_ERROR,
            )
        picked = random.Random(args.seed).sample(range(len(to_send)), args.sample)
        chosen = {id(to_send[i]) for i in picked}
        for row in to_send:
            if id(row) not in chosen:
                row.verdict, row.reasons = SKIPPED, ["not in the --sample"]
        to_send = [row for row in to_send if id(row) in chosen]
    model_for = _model_for(models)
    unpriced: set[str] = set()
    for row in to_send:
        row.estimate_usd = _cost(row.doc.get("usage") or [], model_for, unpriced)["usd"]
    estimate = sum(row.estimate_usd for row in to_send)
    targets = {_provider_name(row): target_for(provider_of_doc(row.doc)) for row in to_send}
    target = targets_text(targets[_provider_name(row)] for row in to_send)
    tests = _tests_of(folder)
    for row in rows:
        row.tests = tests.get(row.fixture.name, [])
    unpriced_note = (
        f" (no price for {', '.join(sorted(unpriced))}: counted at $0; add one with "
        "vcr_kit.set_price)"
        if unpriced
        else ""
    )
    if args.dry_run:
        return print_plan(rows, to_send, target, estimate, unpriced=unpriced_note, budget=budget)
    if budget is not None and (estimate > budget or unpriced):
        why = f"no price for {', '.join(sorted(unpriced))}" if unpriced else (
            f"the estimate is ${estimate:.4f}"
        )
        return fail(
            f"drift: {why}, over the --budget of ${budget:.4f}: nothing was sent "
            f"({plural(len(to_send), 'request')} to {target}); raise --budget or narrow "
            "the selection (--sample, --select, --kind, --since)",
            USAGE_ERROR,
        )
    if in_ci() and not args.allow_ci:
        return fail(
            "drift: CI is set: it calls the live API, which CI runs must not; pass "
            "--allow-ci to run it there",
            USAGE_ERROR,
        )
    refusal = _keyless_refusal(targets, to_send, target)
    if refusal is not None:
        return fail(refusal, USAGE_ERROR)
    to_send = [row for row in to_send if targets[_provider_name(row)].credentials is not None]
    _send_all(to_send, targets, model_for, args)
    written = _write(rows, to_send, folder, into, args.update)
    report = report_of(rows, target, models, estimate)
    print_report(rows, report, models)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if written:
        print()
    for line in written:
        print(line)
    return 1 if report["failed"] else 0


def _provider_name(row: Row) -> str:
    """The provider of a row's fixture ("" for Anthropic)."""
    provider = provider_of_doc(row.doc)
    return "" if provider is None else provider.name


def _keyless_refusal(targets: dict[str, Target], to_send: list[Row], target: str) -> str | None:
    """Why nothing can be sent (no selected request's provider has a key), or None:
    then each provider without a key is said on stderr and its rows are skipped, and
    the others are sent."""
    keyless = {name for name, found in targets.items() if found.credentials is None}
    if to_send and all(_provider_name(row) in keyless for row in to_send):
        if keyless == {""}:  # Anthropic's requests only, as before providers came
            return (
                f"drift: no API key: set ANTHROPIC_API_KEY to send the recorded requests to "
                f"{target}"
            )
        return "drift: no API key for any selected request: " + "; ".join(
            _keyless_line(targets[name], to_send) for name in sorted(keyless)
        )
    for name in sorted(keyless):
        print(f"vcr_kit: {_keyless_line(targets[name], to_send)}", file=sys.stderr)
        for row in to_send:
            if _provider_name(row) == name:
                row.verdict = SKIPPED
                row.reasons = [f"no {targets[name].title} key: {targets[name].missing}"]
    return None


def _keyless_line(target: Target, rows: list[Row]) -> str:
    count = sum(1 for row in rows if provider_of_doc(row.doc) == target.provider)
    return (
        f"no {target.title} key: {target.missing} to send its "
        f"{plural(count, 'recorded request')} to {target.url}; skipped"
    )


def _send_all(
    rows: list[Row], targets: dict[str, Target], model_for: Any, args: argparse.Namespace
) -> None:
    from .._engine.resend import Resender

    senders = {
        name: Resender(target.url, target.credentials, args.timeout, target.provider)
        for name, target in targets.items()
        if target.credentials is not None
    }

    def one(row: Row) -> None:
        stored = row.doc["request"]
        row.destination = destination(row.fixture.name, stored, asked_request(stored, model_for))
        sender = senders[_provider_name(row)]
        # The answer's ids are named as a recording under its own name would name them.
        answer = sender.send(row.destination.request, row.destination.name or row.fixture.name)
        unpriced: set[str] = set()
        row.recorded = _cost(row.doc.get("usage") or [], lambda m: m, unpriced)
        row.answer = answer
        if answer.response is not None:
            row.live = _cost(answer.usage, lambda m: m, unpriced)
        reason = unusable(
            answer.response, row.doc.get("response"), answer.failure, row.destination.request
        )
        if reason is not None:
            row.verdict, row.reasons = UNANSWERED, [reason]
            return
        assert answer.response is not None  # ``unusable`` says why when there is none
        verdict: Verdict = compare_answers(
            row.doc["response"], answer.response, row.destination.request
        )
        row.verdict, row.reasons = verdict.verdict, list(verdict.reasons)

    try:
        # At most ``jobs`` requests in flight: the pool's threads are the only senders.
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(one, rows))
    finally:
        for sender in senders.values():
            sender.close()


def _write(
    rows: list[Row], sent: list[Row], folder: Path, into: Path | None, update: bool
) -> list[str]:
    """Write what was asked; returns the lines that say so (none when nothing was
    asked): a line per answer written under another name or not written, with why,
    then the count."""
    if into is None and not update:
        return []
    secrets = live_secrets()
    timeout = lock_timeout()  # the one setting --update uses (not VCR_MODE)
    count = 0
    lines: list[str] = []
    taken: dict[Path, str] = {}  # each file written once: two fixtures may ask one request
    for row in sent:
        path = _target(row, folder, into, update)
        if path is None:
            pass
        elif path in taken:
            row.written = (
                f"not written: {taken[path]} asked the same request, and its answer is "
                f"written to {display_path(path)}"
            )
        else:
            count += _save(row, path, secrets, timeout)
            taken[path] = row.relative
        if row.written.startswith("not written"):
            lines.append(f"{row.relative}: {row.written}")
        elif row.destination is not None and row.destination.changed and row.written:
            lines.append(
                f"{row.relative}: its request with {row.destination.changed} {row.written}"
            )
    copied = 0
    if into is not None:
        for row in rows:
            target = into / row.relative
            if row.written.startswith("written") or target.exists():
                continue  # its live answer is there, under its request's own name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(row.fixture.path, target)
            copied += 1
    where = f" in {display_path(into)}" if into is not None else ""
    refused = sum(1 for row in sent if row.written.startswith("not written"))
    more = f", {refused} not written (why above)" if refused else ""
    more += f", {plural(copied, 'fixture')} copied as recorded" if copied else ""
    return [*lines, f"vcr_kit: wrote {plural(count, 'fixture')}{where}{more}"]


def _target(row: Row, folder: Path, into: Path | None, update: bool) -> Path | None:
    """The file the live answer of ``row`` goes to, or None (``row.written`` then says
    why when it is a refusal; an identical answer under ``--update`` is no refusal)."""
    if row.verdict == UNANSWERED or row.answer is None or row.answer.response is None:
        row.written = "not written: no usable live answer (unanswered: see its reason)"
        return None
    place = row.destination
    assert place is not None  # set before the request was sent
    if place.name is None:
        row.written = f"not written: {place.refusal}"
        return None
    if into is not None:
        return into / Path(row.relative).parent / place.name
    if row.verdict == IDENTICAL and not place.changed:
        return None  # --update: nothing moved
    return row.fixture.path.parent / place.name


def _save(row: Row, path: Path, secrets: list[tuple[str, str]], timeout: float) -> int:
    place, answer = row.destination, row.answer
    assert place is not None  # set before the request was sent
    assert answer is not None
    assert answer.response is not None  # ``_target`` wrote none without one
    doc = {
        "kind": "http",
        "request": place.request,
        "response": answer.response,
        "usage": list(answer.usage),
    }
    found = problems({FORMAT_KEY: FORMAT_VERSION, **doc}, path.name, replay=True)
    if found:
        row.written = f"not written: {found[0]}"
        return 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with lock_for(path).acquire(timeout=timeout):
            save(path, doc, secrets)
    except VCRError as exc:
        row.written = f"not written: {exc.message}"
        return 0
    except Timeout:
        row.written = f"not written: another process holds the lock of {display_path(path)}"
        return 0
    row.written = f"written to {display_path(path)}"
    return 1
