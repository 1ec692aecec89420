"""``check``, ``status``, ``show``, ``diff`` and the console script, on fixtures the SDK
recorded over the loopback server, plus corrupt and debris files."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.cli_support import cli, record
from tests.support.helpers.env import environ_without_vcr, run_captured, temp_dir
from tests.support.helpers.loopback_case import LoopbackTestCase
from tests.support.helpers.paths import ROOT
from vcr_kit._core.schema import problems
from vcr_kit._store.files import write_document

OLD = time.time() - 3600


@pytest.mark.inprocess
class RealFolderTest(LoopbackTestCase):
    maxDiff = None

    def setUp(self) -> None:
        super().setUp()
        self.folder = self.tmp
        record(self.server.url, self.folder, ["Hello there.", "Say more."])
        record(self.server.url, self.folder, ["Stream a story."], stream=True)
        self.files = sorted(self.folder.glob("*.json"))

    def corrupt(self, name: str, doc: object) -> Path:
        path = self.folder / name
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    def test_check_names_each_shape_problem_and_debris(self) -> None:
        plain = next(p for p in self.files if '"events"' not in p.read_text(encoding="utf-8"))
        good = json.loads(plain.read_text(encoding="utf-8"))
        stream = next(p for p in self.files if '"events"' in p.read_text(encoding="utf-8"))
        events = json.loads(stream.read_text(encoding="utf-8"))
        string = self.corrupt("post-v1-messages-00000000000a.json", dict(good, response="hi"))
        no_body = dict(good["response"])
        del no_body["body"]
        bodiless = self.corrupt("post-v1-messages-00000000000b.json", dict(good, response=no_body))
        events["request"]["body"].pop("stream")
        sse = self.corrupt("post-v1-messages-00000000000c.json", events)
        negative = self.corrupt("post-v1-messages-00000000000d.json", dict(good, vcr_kit_format=-1))
        (self.folder / "folder-000000000000.json").mkdir()
        bad_utf8 = self.folder / "bytes-000000000000.json"
        bad_utf8.write_bytes(b'{"vcr_kit_format": 1, "x": "\xff"}')
        dangling = self.folder / "gone-000000000000.json"
        dangling.symlink_to(self.folder / "nowhere")
        temp = self.folder / ".locks" / ".x.json.abc.tmp"
        temp.write_bytes(b"x" * 10)
        os.utime(temp, (OLD, OLD))

        status, out, err = cli("check", str(self.folder))

        self.assertEqual((status, err), (1, ""))
        self.assertEqual(
            out.splitlines(),
            [
                f"{bad_utf8}: Fixture {bad_utf8} is not UTF-8 (byte 28). "
                "Delete it, or re-record it with VCR_MODE=record.",
                f"{self.folder / 'folder-000000000000.json'}: a folder, not a fixture file; "
                "remove or rename it",
                f"{dangling}: cannot be read: No such file or directory",
                f"{string}: response: a string, not an object with a status",
                f"{bodiless}: response: exactly one of body, events, frames, jsonl, text, "
                "base64 is needed (none)",
                f'{sse}: response.events: an SSE answer to a request without "stream": true '
                "(the SDK would parse it as JSON)",
                f"{negative}: Fixture {negative} has format -1, which no vcr_kit writes "
                "(this one reads 1 to 1). Delete it, or re-record it with VCR_MODE=record.",
                f"{temp}: temp file of a writer that is gone (10 bytes)",
                "vcr_kit: 10 fixtures checked, 8 problems",
            ],
        )

    def test_status_counts_by_kind_endpoint_and_model(self) -> None:
        (self.folder / "torn-000000000000.json").write_text("{", encoding="utf-8")
        status, out, _ = cli("status", str(self.folder), "--largest", "1")
        self.assertEqual(status, 1)
        lines = out.splitlines()
        self.assertRegex(lines[0], rf"^{self.folder}/: 4 fixtures, \d+\.\d KB$")
        self.assertEqual(lines[1], "  by kind:")
        self.assertRegex(lines[2], r"^    http\s+3\s+\d+\.\d KB$")
        self.assertRegex(lines[4], r"^    POST /v1/messages\s+3\s+")
        self.assertRegex(lines[6], r"^    claude-opus-4-7\s+3\s+")
        self.assertEqual(lines[7], "  largest:")
        self.assertEqual(
            lines[-4:][1:],
            [
                "  debris: none",
                "  unreadable: 1 (vcr_kit check says why)",
                f"    {self.folder / 'torn-000000000000.json'}",
            ],
        )
        self.assertEqual(lines[-4], f"  unused: unknown for {self.folder}/ (no run recorded)")

    def test_show_joins_a_stream_and_prices_it(self) -> None:
        stream = next(p for p in self.files if '"events"' in p.read_text(encoding="utf-8"))
        status, out, _ = cli("show", str(stream))
        self.assertEqual(status, 0)
        lines = out.splitlines()
        self.assertEqual(
            lines[:8],
            [
                f"=== {stream}",
                "kind: http",
                "--- request",
                "POST /v1/messages",
                "parameters: max_tokens=64, model=claude-opus-4-7, stream=true",
                "[user] Stream a story.",
                "--- answer",
                "status 200",
            ],
        )
        self.assertEqual(
            lines[9:11], ["[assistant] Echo: Stream a story.", "stop_reason: end_turn"]
        )
        self.assertRegex(lines[-1], r"^usage: claude-opus-4-7: input_tokens=\d+.*; \$0\.\d{6}$")
        status, out, _ = cli("show", "--json", str(stream))
        self.assertEqual(json.loads(out), json.loads(stream.read_text(encoding="utf-8")))

    def test_diff_shows_the_request_and_answer_lines_that_differ(self) -> None:
        a, b = self.files[0], self.files[1]
        status, out, _ = cli("diff", str(a), str(b))
        self.assertEqual(status, 1)
        self.assertIn(f"--- {a} (request)", out)
        self.assertIn(f"+++ {b} (response)", out)
        self.assertEqual(
            cli("diff", str(a), str(a))[:2], (0, f"vcr_kit: {a} and {a} are the same\n")
        )


@pytest.mark.inprocess
class ValidateTest(unittest.TestCase):
    def test_each_kind_refuses_what_replay_would_mis_serve(self) -> None:
        http = {"vcr_kit_format": 1, "kind": "http", "request": {"method": "POST", "path": "/v1/x"}}
        name = "post-v1-x-0123456789ab.json"
        table = [
            (
                dict(http, response={"status": True, "body": {}}),
                ["response.status: True is not an HTTP status (100-599)"],
            ),
            (
                dict(http, response={"status": 529, "body": {}}),
                [
                    "response.status: a 529 (overload) depends on the moment, not on the "
                    "request; such an answer is never stored (delete it and record again)"
                ],
            ),
            (
                dict(http, response={"status": 200, "body": {}, "text": ""}),
                [
                    "response: exactly one of body, events, frames, jsonl, text, base64 is needed "
                    "(body, text)"
                ],
            ),
            (
                dict(http, response={"status": 200, "base64": "***"}),
                ["response.base64: not base64"],
            ),
            (
                {
                    "vcr_kit_format": 1,
                    "kind": "stream",
                    "request": {"messages": []},
                    "response": {},
                },
                ["response: an object, not a list of events"],
            ),
            (
                {
                    "vcr_kit_format": 1,
                    "kind": "message",
                    "request": {"messages": []},
                    "response": {"$error": {"status": "400"}},
                },
                ["response.$error.status: '400' is not an error status (400-599)"],
            ),
            (
                {
                    "vcr_kit_format": 1,
                    "kind": "message",
                    "request": {"messages": []},
                    "response": {"$sdk": "os.system", "data": {}},
                },
                ["response.$sdk: 'os.system' is not an anthropic class name"],
            ),
            (
                {"vcr_kit_format": 0, "kind": "generic", "request": 1, "response": 2},
                ["vcr_kit_format: 0 is not a format this vcr_kit reads (1)"],
            ),
            (
                {"vcr_kit_format": 1, "kind": "blob"},
                ["kind: 'blob' is not one of http, message, stream, token_count, generic"],
            ),
        ]
        for doc, expected in table:
            with self.subTest(doc=doc):
                file_name = name if doc.get("kind") == "http" else "a-stream.json"
                if doc.get("kind") == "message":
                    file_name = "abcdef.json"
                self.assertEqual(problems(doc, file_name), expected)


@pytest.mark.child
class DebrisTest(unittest.TestCase):
    def test_the_next_writer_removes_stale_temp_files_and_git_ignores_them(self) -> None:
        folder = temp_dir(self)
        stale = folder / ".old-000000000000.json.x1.tmp"  # where vcr_kit 0.1 wrote them
        young = folder / ".locks" / ".new-000000000000.json.x2.tmp"
        young.parent.mkdir()
        stale.write_text("x", encoding="utf-8")
        young.write_text("x", encoding="utf-8")
        os.utime(stale, (OLD, OLD))
        write_document(
            folder / "a-000000000000.json", {"kind": "generic", "request": 1, "response": 2}
        )
        self.assertFalse(stale.exists())
        self.assertTrue(young.exists())  # may be a live write
        self.assertEqual((folder / ".locks" / ".gitignore").read_text(encoding="utf-8"), "*\n")
        if shutil.which("git"):
            env = environ_without_vcr()
            run_captured(["git", "init", "-q"], cwd=folder, env=env, timeout=30)
            done = run_captured(["git", "add", "-n", "."], cwd=folder, env=env, timeout=30)
            self.assertEqual(done.stdout, "add 'a-000000000000.json'\n")


@pytest.mark.child
class ConsoleScriptTest(unittest.TestCase):
    def test_help_version_and_usage_errors(self) -> None:
        env = environ_without_vcr()
        script = Path(sys.executable).with_name("vcr_kit")
        if script.exists():
            done = run_captured([str(script), "--help"], cwd=ROOT, env=env, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("usage: vcr_kit [-h] [--version] COMMAND ...", done.stdout)
            self.assertNotIn("``", done.stdout)  # plain text, not reST
        done = run_captured(
            [sys.executable, "-m", "vcr_kit", "--version"], cwd=ROOT, env=env, timeout=60
        )
        self.assertEqual(done.stdout, "vcr_kit 0.1.0\n")
        done = run_captured(
            [sys.executable, "-m", "vcr_kit", "list"], cwd=ROOT, env=env, timeout=60
        )
        self.assertEqual(done.returncode, 2)
        self.assertIn("invalid choice: 'list'", done.stderr)
        for command in ("status", "check", "show", "diff", "drift", "unused", "prune", "rekey"):
            status, out, _ = cli(command, "--help")
            self.assertEqual(status, 0)
            self.assertNotIn("``", out)


if __name__ == "__main__":
    unittest.main()
