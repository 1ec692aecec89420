"""``prune`` never deletes what a test may still use: real pytest and unittest runs of
a small project, each narrowed one way, then ``vcr_kit prune --yes``."""

from __future__ import annotations

import importlib.util
import json
import shutil
import unittest
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.support.helpers.cli_support import (
    backdate,
    cli,
    fixture_asking,
    make_suite_project,
    run_pytest,
    run_unittest,
)
from tests.support.helpers.env import patch_env, start_server, temp_dir, working_dir

pytestmark = pytest.mark.child

TESTS = {"a": ["a1", "a2"], "b": ["b1", "b2"]}
ALL = [name for names in TESTS.values() for name in names]
ORPHAN = "orphan-0123456789ab.json"


class PruneCase(unittest.TestCase):
    """Four tests, each with its own fixture, recorded by one complete pytest run, and
    one orphan fixture no test uses (older than every run). Recorded once for the
    module (``setUpModule``); each test works in its own copy."""

    server: ClassVar[Any]
    template: ClassVar[Path]

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.root = temp_dir(self)
        shutil.copytree(self.template, self.root, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        self.fixtures = self.root / "fixtures"
        self.used = {name: fixture_asking(self.fixtures, name).name for name in ALL}

    def pytest(self, *args: str, status: int = 0, **env: str) -> None:
        done = run_pytest(self.root, self.server.url, *args, CI="true", **env)
        self.assertEqual(done.returncode, status, done.stdout + done.stderr)

    def unittest(self, *args: str, status: int = 0, **env: str) -> None:
        done = run_unittest(self.root, self.server.url, *args, CI="true", **env)
        self.assertEqual(done.returncode, status, done.stdout + done.stderr)

    def prune(self, *args: str) -> tuple[int, str, str]:
        with working_dir(self.root):
            return cli("prune", *args)

    def names(self) -> set[str]:
        return {p.name for p in self.fixtures.glob("*.json")}

    def assert_every_used_fixture_kept(self) -> None:
        _, out, _ = self.prune("--yes")
        self.assertEqual(self.names() - {ORPHAN}, set(self.used.values()), out)

    def assert_partial(self, why: str) -> None:
        """The last run is not the basis of `unused`: the first, complete run still is,
        so only the orphan is unused, and the later run is named as not complete."""
        with working_dir(self.root):
            status, out, err = cli("unused")
        self.assertEqual((status, err), (0, ""), out)
        self.assertEqual(out.splitlines()[:2], [
            f"fixtures/{ORPHAN}",
            "vcr_kit: 1 of 5 fixtures unused by the last complete run",
        ])  # fmt: skip
        self.assertRegex(
            out.splitlines()[2],
            r"^vcr_kit: based on run \S+, finished \d{4}-\d\d-\d\d \d\d:\d\d, "
            r"pytest -q -p no:cacheprovider: complete \(every one of the 4 collected "
            r"tests passed\)$",
        )
        self.assert_every_used_fixture_kept()
        # and the partial run alone drives nothing: its folder, judged by it only
        for record in self.fixtures.glob(".runs/*/*.json"):
            if why in record.read_text(encoding="utf-8"):
                break
        else:
            raise AssertionError(f"no run record says {why!r}")


_MODULE = unittest.TestCase()  # holds the module's cleanups


def setUpModule() -> None:
    PruneCase.server = start_server(_MODULE)
    template = temp_dir(_MODULE)
    fixtures = make_suite_project(template, TESTS)
    done = run_pytest(template, PruneCase.server.url)  # records every fixture
    if done.returncode != 0:
        raise AssertionError(done.stdout + done.stderr)
    shutil.copyfile(fixture_asking(fixtures, "a1"), fixtures / ORPHAN)
    # Every fixture, the orphan too, written an hour ago: the tests' runs start
    # strictly after them, so each is kept for being used, never for being new.
    backdate(fixtures)
    PruneCase.template = template


def tearDownModule() -> None:
    _MODULE.doCleanups()


class PartialRunsTest(PruneCase):
    # -- the three failing examples of issue 15 -----------------------------------

    def test_a_unittest_pattern_is_not_the_whole_suite(self) -> None:
        self.unittest("discover", "-p", "test_a*.py")
        with working_dir(self.root):
            _, out, _ = cli("unused")
        self.assertEqual(
            out.splitlines()[3],
            "vcr_kit: 1 later run not complete, so only what it used is kept (vcr_kit unused "
            "--all-runs lists it)",
        )
        with working_dir(self.root):
            _, out, _ = cli("unused", "--all-runs")
        self.assertRegex(
            out.splitlines()[3],
            r"^vcr_kit: not complete, so only what it used is kept: run \S+, finished "
            r"[-\d: ]+, 'python -m unittest' discover -p 'test_a\*\.py' \(the pattern "
            r"'test_a\*\.py' was given \(not 'test\*\.py'\)\)$",
        )
        self.assert_partial("the pattern 'test_a*.py' was given (not 'test*.py')")

    def test_pytest_ignore_is_not_the_whole_suite(self) -> None:
        self.pytest("--ignore=tests/test_b.py")
        self.assert_partial("--ignore was given (an option vcr_kit does not know)")

    def test_a_test_skipped_by_skipif_makes_a_unittest_run_partial(self) -> None:
        self.unittest(SKIP_TESTS="b1")
        self.assert_partial("1 test skipped")

    def test_a_test_skipped_by_skipif_makes_a_pytest_run_partial(self) -> None:
        self.pytest(SKIP_TESTS="b1")
        self.assert_partial("1 test was skipped")

    # -- more ways to narrow a run --------------------------------------------------

    def test_a_failing_unittest_run_is_partial(self) -> None:
        self.unittest(FAIL_TESTS="a2", status=1)
        self.assert_partial("1 test failed or errored")

    def test_exitfirst_after_a_failure_is_partial(self) -> None:
        self.pytest("-x", FAIL_TESTS="a1", status=1)
        self.assert_partial("-x was given; 1 test failed; the session stopped early")

    def test_an_option_vcr_kit_does_not_know_makes_the_run_partial(self) -> None:
        self.pytest("-o", "python_files=test_a.py")
        self.assert_partial("-o was given (it may change what is collected)")

    def test_pytest_addopts_are_judged_too(self) -> None:
        self.pytest(PYTEST_ADDOPTS="-k a1")
        self.assert_partial("-k was given; 3 tests were deselected")

    def test_an_interrupted_unittest_run_is_partial(self) -> None:
        self.unittest(INTERRUPT_TESTS="b1", status=-2)  # Python ends by SIGINT, as on Ctrl-C
        self.assert_partial("the run was interrupted")

    def test_an_interrupted_pytest_run_is_partial(self) -> None:
        self.pytest(INTERRUPT_TESTS="b1", status=2)
        self.assert_partial("pytest exited with status 2")

    def test_a_skip_in_set_up_class_makes_a_unittest_run_partial(self) -> None:
        self.unittest(SKIP_FILES="b")
        self.assert_partial("1 test skipped")  # unittest counts the class once

    def test_a_unittest_run_in_a_project_set_up_for_pytest_is_partial(self) -> None:
        (self.root / "conftest.py").write_text("", encoding="utf-8")
        self.unittest()
        self.assert_partial(
            "the project is set up for pytest (conftest.py): python -m unittest may not run "
            "all its tests (set VCR_RUN_COMPLETE=1 if it does)"
        )

    def test_a_start_folder_is_a_part_unless_vouched_for_and_never_a_skip(self) -> None:
        self.unittest("discover", "-s", "tests")
        self.assert_partial("-s tests was given (a start folder other than the current one)")
        self.prune("--undo")  # the orphan back, for the next run
        self.unittest("discover", "-s", "tests", SKIP_TESTS="a1", VCR_RUN_COMPLETE="1")
        self.assert_partial("1 test skipped")
        self.prune("--undo")
        self.unittest("discover", "-s", "tests", VCR_RUN_COMPLETE="1")
        with working_dir(self.root):
            _, out, _ = cli("unused")
        self.assertRegex(
            out.splitlines()[2],
            r"'python -m unittest' discover -s tests: complete \(every test of python -m "
            r"unittest passed\)$",
        )

    def test_unittest_test_names_are_a_part(self) -> None:
        self.unittest("tests.test_a")
        self.assert_partial("test names were given (tests.test_a)")


class UndoTest(PruneCase):
    def test_a_complete_unittest_run_prunes_the_orphan_and_the_prune_can_be_undone(
        self,
    ) -> None:
        self.unittest()
        with working_dir(self.root):
            status, out, err = cli("unused")
        self.assertEqual((status, err), (0, ""), out)
        lines = out.splitlines()
        self.assertEqual(lines[:2], [
            f"fixtures/{ORPHAN}", "vcr_kit: 1 of 5 fixtures unused by the last complete run",
        ])  # fmt: skip
        self.assertRegex(
            lines[2],
            r"^vcr_kit: based on run \S+, finished [-\d: ]+, 'python -m unittest': complete "
            r"\(every test of python -m unittest passed\)$",
        )

        status, out, _ = self.prune("--yes")
        self.assertEqual(status, 0, out)
        self.assertEqual(out.splitlines()[0], f"unused  fixtures/{ORPHAN}")
        self.assertRegex(
            out.splitlines()[-1],
            r"^vcr_kit: moved 1 unused fixture and 0 debris files to "
            r"fixtures/\.trash/\d{8}T\d{6}/ \(undo: vcr_kit prune --undo; delete for good: "
            r"vcr_kit prune --empty-trash\)$",
        )
        self.assertEqual(self.names(), set(self.used.values()))
        (kept,) = self.fixtures.glob(f".trash/*/{ORPHAN}")
        self.assertEqual((self.fixtures / ".trash" / ".gitignore").read_text(), "*\n")

        status, out, err = self.prune("--undo")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(out.splitlines(), [
            f"restored  fixtures/{ORPHAN}",
            f"vcr_kit: restored 1 file from fixtures/.trash/{kept.parent.name}/",
        ])  # fmt: skip
        self.assertIn(ORPHAN, self.names())
        self.assertEqual(
            (self.fixtures / ORPHAN).read_bytes(), (self.fixtures / self.used["a1"]).read_bytes()
        )
        self.assertEqual(self.prune("--undo"), (
            1, "", "vcr_kit: nothing to undo (fixtures/.trash/ holds no prune)\n"
        ))  # fmt: skip

        self.prune("--yes")
        emptied = "vcr_kit: emptied fixtures/.trash/ (1 file deleted)\n"
        self.assertEqual(self.prune("--empty-trash"), (0, emptied, ""))
        self.assertFalse((self.fixtures / ".trash").exists())
        self.assertEqual(self.names(), set(self.used.values()))

    def test_a_unittest_run_record_names_the_test_beside_each_fixture(self) -> None:
        self.unittest()
        (record,) = [
            json.loads(p.read_text(encoding="utf-8"))
            for p in self.fixtures.glob(".runs/*/*.json")
            if "unittest" in p.read_text(encoding="utf-8")
        ]
        self.assertEqual(record["tests"], {
            self.used[name]: [f"tests.test_{stem}.Suite.test_{name}"]
            for stem, names in TESTS.items() for name in names
        })  # fmt: skip

    def test_undo_never_overwrites_a_file_that_took_the_name(self) -> None:
        self.pytest()
        self.prune("--yes")
        (self.fixtures / ORPHAN).write_text("{}", encoding="utf-8")
        status, out, _ = self.prune("--undo")
        self.assertEqual(status, 1)
        self.assertIn(
            f"kept in the trash  fixtures/{ORPHAN} (a different file has its name now)", out
        )
        self.assertEqual((self.fixtures / ORPHAN).read_text(encoding="utf-8"), "{}")
        self.assertEqual(len(list(self.fixtures.glob(f".trash/*/{ORPHAN}"))), 1)


@unittest.skipUnless(importlib.util.find_spec("xdist"), "pytest-xdist is not installed")
class XdistTest(PruneCase):
    def test_a_whole_xdist_run_is_judged_by_its_controller(self) -> None:
        done = run_pytest(self.root, self.server.url, "-n", "2", CI="true", VCR_REPORT="1")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        # one summary line, the controller's: each worker knows it is one
        summaries = [line for line in done.stderr.splitlines() if " replayed, " in line]
        self.assertEqual(len(summaries), 1, done.stderr)
        with working_dir(self.root):
            _, out, _ = cli("unused")
        self.assertEqual(out.splitlines()[0], f"fixtures/{ORPHAN}")
        self.assertRegex(
            out.splitlines()[2],
            r", pytest -q -p no:cacheprovider -n 2, 3 processes: complete \(every one of "
            r"the 4 collected tests passed\)$",
        )

    def test_a_skip_in_a_worker_makes_the_xdist_run_partial(self) -> None:
        self.pytest("-n", "2", SKIP_TESTS="a2")
        self.assert_partial("1 test was skipped")


class ShardsTest(PruneCase):
    """Two shards of one run (one VCR_RUN_ID), on two machines, gathered."""

    def test_shards_gathered_are_judged_on_their_union(self) -> None:
        other = temp_dir(self) / "checkout"
        shutil.copytree(self.root, other)
        run = "ci-1234"
        self.pytest("-k", "test_a", VCR_RUN_ID=run)
        done = run_pytest(other, self.server.url, "-k", "test_b", CI="true", VCR_RUN_ID=run)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

        # one shard alone is a part of the suite: the first run stays the basis
        status, out, _ = self.prune("--dry-run")
        self.assertRegex(out, r"vcr_kit: based on run \d{8}T")

        # gather: the other machine's records, copied beside this one's
        shutil.copytree(other / "fixtures" / ".runs" / run, self.fixtures / ".runs" / run,
                        dirs_exist_ok=True)  # fmt: skip
        with working_dir(self.root):
            status, out, err = cli("unused")
        self.assertEqual((status, err), (0, ""), out)
        self.assertEqual(out.splitlines()[0], f"fixtures/{ORPHAN}")
        self.assertEqual(
            out.splitlines()[2].split(": complete ")[1],
            "(every one of the 4 collected tests passed, across 2 processes)",
        )
        self.assertIn(f"based on run {run}, ", out)
        self.assert_every_used_fixture_kept()
        self.assertEqual(self.names(), set(self.used.values()))

    def test_a_shard_that_used_no_fixture_still_counts(self) -> None:
        (self.root / "tests" / "test_plain.py").write_text(
            "import unittest\n\n\nclass Plain(unittest.TestCase):\n"
            "    def test_plain(self):\n        pass\n",
            encoding="utf-8",
        )
        run = "ci-7"
        self.pytest("-k", "not plain", VCR_RUN_ID=run)
        with working_dir(self.root):
            _, out, _ = cli("unused")
        self.assertIn("based on run 2", out)  # one shard: the earlier complete run
        self.pytest("-k", "plain", VCR_RUN_ID=run)  # no VCR test: its record still goes
        with working_dir(self.root):
            _, out, _ = cli("unused")
        self.assertIn(f"based on run {run}, finished ", out.splitlines()[2])
        self.assertTrue(out.splitlines()[2].endswith(
            ": complete (every one of the 5 collected tests passed, across 2 processes)"
        ), out)  # fmt: skip

    def test_shards_that_left_a_test_out_are_partial(self) -> None:
        run = "ci-99"
        self.pytest("-k", "test_a", VCR_RUN_ID=run)
        self.pytest("-k", "test_b1", VCR_RUN_ID=run)
        with working_dir(self.root):
            _, out, _ = cli("unused")
        self.assertIn("based on run 2", out)  # the first, complete run (a date id)
        record = next((self.fixtures / ".runs" / run).glob("*.json")).read_text()
        self.assertIn('"complete": false', record)
        from vcr_kit._ledger.run_records import read_runs

        (shards,) = [r for r in read_runs([self.fixtures]) if r.id == run]
        self.assertFalse(shards.complete)
        self.assertEqual(
            shards.why[-1],
            "1 of 4 tests passed in no process of the run (first: tests/test_b.py::Suite::test_b2)",
        )


if __name__ == "__main__":
    unittest.main()
