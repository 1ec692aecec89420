"""Claude Code on Google Vertex AI and on Microsoft Foundry through ``vcr_kit run``.

With ``CLAUDE_CODE_USE_VERTEX=1`` Claude Code talks to ``ANTHROPIC_VERTEX_BASE_URL``,
with ``CLAUDE_CODE_USE_FOUNDRY=1`` to ``ANTHROPIC_FOUNDRY_BASE_URL``: ``vcr_kit run``
points each at its proxy (``/v1`` and ``/anthropic`` after its address, the paths
``AnthropicVertex`` and ``AnthropicFoundry`` use on the platforms' own hosts) with the
client's own authentication skipped. While recording, the proxy authenticates
upstream with this machine's credentials: a Google access token from
application-default credentials (here a service-account file whose token endpoint is
the loopback cloud server, through google-auth's own refresh), the Foundry key.
Replayed under ``unshare -n`` with no credentials and no base URL
(``tests/support/helpers/claude_code_cloud.py``).
"""

from __future__ import annotations

import json
import os
import re
import sys
import unittest
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anthropic
import pytest

from tests.clients.test_clients_node import TOOL_PROMPT
from tests.support.helpers.claude_code_cloud import ROOT, ClaudeCodeOnCloudCase, Cloud
from tests.support.helpers.env import (
    environ_without_vcr,
    installed,
    offline,
    patch_env,
    run_captured,
    temp_dir,
)
from tests.support.helpers.node_clients import install_newest_claude_code
from tests.support.servers.cloud_server import (
    FOUNDRY_KEY,
    GOOGLE_TOKEN,
    CloudServer,
    google_credentials_file,
)
from vcr_kit._core.credentials import REPLAY_API_KEY
from vcr_kit._proxy.server import Proxy

VERTEX = Cloud(
    "vertex",
    library="google.auth",
    extra="vertex",
    settings={"ANTHROPIC_VERTEX_PROJECT_ID": "vcr-kit-test", "CLOUD_ML_REGION": "us-east5"},
    own=("GOOGLE_", "CLOUDSDK_", "GCLOUD_", "ANTHROPIC_VERTEX_", "CLOUD_ML_"),
)
FOUNDRY = Cloud(
    "foundry",
    # The resource in both runs, as a user's shell has it: the child must not get it
    # beside the proxy's base URL (the SDK refuses both).
    settings={"ANTHROPIC_FOUNDRY_RESOURCE": "vcr-kit-test"},
    own=("ANTHROPIC_FOUNDRY_", "AZURE_"),
)
VERTEX_MODELS = "/v1/projects/vcr-kit-test/locations/us-east5/publishers/anthropic/models/"
#: The names the in-process seams give these paths (tests/clients/test_cloud_clients.py).
VERTEX_NAME = (
    r"\Apost-v1-projects-vcr-kit-test-locations-us-east5-publishers-anthropic-models-cla-"
    r"[0-9a-f]{12}\.json\Z"
)
FOUNDRY_PATH = "/anthropic/v1/messages"
FOUNDRY_NAME = r"\Apost-anthropic-v1-messages-[0-9a-f]{12}\.json\Z"

#: The SDK's own cloud client sends, in-process, the body Claude Code sent through the
#: proxy, to the platform's own host, in a replaying vcr_kit session with no credentials.
IN_PROCESS = """
import json, sys
import anthropic
from vcr_kit._integrations.session import vcr_session

platform, fixtures, sent = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
body, beta = sent["body"], sent["beta"]
known = {"messages", "system", "tools", "metadata", "max_tokens", "thinking", "stream",
         "temperature", "tool_choice", "stop_sequences", "top_k", "top_p", "model"}
params = {k: v for k, v in body.items() if k in known}
params.setdefault("model", sent["model"])
with vcr_session(fixtures_dir=fixtures) as journal:
    if platform == "vertex":
        client = anthropic.AnthropicVertex(region="us-east5", project_id="vcr-kit-test")
    else:
        client = anthropic.AnthropicFoundry(resource="vcr-kit-test")
    stream = client.beta.messages.create(
        **params,
        extra_body={k: v for k, v in body.items() if k not in known},
        extra_headers={"anthropic-beta": beta},
        extra_query=dict(sent["query"]),
    )
    text = "".join(e.delta.text for e in stream
                   if e.type == "content_block_delta" and e.delta.type == "text_delta")
print(json.dumps({"text": text, "events": [e.event.value for e in journal.entries]}))
"""


def stored_path(fixtures: Path) -> tuple[str, str]:
    """(name, stored request path) of the one fixture in ``fixtures``."""
    (fixture,) = fixtures.glob("*.json")
    return fixture.name, json.loads(fixture.read_text(encoding="utf-8"))["request"]["path"]


class CloudCase(ClaudeCodeOnCloudCase):
    def replay_in_process(self, sent: tuple[str, dict[str, str], bytes]) -> dict[str, Any]:
        """The request Claude Code sent (as the cloud server logged it), sent again by the
        SDK's own client for the platform in a replaying session, offline, where
        Claude Code ran (its cwd and HOME are in the request)."""
        path, headers, body = sent
        # Vertex's model is in the path (.../models/<model>:streamRawPredict); Foundry's
        # in the body, which wins.
        model = unquote(path.rsplit("/", 1)[-1].split(":")[0])
        # The query as sent (Claude Code's Foundry client adds ?beta=true), from the fixture.
        (fixture,) = self.fixtures.glob("*.json")
        query = json.loads(fixture.read_text(encoding="utf-8"))["request"].get("query", [])
        request = {
            "body": json.loads(body),
            "beta": headers["anthropic-beta"],
            "model": model,
            "query": query,
        }
        env = {
            **{k: v for k, v in environ_without_vcr().items() if not k.startswith(self.cloud.own)},
            "HOME": str(self.recorded_in / "home"),
            "CI": "true",
            "PYTHONPATH": str(ROOT),
        }
        command = [sys.executable, "-c", IN_PROCESS, self.cloud.name, str(self.fixtures)]
        done = run_captured(
            [*offline(), *command, json.dumps(request)], cwd=self.recorded_in, env=env, timeout=120
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        found: dict[str, Any] = json.loads(done.stdout)
        return found


@pytest.mark.node
class ClaudeCodeOnVertexTest(CloudCase):
    cloud = VERTEX
    #: The path of Claude Code's default model on Vertex (2.1.197's), as a pattern.
    vertex_path = re.escape(VERTEX_MODELS + "claude-sonnet-4-5@20250929:streamRawPredict")

    def recording(self, server: CloudServer) -> dict[str, str]:
        return {
            "GOOGLE_APPLICATION_CREDENTIALS": str(google_credentials_file(self.config, server.url)),
            "ANTHROPIC_VERTEX_BASE_URL": f"{server.url}/v1",
        }

    def test_recorded_with_the_machines_google_credentials_replayed_with_none(self) -> None:
        prompt = "Hello from Claude Code on Vertex"
        server = self.record_and_replay(prompt, f"Echo: {prompt}", turns=1)
        # The proxy got its token from the machine's credentials, then sent it.
        (token, _, _), (vertex, headers, _) = server.log
        self.assertEqual(token, "/token")
        self.assertRegex(vertex, rf"\A{self.vertex_path}\Z")
        self.assertEqual(headers["authorization"], f"Bearer {GOOGLE_TOKEN}")
        # The path AnthropicVertex sends to the platform's own host: the same name.
        name, path = stored_path(self.fixtures)
        self.assertEqual(path, vertex)
        self.assertRegex(name, VERTEX_NAME)
        self.assert_never_stored(self.fixtures, GOOGLE_TOKEN, "ya29.", "PRIVATE KEY")
        # The same kind of file as AnthropicVertex's: it replays the fixture itself.
        self.assertEqual(
            self.replay_in_process(server.log[1]),
            {"text": f"Echo: {prompt}", "events": ["replayed"]},
        )

    def test_a_tool_call_replays(self) -> None:
        # The tool id Claude Code quotes in its second request is the fixture's.
        self.record_and_replay(TOOL_PROMPT, "The tool said: vcr-tool-ok", turns=2)


@pytest.mark.node
class ClaudeCodeOnFoundryTest(CloudCase):
    cloud = FOUNDRY

    def recording(self, server: CloudServer) -> dict[str, str]:
        return {
            "ANTHROPIC_FOUNDRY_API_KEY": FOUNDRY_KEY,
            "ANTHROPIC_FOUNDRY_BASE_URL": f"{server.url}/anthropic",
        }

    def test_recorded_with_the_machines_foundry_key_replayed_with_none(self) -> None:
        prompt = "Hello from Claude Code on Foundry"
        server = self.record_and_replay(prompt, f"Echo: {prompt}", turns=1)
        self.assertEqual([path for path, _, _ in server.log], [FOUNDRY_PATH])
        headers = server.log[0][1]
        # The proxy's key, not the stand-in the child was given.
        self.assertEqual((headers["api-key"], headers["x-api-key"]), (FOUNDRY_KEY, FOUNDRY_KEY))
        # The path AnthropicFoundry sends to a resource's host: the same name.
        name, path = stored_path(self.fixtures)
        self.assertEqual(path, FOUNDRY_PATH)
        self.assertRegex(name, FOUNDRY_NAME)
        self.assert_never_stored(self.fixtures, FOUNDRY_KEY, REPLAY_API_KEY)
        # The same kind of file as AnthropicFoundry's: it replays the fixture itself.
        self.assertEqual(
            self.replay_in_process(server.log[0]),
            {"text": f"Echo: {prompt}", "events": ["replayed"]},
        )

    def test_a_tool_call_replays(self) -> None:
        # The tool id Claude Code quotes in its second request is the fixture's.
        self.record_and_replay(TOOL_PROMPT, "The tool said: vcr-tool-ok", turns=2)


class NewestReleaseOnVertexTest(ClaudeCodeOnVertexTest):
    """The same with the newest Claude Code release (whatever its default model)."""

    vertex_path = re.escape(VERTEX_MODELS) + r"[^/]+:streamRawPredict"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.modules = install_newest_claude_code()


class NewestReleaseOnFoundryTest(ClaudeCodeOnFoundryTest):
    """The same with the newest Claude Code release."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.modules = install_newest_claude_code()


def needs(missing: str | None) -> None:
    """Skip where ``missing`` is not installed (this SDK release, or google-auth, which
    ``anthropic[vertex]`` brings); fail instead under ``VCR_CLOUDS_REQUIRED=1`` (the
    clients tox env)."""
    if missing is None:
        return
    if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":
        raise AssertionError(f"the clients env installs {missing}: anthropic[vertex]")
    raise unittest.SkipTest(f"{missing} is not installed here: tox -e clients")


@pytest.mark.inprocess
class RecordingWithoutCredentialsTest(unittest.TestCase):
    """The proxy records a cloud request with this machine's credentials: without them
    the client (here the SDK's own cloud client, pointed at the proxy as ``vcr_kit run``
    points Claude Code) is answered with the error, and nothing is written."""

    def setUp(self) -> None:
        self.folder = temp_dir(self, prefix="vcr-cloud-nocreds-")
        self.fixtures = self.folder / "fixtures"
        patch_env(
            self,
            VCR_REPORT="0",
            ANTHROPIC_FOUNDRY_API_KEY="",
            ANTHROPIC_FOUNDRY_BASE_URL="http://127.0.0.1:9/anthropic",
            ANTHROPIC_VERTEX_BASE_URL="http://127.0.0.1:9/v1",
            GOOGLE_APPLICATION_CREDENTIALS=str(self.folder / "missing.json"),
        )
        # Unset, not blank: releases before 1.x take "" for a resource name, and then
        # refuse a base URL beside it.
        resource = os.environ.pop("ANTHROPIC_FOUNDRY_RESOURCE", None)
        if resource is not None:
            self.addCleanup(os.environ.__setitem__, "ANTHROPIC_FOUNDRY_RESOURCE", resource)
        self.logged: list[str] = []
        self.proxy = Proxy(mode="auto", fixtures_dir=self.fixtures, log=self.logged.append)
        self.proxy.start()
        self.addCleanup(self.proxy.stop)

    def refusal(self, client: anthropic.Anthropic) -> str:
        self.addCleanup(client.close)
        with self.assertRaises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model="claude-opus-4-7", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
            )
        self.assertEqual(list(self.fixtures.glob("*.json")), [])
        message: str = caught.exception.body["error"]["message"]  # type: ignore[index]
        self.assertEqual(self.logged, [f"vcr_kit proxy: {message}"])
        return message

    def test_foundry_without_a_key(self) -> None:
        needs(None if hasattr(anthropic, "AnthropicFoundry") else "AnthropicFoundry")
        client = anthropic.AnthropicFoundry(
            base_url=f"{self.proxy.url}/anthropic", api_key=REPLAY_API_KEY, max_retries=0
        )
        self.assertEqual(
            self.refusal(client),
            "Recording a Microsoft Foundry request through the vcr_kit proxy needs "
            "ANTHROPIC_FOUNDRY_API_KEY on this machine.",
        )

    def test_vertex_without_google_credentials(self) -> None:
        needs(None if installed("google.auth") else "google-auth")
        client = anthropic.AnthropicVertex(
            base_url=f"{self.proxy.url}/v1",
            region="us-east5",
            project_id="vcr-kit-test",
            access_token="made-for-the-proxy",
            max_retries=0,
        )
        self.assertEqual(
            self.refusal(client),
            "Recording a Vertex AI request through the vcr_kit proxy needs Google credentials "
            "on this machine (gcloud auth application-default login, or "
            "GOOGLE_APPLICATION_CREDENTIALS), and none were found: File "
            f"{self.folder / 'missing.json'} was not found.",
        )
