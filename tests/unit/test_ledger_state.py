"""The process-wide state of the ledger, the pytest plugin and the unittest verdict: one
object per concern, each with a ``reset`` that forgets what a test may have left and
keeps what its owner's blocks and exit hooks count on.

Each reset is pinned on a fresh instance: resetting the module's own object here would
also drop what the pytest session running these tests has recorded so far (its run
record, its summary line)."""

from __future__ import annotations

import threading
import unittest
from collections import Counter
from pathlib import Path

import pytest

from vcr_kit._integrations import unittest_run
from vcr_kit._ledger import cost, journal, runs, summary
from vcr_kit._ledger.prices import Price

pytestmark = pytest.mark.inprocess

FOLDER = Path("/fixtures/here")


class OneObjectPerModuleTest(unittest.TestCase):
    def test_each_module_owns_one_state_object(self) -> None:
        self.assertIsInstance(runs.RUN, runs.RunLedger)
        self.assertIsInstance(journal.JOURNAL, journal.JournalState)
        self.assertIsInstance(cost.COST, cost.CostLedger)
        self.assertIsInstance(summary.SUMMARY, summary.SummaryState)
        self.assertIsInstance(unittest_run.UNITTEST, unittest_run.UnittestRun)

    def test_each_object_has_its_own_lock(self) -> None:
        locks = [
            runs.RUN.lock,
            journal.JOURNAL.lock,
            cost.COST.lock,
            summary.SUMMARY.lock,
            unittest_run.UNITTEST.lock,
        ]
        self.assertEqual(len({id(lock) for lock in locks}), len(locks))


class RunLedgerResetTest(unittest.TestCase):
    def test_reset_forgets_what_the_run_used_and_judged(self) -> None:
        ledger = runs.RunLedger()
        ledger.used = {FOLDER: {"a.json"}}
        ledger.changed = [FOLDER / "a.json"]
        ledger.recorded_usd = 0.25
        ledger.missing = True
        ledger.verdict = runs.Verdict(True, "every test passed")
        ledger.judges = [lambda explicit: runs.Verdict(False, explicit)]
        ledger.extra_folders = {FOLDER}
        ledger.tests = {FOLDER: {"a.json": {"test_a"}}}
        ledger.reset()
        fresh = runs.RunLedger()
        for name in (
            "used",
            "changed",
            "recorded_usd",
            "missing",
            "verdict",
            "judges",
            "extra_folders",
            "tests",
        ):
            with self.subTest(field=name):
                self.assertEqual(getattr(ledger, name), getattr(fresh, name))

    def test_reset_keeps_the_exit_hook_and_the_test_running_now(self) -> None:
        # The record is written at exit by a hook registered once per process; the test
        # running now is cleared by its runner's ``testing`` block, not by a reset in it.
        ledger = runs.RunLedger(registered=True, current_test="tests/test_a.py::test_a")
        ledger.reset()
        self.assertTrue(ledger.registered)
        self.assertEqual(ledger.current_test, "tests/test_a.py::test_a")

    def test_reset_takes_the_lock(self) -> None:
        ledger = runs.RunLedger(recorded_usd=1.0)
        with ledger.lock:
            worker = threading.Thread(target=ledger.reset)
            worker.start()
            worker.join(0.05)
            self.assertEqual(ledger.recorded_usd, 1.0)  # waiting for the lock
        worker.join()
        self.assertEqual(ledger.recorded_usd, 0.0)


class JournalStateResetTest(unittest.TestCase):
    def test_reset_forgets_the_totals(self) -> None:
        state = journal.JournalState()
        state.totals[journal.Event.REPLAYED] += 3
        state.replayed_cost = 0.5
        state.fixture_dirs.add(FOLDER)
        state.not_recorded["not recorded: a 401"] += 1
        state.reset()
        self.assertEqual(state.totals, Counter())
        self.assertEqual(state.replayed_cost, 0.0)
        self.assertEqual(state.fixture_dirs, set())
        self.assertEqual(state.not_recorded, Counter())

    def test_reset_keeps_the_open_journals_and_the_folder_objects(self) -> None:
        # An open journal belongs to its block, which removes it when it ends; the
        # folder objects are what ``folder_of`` has handed out (and keeps handing out).
        state = journal.JournalState()
        open_one = journal.Journal()
        state.open_journals.append(open_one)
        state.folders[str(FOLDER)] = FOLDER
        state.reset()
        self.assertEqual(len(state.open_journals), 1)
        self.assertIs(state.open_journals[0], open_one)
        self.assertIs(state.folders[str(FOLDER)], FOLDER)


class CostLedgerResetTest(unittest.TestCase):
    def test_reset_forgets_the_cost_the_prices_set_and_the_warnings(self) -> None:
        ledger = cost.CostLedger()
        ledger.by_model["claude-opus-4-7"] = cost.ModelCost(calls=1, usd=0.1)
        ledger.pending[1] = [object(), 2]
        ledger.overrides["my-model"] = Price(1, 0, 0, 0, 1)
        ledger.warned.add("claude-unknown-9")
        ledger.reset()
        self.assertEqual(ledger.by_model, {})
        self.assertEqual(ledger.pending, {})
        self.assertEqual(ledger.overrides, {})
        self.assertEqual(ledger.warned, set())

    def test_reset_moves_the_prices_version_on_never_back(self) -> None:
        # A replayed fixture keeps its usage priced under ``prices_state``: a state seen
        # before the reset must not come back with other prices after it.
        ledger = cost.CostLedger()
        ledger.prices_version = 7
        ledger.reset()
        self.assertEqual(ledger.prices_version, 8)

    def test_the_module_state_after_a_reset_is_one_not_seen_before(self) -> None:
        self.addCleanup(cost.COST.reset)
        before = cost.prices_state()
        cost.set_price("my-model-20260101", Price(2, 0, 0, 0, 4))
        priced = cost.prices_state()
        cost.COST.reset()
        after = cost.prices_state()
        self.assertNotIn(after, (before, priced))
        self.assertIsNone(cost.price_for("my-model"))

    def test_reset_session_cost_keeps_the_prices_set(self) -> None:
        # The public reset forgets the session's cost only, as it always has. The
        # session's cost so far (other tests of this process) is forgotten first.
        cost.COST.reset()
        self.addCleanup(cost.COST.reset)
        cost.set_price("my-model", Price(2, 0, 0, 0, 4))
        cost.add_usage([{"model": "my-model", "usage": {"input_tokens": 10**6}}])
        self.assertAlmostEqual(cost.session_cost().usd, 2)
        cost.reset_session_cost()
        self.assertEqual(cost.session_cost().calls, 0)
        self.assertEqual(cost.price_for("my-model"), Price(2, 0, 0, 0, 4))


class SummaryStateResetTest(unittest.TestCase):
    def test_reset_forgets_the_workers_totals_and_keeps_the_exit_hook(self) -> None:
        state = summary.SummaryState(registered=True)
        state.from_workers.append({"counts": {"replayed": 2}})
        state.reset()
        self.assertEqual(state.from_workers, [])
        self.assertTrue(state.registered)


class UnittestRunResetTest(unittest.TestCase):
    def test_reset_forgets_the_tests_seen(self) -> None:
        state = unittest_run.UnittestRun(interrupted=True, outside_runner=True)
        state.results.append(unittest.TestResult())
        state.reset()
        self.assertEqual(state.results, [])
        self.assertFalse(state.interrupted)
        self.assertFalse(state.outside_runner)

    def test_reset_keeps_the_tests_running_now(self) -> None:
        # Each judged_test block counts itself out: zeroing the count inside one would
        # leave it at -1, a run "interrupted" for good.
        state = unittest_run.UnittestRun(running=1)
        state.reset()
        self.assertEqual(state.running, 1)


if __name__ == "__main__":
    unittest.main()
