"""The README's main job: the example suite replays its committed fixtures offline.

Runs ``python -m unittest discover -s examples`` in a child process with CI=true, no
API key and, where ``unshare -n`` can drop the network, no network at all, then
checks the summary line's counts against what the examples do.
"""

from __future__ import annotations

import os
import re
import unittest

import pytest

from tests.support.helpers.env import XDIST_WORKER_VARS, offline_prefix
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.paths import ROOT

pytestmark = [pytest.mark.child, pytest.mark.matrix]

FIXTURES = ROOT / "fixtures"
# What the example suite does: agent (Rome) 2 calls, agent (Oslo) 2, stream twice,
# count_tokens three times, one async call.
EXPECTED_REPLAYS = 10


class ExampleSuiteOfflineTest(unittest.TestCase):
    def test_examples_replay_offline_and_the_summary_counts_are_right(self) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VCR_", "ANTHROPIC_"))
            and k != "PYTHONWARNINGS"
            and k not in XDIST_WORKER_VARS
        }
        env.update({"CI": "true", "PYTHONWARNINGS": "error"})
        prefix = offline_prefix()
        # Without unshare, a base URL nothing listens on proves no request left the process.
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
        before = {p.name: p.read_bytes() for p in FIXTURES.glob("*.json")}

        # Forked from a driver (under the prefix): a python start less the SDK's import.
        done = driver(prefix).run("unittest", ["discover", "-s", "examples", "-t", "."],
                                  cwd=ROOT, env=env, timeout=300)  # fmt: skip

        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stderr, r"Ran 5 tests in [\d.]+s\n\nOK")
        summary = done.stderr.strip().splitlines()[-1]
        match = re.fullmatch(
            r"vcr_kit: (\d+) replayed, (\d+) recorded, (\d+) missing; "
            r"\$(\d+\.\d{4}) of API calls replayed, \$0\.0000 recorded; "
            r"fixtures/ \((\d+) files\)",
            summary,
        )
        self.assertIsNotNone(match, summary)
        assert match is not None
        replayed, recorded, missing, usd, files = match.groups()
        self.assertEqual((int(replayed), int(recorded), int(missing)), (EXPECTED_REPLAYS, 0, 0))
        self.assertGreater(float(usd), 0)
        self.assertEqual(int(files), len(before))
        # Replay changed no fixture.
        self.assertEqual({p.name: p.read_bytes() for p in FIXTURES.glob("*.json")}, before)


if __name__ == "__main__":
    unittest.main()
