"""Settings reject nonsense with a ``ConfigError`` naming the variable, and the lock wait
means the same for sync and async callers (issue #10)."""

from __future__ import annotations

import asyncio
import os
import time
import unittest
from typing import Any

import pytest

from tests.support.helpers.env import patch_env, temp_dir
from vcr_kit import ConfigError, LockTimeoutError
from vcr_kit._core.config import load_settings
from vcr_kit._engine.policy import afetch, fetch
from vcr_kit._store.locks import lock_for

pytestmark = pytest.mark.inprocess

LOCK_MESSAGE = (
    "VCR_LOCK_TIMEOUT={!r} is not a number of seconds "
    "(0 or more; 0 means do not wait for another process's recording)."
)
FLAG_MESSAGE = "{}={!r} is not a yes/no value; use 1 or 0 (or true/false, yes/no, on/off)."


class LockTimeoutSettingTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.folder = temp_dir(self)

    def timeout(self, value: str) -> float:
        os.environ["VCR_LOCK_TIMEOUT"] = value
        return load_settings(fixtures_dir=self.folder).lock_timeout

    def test_nonsense_is_refused_naming_the_variable(self) -> None:
        for value in ("-5", "-0.1", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "soon"):
            with self.subTest(value=value), self.assertRaises(ConfigError) as caught:
                self.timeout(value)
            self.assertEqual(str(caught.exception), LOCK_MESSAGE.format(value))

    def test_numbers_zero_and_empty(self) -> None:
        self.assertEqual(self.timeout("2.5"), 2.5)
        self.assertEqual(self.timeout(" 3 "), 3.0)
        self.assertEqual(self.timeout("0"), 0.0)
        self.assertEqual(self.timeout(""), 600.0)


class FlagSettingTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.folder = temp_dir(self)

    def test_yes_no_variables_refuse_other_words(self) -> None:
        for name in ("VCR_RECORD", "FORCE_VCR", "VCR_REPORT"):
            for value in ("maybe", "2", "enabled"):
                with self.subTest(name=name, value=value):
                    patch_env(self, **{name: value})
                    with self.assertRaises(ConfigError) as caught:
                        load_settings(fixtures_dir=self.folder)
                    self.assertEqual(str(caught.exception), FLAG_MESSAGE.format(name, value))

    def test_yes_no_words(self) -> None:
        for value, expected in (
            ("1", True),
            ("YES", True),
            (" on ", True),
            ("0", False),
            ("false", False),
            ("", False),
            ("Off", False),
        ):
            with self.subTest(value=value):
                patch_env(self, FORCE_VCR=value)
                self.assertIs(load_settings(fixtures_dir=self.folder).forced, expected)

    def test_ci_stays_lenient(self) -> None:
        # The contract: any non-empty CI value but 0/false means CI (CI systems use
        # their own words); only vcr_kit's own variables are strict.
        patch_env(self, CI="woodpecker")
        self.assertTrue(load_settings(fixtures_dir=self.folder).ci_locked)


class SameWaitSyncAndAsyncTest(unittest.TestCase):
    """A lock held by someone else: sync and async callers wait the same time, then fail."""

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self)
        self.path = self.folder / "held-0123456789ab.json"
        self.holder = lock_for(self.path)
        # Another FileLock object on the same file: flock conflicts across open files, so
        # this process's own fetch cannot take it either (as another process could not).
        self.holder.acquire()
        self.addCleanup(self.holder.release)

    def never_called(self) -> Any:
        self.fail("the recorder ran although the lock was held")

    async def anever_called(self) -> Any:
        self.fail("the recorder ran although the lock was held")

    def waits(self, timeout: str) -> tuple[float, float]:
        os.environ["VCR_LOCK_TIMEOUT"] = timeout
        settings = load_settings(mode="auto", fixtures_dir=self.folder)
        start = time.monotonic()
        with self.assertRaises(LockTimeoutError):
            fetch(self.path, settings, self.never_called)
        sync = time.monotonic() - start
        start = time.monotonic()
        with self.assertRaises(LockTimeoutError):
            asyncio.run(afetch(self.path, settings, self.anever_called))
        return sync, time.monotonic() - start

    def test_zero_fails_at_once_for_both(self) -> None:
        sync, async_ = self.waits("0")
        self.assertLess(sync, 1.0)
        self.assertLess(async_, 1.0)

    def test_a_timeout_is_waited_by_both(self) -> None:
        sync, async_ = self.waits("0.4")
        self.assertGreaterEqual(sync, 0.4)
        self.assertGreaterEqual(async_, 0.4)

    def test_negative_is_refused_for_both(self) -> None:
        # On main a negative value made filelock wait forever (sync) and the async
        # loop fail at once: the same setting meant opposite things.
        os.environ["VCR_LOCK_TIMEOUT"] = "-5"
        with self.assertRaises(ConfigError):
            load_settings(mode="auto", fixtures_dir=self.folder)


if __name__ == "__main__":
    unittest.main()
