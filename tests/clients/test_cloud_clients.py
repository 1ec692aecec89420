"""Every cloud client of the SDK, recorded with its platform's own credentials and replayed
with none, offline.

For each of ``AnthropicBedrock``, ``AnthropicBedrockMantle``, ``AnthropicAWS``,
``AnthropicVertex``, ``AnthropicGoogleCloud`` and ``AnthropicFoundry``, sync and async,
plain and streamed (``tests/support/children/cloud_scenarios.py``): recorded against a loopback
server that speaks the platform's wire format and checks its credentials
(``tests/support/servers/cloud_server.py``), with no Anthropic key; re-recorded without a
byte changing; replayed three times in a process with no key and no AWS, Google or
Azure credentials, under ``unshare -n`` where it works: on the recorded base URL
(server stopped) and twice on the platform's default host.

The AWS clients sign with botocore (``anthropic[bedrock]``), and the SDK decodes
Bedrock's event stream with it: without it those cases skip, unless
``VCR_CLOUDS_REQUIRED=1`` (the clients tox env) makes them fail instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.support.children.cloud_scenarios import BASE_PATHS
from tests.support.helpers.env import offline_prefix, run_captured
from tests.support.helpers.paths import ROOT
from tests.support.servers.cloud_server import (
    AWS_KEY_ID,
    AWS_SECRET,
    FOUNDRY_KEY,
    GOOGLE_TOKEN,
    CloudServer,
)

pytestmark = pytest.mark.clouds

SCRIPT = ROOT / "tests" / "support" / "children" / "cloud_scenarios.py"
REQUIRED = os.environ.get("VCR_CLOUDS_REQUIRED") == "1"

#: platform -> (its base-URL variable, whether it needs botocore)
PLATFORMS = {
    "bedrock": ("ANTHROPIC_BEDROCK_BASE_URL", True),
    "bedrock_mantle": ("ANTHROPIC_BEDROCK_MANTLE_BASE_URL", True),
    "aws": ("ANTHROPIC_AWS_BASE_URL", True),
    "vertex": ("ANTHROPIC_VERTEX_BASE_URL", False),
    "google_cloud": ("ANTHROPIC_GOOGLE_CLOUD_BASE_URL", False),
    "foundry": ("ANTHROPIC_FOUNDRY_BASE_URL", False),
}
#: The platforms' own credentials, as a developer's machine would have them.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
    "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
    "VCR_TEST_GOOGLE_TOKEN": GOOGLE_TOKEN,
    "ANTHROPIC_FOUNDRY_API_KEY": FOUNDRY_KEY,
}
#: What must never reach a fixture: the credentials, and what changes on every call.
NEVER_STORED = (
    AWS_KEY_ID,
    AWS_SECRET,
    GOOGLE_TOKEN,
    FOUNDRY_KEY,
    "x-amz-date",
    "Signature=",
    "x-amzn",
    '"p"',
    "invocationLatency",
    "firstByteLatency",
)


#: platform -> the SDK's client class (older releases ship fewer: 0.93 has no Google Cloud)
CLASSES = {
    "bedrock": "AnthropicBedrock",
    "bedrock_mantle": "AnthropicBedrockMantle",
    "aws": "AnthropicAWS",
    "vertex": "AnthropicVertex",
    "google_cloud": "AnthropicGoogleCloud",
    "foundry": "AnthropicFoundry",
}


def needs_client(platform: str) -> None:
    """Skip (fail under VCR_CLOUDS_REQUIRED=1) where this SDK release has no such client,
    or where the client needs botocore and it is not installed."""
    missing = None
    if not hasattr(anthropic, CLASSES[platform]):
        missing = f"anthropic {anthropic.__version__} has no {CLASSES[platform]}"
    elif PLATFORMS[platform][1] and importlib.util.find_spec("botocore") is None:
        missing = "botocore is not installed (pip install 'anthropic[bedrock]')"
    if missing is not None:
        if REQUIRED:
            pytest.fail(f"VCR_CLOUDS_REQUIRED=1 but {missing}")
        pytest.skip(missing)


def run(platform: str, fixtures: Path, env: dict[str, str], offline: bool = False) -> Any:
    """The scenario in a fresh process with exactly ``env`` (no credentials but these)."""
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(fixtures.parent),  # no ~/.aws, no gcloud configuration
        "AWS_CONFIG_FILE": str(fixtures.parent / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(fixtures.parent / "no-aws-credentials"),
        "VCR_REPORT": "0",
        "PYTHONWARNINGS": "error",
    }
    prefix = offline_prefix() if offline else []
    done = run_captured(
        [*prefix, sys.executable, str(SCRIPT), platform, str(fixtures)],
        cwd=ROOT,
        env={**base, **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def fixture_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.json"))}


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_recorded_with_the_platforms_credentials_and_replayed_offline_with_none(
    platform: str, tmp_path: Path
) -> None:
    needs_client(platform)
    variable = PLATFORMS[platform][0]
    fixtures = tmp_path / "fixtures"
    with CloudServer() as server:
        url = server.url + BASE_PATHS[platform]
        recording = {**CREDENTIALS, variable: url, "VCR_MODE": "auto"}
        recorded = run(platform, fixtures, recording)
        assert recorded.get("error") is None, recorded
        assert recorded["events"] == ["recorded"] * 4
        assert len(server.log) == 4  # the server answers 403 to a request it cannot trust
        first = fixture_bytes(fixtures)
        assert len(first) == 4
        for name, data in first.items():
            for value in NEVER_STORED:
                assert value.encode() not in data, f"{value!r} in {name}"
        rerecorded = run(platform, fixtures, {**recording, "VCR_MODE": "record"})
        assert rerecorded["events"] == ["recorded"] * 4
        assert rerecorded["answers"] == recorded["answers"]
        assert fixture_bytes(fixtures) == first, "re-recording changed a fixture"
    assert all(cost > 0 for cost in recorded["costs"]), recorded["costs"]
    hosts: tuple[dict[str, str], ...] = ({variable: url}, {}, {})  # recorded URL, default host
    if platform == "google_cloud" and int(anthropic.__version__.split(".")[0]) < 2:
        # Releases before 2.x derive their default base URL on /v1alpha/: a request to
        # the default host is another request than the one recorded on /v1/ (its name
        # says so), so only the recorded base URL can replay it.
        hosts = hosts[:1]
    for env in hosts:
        replayed = run(platform, fixtures, {**env, "VCR_MODE": "replay"}, offline=True)
        assert replayed == {**recorded, "events": ["replayed"] * 4}
    assert fixture_bytes(fixtures) == first


@pytest.mark.parametrize(
    ("platform", "needs"),
    [
        (
            "foundry",
            "Microsoft Foundry credentials: ANTHROPIC_FOUNDRY_API_KEY or an Azure AD token "
            "provider",
        ),
        (
            "bedrock",
            "Amazon Bedrock credentials: AWS credentials (AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK)",
        ),
    ],
)
def test_a_miss_without_credentials_says_what_the_platform_needs(
    platform: str, needs: str, tmp_path: Path
) -> None:
    needs_client(platform)
    fixtures = tmp_path / "fixtures"
    outcome = run(platform, fixtures, {"VCR_MODE": "auto"}, offline=True)
    (name,) = [word for word in outcome["error"].split() if word.endswith(".json.")]
    assert outcome["error"] == (
        f"FixtureMissingError: Fixture missing: {name}\n"
        f"Recording it needs {needs} (no Anthropic API key is needed), and run again."
    )
    assert outcome["events"] == ["missing"]
    assert not fixtures.exists() or list(fixtures.glob("*.json")) == []
