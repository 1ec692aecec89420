"""Frameworks on an OpenAI model, recorded over loopback and replayed offline.

``tests/support/children/openai_framework_scenarios.py`` runs the scenarios inside a
real ``VCRTestCase``, in a process of its own: first recording against the loopback
OpenAI server (``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` set), then replaying with the
network removed (``unshare -n``), ``CI=true``, no key and no base URL, then
re-recording in ``record`` mode. The replay must observe what the recording observed,
at the same cost (the model has a price row), and neither the replay nor the unchanged
re-record may change a byte of the fixtures; no fixture holds the key.

Each framework runs in the tox env that installs it: langchain-openai and pydantic-ai
in ``frameworks`` (with ``VCR_FRAMEWORKS_REQUIRED=1`` a missing one fails), litellm in
``clients``, where it is installed already (with ``VCR_CLOUDS_REQUIRED=1``); elsewhere
a missing package is skipped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.env import environ_without_vcr, offline_prefix, run_captured, temp_dir
from tests.support.helpers.paths import ROOT
from tests.support.servers.openai_server import OpenAIServer

pytestmark = pytest.mark.child

SCRIPT = ROOT / "tests" / "support" / "children" / "openai_framework_scenarios.py"
KEY = "sk-proj-" + "F" * 40 + "T3BlbkFJ" + "r" * 20


def snapshot(folder: Path) -> dict[str, str]:
    """Every fixture's name and the SHA1 of its bytes."""
    return {
        p.name: hashlib.sha1(p.read_bytes(), usedforsecurity=False).hexdigest()
        for p in sorted(folder.glob("*.json"))
    }


def needs(modules: list[str], required_by: str) -> None:
    """Skip the test unless every module is installed; fail instead where the env
    variable ``required_by`` says this env installs them."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    if os.environ.get(required_by) == "1":
        raise AssertionError(f"{', '.join(missing)} not installed ({required_by}=1)")
    raise unittest.SkipTest(f"{', '.join(missing)} not installed; its tox env installs it")


class OpenAIFrameworksOffline(unittest.TestCase):
    def setUp(self) -> None:
        self.server = OpenAIServer().start()
        self.addCleanup(self.server.stop)
        self.fixtures = temp_dir(self) / "fixtures"

    def run_scenarios(self, names: list[str], *, offline: bool, **env: str) -> dict[str, Any]:
        environ = environ_without_vcr() | {"VCR_REPORT": "1", **env}
        environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm fetches its prices otherwise
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
            environ.pop(name, None) if name not in env else None
        command = [sys.executable, "-W", "error", str(SCRIPT), *names]
        command += ["--fixtures", str(self.fixtures)]
        if offline:
            command = [*offline_prefix(), *command]
        done = run_captured(command, cwd=ROOT, env=environ, timeout=300)
        self.assertEqual(done.returncode, 0, (done.stdout[-3000:], done.stderr[-3000:]))
        outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        outcome["stderr"] = done.stderr
        return outcome

    def record(self, names: list[str], mode: str = "auto") -> dict[str, Any]:
        return self.run_scenarios(
            names,
            offline=False,
            VCR_MODE=mode,
            OPENAI_API_KEY=KEY,
            OPENAI_BASE_URL=self.server.base_url,
        )

    def check_round_trip(self, names: list[str], *, rerecord: bool = True) -> dict[str, Any]:
        recorded = self.record(names)
        self.assertEqual(recorded["journal"], ["recorded"])
        self.assertRegex(recorded["stderr"], r"vcr_kit: 0 replayed, [1-9]\d* recorded, 0 missing")
        self.assertGreater(recorded["cost"]["usd"], 0)
        files = snapshot(self.fixtures)
        self.assertTrue(files)
        self.assertTrue(all(name.startswith("openai-") for name in files), sorted(files))
        for path in self.fixtures.glob("*.json"):
            self.assertNotIn(KEY, path.read_text(encoding="utf-8"), path.name)
        calls = len(self.server.log)

        replayed = self.run_scenarios(names, offline=True, CI="true")
        self.assertEqual(replayed["values"], recorded["values"])
        self.assertEqual(replayed["cost"], recorded["cost"])
        self.assertEqual(replayed["journal"], ["replayed"])
        self.assertEqual(snapshot(self.fixtures), files)
        self.assertEqual(len(self.server.log), calls)
        if not rerecord:
            return recorded

        rerecorded = self.record(names, mode="record")
        self.assertEqual(rerecorded["values"], recorded["values"])
        self.assertGreater(len(self.server.log), calls)
        self.assertEqual(snapshot(self.fixtures), files, "an unchanged re-record changed bytes")
        return recorded

    def test_langchain_openai_and_pydantic_ai(self) -> None:
        needs(["langchain_openai", "pydantic_ai"], "VCR_FRAMEWORKS_REQUIRED")
        values = self.check_round_trip(["langchain_openai", "pydantic_ai_openai"])["values"]
        chat = values["langchain_openai"]
        self.assertTrue(chat["invoke"].startswith("Echo: "), chat)
        self.assertTrue(chat["stream"].startswith("Echo: "), chat)
        self.assertEqual(chat["tool_calls"], [["get_weather", {"location": "Rome"}]])
        agent = values["pydantic_ai_openai"]
        self.assertTrue(agent["output"].startswith("Echo: "), agent)
        self.assertIn("Sunny in Oslo", agent["with_tool"])

    def test_litellm_with_an_openai_model(self) -> None:
        needs(["litellm"], "VCR_CLOUDS_REQUIRED")
        # No re-record: litellm's import is the slowest of all, and it sends through the
        # openai SDK that the other test re-records byte for byte already.
        recorded = self.check_round_trip(["litellm_openai"], rerecord=False)
        answers = recorded["values"]["litellm_openai"]
        self.assertEqual(len(answers), 3)
        self.assertTrue(all(a.startswith("Echo: ") for a in answers), answers)
