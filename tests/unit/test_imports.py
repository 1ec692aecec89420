"""What ``import vcr_kit`` loads: the pure parts need neither the SDK nor an HTTP library."""

from __future__ import annotations

import subprocess
import sys
import unittest
from typing import ClassVar

import pytest

from tests.support.helpers.env import environ_without_vcr, temp_dir
from tests.support.helpers.paths import ROOT

pytestmark = [pytest.mark.child, pytest.mark.matrix]


PURE = """
import sys
import vcr_kit
after_import = sorted(m for m in sys.modules if m.startswith("vcr_kit"))
from vcr_kit import dehydrate
from vcr_kit._core import fixture_names as _keys
print(dehydrate.dehydrate('cost_usd="0.3"'), _keys.fixture_name({"q": 1}, "answer"))
with vcr_kit.fixture({"q": 1}, "answer", mode="auto", fixtures_dir=sys.argv[1]) as f:
    print(f.play(lambda: {"a": 42}))
loaded = sorted(m for m in ("anthropic", "httpx", "httpx2") if m in sys.modules)
print("loaded:", loaded)
print("after import:", after_import)
# last: resolving every public name may import the SDK
missing = [n for n in vcr_kit.__all__ if getattr(vcr_kit, n, None) is None]
print(missing, set(vcr_kit.__all__) <= set(dir(vcr_kit)))
"""


class ImportTest(unittest.TestCase):
    lines: ClassVar[list[str]]

    @classmethod
    def setUpClass(cls) -> None:
        # One child for the tests that read what PURE printed.
        holder = unittest.TestCase()
        cls.addClassCleanup(holder.doCleanups)
        env = environ_without_vcr()
        env.update(VCR_REPORT="0")  # FORCE_VCR would turn vcr_kit on at import (issue 30)
        done = subprocess.run(
            [sys.executable, "-c", PURE, str(temp_dir(holder))],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(done.stderr)
        cls.lines = done.stdout.splitlines()

    def test_the_pure_modules_and_the_generic_fixture_load_no_sdk_and_no_http_library(
        self,
    ) -> None:
        lines = self.lines
        self.assertRegex(lines[0], r'^cost_usd="\[COST\]" answer-[0-9a-f]{12}\.json$')
        self.assertEqual(lines[1], "{'a': 42}")
        self.assertEqual(lines[2], "loaded: []")

    def test_import_vcr_kit_loads_only_its_front_door(self) -> None:
        self.assertEqual(self.lines[3], "after import: ['vcr_kit', 'vcr_kit.errors']")

    def test_import_vcr_kit_adds_no_standard_module_it_only_annotates_with(self) -> None:
        # -S: no site, so nothing has loaded typing or pathlib before (an editable
        # install's finder does); vcr_kit is found through the path given.
        code = (
            "import sys\n"
            f"sys.path.insert(0, {str(ROOT)!r})\n"
            "before = set(sys.modules)\n"
            "import vcr_kit\n"
            "print(sorted({'typing', 'pathlib'} & (set(sys.modules) - before)))\n"
        )
        env = environ_without_vcr()
        done = subprocess.run(
            [sys.executable, "-S", "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        self.assertEqual((done.returncode, done.stdout, done.stderr), (0, "[]\n", ""))

    def test_every_public_name_resolves(self) -> None:
        self.assertEqual(self.lines[4:], ["[] True"])


if __name__ == "__main__":
    unittest.main()
