"""Rename every fixture to the name its stored request gets today, with no API call.

After a dehydrate rule is added or the key format changes, the same requests map
to new names, and the suite would miss (and re-record, and pay for) every one. Each
fixture stores its request: rekey dehydrates it again with the current rules,
computes the name (another provider's request gets the provider its path names when
it has none, as the seams key it now, and loses a key= in its query), rewrites the
stored request when the rules changed it (so a
miss's diff compares like with like; the answer is never touched) and renames the
file. Two fixtures that land on one name are merged when their answers are the
same (request ids aside); otherwise both are left as they are and reported as a
conflict (exit status 1). --dry-run only lists.

Rules your tests add in code (vcr_kit.dehydrate.add_rule) must be added here too:
--rules FILE.py or --rules MODULE imports the code that adds them.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from pathlib import Path

from .._core.config import rules_turned_off
from .._core.paths import display_path
from .._core.provider_fixtures import provider_request
from .._core.schema import CannotRekey, Document, rekeyed
from .._store.files import mask_request_ids as masked
from .._store.files import write_document
from .._store.scan import scan
from ..errors import VCRError
from ._common import add_folder, fail, folder_of, plural

NAME = "rekey"
HELP = "rename fixtures after a dehydrate rule or key change (no API call)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)
    parser.add_argument("--dry-run", "-n", action="store_true", help="only list the renames")
    parser.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="FILE_OR_MODULE",
        help="import this first: the code that adds your dehydrate rules (repeatable)",
    )


def load_rules(spec: str) -> None:
    if spec.endswith(".py"):
        path = Path(spec)
        module_spec = importlib.util.spec_from_file_location(f"_vcr_rules_{path.stem}", path)
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"cannot import {spec}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        importlib.import_module(spec)


def _same_answer(a: Document, b: Document) -> bool:
    strip = ("request",)
    return bool(
        masked({k: v for k, v in a.items() if k not in strip})
        == masked({k: v for k, v in b.items() if k not in strip})
    )


def _move(source: Path, target: Path, doc: Document, dry_run: bool) -> str | None:
    """Write ``doc`` at ``target`` and remove ``source``; or why it was refused."""
    if not dry_run:
        try:  # the gate every write passes: a key in the file stops this one, not the rest
            write_document(target, doc)
        except VCRError as exc:
            return exc.message
    verb = "rename" if source != target else "rewrite request of"
    print(f"{verb}  {display_path(source)} -> {target.name}")
    if not dry_run and source != target:
        source.unlink()
    return None


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    for spec in args.rules:
        try:
            load_rules(spec)
        except Exception as exc:  # the user's code: any error, reported in one line
            return fail(f"--rules {spec}: {type(exc).__name__}: {exc}", 2)
    rules_turned_off()  # VCR_DISABLE_RULES, as the tests apply it (a bad name: exit 2)
    fixtures = scan(folder)
    problems: list[str] = []
    plans: dict[Path, list[tuple[Path, Document]]] = {}  # target -> [(source, new doc)]
    for fixture in fixtures:
        if fixture.doc is None:
            problems.append(f"{display_path(fixture.path)}: skipped: {fixture.error}")
            continue
        try:
            # Another provider's fixture keyed as today's seams key it: its provider
            # in the request (a gateway's recording from before), no key= in its query.
            current = {**fixture.doc, "request": provider_request(fixture.doc.get("request"))}
            name, request = rekeyed(current, fixture.name)
        except CannotRekey as exc:
            problems.append(f"{display_path(fixture.path)}: skipped: {exc}")
            continue
        doc = dict(fixture.doc, request=request)
        plans.setdefault(fixture.path.parent / name, []).append((fixture.path, doc))
    docs = {f.path: f.doc for f in fixtures}
    renamed = merged = rewritten = 0
    for target, sources in sorted(plans.items()):
        # The file already at the target (if it maps to itself) is the one to keep.
        sources.sort(key=lambda s: s[0] != target)
        keep_path, keep_doc = sources[0]
        existing = None
        if keep_path != target and target.exists():
            existing = docs.get(target)
        clash = [s for s, d in sources[1:] if not _same_answer(d, keep_doc)]
        if existing is not None and not _same_answer(existing, keep_doc):
            clash.append(keep_path)
        if clash:
            names = ", ".join(display_path(p) for p in sorted({keep_path, *clash}))
            problems.append(
                f"{display_path(target)}: conflict: {names} hold different answers for "
                "one request; keep one by hand, or delete them and record again"
            )
            continue
        if keep_path != target or keep_doc != docs.get(target):
            refused = _move(keep_path, target, keep_doc, args.dry_run)
            if refused is not None:
                problems.append(f"{display_path(keep_path)}: skipped: {refused}")
                continue
            if keep_path != target:
                renamed += 1
            else:
                rewritten += 1
        for source, _doc in sources[1:]:
            print(f"merge   {display_path(source)} -> {target.name} (same answer)")
            if not args.dry_run:
                source.unlink()
            merged += 1
    for line in problems:
        print(line)
    done = "would be " if args.dry_run else ""
    print(
        f"vcr_kit: {plural(len(fixtures), 'fixture')}; {done}{renamed} renamed, "
        f"{merged} merged, {rewritten} rewritten; {plural(len(problems), 'problem')}"
    )
    return 1 if problems else 0
