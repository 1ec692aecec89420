"""``vcr_kit._core.config``: modes, precedence, CI, fixtures folder, activation, ``.env``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import environ_without_vcr, patch_env, temp_dir, working_dir
from vcr_kit import ConfigError, Mode
from vcr_kit._core.config import activated, is_active, load_settings, project_root


def mode_message(source: str, value: str) -> str:
    return f"{source}={value!r} is not a mode vcr_kit knows; use one of: auto, replay, record, off."


@pytest.mark.inprocess
class ModeTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.folder = str(temp_dir(self))

    def mode(self, option: str | Mode | None = None) -> Mode:
        return load_settings(mode=option, fixtures_dir=self.folder).mode

    def test_default_is_auto(self) -> None:
        self.assertIs(self.mode(), Mode.AUTO)
        self.assertFalse(load_settings(fixtures_dir=self.folder).ci_locked)

    def test_ci_makes_replay_the_default(self) -> None:
        for value in ("true", "1", "yes", "TRUE", " True ", "on"):
            with self.subTest(CI=value):
                os.environ["CI"] = value
                self.assertIs(self.mode(), Mode.REPLAY)
                self.assertTrue(load_settings(fixtures_dir=self.folder).ci_locked)

    def test_false_ci_values_keep_auto(self) -> None:
        for value in ("false", "0", "", "no", "off", "FALSE", " 0 "):
            with self.subTest(CI=value):
                os.environ["CI"] = value
                self.assertIs(self.mode(), Mode.AUTO)
                self.assertFalse(load_settings(fixtures_dir=self.folder).ci_locked)

    def test_vcr_record_allows_recording_in_ci(self) -> None:
        os.environ["CI"] = "true"
        os.environ["VCR_RECORD"] = "1"
        self.assertIs(self.mode(), Mode.AUTO)
        self.assertFalse(load_settings(fixtures_dir=self.folder).ci_locked)
        os.environ["VCR_RECORD"] = "0"
        self.assertIs(self.mode(), Mode.REPLAY)

    def test_precedence_env_then_option_then_ci(self) -> None:
        os.environ["CI"] = "true"
        self.assertIs(self.mode(), Mode.REPLAY)
        self.assertIs(self.mode("record"), Mode.RECORD)
        self.assertIs(self.mode(Mode.OFF), Mode.OFF)
        os.environ["VCR_MODE"] = "auto"
        self.assertIs(self.mode(), Mode.AUTO)
        self.assertIs(self.mode("record"), Mode.AUTO)
        os.environ["VCR_MODE"] = "record"
        self.assertIs(self.mode("replay"), Mode.RECORD)
        del os.environ["CI"]
        os.environ["VCR_MODE"] = "off"
        self.assertIs(self.mode("auto"), Mode.OFF)

    def test_every_mode_by_name(self) -> None:
        for mode in Mode:
            with self.subTest(mode=mode.value):
                os.environ["VCR_MODE"] = mode.value
                self.assertIs(self.mode(), mode)
                os.environ["VCR_MODE"] = f" {mode.value.upper()} "
                self.assertIs(self.mode(), mode)
                del os.environ["VCR_MODE"]
                self.assertIs(self.mode(mode.value), mode)
                self.assertEqual(str(mode), mode.value)

    def test_empty_vcr_mode_is_unset(self) -> None:
        os.environ["VCR_MODE"] = ""
        self.assertIs(self.mode(), Mode.AUTO)
        self.assertFalse(load_settings(fixtures_dir=self.folder).forced)

    def test_unknown_vcr_mode(self) -> None:
        os.environ["VCR_MODE"] = "bogus"
        with self.assertRaises(ConfigError) as caught:
            self.mode()
        self.assertEqual(str(caught.exception), mode_message("VCR_MODE", "bogus"))
        self.assertIsInstance(caught.exception, ValueError)

    def test_unknown_mode_option(self) -> None:
        with self.assertRaises(ConfigError) as caught:
            self.mode("sometimes")
        self.assertEqual(str(caught.exception), mode_message("mode", "sometimes"))

    def test_lock_timeout(self) -> None:
        self.assertEqual(load_settings(fixtures_dir=self.folder).lock_timeout, 600.0)
        os.environ["VCR_LOCK_TIMEOUT"] = "2.5"
        self.assertEqual(load_settings(fixtures_dir=self.folder).lock_timeout, 2.5)
        os.environ["VCR_LOCK_TIMEOUT"] = "soon"
        with self.assertRaises(ConfigError) as caught:
            load_settings(fixtures_dir=self.folder)
        self.assertEqual(
            str(caught.exception),
            "VCR_LOCK_TIMEOUT='soon' is not a number of seconds "
            "(0 or more; 0 means do not wait for another process's recording).",
        )


@pytest.mark.inprocess
class FixturesDirTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.root = temp_dir(self)

    def test_vcr_fixtures_dir_absolute(self) -> None:
        target = self.root / "somewhere" / "fx"
        os.environ["VCR_FIXTURES_DIR"] = str(target)
        self.assertEqual(load_settings().fixtures_dir, target)

    def test_vcr_fixtures_dir_relative_to_cwd(self) -> None:
        os.environ["VCR_FIXTURES_DIR"] = "rel/fx"
        with working_dir(self.root) as cwd:
            self.assertEqual(load_settings().fixtures_dir, cwd / "rel" / "fx")
            self.assertTrue(load_settings().fixtures_dir.is_absolute())

    def test_option_beats_vcr_fixtures_dir(self) -> None:
        os.environ["VCR_FIXTURES_DIR"] = str(self.root / "from-env")
        option = self.root / "from-option"
        self.assertEqual(load_settings(fixtures_dir=option).fixtures_dir, option)
        with working_dir(self.root) as cwd:
            self.assertEqual(load_settings(fixtures_dir="opt").fixtures_dir, cwd / "opt")

    def test_default_is_fixtures_at_the_project_root(self) -> None:
        for marker in ("setup.cfg", "pyproject.toml", "setup.py", "tox.ini", ".git"):
            with self.subTest(marker=marker), tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp).resolve()
                if marker == ".git":
                    (root / marker).mkdir()
                else:
                    (root / marker).write_text("", encoding="utf-8")
                deep = root / "src" / "pkg"
                deep.mkdir(parents=True)
                with working_dir(deep):
                    self.assertEqual(load_settings().fixtures_dir, root / "fixtures")
                    self.assertEqual(project_root(), root)
                with working_dir(root):
                    self.assertEqual(load_settings().fixtures_dir, root / "fixtures")

    def test_nearest_marker_wins(self) -> None:
        (self.root / ".git").mkdir()
        inner = self.root / "packages" / "inner"
        inner.mkdir(parents=True)
        (inner / "pyproject.toml").write_text("", encoding="utf-8")
        (inner / "tests").mkdir()
        with working_dir(inner / "tests"):
            self.assertEqual(load_settings().fixtures_dir, inner / "fixtures")
        self.assertEqual(project_root(self.root / "packages"), self.root)


@pytest.mark.inprocess
class ActivationTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_inactive_by_default(self) -> None:
        self.assertFalse(is_active())
        self.assertFalse(is_active(load_settings(fixtures_dir="fx")))

    def test_vcr_mode_activates(self) -> None:
        for mode in ("auto", "replay", "record", "off"):
            with self.subTest(mode=mode):
                os.environ["VCR_MODE"] = mode
                self.assertTrue(is_active())
                self.assertTrue(is_active(load_settings(fixtures_dir="fx")))

    def test_force_vcr_activates(self) -> None:
        os.environ["FORCE_VCR"] = "1"
        self.assertTrue(is_active())
        self.assertTrue(load_settings(fixtures_dir="fx").forced)
        os.environ["FORCE_VCR"] = "0"
        self.assertFalse(is_active())
        self.assertFalse(load_settings(fixtures_dir="fx").forced)

    def test_activated_block(self) -> None:
        self.assertFalse(is_active())
        with activated():
            self.assertTrue(is_active())
            self.assertTrue(is_active(load_settings(fixtures_dir="fx")))
            with activated():
                self.assertTrue(is_active())
            self.assertTrue(is_active())
        self.assertFalse(is_active())

    def test_activated_ends_on_error(self) -> None:
        with self.assertRaises(KeyError), activated():
            raise KeyError("boom")
        self.assertFalse(is_active())

    def test_activated_with_an_unknown_mode(self) -> None:
        with self.assertRaises(ConfigError) as caught, activated(mode="bogus"):
            pass
        self.assertEqual(str(caught.exception), mode_message("vcr_mode", "bogus"))
        self.assertFalse(is_active())


DOTENV_PROBE = textwrap.dedent(
    """
    import json, os
    from vcr_kit._core.config import is_active, load_settings
    settings = load_settings()
    print(json.dumps({
        "mode": settings.mode.value,
        "active": is_active(),
        "fixtures_dir": str(settings.fixtures_dir),
        "VCR_MODE": os.environ.get("VCR_MODE"),
        "FORCE_VCR": os.environ.get("FORCE_VCR"),
    }))
    """
)


@pytest.mark.child
class DotenvTest(unittest.TestCase):
    """``.env`` is loaded once per process, so each case runs in its own interpreter."""

    def test_dotenv_sets_missing_variables_and_never_overrides(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp).resolve()
            (root / "pyproject.toml").write_text("", encoding="utf-8")
            (root / ".env").write_text(
                "VCR_MODE=replay\nFORCE_VCR=1\nVCR_FIXTURES_DIR=from-dotenv\n", encoding="utf-8"
            )
            (root / "sub").mkdir()
            base = environ_without_vcr()
            cases = {
                "unset": (root, {}),
                "from a sub folder": (root / "sub", {}),
                "set": (root, {"VCR_MODE": "record", "VCR_FIXTURES_DIR": "mine"}),
                "set but empty": (root, {"VCR_MODE": ""}),
            }
            running = {
                label: subprocess.Popen(
                    [sys.executable, "-W", "error", "-c", DOTENV_PROBE],
                    cwd=cwd,
                    env={**base, **extra},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for label, (cwd, extra) in cases.items()
            }
            results = {}
            for label, process in running.items():
                out, err = process.communicate(timeout=120)
                self.assertEqual(process.returncode, 0, f"{label}: {err}")
                results[label] = json.loads(out)

        self.assertEqual(
            results["unset"],
            {
                "mode": "replay",
                "active": True,
                "fixtures_dir": str(root / "from-dotenv"),
                "VCR_MODE": "replay",
                "FORCE_VCR": "1",
            },
        )
        self.assertEqual(results["from a sub folder"]["mode"], "replay")
        self.assertEqual(
            results["from a sub folder"]["fixtures_dir"], str(root / "sub" / "from-dotenv")
        )
        self.assertEqual(
            results["set"],
            {
                "mode": "record",
                "active": True,
                "fixtures_dir": str(root / "mine"),
                "VCR_MODE": "record",
                "FORCE_VCR": "1",
            },
        )
        self.assertEqual(results["set but empty"]["VCR_MODE"], "")
        self.assertEqual(results["set but empty"]["mode"], "auto")


if __name__ == "__main__":
    unittest.main()
