"""Only the process pytest-xdist made a worker counts as one (its controller prints the
summary for it): a process a worker starts inherits ``PYTEST_XDIST_WORKER`` and is
no worker (vcr_kit._core.config.in_xdist_worker)."""

from __future__ import annotations

import sys
import unittest

import pytest

from tests.support.helpers.env import environ_without_vcr, run_captured
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.child


class XdistWorkerTest(unittest.TestCase):
    def test_a_child_of_a_worker_is_no_worker(self) -> None:
        env = {**environ_without_vcr(), "PYTEST_XDIST_WORKER": "gw0"}
        script = "from vcr_kit._core.config import in_xdist_worker; print(in_xdist_worker())"
        done = run_captured([sys.executable, "-c", script], cwd=ROOT, env=env, timeout=60)
        self.assertEqual((done.returncode, done.stdout), (0, "False\n"), done.stderr)


if __name__ == "__main__":
    unittest.main()
