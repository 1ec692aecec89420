"""litellm, which sends its sync calls with ``httpx`` (imported on first use, while the
test runs) and its async calls with aiohttp: recorded over loopback and replayed with
the network removed. Skips without litellm unless ``VCR_CLOUDS_REQUIRED=1`` (the
clients tox env)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.env import offline_prefix, run_captured
from tests.support.helpers.paths import ROOT
from tests.support.servers.loopback_server import LoopbackServer

pytestmark = pytest.mark.child

SCRIPT = ROOT / "tests" / "support" / "children" / "litellm_scenario.py"
KEY = "sk-ant-test-" + "l" * 32

if importlib.util.find_spec("litellm") is None:
    if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":
        raise ImportError("VCR_CLOUDS_REQUIRED=1 but litellm is not installed")
    pytest.skip("litellm is not installed (the clients tox env has it)", allow_module_level=True)


def run(base_url: str, fixtures: Path, env: dict[str, str], offline: bool = False) -> Any:
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(fixtures.parent),
        "VCR_REPORT": "0",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm fetches its prices otherwise
    }
    done = run_captured(
        [
            *(offline_prefix() if offline else []),
            sys.executable,
            str(SCRIPT),
            base_url,
            str(fixtures),
        ],
        cwd=ROOT,
        env={**base, **env},
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_litellm_sync_async_and_streamed_recorded_and_replayed_offline(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    with LoopbackServer() as server:
        recorded = run(server.url, fixtures, {"VCR_MODE": "auto", "ANTHROPIC_API_KEY": KEY})
        assert recorded.get("error") is None, recorded
        assert recorded["events"] == ["recorded"] * 3
        assert len(server.log) == 3
        url = server.url
    assert recorded["answers"] == [
        "Echo: litellm sync",
        "Echo: litellm async",
        "Echo: litellm stream",
    ]
    for _ in range(2):
        replayed = run(url, fixtures, {"VCR_MODE": "replay"}, offline=True)
        assert replayed == {**recorded, "events": ["replayed"] * 3}
