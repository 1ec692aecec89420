"""``unused`` and ``prune`` from the run records of real pytest runs of a small project."""

from __future__ import annotations

import unittest

import pytest

from tests.support.helpers.cli_support import backdate, cli, make_project, run_pytest
from tests.support.helpers.env import temp_dir, working_dir
from tests.support.helpers.loopback_case import LoopbackTestCase


@pytest.mark.child
class UnusedAfterARerecordTest(LoopbackTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.root = self.tmp
        self.fixtures = make_project(self.root)

    def pytest(self, *args: str, **env: str) -> str:
        done = run_pytest(self.root, self.server.url, *args, **env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stderr

    def names(self) -> list[str]:
        return sorted(p.name for p in self.fixtures.glob("*.json"))

    def test_a_changed_prompt_leaves_exactly_the_old_fixture_unused_and_prune_removes_it(
        self,
    ) -> None:
        self.pytest()
        first = set(self.names())
        self.assertEqual(len(first), 2)
        backdate(self.fixtures)  # the next run starts strictly after the old files were written
        self.pytest(GREETING="Say hello, louder.")
        (old,) = first - {_farewell(self)}
        self.assertEqual(len(self.names()), 3)

        with working_dir(self.root):
            status, out, err = cli("unused")
        self.assertEqual((status, err), (0, ""), out)
        lines = out.splitlines()
        self.assertEqual(lines[0], f"fixtures/{old}")
        self.assertEqual(lines[1], "vcr_kit: 1 of 3 fixtures unused by the last complete run")
        self.assertRegex(
            lines[2],
            r"^vcr_kit: based on run \S+, finished [-\d: ]+, pytest -q -p no:cacheprovider: "
            r"complete \(every one of the 2 collected tests passed\)$",
        )
        self.assertEqual(len(lines), 3)

        with working_dir(self.root):
            status, out, _ = cli("prune", "--dry-run")
        self.assertEqual(status, 0)
        self.assertTrue((self.fixtures / old).exists())
        self.assertIn(f"unused  fixtures/{old}", out)

        with working_dir(self.root):
            status, out, _ = cli("prune", "--yes")
        self.assertEqual(status, 0, out)
        self.assertRegex(
            out.splitlines()[-1],
            r"^vcr_kit: moved 1 unused fixture and 0 debris files to fixtures/\.trash/\S+/ ",
        )
        self.assertNotIn(old, self.names())
        self.assertEqual(len(self.names()), 2)

        self.server.reset_log()
        self.pytest(GREETING="Say hello, louder.", CI="true")  # replay only: a miss fails
        self.assertEqual(self.server.log, [])

    def test_partial_runs_cannot_drive_a_prune(self) -> None:
        self.pytest("-k", "greeting")
        with working_dir(self.root):
            status, out, err = cli("unused")
        self.assertEqual((status, out), (1, ""))
        self.assertRegex(
            err,
            r"^vcr_kit: no complete run recorded for fixtures/ \(the last run is not complete: "
            r"-k was given; 1 test was deselected; 1 of 2 tests passed in no process of the "
            r"run \(first: tests/test_ask.py::test_farewell\) \[run \S+, finished [-\d: ]+, "
            r"pytest -q -p no:cacheprovider -k greeting\]\); run the whole suite once \(pytest "
            r"with no selection, or python -m unittest\)\n$",
        )
        self.pytest("tests/test_ask.py::test_farewell")
        with working_dir(self.root):
            status, out, err = cli("prune", "--yes")
        self.assertEqual(status, 1)
        self.assertIn("test paths or node ids were given", err)
        self.assertEqual(out, "vcr_kit: nothing to prune\n")
        self.assertEqual(len(list(self.fixtures.glob("*.json"))), 2)

    def test_a_failing_run_is_not_complete(self) -> None:
        (self.root / "tests" / "test_fail.py").write_text(
            "def test_fails():\n    assert False\n", encoding="utf-8"
        )
        done = run_pytest(self.root, self.server.url)
        self.assertEqual(done.returncode, 1)
        with working_dir(self.root):
            status, _, err = cli("unused")
        self.assertEqual(status, 1)
        self.assertIn("pytest exited with status 1", err)


def _farewell(test: UnusedAfterARerecordTest) -> str:
    for path in test.fixtures.glob("*.json"):
        if "Say goodbye." in path.read_text(encoding="utf-8"):
            return path.name
    raise AssertionError("no farewell fixture")


@pytest.mark.inprocess
class NoRunRecordTest(unittest.TestCase):
    def test_a_folder_never_run_is_refused(self) -> None:
        folder = temp_dir(self)
        (folder / "a-000000000000.json").write_text("{}", encoding="utf-8")
        status, out, err = cli("unused", str(folder))
        self.assertEqual((status, out), (1, ""))
        self.assertIn("(no run recorded)", err)

    def test_a_missing_folder_is_a_usage_error(self) -> None:
        missing = temp_dir(self) / "nope"
        self.assertEqual(
            cli("prune", str(missing)),
            (2, "", f"vcr_kit: {missing} does not exist; name the fixtures folder\n"),
        )


if __name__ == "__main__":
    unittest.main()
