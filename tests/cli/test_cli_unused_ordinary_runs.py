"""``unused`` and ``prune`` after ordinary runs: the README's own first command,
``python -m unittest discover -s tests``, plain ``python -m unittest`` in a project
with a pytest section; a run that ran no test leaves no record; the output stays
short however many runs were made."""

from __future__ import annotations

import json
import shutil
import unittest
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.helpers.cli_support import (
    backdate,
    cli,
    fixture_asking,
    make_suite_project,
    run_pytest,
    run_unittest,
)
from tests.support.helpers.env import environ_without_vcr, start_server, temp_dir, working_dir
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.child

TESTS = {"a": ["a1", "a2"], "b": ["b1"]}
RUN_LINE = r"^vcr_kit: based on run \S+, finished [-\d: ]+, "


class ReadmeCommandTest(unittest.TestCase):
    def test_the_readme_first_command_is_an_ordinary_full_run(self) -> None:
        # The README's main job, in a copy of this project: examples/ replayed offline.
        root = temp_dir(self)
        for name in ("examples", "setup.cfg", "setup.py", "pyproject.toml"):
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(source, root / name)
        (root / "fixtures").mkdir()
        for fixture in (ROOT / "fixtures").glob("*.json"):
            shutil.copyfile(fixture, root / "fixtures" / fixture.name)
        env = {**environ_without_vcr(), "CI": "true", "VCR_REPORT": "0"}
        env.pop("ANTHROPIC_API_KEY", None)
        done = driver().run("unittest", ["discover", "-s", "examples", "-t", ".", "-v"],
                            cwd=root, env=env)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        with working_dir(root):
            status, out, err = cli("unused")
        self.assertEqual((status, err), (0, ""), out)
        count = len(list((root / "fixtures").glob("*.json")))
        lines = out.splitlines()
        self.assertEqual(
            lines[0], f"vcr_kit: 0 of {count} fixtures unused by the last complete run"
        )
        self.assertRegex(
            lines[1],
            RUN_LINE + r"'python -m unittest' discover -s examples -t \. -v: complete over the "
            r"TestCase tests in examples \(every test of python -m unittest passed\)$",
        )
        self.assertEqual(len(lines), 2, out)


class SuiteCase(unittest.TestCase):
    """A small project of VCRTestCase tests, recorded once for the module
    (``setUpModule``), with no run record yet; each test works in its own copy."""

    server: ClassVar[object]
    template: ClassVar[Path]

    def setUp(self) -> None:
        self.root = temp_dir(self)
        shutil.copytree(self.template, self.root, dirs_exist_ok=True)
        self.fixtures = self.root / "fixtures"

    def unittest(self, *args: str) -> None:
        done = run_unittest(self.root, self.server.url, *args, CI="true")  # type: ignore[attr-defined]
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def unused(self, *args: str) -> tuple[int, str, str]:
        with working_dir(self.root):
            return cli("unused", *args)

    def records(self) -> list[dict[str, object]]:
        return [json.loads(p.read_text(encoding="utf-8"))
                for p in self.fixtures.glob(".runs/*/*.json")]  # fmt: skip


_MODULE = unittest.TestCase()  # holds the module's cleanups


def setUpModule() -> None:
    SuiteCase.server = server = start_server(_MODULE)
    SuiteCase.template = template = temp_dir(_MODULE)
    fixtures = make_suite_project(template, TESTS)
    done = run_pytest(template, server.url)
    if done.returncode != 0:
        raise AssertionError(done.stdout + done.stderr)
    shutil.rmtree(fixtures / ".runs")  # each test's runs are its own
    backdate(fixtures)


def tearDownModule() -> None:
    _MODULE.doCleanups()


class UnittestRunsTest(SuiteCase):
    def test_discover_with_a_start_folder_is_a_full_run_of_that_folder(self) -> None:
        self.unittest("discover", "-s", "tests")
        status, out, err = self.unused()
        self.assertEqual((status, err), (0, ""), out)
        self.assertEqual(
            out.splitlines()[0], "vcr_kit: 0 of 3 fixtures unused by the last complete run"
        )
        self.assertRegex(
            out.splitlines()[1],
            RUN_LINE + r"'python -m unittest' discover -s tests: complete over the TestCase "
            r"tests in tests \(every test of python -m unittest passed\)$",
        )
        self.assertEqual(len(out.splitlines()), 2, out)

    def test_a_pytest_section_does_not_make_plain_unittest_partial_for_its_testcases(
        self,
    ) -> None:
        (self.root / "setup.cfg").write_text("[tool:pytest]\naddopts = -q\n", encoding="utf-8")
        orphan = self.fixtures / "orphan-0123456789ab.json"
        shutil.copyfile(fixture_asking(self.fixtures, "a1"), orphan)
        backdate(self.fixtures)
        self.unittest()
        status, out, err = self.unused()
        self.assertEqual((status, err), (0, ""), out)
        self.assertEqual(out.splitlines(), [
            "vcr_kit: 0 of 4 fixtures unused by the last complete run",
            out.splitlines()[1],
            "vcr_kit: 1 fixture kept: no complete run covered every test known to use it",
        ])  # fmt: skip
        self.assertRegex(
            out.splitlines()[1],
            RUN_LINE + r"'python -m unittest': complete over the TestCase tests in \. \(every "
            r"test of python -m unittest passed\)$",
        )

    def test_a_test_that_no_longer_uses_its_fixture_leaves_it_unused(self) -> None:
        # Known from an earlier run: test_a1 (tests/test_a.py) used a fixture it no
        # longer asks for. A full run of tests/ vouches for it: unused, and pruned.
        stale = self.fixtures / "post-v1-messages-0123456789ab.json"
        shutil.copyfile(fixture_asking(self.fixtures, "a1"), stale)
        backdate(self.fixtures)
        test_id = "tests.test_a.Suite.test_a1"
        record = {
            "run": "earlier", "pid": 1, "started": 1.0, "finished": 2.0, "runner": "unittest",
            "command": "python -m unittest tests.test_a", "complete": False,
            "why": "test names were given", "hard": True, "used": [stale.name],
            "tests": {stale.name: [test_id]},
            "test_files": {test_id: {"file": "../tests/test_a.py", "testcase": True}},
        }  # fmt: skip
        (self.fixtures / ".runs" / "earlier").mkdir(parents=True)
        (self.fixtures / ".runs" / "earlier" / "1.json").write_text(json.dumps(record))
        self.unittest("discover", "-s", "tests")
        status, out, err = self.unused()
        self.assertEqual((status, err), (0, ""), out)
        self.assertEqual(out.splitlines()[:2], [
            f"fixtures/{stale.name}", "vcr_kit: 1 of 4 fixtures unused by the last complete run",
        ])  # fmt: skip
        with working_dir(self.root):
            status, out, _ = cli("prune", "--yes")
        self.assertEqual(status, 0, out)
        self.assertFalse(stale.exists())
        self.assertEqual(len(list(self.fixtures.glob("*.json"))), 3)


class NoTestNoRecordTest(SuiteCase):
    def test_collect_only_leaves_no_record(self) -> None:
        done = run_pytest(self.root, self.server.url, "--co", CI="true")  # type: ignore[attr-defined]
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertEqual(self.records(), [])


if __name__ == "__main__":
    unittest.main()
