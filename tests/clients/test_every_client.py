"""Code that builds its own clients, recorded over loopback and replayed offline.

Each scenario of ``tests/support/children/client_scenarios.py`` runs inside a real
``VCRTestCase``, in a process of its own: first recording against the loopback server (key and
``ANTHROPIC_BASE_URL`` set), then replaying with the network removed (``unshare -n``),
no key and no base URL, twice, then re-recording in ``record`` mode. The replays must
observe what the recording observed, and neither a replay nor an unchanged
re-record may change a byte of the fixtures.

The framework scenarios need their packages: tox's ``frameworks`` env installs
langchain-anthropic and pydantic-ai (and sets ``VCR_FRAMEWORKS_REQUIRED=1``, which
turns a missing one into a failure), the ``sdk-0.93`` env instructor (which pins
anthropic 0.93); elsewhere they are skipped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.env import (
    environ_without_vcr,
    offline_prefix,
    start_server,
    temp_dir,
)
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.child

SCRIPT = ROOT / "tests" / "support" / "children" / "client_scenarios.py"
KEY = "sk-ant-test-" + "c" * 32
#: Framework scenario -> the module it needs.
FRAMEWORKS = {
    "langchain": "langchain_anthropic",
    "pydantic_ai": "pydantic_ai",
    "instructor": "instructor",
}


def snapshot(folder: Path) -> dict[str, str]:
    """Every fixture's name and the SHA1 of its bytes."""
    return {
        p.name: hashlib.sha1(p.read_bytes(), usedforsecurity=False).hexdigest()
        for p in sorted(folder.glob("*.json"))
    }


class RecordThenReplayOffline(unittest.TestCase):
    def setUp(self) -> None:
        self.server = start_server(self)
        self.fixtures = temp_dir(self) / "fixtures"

    def run_scenario(self, name: str, *, offline: bool, **env: str) -> dict[str, Any]:
        environ = environ_without_vcr() | {"VCR_REPORT": "1", **env}
        # Forked from a driver (under ``unshare -n`` when offline): a python start less the
        # SDK's import (tests/support/helpers/forked_runs.py).
        runs = driver(offline_prefix() if offline else ())
        done = runs.run("script", [str(SCRIPT), name, "--fixtures", str(self.fixtures)],
                        flags=["-W", "error"], cwd=ROOT, env=environ, timeout=180)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr[-4000:])
        outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        outcome["stderr"] = done.stderr
        return outcome

    def record(self, name: str, mode: str = "auto") -> dict[str, Any]:
        return self.run_scenario(
            name,
            offline=False,
            VCR_MODE=mode,
            ANTHROPIC_API_KEY=KEY,
            ANTHROPIC_BASE_URL=self.server.url,
        )

    def check_round_trip(self, name: str) -> dict[str, Any]:
        recorded = self.record(name)
        self.assertIn("recorded", recorded["journal"])
        self.assertNotIn("live", recorded["journal"])
        self.assertRegex(recorded["stderr"], r"vcr_kit: \d+ replayed, [1-9]\d* recorded, 0 missing")
        files = snapshot(self.fixtures)
        self.assertTrue(files)
        calls = len(self.server.log)

        for _ in range(2):  # offline, no key, no base URL; twice: ids must not drift
            replayed = self.run_scenario(name, offline=True, CI="true")
            self.assertEqual(replayed["value"], recorded["value"])
            self.assertEqual(set(replayed["journal"]), {"replayed"})
            self.assertEqual(snapshot(self.fixtures), files)
        self.assertEqual(len(self.server.log), calls)

        rerecorded = self.record(name, mode="record")
        self.assertEqual(rerecorded["value"], recorded["value"])
        self.assertGreater(len(self.server.log), calls)
        self.assertEqual(snapshot(self.fixtures), files, "an unchanged re-record changed bytes")
        return recorded

    def test_tool_runner_with_message_threads(self) -> None:
        recorded = self.check_round_trip("tool_runner_threads")
        turns = recorded["value"]["turns"]
        self.assertEqual([t["stop_reason"] for t in turns], ["tool_use", "end_turn"])
        self.assertTrue(recorded["value"]["distinct_ids"])
        # The second turn quoted the first answer's id, and the server knew it: while
        # recording, vcr_kit sends the live id that the id it gave out stands for.
        continued = [
            json.loads(r.body)["thread"]
            for r in self.server.log
            if r.body and json.loads(r.body).get("thread", {}).get("type") == "continue"
        ]
        if importlib.util.find_spec("anthropic.lib.threads") is None:  # before message threads
            self.assertEqual(continued, [])
            return
        self.assertEqual(len(continued), 2)  # the recording and the re-recording
        for thread in continued:
            self.assertTrue(self.server.was_issued(thread["previous_message_id"]))

    def test_message_batches_create_retrieve_results(self) -> None:
        recorded = self.check_round_trip("batches")
        self.assertEqual(
            recorded["value"],
            {
                "id_prefix": "msgbatch",
                "results": [["q0", "Echo: Batch question 0"], ["q1", "Echo: Batch question 1"]],
                "same_id": True,
                "status": "ended",
            },
        )

    def test_frameworks(self) -> None:
        required = os.environ.get("VCR_FRAMEWORKS_REQUIRED") == "1"
        for name, module in FRAMEWORKS.items():
            with self.subTest(framework=name):
                if importlib.util.find_spec(module) is None:
                    if required and name != "instructor":
                        self.fail(f"{module} is not installed (tox -e frameworks installs it)")
                    self.skipTest(f"{module} is not installed; run tox -e frameworks")
                self.fixtures = temp_dir(self) / "fixtures"
                self.check_round_trip(name)


if __name__ == "__main__":
    unittest.main()
