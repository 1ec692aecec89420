"""A client's patience (``_engine/patience.py``): how long it waits for an injected wait,
and what it raises when its read timeout or its total timeout runs out first."""

from __future__ import annotations

import unittest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._core.httplib import sdk_library
from vcr_kit._engine.patience import Patience, patience_of

pytestmark = pytest.mark.inprocess


class _Read(Exception):
    pass


class _Total(Exception):
    pass


_limits = st.none() | st.floats(min_value=0, max_value=1e5, allow_nan=False)


class PatienceTest(unittest.TestCase):
    @settings(max_examples=examples(200))
    @given(seconds=st.floats(0, 1e5), read=_limits, total=_limits)
    def test_the_client_waits_the_shorter_of_the_wait_and_its_timeouts(
        self, seconds: float, read: float | None, total: float | None
    ) -> None:
        patience = Patience(read, _Read, total, _Total, clock=lambda: 0.0, started=0.0)
        waited, error = patience.wait(seconds, "the first byte")
        limits = [limit for limit in (read, total) if limit is not None]
        if not limits or seconds <= min(limits):
            self.assertEqual((waited, error), (seconds, None))
            return
        self.assertEqual(waited, min(limits))
        expected = _Read if read is not None and read == min(limits) else _Total
        self.assertIs(type(error), expected)

    def test_the_message_names_the_wait_and_the_timeout(self) -> None:
        waited, error = Patience(0.5, _Read).wait(30, "the first byte")
        self.assertEqual(waited, 0.5)
        self.assertEqual(
            str(error),
            "The read operation timed out (an injected wait of 30 s for the first byte "
            "passed the client's read timeout of 0.5 s)",
        )

    def test_a_total_timeout_counts_what_has_passed(self) -> None:
        patience = Patience(None, _Read, 10.0, _Total, clock=lambda: 109.0, started=100.0)
        waited, error = patience.wait(5, "the next event")
        self.assertEqual(waited, 1.0)
        self.assertIsInstance(error, _Total)

    def test_an_httpx2_request_carries_its_read_timeout(self) -> None:
        lib = sdk_library()
        with lib.Client(timeout=lib.Timeout(5.0, read=0.25)) as client:
            request = client.build_request("POST", "http://127.0.0.1:9/v1/messages")
        patience = patience_of(request)
        self.assertEqual((patience.read, patience.total), (0.25, None))
        self.assertIsInstance(patience.read_error("slow"), lib.ReadTimeout)
        self.assertIsInstance(patience.gives_up("now"), lib.ReadTimeout)


if __name__ == "__main__":
    unittest.main()
