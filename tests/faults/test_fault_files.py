"""Fixture files vcr_kit did not write as they are named, or not at all (issue 15).

The name is the request: a fixture copied, renamed or edited to answer another request
is refused on replay and reported by ``check``, naming the file and the name its stored
request has (on main it was served, and 10,000 such copies passed ``check``).

No traceback from a file: a fixture nested thousands deep, a named pipe called
``*.json`` (on main ``check`` and ``status`` waited for a writer forever), a file too
large to be a fixture, a link out of the folder, a key found while ``rekey`` rewrites a
file, a live answer that could not be stored (on main blamed on a fixture that does not
exist). A miss's hint reads a bounded amount of the folder (on main a 1 GB neighbour
was read whole).

The fixtures folder: one that is a file, or that vcr_kit may not read, is a
``ConfigError`` naming it (on main: "Fixture missing").
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import tracemalloc
import unittest
from pathlib import Path
from typing import Any

import anthropic
import pytest

import vcr_kit
from tests.faults.test_fault_errors import ThreeClientsTestCase
from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import (
    environ_without_vcr,
    patch_env,
    run_captured,
    temp_dir,
    working_dir,
)
from tests.support.helpers.loopback_case import create
from tests.support.helpers.paths import ROOT
from vcr_kit._core.fixture_names import fixture_name, http_name
from vcr_kit._ledger.journal import Event, journal

#: Generous: a process that reads a named pipe waits forever; one that does not is
#: done in a few seconds (most of it importing the SDK).
CHILD_TIMEOUT = 120
#: The largest fixture vcr_kit reads (``vcr_kit._store.files.MAX_FIXTURE_BYTES``).
MAX_FIXTURE_BYTES = 512 * 1024 * 1024


def copied_message(path: Path, other: str) -> str:
    return (
        f"Fixture {path} holds the answer to another request: its stored request is named "
        f"{other}, not {path.name} (the file was copied, renamed or edited by hand). Delete "
        "it and record again, or rename it to the name of its request."
    )


def check_line(path: Path, other: str) -> str:
    return (
        f"{path}: name: the stored request is named {other}, not {path.name}: this file "
        "answers another request (copied, renamed or edited by hand). Delete it and record "
        "again, or rename it if it is the right answer"
    )


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def record_generic(folder: Path, question: Any, answer: Any) -> Path:
    with vcr_kit.fixture(question, "answer", mode="record", fixtures_dir=folder) as f:
        f.play(lambda: answer)
    return folder / fixture_name(question, "answer")


def replay_generic(folder: Path, question: Any) -> Any:
    def never() -> Any:
        raise AssertionError("replay mode called the function")

    with vcr_kit.fixture(question, "answer", mode="replay", fixtures_dir=folder) as f:
        return f.play(never)


@pytest.mark.inprocess
class CopiedHttpFixtureTest(ThreeClientsTestCase):
    def test_a_copy_under_another_requests_name_is_refused_by_every_client(self) -> None:
        first = self.record("First question")
        second = self.record("Second question")
        shutil.copyfile(first, second)
        message = copied_message(second, first.name)
        for how, play in self.each_client():
            for mode in ("auto", "replay"):
                with self.subTest(how=how, mode=mode):
                    got = play("Second question", mode)
                    self.assert_as_itself(got, how, vcr_kit.FixtureCorruptError, message)
        self.assertEqual(self.server.log, [])  # nothing re-recorded behind the error

    def test_a_fixture_edited_to_hold_another_prompt_is_refused(self) -> None:
        path = self.record("Edited question")
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["request"]["body"]["messages"][0]["content"] = "Something else"
        path.write_text(json.dumps(doc), encoding="utf-8")
        stored = http_name("POST", "/v1/messages", doc["request"])
        got = self.via_client("Edited question", "replay")
        self.assert_as_itself(
            got, "client", vcr_kit.FixtureCorruptError, copied_message(path, stored)
        )

    def test_untouched_fixtures_and_a_query_still_replay(self) -> None:
        with vcr_kit.client(
            mode="record", fixtures_dir=self.fixtures, base_url=self.server.url, api_key=self.key
        ) as client:
            create(client, "Plain question")
            pages = [m.id for m in client.models.list(limit=2)]
        self.server.reset_log()
        with vcr_kit.client(
            mode="replay", fixtures_dir=self.fixtures, base_url=self.server.url, max_retries=0
        ) as client:
            self.assertTrue(create(client, "Plain question").content[0].text)
            self.assertEqual([m.id for m in client.models.list(limit=2)], pages)
        self.assertEqual(self.server.log, [])


@pytest.mark.inprocess
class CopiedCassetteFixtureTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self)

    def test_a_copied_generic_fixture_is_refused_naming_both(self) -> None:
        first = record_generic(self.folder, {"q": 1}, {"a": 1})
        second = self.folder / fixture_name({"q": 2}, "answer")
        shutil.copyfile(first, second)
        with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
            replay_generic(self.folder, {"q": 2})
        self.assertEqual(str(caught.exception), copied_message(second, first.name))
        self.assertEqual(caught.exception.path, second)
        self.assertEqual(replay_generic(self.folder, {"q": 1}), {"a": 1})  # the original

    def test_a_fixture_without_its_request_is_refused(self) -> None:
        path = record_generic(self.folder, {"q": 1}, {"a": 1})
        doc = json.loads(path.read_text(encoding="utf-8"))
        del doc["request"]
        path.write_text(json.dumps(doc), encoding="utf-8")
        with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
            replay_generic(self.folder, {"q": 1})
        self.assertEqual(
            str(caught.exception),
            f"Fixture {path} holds no request that can be named, so nothing says it answers "
            "this one. Delete it and record again.",
        )

    def test_a_renamed_message_cassette_is_refused(self) -> None:
        def answer() -> Any:
            return {"text": "hello"}

        with vcr_kit.cassette(
            [{"role": "user", "content": "Hi"}], mode="record", fixtures_dir=self.folder
        ) as c:
            c.play(answer)
            original = c.path
        with vcr_kit.cassette(
            [{"role": "user", "content": "Bye"}], mode="replay", fixtures_dir=self.folder
        ) as c:
            target = c.path
            original.rename(target)
            with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                c.play(answer)
        self.assertEqual(str(caught.exception), copied_message(target, original.name))

    def test_the_name_decides_not_the_roles(self) -> None:
        # A cassette's name hashes the messages' content, not their roles: a file
        # recorded with other roles is the same request by name, and still replays.
        with vcr_kit.cassette(
            [{"role": "user", "content": "Hi"}], mode="record", fixtures_dir=self.folder
        ) as c:
            c.play(lambda: {"text": "hello"})
        with vcr_kit.cassette(
            [{"role": "assistant", "content": "Hi"}], mode="replay", fixtures_dir=self.folder
        ) as c:
            self.assertEqual(c.play(lambda: None), {"text": "hello"})

    def test_a_token_count_fixture_under_another_name_is_refused(self) -> None:
        count = {"input_tokens": 12}
        with vcr_kit.token_count_cassette(
            [{"role": "user", "content": "One"}], mode="record", fixtures_dir=self.folder
        ) as c:
            c.play(lambda: anthropic.types.MessageTokensCount(**count))
            original = c.path
        with vcr_kit.token_count_cassette(
            [{"role": "user", "content": "Two"}], mode="replay", fixtures_dir=self.folder
        ) as c:
            shutil.copyfile(original, c.path)
            with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                c.play(lambda: None)
        self.assertEqual(str(caught.exception), copied_message(c.path, original.name))

    def test_a_token_count_replays_on_another_machine_and_run(self) -> None:
        # Its name is keyed with machine and moment folded away (cwd, its slug, UUIDs,
        # timestamps) while the file keeps the request as sent: the stored request
        # differs from the live one, and must still be judged by its name.
        def messages(cwd: Path, session: str, when: str) -> list[dict[str, str]]:
            slug = re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
            text = f"Project {cwd}, memory in ~/.claude/projects/{slug}, {session} at {when}"
            return [{"role": "user", "content": text}]

        first, second = temp_dir(self) / "alice-project", temp_dir(self) / "bob-work"
        first.mkdir()
        second.mkdir()
        with working_dir(first):
            with vcr_kit.token_count_cassette(
                messages(first, "0b7f9d3e-1c2a-4e5f-8a9b-0c1d2e3f4a5b", "2025-01-01T10:00:00Z"),
                mode="record",
                fixtures_dir=self.folder,
            ) as c:
                c.play(lambda: anthropic.types.MessageTokensCount(input_tokens=12))
        with working_dir(second):
            with vcr_kit.token_count_cassette(
                messages(second, "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "2026-06-30T23:59:59Z"),
                mode="replay",
                fixtures_dir=self.folder,
            ) as c:
                self.assertEqual(c.play(lambda: None).input_tokens, 12)
        self.assertEqual(cli("check", str(self.folder))[0], 0)

    def test_check_reports_every_copy(self) -> None:
        first = record_generic(self.folder, {"q": 0}, {"a": 0})
        copies = [self.folder / fixture_name({"q": i}, "answer") for i in range(1, 301)]
        for copy in copies:
            shutil.copyfile(first, copy)
        status, out, _ = cli("check", str(self.folder))
        self.assertEqual(status, 1)
        lines = out.splitlines()
        self.assertEqual(
            sorted(lines[:-1]), sorted(check_line(copy, first.name) for copy in copies)
        )
        self.assertEqual(lines[-1], "vcr_kit: 301 fixtures checked, 300 problems")

    def test_rekey_leaves_fixtures_that_pass_check(self) -> None:
        record_generic(self.folder, {"q": 1}, {"a": 1})
        renamed = self.folder / "answer-000000000000.json"
        (self.folder / fixture_name({"q": 1}, "answer")).rename(renamed)
        self.assertEqual(cli("check", str(self.folder))[0], 1)
        self.assertEqual(cli("rekey", str(self.folder))[0], 0)
        self.assertEqual(
            cli("check", str(self.folder))[:2], (0, "vcr_kit: 1 fixtures checked, 0 problems\n")
        )
        self.assertEqual(replay_generic(self.folder, {"q": 1}), {"a": 1})


@pytest.mark.inprocess
class DeepFixtureTest(unittest.TestCase):
    """Depths on both sides of where Python's recursion limit used to bite: in the JSON
    parser itself (thousands; 3.13's parser goes further) and in the walks after it
    (hundreds)."""

    DEPTHS = (300, 400, 950, 5000, 100_000)

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self)
        self.path = record_generic(self.folder, {"q": 1}, {"a": 1})
        self.original = self.path.read_text(encoding="utf-8")

    def deepen(self, depth: int) -> None:
        self.path.write_text(
            self.original.replace('"a": 1', f'"a": {nested(depth)}'), encoding="utf-8"
        )

    def test_replay_of_a_deep_fixture_is_a_fixture_error_or_the_answer(self) -> None:
        for depth in self.DEPTHS:
            with self.subTest(depth=depth):
                self.deepen(depth)
                try:
                    got = replay_generic(self.folder, {"q": 1})
                except vcr_kit.FixtureCorruptError as exc:
                    self.assertEqual(exc.path, self.path)
                else:
                    self.assertEqual(got, {"a": json.loads(nested(depth))})
        self.deepen(100_000)  # past every Python's JSON parser (3.13's takes 5000)
        with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
            replay_generic(self.folder, {"q": 1})
        self.assertEqual(
            str(caught.exception),
            f"Fixture {self.path} is nested too deeply to parse. Delete it, or re-record it "
            "with VCR_MODE=record.",
        )

    def test_the_commands_report_a_deep_fixture_in_one_line(self) -> None:
        for depth in self.DEPTHS:
            self.deepen(depth)
            runs = {
                "show": cli("show", str(self.path)),
                "diff": cli("diff", str(self.path), str(self.path)),
                "check": cli("check", str(self.folder)),
                "rekey": cli("rekey", str(self.folder)),
                "status": cli("status", str(self.folder)),
            }
            for command, (status, out, err) in runs.items():
                with self.subTest(depth=depth, command=command):
                    self.assertNotIn("Traceback", out + err)
                    if depth > 200 and command != "status":  # the CLI's bound: 200 levels
                        self.assertIn(str(self.path), out + err)
                        self.assertNotEqual(status, 0)
        self.deepen(400)  # parsed, but deeper than the CLI walks
        status, out, _ = cli("check", str(self.folder))
        self.assertEqual(
            out,
            f"{self.path}: nested more than 200 levels deep: not a fixture\n"
            "vcr_kit: 1 fixtures checked, 1 problem\n",
        )


@pytest.mark.child
class OddFilesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self)

    def child(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return run_captured(
            [sys.executable, "-W", "error", *argv],
            cwd=ROOT,
            env=dict(environ_without_vcr(), VCR_REPORT="0"),
            timeout=CHILD_TIMEOUT,
        )

    @unittest.skipUnless(hasattr(os, "mkfifo"), "named pipes are POSIX")
    def test_a_named_pipe_is_reported_not_waited_on(self) -> None:
        record_generic(self.folder, {"q": 1}, {"a": 1})
        pipe = self.folder / fixture_name({"q": 2}, "answer")
        os.mkfifo(pipe)
        message = f"Fixture {pipe} is a named pipe, not a file. Remove it."
        # In child processes: on main each of these waits for a writer forever.
        done = self.child("-m", "vcr_kit", "check", str(self.folder))
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertEqual(
            done.stdout, f"{pipe}: {message}\nvcr_kit: 2 fixtures checked, 1 problem\n"
        )
        done = self.child("-m", "vcr_kit", "status", str(self.folder))
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn(f"  unreadable: 1 (vcr_kit check says why)\n    {pipe}\n", done.stdout)
        script = textwrap.dedent(
            """
            import sys, vcr_kit
            try:
                vcr_kit.fixture({"q": 2}, "answer", mode="replay", fixtures_dir=sys.argv[1]).play(
                    lambda: 1
                )
            except vcr_kit.FixtureCorruptError as exc:
                print(exc)
            """
        )
        done = self.child("-c", script, str(self.folder))
        self.assertEqual((done.stdout, done.stderr), (message + "\n", ""))

    @unittest.skipUnless(os.path.exists("/dev/zero"), "needs /dev/zero")
    def test_a_link_to_a_device_is_refused_not_read(self) -> None:
        link = self.folder / fixture_name({"q": 1}, "answer")
        link.symlink_to("/dev/zero")  # endless: on main read until memory ran out
        script = textwrap.dedent(
            """
            import resource, sys, vcr_kit
            resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
            try:
                vcr_kit.fixture({"q": 1}, "answer", mode="replay", fixtures_dir=sys.argv[1]).play(
                    lambda: 1
                )
            except vcr_kit.FixtureCorruptError as exc:
                print(exc)
            """
        )
        done = self.child("-c", script, str(self.folder))
        self.assertEqual(
            (done.stdout, done.stderr),
            # A link out of the folder is refused before it is opened (issue 29, point 8).
            (
                f"Fixture {link} is a link to /dev/zero, outside the fixtures folder: vcr_kit "
                "never reads it. Replace the link with the fixture file itself, or remove it.\n",
                "",
            ),
        )

    def test_a_fixture_larger_than_any_fixture_is_not_read(self) -> None:
        path = self.folder / fixture_name({"q": 1}, "answer")
        with open(path, "wb") as handle:  # sparse: costs no disk, and is never read
            handle.truncate(MAX_FIXTURE_BYTES + 1)
        tracemalloc.start()
        try:
            with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                replay_generic(self.folder, {"q": 1})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertEqual(
            str(caught.exception),
            f"Fixture {path} is {MAX_FIXTURE_BYTES + 1} bytes, more than a fixture may be "
            f"({MAX_FIXTURE_BYTES}); it was not read. Delete it, or re-record it with "
            "VCR_MODE=record.",
        )
        self.assertLess(peak, 16 * 1024 * 1024)

    def test_a_miss_reads_a_bounded_amount_for_its_hint(self) -> None:
        near = record_generic(self.folder, {"q": 1}, {"a": 1})
        huge = self.folder / "answer-000000000000.json"  # of the same family: a candidate
        with open(huge, "wb") as handle:
            handle.truncate(300 * 1024 * 1024)
        tracemalloc.start()
        try:
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                replay_generic(self.folder, {"q": 2})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertLess(peak, 32 * 1024 * 1024)  # on main: the 300 MB file, read whole
        self.assertIn(f"Nearest recorded fixture: {near}.", str(caught.exception))

    def test_a_link_out_of_the_folder_is_reported_by_check(self) -> None:
        outside = temp_dir(self) / "elsewhere.json"
        record_generic(outside.parent, {"q": 1}, {"a": 1}).rename(outside)
        link = self.folder / fixture_name({"q": 1}, "answer")
        link.symlink_to(outside)
        status, out, _ = cli("check", str(self.folder))
        self.assertEqual(status, 1)
        self.assertEqual(
            out,
            f"{link}: a link to {outside.resolve()}, outside the fixtures folder; a fixture "
            "must be a file in it\nvcr_kit: 1 fixtures checked, 1 problem\n",
        )

    def test_rekey_reports_a_fixture_that_holds_a_key(self) -> None:
        key = "sk-ant-api03-" + "x" * 40
        path = record_generic(self.folder, {"q": 1}, {"a": 1})
        misnamed = self.folder / "answer-000000000000.json"  # rekey will want to rename it
        path.rename(misnamed)
        misnamed.write_text(
            misnamed.read_text(encoding="utf-8").replace('"a": 1', f'"a": "{key}"'),
            encoding="utf-8",
        )
        before = misnamed.read_bytes()
        status, out, err = cli("rekey", str(self.folder))
        self.assertEqual(status, 1)
        self.assertEqual(err, "")
        lines = out.splitlines()
        self.assertEqual(len(lines), 2, out)
        self.assertTrue(
            lines[0].startswith(f"{misnamed}: skipped: Refusing to write fixture {path}"), out
        )
        self.assertNotIn(key, out)
        self.assertEqual(
            lines[1], "vcr_kit: 1 fixture; 0 renamed, 0 merged, 0 rewritten; 1 problem"
        )
        self.assertEqual(misnamed.read_bytes(), before)
        self.assertFalse(path.exists())


class _CutOffJson(http.server.BaseHTTPRequestHandler):
    """An upstream that answers 200 with a JSON body cut off mid-string."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        body = b'{"id": "msg_01", "type": "mess'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.mark.inprocess
class CutOffAnswerTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self) / "fixtures"
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CutOffJson)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = f"http://127.0.0.1:{server.server_port}"

    def test_no_missing_fixture_is_blamed(self) -> None:
        # A JSON answer cut short was not earned by the request: it is handed back
        # unsaved, so the caller sees what the SDK makes of it without vcr_kit (its own
        # JSON error), the journal says why nothing was written, and no fixture, there
        # or not, is named.
        with vcr_kit.client(
            mode="auto",
            fixtures_dir=self.folder,
            base_url=self.url,
            api_key=recording_key(),
            max_retries=0,
        ) as client:
            with journal() as seen, self.assertRaises(json.JSONDecodeError) as caught:
                create(client, "Cut off")
        self.assertNotIsInstance(caught.exception, vcr_kit.VCRError)
        self.assertEqual(list(self.folder.glob("*.json")), [])
        self.assertEqual(
            [(e.event, e.detail) for e in seen.entries],
            [(Event.LIVE, "not recorded: a JSON answer that does not parse (cut short?)")],
        )


@pytest.mark.child
class FixturesFolderSettingTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.tmp = temp_dir(self)

    def test_a_fixtures_folder_that_is_a_file(self) -> None:
        blocker = self.tmp / "fixtures"
        blocker.write_text("not a folder", encoding="utf-8")
        message = (
            f"The fixtures folder {blocker} is a file, not a folder. Set VCR_FIXTURES_DIR "
            "(or fixtures_dir=) to a folder."
        )
        patch_env(self, VCR_REPORT="0", VCR_FIXTURES_DIR=str(blocker))
        for mode in ("replay", "auto", "record"):
            with self.subTest(mode=mode), self.assertRaises(vcr_kit.ConfigError) as caught:
                with vcr_kit.fixture({"q": 1}, "answer", mode=mode) as f:
                    f.play(lambda: {"a": 1})
            self.assertEqual(str(caught.exception), message)
            self.assertEqual(caught.exception.path, blocker)
        with vcr_kit.client(mode="replay", base_url="http://127.0.0.1:9", max_retries=0) as c:
            with self.assertRaises(vcr_kit.ConfigError) as caught:
                c.messages.create(
                    model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
                )
        self.assertEqual(str(caught.exception), message)
        self.assertEqual(blocker.read_text(encoding="utf-8"), "not a folder")

    def test_an_unreadable_fixtures_folder(self) -> None:
        folder = self.tmp / "fixtures"
        record_generic(folder, {"q": 1}, {"a": 1})
        message = (
            f"The fixtures folder {folder} cannot be read (permission denied). Make it "
            "readable, or set VCR_FIXTURES_DIR (or fixtures_dir=) to a folder."
        )
        # As root every folder is readable: the child drops to nobody (65534) first,
        # after the imports (the interpreter may live where nobody may not read).
        script = textwrap.dedent(
            """
            import contextlib, io, json, os, sys
            import vcr_kit
            from vcr_kit._cli import main
            warm = sys.argv[2]  # every import a replay, a miss and check need, done now
            vcr_kit.fixture({"w": 1}, "up", mode="auto", fixtures_dir=warm).play(lambda: 1)
            vcr_kit.fixture({"w": 1}, "up", mode="auto", fixtures_dir=warm).play(lambda: 1)
            with contextlib.suppress(vcr_kit.VCRError):
                vcr_kit.fixture({"w": 2}, "up", mode="replay", fixtures_dir=warm).play(int)
            with contextlib.redirect_stdout(io.StringIO()):
                main(["check", warm])
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            results = []
            for question in ({"q": 1}, {"q": 2}):
                try:
                    vcr_kit.fixture(question, "answer", mode="replay",
                                    fixtures_dir=sys.argv[1]).play(lambda: 1)
                    results.append("replayed")
                except vcr_kit.VCRError as exc:
                    results.append([type(exc).__name__, str(exc)])
            print(json.dumps(results))
            sys.stdout.flush()
            sys.exit(main(["check", sys.argv[1]]))
            """
        )
        os.chmod(self.tmp, 0o755)
        os.chmod(folder, 0o000)
        self.addCleanup(os.chmod, folder, 0o755)
        warm = self.tmp / "warm-up"
        done = run_captured(
            [sys.executable, "-W", "error", "-c", script, str(folder), str(warm)],
            cwd=ROOT,
            env=dict(environ_without_vcr(), VCR_REPORT="0"),
            timeout=CHILD_TIMEOUT,
        )
        first, _, rest = done.stdout.partition("\n")
        self.assertEqual(json.loads(first), [["ConfigError", message]] * 2, done.stderr)
        self.assertEqual((rest, done.stderr), ("", f"vcr_kit: {message}\n"))
        self.assertEqual(done.returncode, 2)
        # A folder below, not the fixtures folder itself: check says so, in one line.
        os.chmod(folder, 0o755)
        sub = folder / "sub"
        record_generic(sub, {"q": 1}, {"a": 1})
        os.chmod(sub, 0o000)
        self.addCleanup(os.chmod, sub, 0o755)
        done = run_captured(
            [sys.executable, "-W", "error", "-c", script, str(folder), str(warm)],
            cwd=ROOT,
            env=dict(environ_without_vcr(), VCR_REPORT="0"),
            timeout=CHILD_TIMEOUT,
        )
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertEqual(done.stderr, f"vcr_kit: {sub}: Permission denied\n")


if __name__ == "__main__":
    unittest.main()
