"""Frameworks take their fallback path on injected faults, replayed offline.

``tests/support/children/fault_framework_scenarios.py`` runs in a process of its own: first
recording from the loopback server (the primary model in an injected outage, so only
the fallback model's answer is ever fetched), then replaying under ``unshare -n``
with ``CI=true`` and no key. Runs in the ``frameworks`` tox env, which installs
langchain-anthropic and pydantic-ai and sets ``VCR_FRAMEWORKS_REQUIRED=1`` (a missing
package then fails); elsewhere a missing one is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.support.children.sdk_scenarios import recording_key
from tests.support.helpers.env import environ_without_vcr, offline_prefix, run_captured
from tests.support.helpers.paths import ROOT
from tests.support.servers.loopback_server import LoopbackServer

pytestmark = pytest.mark.child

SCRIPT = ROOT / "tests" / "support" / "children" / "fault_framework_scenarios.py"
NEEDED = {
    "langchain_fallbacks": "langchain_anthropic",
    "pydantic_ai_fallback": "pydantic_ai",
    "pydantic_ai_retries": "pydantic_ai",
}


def _missing() -> list[str]:
    return sorted({m for m in NEEDED.values() if importlib.util.find_spec(m) is None})


class FrameworkFallbacksOffline(unittest.TestCase):
    recorded: ClassVar[dict[str, Any]]
    replayed: ClassVar[dict[str, Any]]
    upstream_models: ClassVar[list[str]]
    fixtures: ClassVar[Path]

    @classmethod
    def setUpClass(cls) -> None:
        missing = _missing()
        if missing:
            if os.environ.get("VCR_FRAMEWORKS_REQUIRED") == "1":
                raise AssertionError(f"{', '.join(missing)} not installed (tox -e frameworks)")
            raise unittest.SkipTest(f"{', '.join(missing)} not installed; run tox -e frameworks")
        folder = Path(tempfile.mkdtemp()).resolve()
        cls.addClassCleanup(shutil.rmtree, folder, True)
        cls.fixtures = folder / "fixtures"
        env = environ_without_vcr() | {"VCR_REPORT": "0"}
        env.pop("PYTHONWARNINGS", None)
        with LoopbackServer() as server:
            recording = env | {"VCR_MODE": "record", "ANTHROPIC_API_KEY": recording_key()}
            # The frameworks leave their clients' loopback connections open while
            # recording (their ResourceWarnings at exit): only the replay must be silent.
            cls.recorded = cls.run_script(recording, ["--base-url", server.url], [], quiet=False)
            cls.upstream_models = [r.json()["model"] for r in server.requests_to("/v1/messages")]
        cls.replayed = cls.run_script(env | {"CI": "true"}, [], offline_prefix(), quiet=True)

    @classmethod
    def run_script(
        cls, env: dict[str, str], extra: list[str], prefix: list[str], *, quiet: bool
    ) -> Any:
        out = cls.fixtures.parent / "out.json"
        command = [*prefix, sys.executable, "-W", "error", str(SCRIPT),
                   "--fixtures", str(cls.fixtures), "--out", str(out), *extra]  # fmt: skip
        done = run_captured(command, cwd=ROOT, env=env, timeout=300)
        if done.returncode or (quiet and done.stderr):
            raise AssertionError(f"{' '.join(command)}: {done.returncode}\n{done.stderr[-4000:]}")
        return json.loads(out.read_text(encoding="utf-8"))

    def test_langchain_with_fallbacks_answers_from_the_fallback_model(self) -> None:
        seen = self.replayed["langchain_fallbacks"]
        self.assertEqual(seen["text"], "Echo: Hello from langchain")
        self.assertEqual(seen["model"], "claude-haiku-4-5")
        # max_retries=0: one overload, then langchain falls back.
        self.assertEqual(seen["faults"], ["overloaded"])
        self.assertEqual(seen["journal"], {"faults": 1, "replays": 1})

    def test_pydantic_ai_fallback_model_after_the_sdks_retries(self) -> None:
        seen = self.replayed["pydantic_ai_fallback"]
        self.assertEqual(seen["text"], "Echo: Hello from pydantic-ai")
        self.assertEqual(seen["model"], "claude-haiku-4-5")
        # The SDK's two retries of the primary, then pydantic-ai's FallbackModel.
        self.assertEqual(seen["faults"], ["overloaded"] * 3)
        self.assertEqual(seen["journal"], {"faults": 3, "replays": 1})

    def test_pydantic_ai_retries_absorb_an_overload_and_a_reset(self) -> None:
        seen = self.replayed["pydantic_ai_retries"]
        self.assertEqual(seen["text"], "Echo: Retry from pydantic-ai")
        self.assertEqual(seen["faults"], ["overloaded", "reset"])
        self.assertEqual(seen["journal"], {"faults": 2, "replays": 1})

    def test_the_primary_model_in_outage_was_never_called(self) -> None:
        self.assertEqual(
            sorted(self.upstream_models),
            ["claude-haiku-4-5", "claude-haiku-4-5", "claude-opus-4-7"],
        )
        for name, seen in self.recorded.items():
            self.assertEqual(seen["faults"], self.replayed[name]["faults"], name)
        for path in self.fixtures.glob("*.json"):
            self.assertNotIn("req_vcrfault_", path.read_text(encoding="utf-8"))
