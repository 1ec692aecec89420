"""The judges of a test runner's command line (vcr_kit._integrations.run_scope) and of a run
from its records (vcr_kit._ledger.run_records.judge): pure functions."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import temp_dir
from tests.support.helpers.examples import examples
from vcr_kit._integrations.pytest_run import SessionTally
from vcr_kit._integrations.run_scope import Scope, judge_pytest_args, judge_unittest_argv
from vcr_kit._ledger.run_records import Record, Run, judge, vouches
from vcr_kit._ledger.runs import Coverage

pytestmark = pytest.mark.inprocess

HARMLESS = [
    ["-q"], ["-vv"], ["-p", "no:cacheprovider"], ["--tb=short"], ["--tb", "line"], ["-rA"],
    ["-n", "4"], ["-n4"], ["--durations=5"], ["-W", "error"], ["--strict-markers"],
    ["--cov=src"], ["--cov"], ["--color=yes"], ["-s"], ["-vs"], ["--ff"],
]  # fmt: skip
COLLECTION = [
    ["tests/test_a.py"], ["tests/test_a.py::test_x"], ["--ignore=tests/b"],
    ["--ignore", "tests/b"], ["--ignore-glob=*_b.py"], ["--lf"], ["--last-failed"],
    ["--co"], ["--collect-only"], ["-o", "python_files=a.py"], ["-c", "other.ini"],
    ["--rootdir=x"], ["--pyargs", "pkg"], ["-p", "myplugin"], ["--confcutdir=x"],
    ["--setup-only"], ["--some-plugin-option"], ["-Z"], ["--", "tests"],
]  # fmt: skip
SELECTION = [
    ["-k", "a"], ["-kfoo"], ["-m", "slow"], ["-x"], ["-qx"], ["--exitfirst"],
    ["--maxfail=2"], ["--maxfail", "2"], ["--deselect", "t.py::a"], ["--sw"],
    ["--splits", "3", "--group", "1"], ["--shard-id=0", "--num-shards=2"],
]  # fmt: skip


class PytestArgsTest(unittest.TestCase):
    def test_output_and_worker_options_leave_the_suite_whole(self) -> None:
        for args in HARMLESS:
            with self.subTest(args=args):
                self.assertEqual(judge_pytest_args(args), Scope())

    def test_what_may_change_the_collection_is_named(self) -> None:
        for args in COLLECTION:
            with self.subTest(args=args):
                self.assertTrue(judge_pytest_args(args).collection)

    def test_a_selection_among_the_collected_is_told_apart(self) -> None:
        for args in SELECTION:
            with self.subTest(args=args):
                scope = judge_pytest_args(args)
                self.assertEqual((bool(scope.collection), bool(scope.selection)), (False, True))

    def test_the_reasons_say_what_was_given(self) -> None:
        self.assertEqual(
            judge_pytest_args(["-q", "--ignore=tests/b.py", "-k", "a", "tests/x.py"]),
            Scope(
                ("--ignore was given (an option vcr_kit does not know)",
                 "test paths or node ids were given"),
                ("-k was given",),
                paths=("tests/x.py",),
                place=("test paths or node ids were given",),
            ),
        )  # fmt: skip

    @settings(max_examples=examples(200))
    @given(
        st.lists(st.sampled_from(HARMLESS)),
        st.sampled_from(COLLECTION + SELECTION),
        st.lists(st.sampled_from(HARMLESS)),
    )
    def test_one_narrowing_argument_anywhere_makes_the_run_partial(
        self, before: list[list[str]], narrowing: list[str], after: list[list[str]]
    ) -> None:
        args = [w for option in [*before, narrowing, *after] for w in option]
        self.assertFalse(judge_pytest_args(args).whole, args)
        whole = [w for option in [*before, *after] for w in option]
        self.assertTrue(judge_pytest_args(whole).whole, whole)

    @given(st.text(min_size=1).filter(lambda s: not s.startswith("-")))
    def test_any_word_that_is_not_an_option_is_a_test_path(self, word: str) -> None:
        self.assertIn("test paths or node ids were given", judge_pytest_args([word]).collection)


class UnittestArgvTest(unittest.TestCase):
    def setUp(self) -> None:
        self.here = temp_dir(self)
        (self.here / "tests").mkdir()

    def scope(self, *args: str) -> Scope:
        return judge_unittest_argv(["python -m unittest", *args], cwd=self.here)

    def test_the_default_discovery_is_whole(self) -> None:
        whole = [(), ("-v",), ("discover",), ("discover", "-s", ".", "-p", "test*.py"),
                 ("-b", "--locals"), ("discover", ".", "test*.py", str(self.here)),
                 ("--durations", "5"), ("discover", "--durations=3", "-t", ".")]  # fmt: skip
        for args in whole:
            with self.subTest(args=args):
                self.assertEqual(self.scope(*args), Scope())

    def test_a_pattern_a_start_folder_names_or_k_are_a_part(self) -> None:
        start = "-s tests was given (a start folder other than the current one)"
        cases = {
            ("discover", "-p", "test_a*.py"): "the pattern 'test_a*.py' was given (not 'test*.py')",
            ("discover", "--pattern=*_t.py"): "the pattern '*_t.py' was given (not 'test*.py')",
            ("discover", "tests"): start,
            ("discover", "-s", "tests"): start,
            ("-k", "a1"): "-k a1 was given",
            ("tests.test_a",): "test names were given (tests.test_a)",
            ("--unknown",): "--unknown was given (an option vcr_kit does not know)",
        }  # fmt: skip
        for args, why in cases.items():
            with self.subTest(args=args):
                self.assertEqual(self.scope(*args).collection, (why,))
        self.assertEqual(self.scope("-f").selection, ("-f was given",))

    def test_another_program_is_never_whole(self) -> None:
        self.assertEqual(
            judge_unittest_argv(["/usr/bin/nose2"], cwd=Path(self.here)).collection,
            ("nose2 is not python -m unittest (vcr_kit cannot see its selection)",),
        )


def _record(complete: bool, why: str = "", *, hard: bool = False, suite: list[str] | None = None,
            passed: list[str] = (), defers: bool = False) -> Record:  # type: ignore[assignment]  # fmt: skip
    return Record(
        Path("f"), "r", 0.0, 1.0, complete, why or ("whole" if complete else "part"),
        hard=hard, defers=defers, suite=None if suite is None else frozenset(suite),
        passed=frozenset(passed),
    )  # fmt: skip


class JudgeTest(unittest.TestCase):
    def test_a_hard_reason_anywhere_wins(self) -> None:
        self.assertEqual(
            judge([_record(True), _record(False, "--ignore was given", hard=True)]),
            (False, ["--ignore was given"]),
        )

    def test_an_xdist_run_is_judged_by_its_controller(self) -> None:
        workers = [_record(False, "worker", defers=True)] * 2
        self.assertEqual(judge([*workers, _record(True, "all passed")]), (True, ["all passed"]))
        self.assertEqual(
            judge(workers),
            (False, ["no process judged the run (the xdist controller wrote no record)"]),
        )

    def test_shards_need_the_same_suite(self) -> None:
        self.assertEqual(
            judge([_record(False, "-k", suite=["a"], passed=["a"]),
                   _record(False, "-k", suite=["a", "b"], passed=["b"])]),
            (False, ["-k", "its processes collected different tests"]),
        )  # fmt: skip

    def test_a_partial_process_without_a_suite_cannot_be_completed(self) -> None:
        self.assertEqual(judge([_record(False, "unittest -p")]), (False, ["unittest -p"]))

    @given(
        st.sets(st.text(min_size=1, max_size=5), min_size=1, max_size=8).flatmap(
            lambda suite: st.tuples(
                st.just(sorted(suite)),
                st.lists(st.sets(st.sampled_from(sorted(suite))), min_size=1, max_size=4),
            )
        ),
        st.booleans(),
    )
    def test_shards_are_complete_exactly_when_their_union_passed_the_suite(
        self, drawn: tuple[list[str], list[set[str]]], one_hard: bool
    ) -> None:
        suite, shards = drawn
        records = [_record(False, "a shard", suite=suite, passed=sorted(p)) for p in shards]
        if one_hard:
            records.append(_record(False, "interrupted", hard=True))
        complete, why = judge(records)
        self.assertEqual(complete, set().union(*shards) == set(suite) and not one_hard, why)


class PlaceTest(unittest.TestCase):
    """A collection narrowed by place only: a run over it may be complete over it."""

    def setUp(self) -> None:
        self.root = temp_dir(self)
        for stem in ("a", "b"):
            (self.root / "tests" / f"test_{stem}.py").parent.mkdir(exist_ok=True)
            (self.root / "tests" / f"test_{stem}.py").write_text("", encoding="utf-8")

    def test_paths_and_start_folders_are_a_place_node_ids_and_more_are_not(self) -> None:
        self.assertEqual(judge_pytest_args(["-q", "tests/test_a.py", "tests/b"]).paths,
                         ("tests/test_a.py", "tests/b"))  # fmt: skip
        self.assertTrue(judge_pytest_args(["-x", "tests/test_a.py"]).by_place)
        for args in (["tests/test_a.py::test_x"], ["tests", "--ignore=tests/b"], ["-k", "a"],
                     ["tests", "-o", "python_files=a.py"], []):  # fmt: skip
            with self.subTest(args=args):
                self.assertFalse(judge_pytest_args(args).by_place)
        unittest_scope = judge_unittest_argv(["python -m unittest", "discover", "-s", "tests"],
                                             cwd=self.root)  # fmt: skip
        self.assertEqual((unittest_scope.by_place, unittest_scope.paths),
                         (True, (str(self.root / "tests"),)))  # fmt: skip
        for args in (["discover", "-s", "tests", "-p", "t*.py"], ["discover", "-s", "tests",
                     "-t", "tests"], ["-k", "a"]):  # fmt: skip
            with self.subTest(args=args):
                self.assertFalse(judge_unittest_argv(["python -m unittest", *args],
                                                     cwd=self.root).by_place)  # fmt: skip

    def tally(self, *args: str) -> SessionTally:
        tally = SessionTally.start(list(args), cwd=self.root, rootdir=self.root)
        tally.collected(["tests/test_a.py::test_1", "tests/test_a.py::test_2"])
        return tally

    def test_a_session_over_paths_that_passed_all_covers_them(self) -> None:
        tally = self.tally("tests/test_a.py", "-x")
        for node in ("tests/test_a.py::test_1", "tests/test_a.py::test_2"):
            tally.test_report(node, "call", passed=True, skipped=False)
        verdict = tally.verdict(0, stopped=False, worker=False)
        self.assertFalse(verdict.complete)
        self.assertEqual(verdict.covers, Coverage(
            (self.root / "tests" / "test_a.py",), frozenset({self.root / "tests" / "test_a.py"}),
            testcase_only=False, why="every one of the 2 collected tests passed",
        ))  # fmt: skip

    def test_a_failure_a_skip_or_a_deselection_covers_nothing(self) -> None:
        cases = [("failed", 1, [True, False]), ("skipped", 0, [True, None]),
                 ("deselected", 0, [True])]  # fmt: skip
        for name, status, outcomes in cases:
            with self.subTest(name):
                tally = self.tally("tests/test_a.py")
                for number, outcome in enumerate(outcomes, 1):
                    node = f"tests/test_a.py::test_{number}"
                    tally.test_report(node, "call", passed=bool(outcome), skipped=outcome is None)
                self.assertIsNone(tally.verdict(status, stopped=False, worker=False).covers)

    def test_a_session_that_ran_no_test_says_so(self) -> None:
        self.assertFalse(self.tally("--co").ran_tests)

    def test_a_run_vouches_for_users_inside_what_it_covered(self) -> None:
        a, b = self.root / "tests" / "test_a.py", self.root / "tests" / "test_b.py"
        gone = self.root / "tests" / "test_gone.py"
        part = Coverage((self.root / "tests",), frozenset({a}), testcase_only=True, why="")
        run = Run("r", covers=[part])
        self.assertTrue(vouches(run, {(a, True)}))
        self.assertTrue(vouches(run, {(gone, True)}))  # a deleted file uses nothing
        self.assertFalse(vouches(run, {(a, True), (b, True)}))  # b exists and did not run
        self.assertFalse(vouches(run, {(a, False)}))  # a pytest function: not unittest's
        self.assertFalse(vouches(run, None))  # a use by no known test
        self.assertFalse(vouches(run, set()))
        self.assertTrue(vouches(Run("r", complete=True), None))


if __name__ == "__main__":
    unittest.main()
