"""The generic ``fixture(input, name)``: modes, activation, errors, file contents."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
import textwrap
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.env import (
    entries,
    environ_without_vcr,
    patch_env,
    run_captured,
    temp_dir,
    working_dir,
)
from vcr_kit import (
    ConfigError,
    FixtureCorruptError,
    FixtureMissingError,
    FixtureValueError,
    SecretLeakError,
    fixture,
)
from vcr_kit._core.config import activated
from vcr_kit._core.fixture_names import fixture_name
from vcr_kit._store.files import LOCK_FOLDER

KEY_SHAPED = "sk-ant-api03-" + "Ab3_-" * 8  # 40 characters after the prefix
LIVE_KEY = "live-secret-value-0123456789abcdef"
MISSING_TAIL = ". Re-run the tests with VCR_RECORD=1, then commit the result."
ADVICE = "Delete it, or re-record it with VCR_MODE=record."
QUESTION = {"question": "What is 2+2?", "n": 2}


class Counter:
    """A played function that counts its calls and returns ``value``."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        return self.value


class FixtureTestCase(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.tmp = temp_dir(self)
        self.dir = self.tmp / "fixtures"
        self.expected_path = self.dir / fixture_name(QUESTION, "answer")

    def make(self, mode: str | None = None, value: Any = QUESTION) -> Any:
        return fixture(value, "answer", mode=mode, fixtures_dir=self.dir)


@pytest.mark.inprocess
class ModesTest(FixtureTestCase):
    def test_auto_records_then_replays(self) -> None:
        fn = Counter({"answer": 4, "words": ["four"]})
        with self.make("auto") as first:
            self.assertEqual(first.play(fn), {"answer": 4, "words": ["four"]})
        self.assertEqual(fn.calls, 1)
        self.assertTrue(first.recorded)
        self.assertFalse(first.replayed)
        self.assertEqual(first.path, self.expected_path)
        self.assertRegex(first.path.name, r"^answer-[0-9a-f]{12}\.json$")
        self.assertTrue(first.path.is_file())

        with self.make("auto") as second:
            self.assertEqual(second.play(fn), {"answer": 4, "words": ["four"]})
        self.assertEqual(fn.calls, 1)  # not called on replay
        self.assertTrue(second.replayed)
        self.assertFalse(second.recorded)
        self.assertEqual(entries(self.dir), [self.expected_path.name])

    def test_play_without_with(self) -> None:
        fn = Counter([1, 2])
        self.assertEqual(self.make("auto").play(fn), [1, 2])
        self.assertEqual(self.make("auto").play(fn), [1, 2])
        self.assertEqual(fn.calls, 1)

    def test_different_input_is_a_different_fixture(self) -> None:
        fn = Counter("x")
        self.make("auto").play(fn)
        other = self.make("auto", {"question": "What is 3+3?", "n": 2})
        other.play(fn)
        self.assertEqual(fn.calls, 2)
        self.assertNotEqual(other.path, self.expected_path)
        self.assertEqual(len(entries(self.dir)), 2)

    def test_record_always_calls_and_overwrites(self) -> None:
        self.make("auto").play(Counter("old"))
        fn = Counter("new")
        for _ in range(2):
            with self.make("record") as f:
                self.assertEqual(f.play(fn), "new")
            self.assertTrue(f.recorded)
            self.assertFalse(f.replayed)
        self.assertEqual(fn.calls, 2)
        self.assertEqual(
            json.loads(self.expected_path.read_text(encoding="utf-8"))["response"], "new"
        )
        replay = Counter("unused")
        self.assertEqual(self.make("replay").play(replay), "new")
        self.assertEqual(replay.calls, 0)

    def test_replay_miss(self) -> None:
        fn = Counter("x")
        with self.make("replay") as f, self.assertRaises(FixtureMissingError) as caught:
            f.play(fn)
        self.assertEqual(fn.calls, 0)
        self.assertEqual(
            str(caught.exception).split("\n")[0],
            f"Fixture missing: {self.expected_path}{MISSING_TAIL}",
        )
        self.assertEqual(caught.exception.path, self.expected_path)
        self.assertIsInstance(caught.exception, LookupError)
        self.assertFalse(f.recorded)
        self.assertFalse(f.replayed)
        self.assertEqual(entries(self.dir), [])

    def test_replay_miss_absolute_path_and_near_miss_hint(self) -> None:
        with working_dir(self.tmp):
            recorded = fixture(
                {"question": "What is 2+2?"}, "answer", mode="auto", fixtures_dir="fixtures"
            )
            recorded.play(Counter(4))
            missing = fixture(
                {"question": "What is 2+3?"}, "answer", mode="replay", fixtures_dir="fixtures"
            )
            with self.assertRaises(FixtureMissingError) as caught:
                missing.play(Counter(5))
            lines = str(caught.exception).split("\n")
            self.assertEqual(lines[0], f"Fixture missing: {missing.path}{MISSING_TAIL}")
            self.assertEqual(lines[1], f"Nearest recorded fixture: fixtures/{recorded.path.name}.")
            self.assertIn("What differs:", lines)
            self.assertIn('-  "question": "What is 2+2?"', lines)
            self.assertIn('+  "question": "What is 2+3?"', lines)

    def test_off_calls_fn_and_touches_no_file(self) -> None:
        fn = Counter("live")
        for _ in range(2):
            with self.make("off") as f:
                self.assertEqual(f.play(fn), "live")
            self.assertFalse(f.recorded)
            self.assertFalse(f.replayed)
        self.assertEqual(fn.calls, 2)
        self.assertFalse(self.dir.exists())

    def test_vcr_mode_off_beats_the_option(self) -> None:
        os.environ["VCR_MODE"] = "off"
        fn = Counter("live")
        self.make("record").play(fn)
        self.assertEqual(fn.calls, 1)
        self.assertFalse(self.dir.exists())

    def test_not_active_passes_through(self) -> None:
        fn = Counter("live")
        for _ in range(2):
            with self.make() as f:
                self.assertEqual(f.play(fn), "live")
            self.assertFalse(f.recorded)
            self.assertFalse(f.replayed)
        self.assertEqual(fn.calls, 2)
        self.assertFalse(self.dir.exists())

    def test_activated_records(self) -> None:
        fn = Counter("v")
        with activated():
            self.assertEqual(self.make().play(fn), "v")
            self.assertEqual(self.make().play(fn), "v")
        self.assertEqual(fn.calls, 1)
        self.assertTrue(self.expected_path.exists())

    def test_force_vcr_and_vcr_mode_activate(self) -> None:
        os.environ["FORCE_VCR"] = "1"
        fn = Counter("v")
        self.make().play(fn)
        self.assertTrue(self.expected_path.exists())
        del os.environ["FORCE_VCR"]
        os.environ["VCR_MODE"] = "replay"
        self.assertEqual(self.make().play(fn), "v")
        self.assertEqual(fn.calls, 1)

    def test_ci_miss_fails_and_never_calls(self) -> None:
        os.environ["CI"] = "true"
        fn = Counter("v")
        with activated():
            with self.assertRaises(FixtureMissingError) as caught:
                self.make().play(fn)
            os.environ["FORCE_VCR"] = "1"
            with self.assertRaises(FixtureMissingError):
                self.make().play(fn)
        self.assertEqual(fn.calls, 0)
        self.assertEqual(
            str(caught.exception).split("\n")[0],
            f"Fixture missing: {self.expected_path}{MISSING_TAIL}",
        )
        self.assertFalse(self.expected_path.exists())

    def test_ci_with_vcr_record_records(self) -> None:
        os.environ["CI"] = "true"
        os.environ["VCR_RECORD"] = "1"
        fn = Counter("v")
        with activated():
            with self.make() as f:
                self.assertEqual(f.play(fn), "v")
            self.assertTrue(f.recorded)
            del os.environ["VCR_RECORD"]
            with self.make() as f:
                self.assertEqual(f.play(fn), "v")  # replayed in CI
            self.assertTrue(f.replayed)
        self.assertEqual(fn.calls, 1)

    def test_unknown_vcr_mode_fails_before_calling(self) -> None:
        os.environ["VCR_MODE"] = "sometimes"
        fn = Counter("v")
        with self.assertRaises(ConfigError) as caught:
            self.make().play(fn)
        self.assertEqual(
            str(caught.exception),
            "VCR_MODE='sometimes' is not a mode vcr_kit knows; use one of: auto, replay, "
            "record, off.",
        )
        self.assertEqual(fn.calls, 0)

    def test_fn_error_is_not_recorded(self) -> None:
        def boom() -> Any:
            raise RuntimeError("boom")

        with self.assertRaises(RuntimeError):
            self.make("auto").play(boom)
        self.assertEqual(entries(self.dir), [])
        self.assertEqual(self.make("auto").play(Counter("ok")), "ok")

    def test_paths_are_dehydrated_and_hydrated_on_replay(self) -> None:
        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
            with working_dir(one) as cwd:
                made = fixture({"file": f"{cwd}/a.py"}, "read", mode="auto", fixtures_dir=self.dir)
                self.assertEqual(
                    made.play(Counter({"path": f"{cwd}/a.py"})), {"path": f"{cwd}/a.py"}
                )
            text = made.path.read_text(encoding="utf-8")
            self.assertNotIn(str(cwd), text)
            self.assertIn('"[CWD]/a.py"', text)
            with working_dir(two) as other:
                again = fixture(
                    {"file": f"{other}/a.py"}, "read", mode="replay", fixtures_dir=self.dir
                )
                fn = Counter("unused")
                self.assertEqual(again.play(fn), {"path": f"{other}/a.py"})
            self.assertEqual(fn.calls, 0)
            self.assertEqual(again.path, made.path)


@pytest.mark.inprocess
class FileContentTest(FixtureTestCase):
    def test_file_layout(self) -> None:
        cwd = os.getcwd()
        value = {"question": "hi", "where": f"{cwd}/x"}
        result = {
            "text": "é ✓",
            "path": f"{cwd}/y",
            "n": [1, 2.5, None, True],
            "nested": {"b": 1, "a": 2},
        }
        f = fixture(value, "layout", mode="auto", fixtures_dir=self.dir)
        self.assertEqual(f.play(lambda: result), result)
        expected = {
            "vcr_kit_format": 1,
            "kind": "generic",
            "request": {"question": "hi", "where": "[CWD]/x"},
            "response": {
                "text": "é ✓",
                "path": "[CWD]/y",
                "n": [1, 2.5, None, True],
                "nested": {"b": 1, "a": 2},
            },
            "usage": [],
        }
        data = f.path.read_bytes()
        self.assertEqual(data, (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode())
        self.assertTrue(data.endswith(b"}\n"))
        self.assertEqual(json.loads(data), expected)

    def test_rerecording_the_same_value_is_byte_identical(self) -> None:
        value = {"z": [3, 2, 1], "a": {"nested": "é"}, "m": 1.25}
        self.make("auto").play(lambda: value)
        first = self.expected_path.read_bytes()
        self.make("record").play(lambda: json.loads(json.dumps(value)))
        self.assertEqual(self.expected_path.read_bytes(), first)
        self.make("record").play(lambda: value)
        self.assertEqual(self.expected_path.read_bytes(), first)
        self.assertEqual(entries(self.dir), [self.expected_path.name])

    def test_an_answer_that_differs_only_in_request_ids_keeps_the_file(self) -> None:
        def answer(request_id: str, text: str = "no") -> dict[str, str]:
            return {"error": f"{text} (request {request_id})", "request_id": request_id}

        self.make("record").play(lambda: answer("req_first1"))
        first = self.expected_path.read_bytes()
        os.utime(self.expected_path, ns=(1, 1))

        # What the caller gets is what the file says, as a replay would give it.
        self.assertEqual(
            self.make("record").play(lambda: answer("req_second2")), answer("req_first1")
        )
        self.assertEqual(self.expected_path.read_bytes(), first)
        self.assertEqual(self.expected_path.stat().st_mtime_ns, 1)  # not even rewritten

        self.assertEqual(
            self.make("record").play(lambda: answer("req_3", "yes")), answer("req_3", "yes")
        )
        self.assertNotEqual(self.expected_path.read_bytes(), first)


@pytest.mark.inprocess
class CorruptTest(FixtureTestCase):
    ROWS = (
        (
            "truncated",
            b'{\n  "vcr_kit_format": 1,\n  "kind": "gen',
            "is not valid JSON: Unterminated string starting at line 3 column 11 (char 35). "
            + ADVICE,
        ),
        ("empty", b"", "is empty. " + ADVICE),
        (
            "not an object",
            b"[1, 2, 3]\n",
            "is not a vcr_kit fixture (no 'vcr_kit_format' field). " + ADVICE,
        ),
        (
            "newer format",
            b'{"vcr_kit_format": 99, "response": 1}\n',
            "has format 99, newer than this vcr_kit reads (1). Upgrade vcr_kit.",
        ),
    )

    def test_corrupt_fixture_fails_and_is_left_alone(self) -> None:
        for mode in ("auto", "replay"):
            for label, data, tail in self.ROWS:
                with self.subTest(mode=mode, case=label):
                    self.dir.mkdir(exist_ok=True)
                    self.expected_path.write_bytes(data)
                    fn = Counter("v")
                    with self.assertRaises(FixtureCorruptError) as caught:
                        self.make(mode).play(fn)
                    self.assertEqual(str(caught.exception), f"Fixture {self.expected_path} {tail}")
                    self.assertEqual(caught.exception.path, self.expected_path)
                    self.assertEqual(fn.calls, 0)
                    self.assertEqual(self.expected_path.read_bytes(), data)

    def test_truncated_json_names_line_column_and_char(self) -> None:
        self.dir.mkdir()
        self.expected_path.write_bytes(b'{"vcr_kit_format": 1, "response": [1, 2')
        with self.assertRaises(FixtureCorruptError) as caught:
            self.make("auto").play(Counter("v"))
        self.assertRegex(
            str(caught.exception),
            rf"^Fixture {re.escape(str(self.expected_path))} is not valid JSON: .+ at line 1 "
            rf"column 40 \(char 39\)\. {re.escape(ADVICE)}$",
        )

    def test_record_mode_overwrites_a_corrupt_fixture(self) -> None:
        for label, data, _ in self.ROWS:
            with self.subTest(case=label):
                self.dir.mkdir(exist_ok=True)
                self.expected_path.write_bytes(data)
                fn = Counter({"fresh": label})
                self.assertEqual(self.make("record").play(fn), {"fresh": label})
                self.assertEqual(fn.calls, 1)
                doc = json.loads(self.expected_path.read_bytes())
                self.assertEqual(doc["response"], {"fresh": label})
                self.assertEqual(self.make("replay").play(Counter("unused")), {"fresh": label})


@pytest.mark.inprocess
class UnreplayableTest(FixtureTestCase):
    def test_a_fixture_without_a_response_is_corrupt_and_counts_nothing(self) -> None:
        self.dir.mkdir()
        data = b'{"vcr_kit_format": 1, "kind": "generic", "request": {}}\n'
        self.expected_path.write_bytes(data)
        with self.assertRaises(FixtureCorruptError) as caught:
            self.make("auto").play(Counter("v"))
        self.assertEqual(
            str(caught.exception),
            f"Fixture {self.expected_path} cannot be replayed: it has no 'response'. " + ADVICE,
        )
        self.assertEqual(self.expected_path.read_bytes(), data)

    def test_a_not_json_able_input_names_the_fixture_and_the_value(self) -> None:
        with self.assertRaises(FixtureValueError) as caught:
            fixture({"when": {1, 2}}, "answer", mode="auto", fixtures_dir=self.dir)
        self.assertEqual(
            str(caught.exception),
            "The input of fixture 'answer' cannot be a key: builtins.set is not JSON-able. "
            "Use JSON values (dict, list, str, int, float, bool, None) or SDK objects.",
        )
        self.assertFalse(self.dir.exists())


@pytest.mark.inprocess
class ValueErrorTest(FixtureTestCase):
    def test_not_json_able_results(self) -> None:
        rows = [
            ("object", object(), r"builtins\.object is not JSON-able"),
            ("set", {1, 2}, r"builtins\.set is not JSON-able"),
            ("int key", {1: "a"}, r"a dict key must be a string, not int 1"),
            ("nested", {"a": [object()]}, r"builtins\.object is not JSON-able"),
            ("nan", float("nan"), r"Out of range float values are not JSON compliant(: nan)?"),
            (
                "infinity",
                [float("inf")],
                r"Out of range float values are not JSON compliant(: inf)?",
            ),
        ]
        for label, result, detail in rows:
            with self.subTest(case=label):
                with self.assertRaises(FixtureValueError) as caught:
                    self.make("auto").play(lambda result=result: result)
                self.assertRegex(
                    str(caught.exception),
                    rf"^Cannot record {re.escape(str(self.expected_path))}: the result is not "
                    rf"JSON-able \({detail}\)\. Return JSON values or SDK objects from the played "
                    r"function\.$",
                )
                self.assertEqual(caught.exception.path, self.expected_path)
                self.assertIsInstance(caught.exception, TypeError)
                self.assertEqual(entries(self.dir), [])


@pytest.mark.child
class WriteErrorTest(FixtureTestCase):
    def test_folder_under_a_regular_file(self) -> None:
        blocker = self.tmp / "a-file"
        blocker.write_text("x", encoding="utf-8")
        folder = blocker / "fixtures"
        fn = Counter("v")
        with self.assertRaises(ConfigError) as caught:  # the setting is wrong (issue 15)
            fixture(QUESTION, "answer", mode="auto", fixtures_dir=folder).play(fn)
        self.assertEqual(
            str(caught.exception),
            f"The fixtures folder {folder} cannot be made: {blocker} is a file, not a folder. "
            "Set VCR_FIXTURES_DIR (or fixtures_dir=) to a folder.",
        )
        self.assertEqual(caught.exception.path, folder)
        self.assertEqual(fn.calls, 0)
        self.assertEqual(os.listdir(self.tmp), ["a-file"])

    @unittest.skipUnless(hasattr(os, "geteuid") and os.geteuid() == 0, "needs root to switch user")
    def test_read_only_folder_as_another_user(self) -> None:
        # The child starts as root (the interpreter may live under /root), warms up every
        # import with a full record and replay, then drops to uid/gid 65534 for the test.
        script = textwrap.dedent(
            """
            import json, os, sys
            from vcr_kit import FixtureWriteError, fixture
            fixture({"warm": 1}, "up", mode="auto", fixtures_dir=sys.argv[1]).play(lambda: 1)
            fixture({"warm": 1}, "up", mode="auto", fixtures_dir=sys.argv[1]).play(lambda: 1)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            results = []
            for folder in sys.argv[2:]:
                calls = []
                out = {}
                try:
                    fixture({"q": 1}, "answer", mode="auto", fixtures_dir=folder).play(
                        lambda: calls.append(1) or {"a": 1}
                    )
                except FixtureWriteError as exc:
                    out = {"error": str(exc), "path": str(exc.path)}
                out["calls"] = len(calls)
                results.append(out)
            print(json.dumps(results))
            """
        )
        os.chmod(self.tmp, 0o755)
        with_locks = self.tmp / "with-locks"
        (with_locks / LOCK_FOLDER).mkdir(parents=True)
        os.chmod(with_locks / LOCK_FOLDER, 0o777)
        without_locks = self.tmp / "without-locks"
        without_locks.mkdir()
        for folder in (with_locks, without_locks):
            os.chmod(folder, 0o555)
            self.addCleanup(os.chmod, folder, 0o755)
        env = environ_without_vcr()
        elsewhere = self.tmp / "elsewhere"  # a cwd above none of them: absolute paths shown
        elsewhere.mkdir()
        folders = [str(self.tmp / "warm-up"), str(with_locks), str(without_locks)]
        done = run_captured(
            [sys.executable, "-W", "error", "-c", script, *folders],
            cwd=elsewhere,
            env=env,
            timeout=120,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        results = json.loads(done.stdout)
        name = fixture_name({"q": 1}, "answer")
        self.assertEqual(len(results), 2)
        self.assertEqual(
            results[0],
            {
                # Checked before the call: an answer that cannot be kept is not paid for.
                "error": f"Cannot write fixture {with_locks / name}: Permission denied "
                f"({with_locks}). Make the folder writable or set VCR_FIXTURES_DIR. "
                "The API was not called.",
                "path": str(with_locks / name),
                "calls": 0,
            },
        )
        self.assertEqual(
            results[1],
            {
                "error": f"Cannot create the lock folder {without_locks / LOCK_FOLDER}: Permission "
                "denied. Make the fixtures folder writable or set VCR_FIXTURES_DIR.",
                "path": str(without_locks / name),
                "calls": 0,
            },
        )
        self.assertEqual(entries(with_locks), [])
        self.assertEqual(os.listdir(without_locks), [])


@pytest.mark.inprocess
class SecretTest(FixtureTestCase):
    def leak_message(self, what: str, where: str) -> str:
        allow = (
            ""
            if what.startswith("the value of")
            else " If it is not a secret, list it (or a re: pattern) in VCR_ALLOW_SECRETS."
        )
        return (
            f"Refusing to write fixture {self.expected_path}: it contains {what} at {where}. "
            "Nothing was written. Keep secrets out of prompts and tool results, or add a "
            f"dehydrate rule that replaces them, then record again.{allow}"
        )

    def assert_refused(
        self, fn: Callable[[], Any], what: str, secret: str, where: str, value: Any = QUESTION
    ) -> None:
        with self.assertRaises(SecretLeakError) as caught:
            self.make("auto", value).play(fn)
        message = str(caught.exception)
        self.assertEqual(message, self.leak_message(what, where))
        self.assertNotIn(secret, message)
        self.assertEqual(caught.exception.path, self.make("auto", value).path)
        self.assertEqual(entries(self.dir), [])  # no fixture, no temp file

    def test_key_shaped_string_in_the_result(self) -> None:
        fn = Counter({"echo": f"my key is {KEY_SHAPED}"})
        self.assert_refused(fn, "an Anthropic key (sk-ant-...)", KEY_SHAPED, "response.echo")
        self.assertEqual(fn.calls, 1)

    def test_live_key_value_in_the_result(self) -> None:
        os.environ["ANTHROPIC_API_KEY"] = LIVE_KEY
        self.assert_refused(
            Counter(["env:", LIVE_KEY]), "the value of ANTHROPIC_API_KEY", LIVE_KEY, "response[1]"
        )

    def test_key_in_the_request(self) -> None:
        with self.assertRaises(SecretLeakError) as caught:
            fixture({"prompt": KEY_SHAPED}, "leak", mode="auto", fixtures_dir=self.dir).play(
                Counter(1)
            )
        self.assertNotIn(KEY_SHAPED, str(caught.exception))
        self.assertEqual(entries(self.dir), [])

    def test_ordinary_short_env_key_is_not_a_leak(self) -> None:
        os.environ["ANTHROPIC_API_KEY"] = "test-key"
        self.assertEqual(self.make("auto").play(Counter("uses test-key")), "uses test-key")
        self.assertTrue(self.expected_path.exists())


@pytest.mark.inprocess
class AsyncFixtureTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        patch_env(self)
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name).resolve() / "fixtures"
        self.calls = 0

    async def compute(self) -> dict[str, Any]:
        self.calls += 1
        await asyncio.sleep(0)
        return {"answer": 4}

    async def test_async_with_records_then_replays(self) -> None:
        async with fixture(QUESTION, "answer", mode="auto", fixtures_dir=self.dir) as f:
            self.assertEqual(await f.play(self.compute), {"answer": 4})
        self.assertTrue(f.recorded)
        async with fixture(QUESTION, "answer", mode="auto", fixtures_dir=self.dir) as g:
            self.assertEqual(await g.play(self.compute), {"answer": 4})
        self.assertTrue(g.replayed)
        self.assertEqual(self.calls, 1)
        self.assertEqual(entries(self.dir), [f.path.name])

    async def test_coroutine_function_under_plain_with(self) -> None:
        with fixture(QUESTION, "answer", mode="auto", fixtures_dir=self.dir) as f:
            self.assertEqual(await f.play(self.compute), {"answer": 4})
        self.assertEqual(
            await fixture(QUESTION, "answer", mode="auto", fixtures_dir=self.dir).play(
                self.compute
            ),
            {"answer": 4},
        )
        self.assertEqual(self.calls, 1)

    async def test_async_sync_function_under_async_with(self) -> None:
        async with fixture(QUESTION, "answer", mode="auto", fixtures_dir=self.dir) as f:
            self.assertEqual(await f.play(lambda: {"sync": True}), {"sync": True})
        self.assertTrue(f.recorded)

    async def test_async_replay_miss(self) -> None:
        async with fixture(QUESTION, "answer", mode="replay", fixtures_dir=self.dir) as f:
            with self.assertRaises(FixtureMissingError) as caught:
                await f.play(self.compute)
        self.assertEqual(
            str(caught.exception).split("\n")[0], f"Fixture missing: {f.path}{MISSING_TAIL}"
        )
        self.assertEqual(self.calls, 0)

    async def test_async_not_active_passes_through(self) -> None:
        for _ in range(2):
            async with fixture(QUESTION, "answer", fixtures_dir=self.dir) as f:
                self.assertEqual(await f.play(self.compute), {"answer": 4})
        self.assertEqual(self.calls, 2)
        self.assertFalse(self.dir.exists())


if __name__ == "__main__":
    unittest.main()
