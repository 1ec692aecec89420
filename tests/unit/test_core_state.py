"""Process-wide state: one object per concern, owned by one module, and its ``reset()``.

Each ``reset()`` must leave its object as a new one is made (a test of vcr_kit resets
in one call and starts as a fresh process would), keep the containers it holds (code
that read one keeps seeing the live one) and keep its locks usable.
"""

from __future__ import annotations

import copy
import json
import threading
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.env import temp_dir
from vcr_kit import dehydrate
from vcr_kit._core import config, credentials, ids
from vcr_kit._core.faults import parse_spec
from vcr_kit._engine import faults, live, loaded_response
from vcr_kit._store import cache, files

pytestmark = pytest.mark.inprocess


def _fill_config(state: config.ConfigState) -> None:
    state.active_tests = 2
    state.test_defaults.append(("replay", "fixtures", Path("/project")))
    state.dotenv_loaded = True
    state.dotenv_projects.add(Path("/project"))


def _fill_ids(state: ids.IdMap) -> None:
    state.token_of_given["msg_vcr_ab"] = "msg_vcr_0@stem"
    state.given_of_token["file_vcr0"] = "file_vcr_ab"
    state.live_of_given["file_vcr_ab"] = "file_live"
    state.has_live_ids = True


def _fill_rules(state: dehydrate.RuleState) -> None:
    state.user_rules.append(dehydrate.Rule("mine", "x", "[X]", "x"))
    state.disabled.add("git_user")
    state.disabled_by_environment.add("shell")
    state.default_in_force = ((None,), ((), ()))


def _fill_plans(state: faults.FaultPlans) -> None:
    state.stack.append(faults.FaultPlan(parse_spec("overloaded", "test")))
    state.from_environment["spec"] = faults.FaultPlan(parse_spec("reset", "test"))


def _fill_traffic(state: live.OwnTraffic) -> None:
    state.in_flight = 3
    state.proxies.add("127.0.0.1:8000")


def _fill_layouts(state: loaded_response.LayoutChecks) -> None:
    state.agrees["httpx2"] = True


def _fill_cache(state: cache.FixtureCache) -> None:
    fixture = cache.CachedFixture(Path("a.json"), b"{}")
    state.entries["a.json"] = ((0, 0, 2, 0, 0), fixture)
    state.total = 2


def _fill_credentials(state: credentials.ProcessCredentials) -> None:
    state.values["ya29." + "t" * 30] = "the proxy's Google access token"


def _fill_cleanups(state: files.TempCleanups) -> None:
    state.last_cleaned[Path("fixtures")] = 1.0


#: (the module-level instance, its class, a function that gives it some state).
STATE_OBJECTS: list[tuple[Any, type, Callable[[Any], None]]] = [
    (config.CONFIG, config.ConfigState, _fill_config),
    (ids.IDS, ids.IdMap, _fill_ids),
    (dehydrate.RULE_STATE, dehydrate.RuleState, _fill_rules),
    (faults.PLANS, faults.FaultPlans, _fill_plans),
    (live.OWN_TRAFFIC, live.OwnTraffic, _fill_traffic),
    (loaded_response.LAYOUT_CHECKS, loaded_response.LayoutChecks, _fill_layouts),
    (cache.CACHE, cache.FixtureCache, _fill_cache),
    (files.TEMP_CLEANUPS, files.TempCleanups, _fill_cleanups),
    (credentials.PROCESS_CREDENTIALS, credentials.ProcessCredentials, _fill_credentials),
]


def _fields(state: Any) -> dict[str, Any]:
    """The state's values as they are now (copies of its containers), locks left out
    (a lock has no value to compare)."""
    lock_type = type(threading.Lock())
    return {
        name: copy.copy(getattr(state, name))
        for name in type(state).__slots__
        if not isinstance(getattr(state, name), lock_type)
    }


class ResetTest(unittest.TestCase):
    def test_each_module_owns_one_instance_of_its_state_class(self) -> None:
        for instance, cls, _fill in STATE_OBJECTS:
            with self.subTest(cls.__name__):
                self.assertIs(type(instance), cls)

    def test_reset_gives_what_a_new_object_holds_and_keeps_its_containers(self) -> None:
        for _instance, cls, fill in STATE_OBJECTS:
            with self.subTest(cls.__name__):
                state = cls()
                fresh = _fields(state)
                fill(state)
                self.assertNotEqual(_fields(state), fresh)
                held = {
                    name: getattr(state, name)
                    for name in _fields(state)
                    if isinstance(getattr(state, name), (dict, list, set))
                }
                state.reset()
                self.assertEqual(_fields(state), fresh)
                for name, container in held.items():
                    self.assertIs(getattr(state, name), container, name)
                state.reset()  # its locks were released: a second reset does not hang
                self.assertEqual(_fields(state), fresh)

    def test_state_objects_take_no_other_attribute(self) -> None:
        for _instance, cls, _fill in STATE_OBJECTS:
            with self.subTest(cls.__name__), self.assertRaises(AttributeError):
                cls().misspelled = 1


class OwnersTest(unittest.TestCase):
    """The module functions keep their state on the object, and reset() clears it."""

    def test_ids_given_out_are_forgotten_by_forget_and_by_reset(self) -> None:
        self.addCleanup(ids.forget)
        for forget in (ids.forget, ids.IDS.reset):
            text = ids.give_ids_text('{"id": "file_vcr0123456789abcdef01234"}', "stem")
            given = json.loads(text)["id"]
            self.assertEqual(ids.IDS.token_of_given[given], "file_vcr0123456789abcdef01234")
            self.assertNotEqual(ids.quoted_tokens(given), given)
            forget()
            self.assertEqual(_fields(ids.IDS), _fields(ids.IdMap()))
            self.assertEqual(ids.quoted_tokens(given), given)

    def test_rules_added_and_turned_off_are_dropped_by_reset(self) -> None:
        self.addCleanup(dehydrate.RULE_STATE.reset)
        dehydrate.add_rule(dehydrate.Rule("mine", "secret-word", "[WORD]", "secret-word"))
        dehydrate.disable_rule("cost_usd")
        self.assertEqual(dehydrate.dehydrate("secret-word"), "[WORD]")
        self.assertEqual(dehydrate.disabled_rules(), ("cost_usd",))
        dehydrate.RULE_STATE.reset()
        self.assertEqual(dehydrate.user_rules(), ())
        self.assertEqual(dehydrate.disabled_rules(), ())
        self.assertIs(dehydrate.rules_in_force()[0], dehydrate.DEFAULT_RULES)
        self.assertEqual(dehydrate.dehydrate("secret-word"), "secret-word")

    def test_the_running_tests_are_counted_on_config_state(self) -> None:
        before = (config.CONFIG.active_tests, list(config.CONFIG.test_defaults))
        with config.activated("replay", "somewhere"):
            self.assertEqual(config.CONFIG.active_tests, before[0] + 1)
            self.assertEqual(config.CONFIG.test_defaults[-1], ("replay", "somewhere", None))
            self.assertTrue(config.is_active())
        self.assertEqual((config.CONFIG.active_tests, config.CONFIG.test_defaults), before)

    def test_fault_blocks_push_and_pop_their_plans(self) -> None:
        self.assertEqual(faults.PLANS.stack, [])
        with faults.faults("overloaded") as outer, faults.faults("reset") as inner:
            self.assertEqual(faults.PLANS.stack, [outer, inner])
            self.assertIs(faults.active_plan(), inner)
        self.assertEqual(faults.PLANS.stack, [])

    def test_own_traffic_is_counted_on_its_object(self) -> None:
        with live.live_call():
            self.assertEqual(live.live_calls_in_flight(), live.OWN_TRAFFIC.in_flight)
            self.assertGreaterEqual(live.OWN_TRAFFIC.in_flight, 1)
        live.add_local_proxy("127.0.0.1", 1)
        try:
            self.assertIn("127.0.0.1:1", live.OWN_TRAFFIC.proxies)
            self.assertTrue(live.is_local_proxy("127.0.0.1", 1))
        finally:
            live.remove_local_proxy("127.0.0.1", 1)
        self.assertFalse(live.is_local_proxy("127.0.0.1", 1))

    def test_the_fixture_cache_is_emptied_by_reset(self) -> None:
        self.addCleanup(cache.CACHE.reset)
        path = temp_dir(self) / "a.json"
        doc = {"vcr_kit_format": 1, "kind": "http", "request": {}, "response": {}}
        path.write_text(json.dumps(doc), encoding="utf-8")
        first = cache.cached_fixture(path)
        self.assertIn(str(path), cache.CACHE.entries)
        self.assertGreaterEqual(cache.CACHE.total, path.stat().st_size)
        cache.CACHE.reset()
        self.assertEqual((len(cache.CACHE.entries), cache.CACHE.total), (0, 0))
        self.assertIsNot(cache.cached_fixture(path), first)


if __name__ == "__main__":
    unittest.main()
