"""``vcr_kit._store.files``: the fixture file format, reading, atomic writes, locks, secrets.

These drive the store's functions directly; ``test_cassette_fixture.py`` drives the same
guarantees through the public ``fixture()``.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import threading
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from tests.support.helpers.env import entries, patch_env, temp_dir, working_dir
from vcr_kit import (
    ConfigError,
    FixtureCorruptError,
    FixtureMissingError,
    FixtureValueError,
    FixtureWriteError,
    LockTimeoutError,
    SecretLeakError,
    VCRError,
)
from vcr_kit._core.config import Mode, load_settings
from vcr_kit._core.credentials import live_secrets
from vcr_kit._core.paths import display_path
from vcr_kit._core.schema import FORMAT_KEY, FORMAT_VERSION
from vcr_kit._engine.misses import missing_message
from vcr_kit._engine.policy import afetch, fetch
from vcr_kit._store.files import (
    LOCK_FOLDER,
    parse_document,
    read_document,
    serialize_document,
    write_document,
)
from vcr_kit._store.locks import lock_for
from vcr_kit._store.secrets import scan_for_secrets

pytestmark = pytest.mark.inprocess

ADVICE = "Delete it, or re-record it with VCR_MODE=record."
KEY_SHAPED = "sk-ant-api03-" + "Ab3_-" * 8  # 40 characters after the prefix
SECRET_ADVICE = (
    "Nothing was written. Keep secrets out of prompts and tool results, "
    "or add a dehydrate rule that replaces them, then record again."
)
ALLOW_ADVICE = " If it is not a secret, list it (or a re: pattern) in VCR_ALLOW_SECRETS."


class StoreTestCase(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.dir = temp_dir(self) / "fixtures"
        self.path = self.dir / "answer-0123456789ab.json"


class FormatTest(StoreTestCase):
    def test_written_file_is_pretty_json_with_a_final_newline(self) -> None:
        doc = {"kind": "generic", "request": {"q": "é ✓"}, "response": {"b": [1, 2.5, None]}}
        write_document(self.path, doc)
        text = self.path.read_bytes().decode("utf-8")
        expected = {FORMAT_KEY: 1, **doc}
        self.assertEqual(text, json.dumps(expected, indent=2, ensure_ascii=False) + "\n")
        self.assertTrue(text.endswith("}\n"))
        self.assertIn('  "vcr_kit_format": 1,\n', text)
        self.assertIn("é ✓", text)  # UTF-8, not \u escapes
        self.assertEqual(json.loads(text), expected)
        self.assertEqual(read_document(self.path), expected)
        self.assertEqual(FORMAT_VERSION, 1)

    def test_serialization_is_stable(self) -> None:
        doc = {"kind": "generic", "request": {"a": 1}, "response": ["x", {"k": "v"}]}
        self.assertEqual(serialize_document(doc), serialize_document(json.loads(json.dumps(doc))))
        write_document(self.path, doc)
        first = self.path.read_bytes()
        write_document(self.path, json.loads(json.dumps(doc)))
        self.assertEqual(self.path.read_bytes(), first)

    def test_write_creates_the_folder_and_leaves_no_temp_file(self) -> None:
        write_document(self.path, {"kind": "generic", "response": 1})
        self.assertEqual(entries(self.dir), [self.path.name])
        self.assertEqual(self.path.stat().st_mode & 0o777, 0o644)

    def test_write_replaces_the_old_file(self) -> None:
        write_document(self.path, {"kind": "generic", "response": 1})
        write_document(self.path, {"kind": "generic", "response": 2})
        self.assertEqual(
            read_document(self.path), {FORMAT_KEY: 1, "kind": "generic", "response": 2}
        )
        self.assertEqual(entries(self.dir), [self.path.name])

    def test_not_json_able_value(self) -> None:
        for value, detail in (
            (float("nan"), r"Out of range float values are not JSON compliant(: nan)?"),
            ({1, 2}, r"Object of type set is not JSON serializable"),
        ):
            with self.subTest(value=repr(value)), self.assertRaises(FixtureValueError) as caught:
                write_document(self.path, {"kind": "generic", "response": value})
            self.assertRegex(
                str(caught.exception),
                rf"^Cannot record {re.escape(str(self.path))}: the result is not JSON-able "
                rf"\({detail}\)\. Return JSON values or SDK objects from the played function\.$",
            )
            self.assertEqual(caught.exception.path, self.path)
            self.assertEqual(entries(self.dir), [])


class ReadTest(StoreTestCase):
    def corrupt(self, data: bytes) -> FixtureCorruptError:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(data)
        with self.assertRaises(FixtureCorruptError) as caught:
            read_document(self.path)
        self.assertEqual(self.path.read_bytes(), data)
        self.assertEqual(caught.exception.path, self.path)
        return caught.exception

    def test_missing_file_is_none(self) -> None:
        self.assertIsNone(read_document(self.path))

    def test_corrupt_files(self) -> None:
        where = str(self.path)
        rows = [
            (
                b'{"vcr_kit_format": 1,',
                f"Fixture {where} is not valid JSON: Expecting property name enclosed in double "
                f"quotes at line 1 column 22 (char 21). {ADVICE}",
            ),
            (
                b'{\n  "vcr_kit_format": 1,\n  "kind": "gen',
                f"Fixture {where} is not valid JSON: Unterminated string starting at line 3 "
                f"column 11 (char 35). {ADVICE}",
            ),
            (
                b'{"vcr_kit_format": 1} x',
                f"Fixture {where} is not valid JSON: Extra data at line 1 column 23 (char 22). "
                f"{ADVICE}",
            ),
            (b"", f"Fixture {where} is empty. {ADVICE}"),
            (b"  \n", f"Fixture {where} is empty. {ADVICE}"),
            (b'{"a": "\xff"}', f"Fixture {where} is not UTF-8 (byte 7). {ADVICE}"),
            (
                b"[1, 2]",
                f"Fixture {where} is not a vcr_kit fixture (no 'vcr_kit_format' field). {ADVICE}",
            ),
            (
                b'{"kind": "generic"}',
                f"Fixture {where} is not a vcr_kit fixture (no 'vcr_kit_format' field). {ADVICE}",
            ),
            (
                b'{"vcr_kit_format": "1"}',
                f"Fixture {where} is not a vcr_kit fixture (no 'vcr_kit_format' field). {ADVICE}",
            ),
            (
                b'{"vcr_kit_format": 2, "kind": "generic"}',
                f"Fixture {where} has format 2, newer than this vcr_kit reads (1). "
                "Upgrade vcr_kit.",
            ),
        ]
        for data, message in rows:
            with self.subTest(data=data):
                self.assertEqual(str(self.corrupt(data)), message)

    def test_truncated_fixture_names_the_position(self) -> None:
        write_document(self.path, {"kind": "generic", "response": {"text": "x" * 50}})
        whole = self.path.read_bytes()
        for cut in (1, len(whole) // 2, len(whole) - 3):
            with self.subTest(cut=cut):
                error = self.corrupt(whole[:cut])
                self.assertRegex(
                    str(error),
                    rf"^Fixture {re.escape(str(self.path))} is not valid JSON: .+ at line \d+ "
                    rf"column \d+ \(char \d+\)\. {re.escape(ADVICE)}$",
                )

    def test_folder_in_place_of_the_file(self) -> None:
        self.path.mkdir(parents=True)
        with self.assertRaises(FixtureCorruptError) as caught:
            read_document(self.path)
        self.assertEqual(
            str(caught.exception), f"Fixture {self.path} is a folder, not a file. Remove it."
        )

    def test_parse_document_reads_only_known_formats(self) -> None:
        doc = {FORMAT_KEY: 1, "kind": "generic"}
        self.assertEqual(parse_document(json.dumps(doc).encode(), self.path), doc)
        for version in (0, -1):  # no vcr_kit ever wrote them (the first format is 1)
            with self.subTest(version=version):
                data = json.dumps({FORMAT_KEY: version, "kind": "generic"}).encode()
                self.assertEqual(
                    str(self.corrupt(data)),
                    f"Fixture {display_path(self.path)} has format {version}, which no "
                    f"vcr_kit writes (this one reads 1 to 1). {ADVICE}",
                )


class PathsAndMessagesTest(StoreTestCase):
    def test_display_path_is_relative_below_the_cwd(self) -> None:
        with working_dir(self.dir.parent) as cwd:
            self.assertEqual(display_path(cwd / "fixtures" / "a.json"), "fixtures/a.json")
            self.assertEqual(display_path(Path("/elsewhere/a.json")), "/elsewhere/a.json")

    def test_missing_message(self) -> None:
        with working_dir(self.dir.parent):  # absolute even below the cwd
            self.assertEqual(
                missing_message(Path.cwd() / "fixtures" / "a3f2b1-c9d8e7.json"),
                f"Fixture missing: {Path.cwd() / 'fixtures' / 'a3f2b1-c9d8e7.json'}. Re-run the "
                "tests with VCR_RECORD=1, then commit the result.",
            )
        self.assertEqual(
            missing_message(Path("/x/a.json"), "Nearest recorded fixture: b.json."),
            "Fixture missing: /x/a.json. Re-run the tests with VCR_RECORD=1, then commit the "
            "result.\nNearest recorded fixture: b.json.",
        )


class WriteErrorTest(StoreTestCase):
    def test_folder_under_a_regular_file(self) -> None:
        blocker = self.dir.parent / "not-a-folder"
        blocker.write_text("x", encoding="utf-8")
        path = blocker / "fixtures" / "a.json"
        with self.assertRaises(FixtureWriteError) as caught:
            write_document(path, {"kind": "generic", "response": 1})
        self.assertEqual(
            str(caught.exception),
            f"Cannot write fixture {path}: Not a directory ({path.parent}). Make the folder "
            "writable or set VCR_FIXTURES_DIR.",
        )
        self.assertIsInstance(caught.exception, OSError)
        self.assertEqual(caught.exception.path, path)
        self.assertEqual(blocker.read_text(encoding="utf-8"), "x")

    def test_lock_folder_under_a_regular_file(self) -> None:
        blocker = self.dir.parent / "not-a-folder"
        blocker.write_text("x", encoding="utf-8")
        path = blocker / "a.json"
        with self.assertRaises(FixtureWriteError) as caught:
            lock_for(path)
        self.assertEqual(
            str(caught.exception),
            f"Cannot create the lock folder {blocker / LOCK_FOLDER}: Not a directory. Make the "
            "fixtures folder writable or set VCR_FIXTURES_DIR.",
        )


class SecretsTest(StoreTestCase):
    def test_key_shaped_string_is_refused(self) -> None:
        data = b"abc " + KEY_SHAPED.encode()
        with self.assertRaises(SecretLeakError) as caught:
            scan_for_secrets(data, self.path)
        self.assertEqual(
            str(caught.exception),
            f"Refusing to write fixture {self.path}: it contains an Anthropic key "
            f"(sk-ant-...) at byte 4. {SECRET_ADVICE}{ALLOW_ADVICE}",
        )
        self.assertNotIn(KEY_SHAPED, str(caught.exception))

    def test_bearer_token_is_refused(self) -> None:
        token = "Bearer " + "t0k3n." * 6
        with self.assertRaises(SecretLeakError) as caught:
            scan_for_secrets(b"xy" + token.encode(), self.path)
        self.assertEqual(
            str(caught.exception),
            f"Refusing to write fixture {self.path}: it contains a bearer token at byte 2. "
            f"{SECRET_ADVICE}{ALLOW_ADVICE}",
        )

    def test_live_key_values_are_refused(self) -> None:
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
            with (
                self.subTest(name=name),
                mock.patch.dict(os.environ, {name: "live-value-0123456789"}),
            ):
                with self.assertRaises(SecretLeakError) as caught:
                    scan_for_secrets(b'{"echo": "live-value-0123456789"}', self.path)
                self.assertEqual(
                    str(caught.exception),
                    f"Refusing to write fixture {self.path}: it contains the value of {name} at "
                    f"byte 10. {SECRET_ADVICE}",
                )
                self.assertNotIn("live-value", str(caught.exception))

    def test_short_values_and_extra_secrets(self) -> None:
        os.environ["ANTHROPIC_API_KEY"] = "dummy"  # shorter than a real key: ordinary text
        self.assertEqual(live_secrets(), [])
        scan_for_secrets(b"a dummy value", self.path)
        extra = [("the proxy password", "hunter2-hunter2-hunter2")]
        self.assertEqual(live_secrets(extra), extra)
        with self.assertRaises(SecretLeakError) as caught:
            scan_for_secrets(b"pw=hunter2-hunter2-hunter2", self.path, extra)
        self.assertIn(
            "it contains the value of the proxy password at byte 3.", str(caught.exception)
        )

    def test_write_document_refuses_and_writes_nothing(self) -> None:
        write_document(self.path, {"kind": "generic", "response": "old"})
        before = self.path.read_bytes()
        with self.assertRaises(SecretLeakError):
            write_document(self.path, {"kind": "generic", "response": f"key {KEY_SHAPED}"})
        self.assertEqual(self.path.read_bytes(), before)
        self.assertEqual(entries(self.dir), [self.path.name])


class ErrorsTest(unittest.TestCase):
    def test_builtin_bases(self) -> None:
        rows: list[tuple[type[VCRError], type[BaseException]]] = [
            (ConfigError, ValueError),
            (FixtureMissingError, LookupError),
            (FixtureCorruptError, ValueError),
            (FixtureWriteError, OSError),
            (FixtureValueError, TypeError),
            (SecretLeakError, ValueError),
            (LockTimeoutError, TimeoutError),
        ]
        for error, base in rows:
            with self.subTest(error=error.__name__):
                self.assertTrue(issubclass(error, VCRError))
                self.assertTrue(issubclass(error, base))

    def test_errors_pickle_with_their_path(self) -> None:
        error = FixtureMissingError("Fixture missing: x.json.", Path("/f/x.json"))
        copy = pickle.loads(pickle.dumps(error))
        self.assertIs(type(copy), FixtureMissingError)
        self.assertEqual(str(copy), "Fixture missing: x.json.")
        self.assertEqual(copy.path, Path("/f/x.json"))
        self.assertIsNone(ConfigError("bad").path)


class FetchTest(StoreTestCase):
    def settings(self, mode: str) -> Any:
        return load_settings(mode=mode, fixtures_dir=self.dir)

    def test_auto_records_once_then_replays(self) -> None:
        calls: list[int] = []

        def record() -> dict[str, Any]:
            calls.append(1)
            return {"kind": "generic", "response": len(calls)}

        first = fetch(self.path, self.settings("auto"), record)
        second = fetch(self.path, self.settings("auto"), record)
        assert first is not None
        assert second is not None
        self.assertTrue(first.recorded)
        self.assertFalse(second.recorded)
        self.assertEqual(first.doc, {FORMAT_KEY: 1, "kind": "generic", "response": 1})
        self.assertEqual(second.doc, first.doc)
        self.assertEqual(calls, [1])
        self.assertEqual((self.dir / LOCK_FOLDER / ".gitignore").read_text(encoding="utf-8"), "*\n")

    def test_replay_miss_and_record_overwrite(self) -> None:
        with self.assertRaises(FixtureMissingError) as caught:
            fetch(self.path, self.settings("replay"), lambda: {"response": 1})
        self.assertEqual(str(caught.exception), missing_message(self.path))
        self.assertFalse(self.path.exists())
        fetch(self.path, self.settings("record"), lambda: {"response": 1})
        outcome = fetch(self.path, self.settings("record"), lambda: {"response": 2})
        assert outcome is not None
        self.assertTrue(outcome.recorded)
        self.assertEqual(read_document(self.path), {FORMAT_KEY: 1, "response": 2})

    def test_recorder_may_decline(self) -> None:
        self.assertIsNone(fetch(self.path, self.settings("auto"), lambda: None))
        self.assertFalse(self.path.exists())

    def test_lock_timeout(self) -> None:
        os.environ["VCR_LOCK_TIMEOUT"] = "0.05"
        settings = self.settings("auto")
        self.assertIs(settings.mode, Mode.AUTO)
        holder = lock_for(self.path)
        acquired = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with holder:
                acquired.set()
                release.wait()

        thread = threading.Thread(target=hold)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(release.set)
        acquired.wait()
        expected = (
            f"Timed out after 0.05 s waiting for the lock of {self.path}: another process is "
            f"recording it. Raise VCR_LOCK_TIMEOUT, or delete a stale {self.dir / LOCK_FOLDER} "
            "entry if no process is recording."
        )
        with self.assertRaises(LockTimeoutError) as caught:
            fetch(self.path, settings, lambda: {"response": 1})
        self.assertEqual(str(caught.exception), expected)

        async def record() -> dict[str, Any]:
            return {"response": 1}

        with self.assertRaises(LockTimeoutError) as caught:
            asyncio.run(afetch(self.path, settings, record))
        self.assertEqual(str(caught.exception), expected)
        self.assertFalse(self.path.exists())


if __name__ == "__main__":
    unittest.main()
