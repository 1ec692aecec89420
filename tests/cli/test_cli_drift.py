"""``vcr_kit drift``: a small real pytest project records its answers over the loopback
server through the real SDK (messages, a stream, a tool call, a token count, a batch);
then the server "moves" (its ``[[drift:...]]`` markers take effect) and drift re-sends
the recorded requests to it. Every test points ANTHROPIC_BASE_URL at the loopback
server: nothing here reaches the real API."""

from __future__ import annotations

import json
import subprocess
import textwrap
import threading
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.cli_support import KEY, cli, record, run_pytest
from tests.support.helpers.env import patch_env, start_server, temp_dir, working_dir
from tests.support.helpers.paths import ROOT

PROJECT = """
import os

import anthropic
import pytest

# The model every request asks: a migration test replays the suite with another.
MODEL = os.environ.get("MODEL", "claude-opus-4-7")

WEATHER = {
    "name": "get_weather",
    "description": "Current weather at a place.",
    "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}},
}


def client():
    return anthropic.Anthropic(base_url=os.environ["LOOPBACK_URL"], max_retries=0)


def ask(prompt, **extra):
    return client().messages.create(
        model=MODEL, max_tokens=64,
        messages=[{"role": "user", "content": prompt}], **extra,
    )


@pytest.mark.vcr
def test_plain():
    assert ask("Say hi.").content[0].text == "Echo: Say hi."


@pytest.mark.vcr
def test_reworded():
    reply = ask("Greet me. [[drift:reword]]")
    assert reply.stop_reason == "end_turn" and reply.content[0].type == "text"


@pytest.mark.vcr
def test_truncated():
    assert ask("Tell me a story. [[drift:truncate]]").stop_reason == "end_turn"


@pytest.mark.vcr
def test_tool():
    reply = ask("What is the weather in Paris? [[drift:tool]]", tools=[WEATHER])
    call = reply.content[1]
    assert (call.name, call.input) == ("get_weather", {"location": "Paris", "unit": "celsius"})


@pytest.mark.vcr
def test_new_field():
    assert ask("Hello there. [[drift:field]]").stop_reason == "end_turn"


@pytest.mark.vcr
def test_stream():
    with client().messages.stream(
        model=MODEL, max_tokens=64,
        messages=[{"role": "user", "content": "Count to three. [[drift:event]]"}],
    ) as stream:
        assert stream.get_final_message().stop_reason == "end_turn"


@pytest.mark.vcr
def test_count():
    counted = client().messages.count_tokens(
        model=MODEL,
        messages=[{"role": "user", "content": "How long is this? [[drift:count]]"}],
    )
    assert counted.input_tokens > 0


@pytest.mark.vcr
def test_batch():
    batches = client().messages.batches
    params = {"model": MODEL, "max_tokens": 64,
              "messages": [{"role": "user", "content": "Batch hello."}]}
    batch = batches.create(requests=[{"custom_id": "one", "params": params}])
    results = list(batches.results(batch.id))
    assert results[0].result.type == "succeeded"
"""

TESTS = {
    name: f"tests/test_drifting.py::{name}"
    for name in (
        "test_plain",
        "test_reworded",
        "test_truncated",
        "test_tool",
        "test_new_field",
        "test_stream",
        "test_count",
        "test_batch",
    )
}


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every fixture file's bytes (the lock and run-record folders aside)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*.json"))
        if not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }


_MODULE = unittest.TestCase()  # holds the module's cleanups


def tearDownModule() -> None:
    _MODULE.doCleanups()
    # The recording is gone with its server and folder: a class of this module run after
    # another module's (pytest-xdist's --dist loadscope interleaves them) records again.
    for name in ("server", "root", "fixtures"):
        if name in _Recorded.__dict__:
            delattr(_Recorded, name)


class _Recorded(unittest.TestCase):
    """The project, recorded once for the module (by the first class that needs it:
    no test writes into it); the server moved for each test."""

    server: Any
    root: Path
    fixtures: Path

    @classmethod
    def setUpClass(cls) -> None:
        if "root" in _Recorded.__dict__:
            return
        # One recording for the module: a real pytest run of the project (about 4 s).
        server = start_server(_MODULE)
        root = temp_dir(_MODULE)
        (root / "tests").mkdir()
        (root / "tests" / "test_drifting.py").write_text(textwrap.dedent(PROJECT), encoding="utf-8")
        (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n", encoding="utf-8")
        done = run_pytest(root, server.url, VCR_MODE="record")
        assert done.returncode == 0, done.stdout + done.stderr
        _Recorded.server, _Recorded.root, _Recorded.fixtures = server, root, root / "fixtures"

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url, ANTHROPIC_API_KEY=KEY)
        self.server.drifting = True
        self.server.drift_models = set()
        self.server.reset_log()
        self.before = snapshot(self.fixtures)
        self.out = temp_dir(self)

    def drift(self, *args: str) -> tuple[int, str, str]:
        with working_dir(self.root):
            return cli("drift", *args)

    def report(self, *args: str) -> tuple[int, dict[str, Any], str]:
        path = self.out / "report.json"
        status, out, err = self.drift("--json", str(path), *args)
        self.assertEqual(err, "", out)
        return status, json.loads(path.read_text(encoding="utf-8")), out

    def by_test(self, report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
        """test id -> (verdict, reasons) of the one sent fixture each test used."""
        found = {}
        for row in report["fixtures"]:
            if row["verdict"] != "skipped":
                (test,) = row["tests"]
                found[test] = (row["verdict"], row["reasons"])
        return found


@pytest.mark.child
class DriftTest(_Recorded):
    def test_each_verdict_class_from_the_moved_api(self) -> None:
        status, report, out = self.report()
        self.assertEqual(status, 1, out)
        found = self.by_test(report)
        self.assertEqual(found[TESTS["test_plain"]], ("identical", []))
        self.assertEqual(
            found[TESTS["test_reworded"]], ("benign", ["benign: other wording in block 0 (text)"])
        )
        self.assertEqual(found[TESTS["test_truncated"]][0], "regression")
        self.assertEqual(
            found[TESTS["test_truncated"]][1][0],
            "regression: truncated by max_tokens (stop reason was end_turn)",
        )
        self.assertEqual(
            found[TESTS["test_tool"]],
            (
                "regression",
                [
                    "regression: tool get_weather input {location: string, unit: string}"
                    " -> {city: string, days: number}"
                ],
            ),
        )
        self.assertEqual(
            found[TESTS["test_new_field"]],
            ("api drift", ["api drift: new field [message].context_management (object)"]),
        )
        self.assertEqual(
            found[TESTS["test_stream"]],
            (
                "api drift",
                [
                    "api drift: new SSE event type heartbeat",
                    "api drift: SSE event type ping is gone",
                ],
            ),
        )
        self.assertEqual(
            found[TESTS["test_count"]], ("benign", ["benign: values differ: input_tokens"])
        )
        self.assertEqual(found[TESTS["test_batch"]], ("identical", []))
        skipped = [row for row in report["fixtures"] if row["verdict"] == "skipped"]
        self.assertEqual(len(skipped), 2)  # the batch's retrieval and its results
        for row in skipped:
            self.assertEqual(row["tests"], [TESTS["test_batch"]])
        self.assertEqual(report["tests"][TESTS["test_batch"]], "identical")
        self.assertEqual(report["counts"]["regression"], 2)
        self.assertEqual(report["counts"]["api drift"], 2)
        # The table: one row per fixture, the test beside it.
        self.assertRegex(
            out,
            r"(?m)^regression +post-v1-messages-[0-9a-f]{12}\.json +"
            + TESTS["test_tool"].replace(".", r"\.")
            + " +regression: tool ",
        )
        self.assertEqual(len(self.server.log), 8)
        self.assertEqual(snapshot(self.fixtures), self.before)  # nothing written

    def test_an_unmoved_api_is_identical_everywhere_exit_0(self) -> None:
        self.server.drifting = False
        status, report, _ = self.report()
        self.assertEqual(status, 0)
        self.assertEqual(report["counts"]["identical"], 8)
        self.assertFalse(report["failed"])

    def test_the_budget_refuses_before_any_request(self) -> None:
        status, out, err = self.drift("--budget", "$0.000001")
        self.assertEqual(status, 2, out)
        self.assertRegex(
            err,
            r"^vcr_kit: drift: the estimate is \$0\.\d{4}, over the --budget of \$0\.0000: "
            r"nothing was sent \(8 requests to http://127\.0\.0\.1:\d+\); raise --budget or "
            r"narrow the selection \(--sample, --select, --kind, --since\)\n$",
        )
        self.assertEqual(self.server.log, [])
        status, out, err = self.drift("--budget", "1")
        self.assertEqual(status, 1, err)
        self.assertEqual(len(self.server.log), 8)

    def test_dry_run_prints_the_plan_and_sends_nothing(self) -> None:
        status, out, err = self.drift("--dry-run", "--budget", "0.000001")
        self.assertEqual((status, err), (0, ""))
        self.assertRegex(
            out.splitlines()[-1],
            r"^dry run: would send 8 requests to http://127\.0\.0\.1:\d+, estimated \$0\.\d{4}; "
            r"over the --budget of \$0\.0000: a run would be refused; nothing was sent$",
        )
        self.assertEqual(out.splitlines()[0].split(), ["KIND", "FIXTURE", "ESTIMATE"])
        self.assertEqual(self.server.log, [])

    def test_sample_sends_exactly_n_and_kind_selects(self) -> None:
        status, report, _ = self.report("--sample", "3", "--jobs", "2")
        self.assertEqual(len(self.server.log), 3)
        self.assertEqual(sum(report["counts"].values()), 3)
        self.server.reset_log()
        status, report, _ = self.report("--kind", "stream", "--kind", "token_count")
        self.assertEqual(sorted(r["kind"] for r in report["fixtures"]), ["stream", "token_count"])
        self.assertEqual(
            sorted(r.path for r in self.server.log), ["/v1/messages", "/v1/messages/count_tokens"]
        )
        status, _out, err = self.drift("--sample", "9")
        self.assertEqual(
            (status, err),
            (
                2,
                "vcr_kit: --sample 9: 8 requests can be sent from this selection; ask for 1 "
                "to that many\n",
            ),
        )

    def test_refuses_without_a_key_and_in_ci(self) -> None:
        patch_env(self, VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url)
        status, out, err = self.drift()
        self.assertEqual(
            (status, out, err),
            (
                2,
                "",
                "vcr_kit: drift: no API key: set ANTHROPIC_API_KEY to send the recorded "
                f"requests to {self.server.url}\n",
            ),
        )
        status, out, err = self.drift("--dry-run")  # sends nothing: needs no key
        self.assertEqual((status, err), (0, ""))
        patch_env(
            self,
            VCR_REPORT="0",
            ANTHROPIC_BASE_URL=self.server.url,
            ANTHROPIC_API_KEY=KEY,
            CI="true",
        )
        self.assertEqual(self.drift("--dry-run")[0], 0)
        status, out, err = self.drift()
        self.assertEqual(
            (status, out, err),
            (
                2,
                "",
                "vcr_kit: drift: CI is set: it calls the live API, which CI runs must not; "
                "pass --allow-ci to run it there\n",
            ),
        )
        self.assertEqual(self.server.log, [])
        status, _, _ = self.drift("--allow-ci", "--kind", "token_count")
        self.assertEqual(status, 0)
        self.assertEqual(len(self.server.log), 1)

    def test_update_rerecords_what_differs_then_all_is_identical(self) -> None:
        work = temp_dir(self)
        copy = work / "fixtures"
        for relative, data in self.before.items():
            (copy / relative).parent.mkdir(parents=True, exist_ok=True)
            (copy / relative).write_bytes(data)
        with working_dir(self.root):
            status, out, err = cli("drift", str(copy), "--update")
        self.assertEqual(status, 1, err)
        self.assertIn("vcr_kit: wrote 6 fixtures\n", out)
        changed = {k for k, v in snapshot(copy).items() if self.before[k] != v}
        self.assertEqual(len(changed), 6)  # everything but the plain answer and the batch
        with working_dir(self.root):
            status, out, err = cli("drift", str(copy))
        self.assertEqual(status, 0, out + err)
        self.assertIn("8 identical;", out)
        self.assertEqual(snapshot(self.fixtures), self.before)

    def test_migration_into_a_folder_replays_to_show_what_breaks(self) -> None:
        self.server.drifting = False
        self.server.drift_models = {"claude-sonnet-4-6"}
        into = self.out / "sonnet"
        status, report, out = self.report(
            "--model", "claude-opus-4-7=claude-sonnet-4-6", "--into", str(into)
        )
        self.assertEqual(status, 1)
        self.assertEqual({self.server.log[0].json().get("model")}, {"claude-sonnet-4-6"})
        self.assertEqual(
            {t for t, v in report["tests"].items() if v == "regression"},
            {TESTS["test_truncated"], TESTS["test_tool"]},
        )
        self.assertRegex(
            out,
            r"(?m)^tokens: recorded \d+ in / \d+ out, \$\d+\.\d{4}; "
            r"claude-opus-4-7=claude-sonnet-4-6 \d+ in / \d+ out, \$\d+\.\d{4}$",
        )
        self.assertRegex(
            out,
            r"(?m)^vcr_kit: wrote 8 fixtures in .+, 2 fixtures copied as "
            r"recorded$",
        )
        self.assertEqual(snapshot(self.fixtures), self.before)
        # Each answer is written under the name of the request that asked Sonnet, holding
        # that request (check finds nothing); the two not sent are copied as recorded.
        written = snapshot(into)
        self.assertEqual(len(written), 10)
        self.assertEqual(len(set(written) & set(self.before)), 2)
        self.assertEqual(
            cli("check", str(into))[:2], (0, "vcr_kit: 10 fixtures checked, 0 problems\n")
        )
        for row in report["fixtures"]:
            if row["verdict"] != "skipped":
                self.assertRegex(row["written"], r"^written to .+-[0-9a-f]{12}\.json$")
                self.assertNotIn(row["fixture"], row["written"])
        # The suite asking Sonnet, replayed from the new answers, fails where they
        # regressed, and where a batch made by Opus is looked up (Sonnet's never was).
        done = run_pytest(
            self.root,
            self.server.url,
            "-rf",
            VCR_MODE="replay",
            VCR_FIXTURES_DIR=str(into),
            MODEL="claude-sonnet-4-6",
        )
        failed = sorted(
            line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")
        )
        self.assertEqual(
            failed,
            [TESTS["test_batch"], TESTS["test_tool"], TESTS["test_truncated"]],
            done.stdout,
        )


@pytest.mark.child
class DiffVerdictTest(_Recorded):
    """``vcr_kit diff`` and ``vcr_kit.compare`` on the answers drift brought back."""

    def copy_of_fixtures(self, where: Path) -> Path:
        for relative, data in self.before.items():
            (where / relative).parent.mkdir(parents=True, exist_ok=True)
            (where / relative).write_bytes(data)
        return where

    def test_diff_of_two_folders_and_of_two_files(self) -> None:
        into = self.out / "moved"
        status, _, _ = self.drift("--into", str(into))
        self.assertEqual(status, 1)
        with working_dir(self.root):
            status, out, err = cli("diff", "fixtures", str(into))
        self.assertEqual((status, err), (1, ""))
        lines = out.splitlines()
        self.assertEqual(lines[-1], "vcr_kit: 2 regression, 2 api drift, 2 benign")
        self.assertEqual(len(lines), 7)
        truncated = next(line for line in lines if "truncated" in line)
        self.assertRegex(
            truncated,
            r"^regression  post-v1-messages-[0-9a-f]{12}\.json: regression: truncated by "
            r"max_tokens \(stop reason was end_turn\); benign: other wording in block 0 \(text\)$",
        )
        name = truncated.split()[1].rstrip(":")
        status, out, _ = cli("diff", str(self.fixtures / name), str(into / name))
        self.assertEqual(status, 1)
        self.assertIn(
            "verdict: regression\n  regression: truncated by max_tokens (stop reason was "
            "end_turn)\n  benign: other wording in block 0 (text)\n",
            out + "\n",
        )
        import vcr_kit

        verdict = vcr_kit.compare_fixtures(self.fixtures / name, into / name)
        self.assertEqual((verdict.verdict, verdict.failed), ("regression", True))
        same = vcr_kit.compare_fixtures(self.fixtures / name, self.fixtures / name)
        self.assertEqual((same.verdict, same.reasons, same.failed), ("identical", (), False))
        status, out, _ = cli("diff", str(self.fixtures), str(self.fixtures))
        self.assertEqual(
            (status, out),
            (0, f"vcr_kit: {self.fixtures} and {self.fixtures} hold the same fixtures\n"),
        )

    def test_diff_of_two_git_revisions(self) -> None:
        repo = temp_dir(self)
        fixtures = self.copy_of_fixtures(repo / "fixtures")
        env = {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        }
        patch_env(
            self, VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url, ANTHROPIC_API_KEY=KEY, **env
        )
        for words in (["init", "-q"], ["add", "fixtures"], ["commit", "-qm", "recorded"]):
            subprocess.run(["git", *words], cwd=repo, check=True, capture_output=True)
        with working_dir(repo):
            status, _, _ = cli("drift", "--update", "--kind", "message")
            self.assertEqual(status, 1)
            status, out, err = cli("diff", "--git", "HEAD")
        self.assertEqual((status, err), (1, ""))
        self.assertEqual(out.splitlines()[-1], "vcr_kit: 2 regression, 1 api drift, 1 benign")
        with working_dir(repo):
            subprocess.run(
                ["git", "commit", "-qam", "re-recorded"], check=True, capture_output=True
            )
            status, out, _ = cli("diff", "--git", "HEAD~1", "HEAD")
            self.assertEqual(out.splitlines()[-1], "vcr_kit: 2 regression, 1 api drift, 1 benign")
            self.assertEqual(
                cli("diff", "--git", "HEAD")[:2],
                (0, "vcr_kit: HEAD and the working tree hold the same fixtures\n"),
            )
            status, out, err = cli("diff", "--git", "nonesuch")
        self.assertEqual(status, 2)
        self.assertRegex(err, r"^vcr_kit: diff --git: fatal: .*nonesuch.*\n$")
        self.assertEqual(fixtures, repo / "fixtures")


@pytest.mark.child
class JobsTest(_Recorded):
    def test_jobs_bounds_the_requests_in_flight_and_sends_them_in_parallel(self) -> None:
        # Each request waits at the server for one other: a drift that sent one at a
        # time would break the barrier (its timeout), one that sent more than --jobs
        # would show in most_in_flight.
        self.server.meet = threading.Barrier(2, timeout=30)
        self.server.most_in_flight = 0
        self.addCleanup(setattr, self.server, "meet", None)
        status, report, _ = self.report("--jobs", "2")
        self.assertEqual(status, 1)
        self.assertEqual(report["counts"]["unanswered"], 0)
        self.assertEqual(len(self.server.log), 8)
        self.assertEqual(self.server.most_in_flight, 2)

    def test_since_selects_by_when_the_fixture_was_written(self) -> None:
        status, out, _ = self.drift("--dry-run", "--since", "2999-01-01")
        self.assertEqual(status, 0)
        self.assertRegex(out.splitlines()[-1], r"^dry run: would send 0 requests to ")
        status, out, _ = self.drift("--dry-run", "--since", "2000-01-01T00:00:00")
        self.assertRegex(out.splitlines()[-1], r"^dry run: would send 8 requests to ")
        self.assertEqual(
            self.drift("--since", "last week")[::2],
            (2, "vcr_kit: --since 'last week': not a date (YYYY-MM-DD or an ISO time)\n"),
        )
        self.assertEqual(self.server.log, [])


@pytest.mark.inprocess
class SecretTest(unittest.TestCase):
    def test_update_never_writes_a_live_answer_with_a_key_in_it(self) -> None:
        server = start_server(self)
        folder = temp_dir(self)
        patch_env(self, VCR_REPORT="0", VCR_MODE="record")
        record(server.url, folder, ["Tell me the key. [[drift:secret]]"])
        before = snapshot(folder)
        patch_env(self, VCR_REPORT="0", ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        server.drifting = True
        status, out, err = cli(
            "drift", str(folder), "--update", "--json", str(folder.parent / f"{folder.name}.json")
        )
        self.assertEqual(status, 0, err)  # a benign rewording, refused at the write
        # The text report says why nothing was written, not only that nothing was.
        self.assertIn("vcr_kit: wrote 0 fixtures, 1 not written (why above)\n", out)
        row = json.loads((folder.parent / f"{folder.name}.json").read_text())["fixtures"][0]
        self.assertEqual(row["verdict"], "benign")
        self.assertRegex(row["written"], r"^not written: .*(secret|key)")
        self.assertIn(f"\n{row['fixture']}: {row['written']}\n", out)
        self.assertEqual(snapshot(folder), before)


@pytest.mark.child
class SelectionTest(_Recorded):
    def test_select_takes_paths_and_globs(self) -> None:
        name = sorted(p.name for p in self.fixtures.glob("post-v1-messages-count-tokens-*"))[0]
        status, out, _ = self.drift("--dry-run", "--select", f"fixtures/{name}")
        self.assertEqual(status, 0)
        self.assertEqual(out.splitlines()[1].split()[:2], ["token_count", name])
        self.assertRegex(out.splitlines()[-1], r"^dry run: would send 1 request to ")
        status, out, _ = self.drift("--dry-run", "--select", "post-v1-messages-batches-*")
        self.assertEqual(status, 0)
        self.assertRegex(out.splitlines()[-1], r"^dry run: would send 1 request to ")
        self.assertEqual(self.server.log, [])

    def test_an_answer_the_request_did_not_earn_is_unanswered_exit_1(self) -> None:
        self.server.refused_keys.add(KEY)
        self.addCleanup(self.server.refused_keys.discard, KEY)
        status, report, _ = self.report("--kind", "token_count")
        self.assertEqual(status, 1)
        (row,) = report["fixtures"]
        self.assertEqual(row["verdict"], "unanswered")
        self.assertEqual(
            row["reasons"],
            [
                "a 401 (authentication failure) depends on the key, not on the request: not a "
                "change of the answer, run again"
            ],
        )

    def test_cassette_fixtures_are_listed_as_skipped(self) -> None:
        folder = temp_dir(self)
        repository = ROOT
        cassette = repository / "fixtures" / "sdk_cassette" / "e5c947-stream.json"
        (folder / cassette.name).write_bytes(cassette.read_bytes())
        status, out, err = cli("drift", str(folder), "--dry-run")
        self.assertEqual((status, err), (0, ""))
        self.assertIn(
            "skip  e5c947-stream.json: a stream cassette keeps only the conversation (no "
            "model, no max_tokens): drift re-sends the HTTP fixtures\n",
            out,
        )
