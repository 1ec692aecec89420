"""The first hour's traps (issue 30, point 3), each closed: a settings error is one
error per unittest test and the run ends with its summary; ``@pytest.mark.vcr``
refuses what it would ignore, in the test's own words; a failed connection to the API
is journaled and counted. (``FORCE_VCR`` in a script: ``test_traps_children.py``.)"""

from __future__ import annotations

import io
import socket
import unittest
from typing import Any

import anthropic
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.env import patch_env, temp_dir
from tests.support.helpers.examples import examples
from vcr_kit._ledger.journal import Event
from vcr_kit.pytest_plugin import MARKER_KEYWORDS, marker_problem

pytestmark = pytest.mark.inprocess

KEY = "sk-ant-test-" + "t" * 32
MODEL = "claude-opus-4-7"
MODES = ("auto", "replay", "record", "off")

#: A bad value of each setting a test reads, and the start of what it is told.
BAD_SETTINGS = {
    "VCR_MODE": ("bogus", "VCR_MODE='bogus' is not a mode vcr_kit knows"),
    "VCR_LOCK_TIMEOUT": ("-1", "VCR_LOCK_TIMEOUT='-1' is not a number of seconds"),
    "VCR_RECORD": ("maybe", "VCR_RECORD='maybe' is not a yes/no value"),
    "VCR_REPORT": ("maybe", "VCR_REPORT='maybe' is not a yes/no value"),
}


def _run_suite(case: type[unittest.TestCase]) -> tuple[unittest.TestResult, str]:
    stream = io.StringIO()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
    return result, stream.getvalue()


class UnittestSettingsErrorTest(unittest.TestCase):
    """A setting vcr_kit refuses errors each VCRTestCase test with its message; the run
    goes on and prints its summary (it used to stop with a traceback through the runner)."""

    def run_two_tests(self, folder: str, **env: str) -> tuple[unittest.TestResult, str]:
        patch_env(self, VCR_FIXTURES_DIR=folder, **env)

        class Suite(vcr_kit.VCRTestCase):
            def test_one(self) -> None:  # pragma: no cover - never reached
                pass

            def test_two(self) -> None:  # pragma: no cover - never reached
                pass

        return _run_suite(Suite)

    @settings(max_examples=examples(20), deadline=None)
    @given(
        name=st.sampled_from(sorted(BAD_SETTINGS)),
        mode=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1).filter(
            lambda text: text.strip().lower() not in MODES
        ),
    )
    @example(name="VCR_MODE", mode="bogus")
    def test_each_test_errors_with_the_message_and_the_run_ends_with_its_summary(
        self, name: str, mode: str
    ) -> None:
        value, said = BAD_SETTINGS[name]
        if name == "VCR_MODE":
            value, said = mode, f"VCR_MODE={mode!r} is not a mode vcr_kit knows"
        folder = temp_dir(self)
        result, output = self.run_two_tests(str(folder), **{"VCR_REPORT": "0", name: value})
        self.assertEqual((result.testsRun, len(result.errors), result.failures), (2, 2, []))
        for _, text in result.errors:  # the message alone: no traceback into vcr_kit
            self.assertTrue(text.startswith(f"vcr_kit.errors.ConfigError: {said}"), text)
        self.assertIn("Ran 2 tests", output)
        self.assertIn("FAILED (errors=2)", output)
        self.assertEqual(output.count(said), 2)
        self.assertNotIn("unittest/runner.py", output)  # no traceback through the runner


class MarkerArgumentsTest(unittest.TestCase):
    """What ``@pytest.mark.vcr`` would ignore or misname is refused, with what the test
    wrote and the keywords it takes."""

    VALID = "; its keywords are mode=, fixtures_dir=, hosts=, proxy=, faults="

    def test_the_issue_cases(self) -> None:
        self.assertEqual(
            marker_problem(("replay",), {}),
            "@pytest.mark.vcr('replay'): the marker takes keywords only (mode='replay'?)"
            + self.VALID,
        )
        self.assertEqual(
            marker_problem((), {"mdoe": "replay"}),
            "@pytest.mark.vcr(mdoe='replay'): unknown keyword mdoe= (did you mean mode=?)"
            + self.VALID,
        )
        self.assertEqual(
            marker_problem((), {"mode": "bogus"}),
            "@pytest.mark.vcr(mode='bogus'): mode='bogus' is not a mode vcr_kit knows; "
            "use one of: auto, replay, record, off.",
        )
        self.assertIsNone(marker_problem((), {"mode": "replay", "proxy": True}))

    @settings(max_examples=examples(100), deadline=None)
    @given(
        args=st.lists(st.one_of(st.text(max_size=8), st.integers(), st.booleans()), max_size=3),
        kwargs=st.dictionaries(
            st.one_of(
                st.sampled_from(MARKER_KEYWORDS), st.from_regex(r"[a-z_]{1,10}", fullmatch=True)
            ),
            st.one_of(st.sampled_from(MODES), st.text(max_size=8), st.none()),
            max_size=3,
        ),
    )
    def test_anything_but_known_keywords_with_good_values_is_refused_by_name(
        self, args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        problem = marker_problem(tuple(args), kwargs)
        unknown = [k for k in kwargs if k not in MARKER_KEYWORDS]
        mode = kwargs.get("mode")
        bad_mode = mode is not None and str(mode).strip().lower() not in MODES
        faults = kwargs.get("faults")
        if args or unknown or bad_mode:
            assert problem is not None
            self.assertTrue(problem.startswith("@pytest.mark.vcr("), problem)
            self.assertNotIn("vcr_mode", problem)  # the test's words, not vcr_kit's
            if args:
                self.assertIn(repr(args[0]), problem)
                self.assertIn("keywords only", problem)
            elif unknown:
                self.assertIn(f"unknown keyword {unknown[0]}=", problem)
            else:
                self.assertIn(f"mode={mode!r} is not a mode", problem)
        elif not faults:
            self.assertIsNone(problem)


def _closed_port() -> int:
    """A loopback port nothing listens on: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class FailedConnectionTest(unittest.TestCase):
    """An attempt to reach the API that fails is a live call all the same: journaled,
    counted, and ``assertNoLiveCalls`` fails on it."""

    @settings(max_examples=examples(6), deadline=None)
    @given(mode=st.sampled_from(("auto", "record", "off")), retries=st.integers(0, 2))
    @example(mode="auto", retries=0)
    def test_every_attempt_is_a_live_call(self, mode: str, retries: int) -> None:
        patch_env(self, ANTHROPIC_API_KEY=KEY, VCR_REPORT="0")
        url = f"http://127.0.0.1:{_closed_port()}"
        folder = temp_dir(self)
        seen: dict[str, Any] = {}

        class Case(vcr_kit.VCRTestCase):
            vcr_mode = mode
            vcr_fixtures_dir = folder

            def test_it(self) -> None:
                client = anthropic.Anthropic(base_url=url, max_retries=retries)
                client._calculate_retry_timeout = lambda *a, **k: 0.0  # type: ignore[method-assign]
                with client, self.assertRaises(anthropic.APIConnectionError):
                    client.messages.create(
                        model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}]
                    )
                seen["entries"] = list(self.vcr_journal.entries)
                self.assertNoLiveCalls()

        result, _ = _run_suite(Case)
        live = [e for e in seen["entries"] if e.event is Event.LIVE]
        self.assertEqual(len(live), retries + 1, seen["entries"])
        self.assertIn("no answer (ConnectError", live[0].detail)
        self.assertEqual(len(result.failures), 1)
        self.assertIn("expected replay only, but the API was called: live", result.failures[0][1])


if __name__ == "__main__":
    unittest.main()
