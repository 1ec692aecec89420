"""Where the proxy sends Claude Code's Vertex and Foundry requests while recording, and
with which credentials (``vcr_kit/_proxy/cloud_upstream.py``): the platforms' own
hosts when no base URL was given, the machine's credentials in place of the client's,
and a clear error naming what is missing. Google tokens come from a real
service-account refresh against the loopback cloud server (google-auth: where it is
not installed those cases skip, unless ``VCR_CLOUDS_REQUIRED=1``, the clients tox env,
makes them fail).
"""

from __future__ import annotations

import os
import unittest

import pytest

from tests.support.helpers.env import installed, patch_env, temp_dir
from tests.support.servers.cloud_server import (
    FOUNDRY_KEY,
    GOOGLE_TOKEN,
    CloudServer,
    google_credentials_file,
)
from vcr_kit._core.credentials import REPLAY_API_KEY
from vcr_kit._proxy.cloud_upstream import CloudUpstreams
from vcr_kit.errors import ConfigError

VERTEX_REST = "/projects/p1/locations/{region}/publishers/anthropic/models/m:streamRawPredict"
#: The client's own (stand-in) credential: never sent upstream.
CLIENT = [("x-api-key", REPLAY_API_KEY), ("authorization", "Bearer skip"), ("accept", "*/*")]
CLEARED = dict.fromkeys(
    (
        "ANTHROPIC_VERTEX_BASE_URL",
        "ANTHROPIC_FOUNDRY_BASE_URL",
        "ANTHROPIC_FOUNDRY_RESOURCE",
        "ANTHROPIC_FOUNDRY_API_KEY",
    ),
    "",
)


def cleared_but(**values: str) -> dict[str, str]:
    return {**CLEARED, **values}


@pytest.mark.clouds
class VertexUpstreamTest(unittest.TestCase):
    def setUp(self) -> None:
        if not installed("google.auth"):  # anthropic[vertex] brings it
            if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":
                raise AssertionError("the clients env installs google-auth: anthropic[vertex]")
            self.skipTest("google-auth is not installed here: tox -e clients")
        self.server = CloudServer().start()
        self.addCleanup(self.server.stop)
        credentials = google_credentials_file(temp_dir(self), self.server.url)
        patch_env(self, **cleared_but(GOOGLE_APPLICATION_CREDENTIALS=str(credentials)))

    def test_the_regions_own_host_with_a_token_from_the_machines_credentials(self) -> None:
        upstreams = CloudUpstreams()
        for region, host in (
            ("us-east5", "https://us-east5-aiplatform.googleapis.com"),
            ("global", "https://aiplatform.googleapis.com"),
        ):
            path = VERTEX_REST.format(region=region)
            url, headers = upstreams.upstream("POST", "/v1" + path, CLIENT, b"{}")
            self.assertEqual(url, f"{host}/v1{path}")
            self.assertEqual(
                headers, [("accept", "*/*"), ("authorization", f"Bearer {GOOGLE_TOKEN}")]
            )
        # One token for both: refreshed only when it expires.
        self.assertEqual([path for path, _, _ in self.server.log], ["/token"])

    def test_the_base_url_it_was_started_with(self) -> None:
        patch_env(self, ANTHROPIC_VERTEX_BASE_URL="http://127.0.0.1:9/gateway/")
        path = VERTEX_REST.format(region="us-east5")
        url, _ = CloudUpstreams().upstream("POST", "/v1" + path, [], b"{}")
        self.assertEqual(url, "http://127.0.0.1:9/gateway" + path)

    def test_no_google_credentials_is_a_config_error(self) -> None:
        missing = temp_dir(self) / "missing.json"
        patch_env(self, GOOGLE_APPLICATION_CREDENTIALS=str(missing))
        path = "/v1" + VERTEX_REST.format(region="us-east5")
        with self.assertRaises(ConfigError) as caught:
            CloudUpstreams().upstream("POST", path, [], b"{}")
        self.assertEqual(
            str(caught.exception),
            "Recording a Vertex AI request through the vcr_kit proxy needs Google credentials "
            "on this machine (gcloud auth application-default login, or "
            f"GOOGLE_APPLICATION_CREDENTIALS), and none were found: File {missing} was not "
            "found.",
        )


@pytest.mark.inprocess
class FoundryUpstreamTest(unittest.TestCase):
    def test_the_resources_own_host_with_the_machines_key(self) -> None:
        resource = {"ANTHROPIC_FOUNDRY_RESOURCE": "my-res"}
        patch_env(self, **cleared_but(**resource, ANTHROPIC_FOUNDRY_API_KEY=FOUNDRY_KEY))
        url, headers = CloudUpstreams().upstream("POST", "/anthropic/v1/messages", CLIENT, b"{}")
        self.assertEqual(url, "https://my-res.services.ai.azure.com/anthropic/v1/messages")
        self.assertEqual(
            headers, [("accept", "*/*"), ("x-api-key", FOUNDRY_KEY), ("api-key", FOUNDRY_KEY)]
        )

    def test_no_key_or_no_resource_is_a_config_error(self) -> None:
        patch_env(self, **cleared_but(ANTHROPIC_FOUNDRY_RESOURCE="my-res"))
        with self.assertRaises(ConfigError) as caught:
            CloudUpstreams().upstream("POST", "/anthropic/v1/messages", CLIENT, b"{}")
        self.assertEqual(
            str(caught.exception),
            "Recording a Microsoft Foundry request through the vcr_kit proxy needs "
            "ANTHROPIC_FOUNDRY_API_KEY on this machine.",
        )
        patch_env(self, **cleared_but(ANTHROPIC_FOUNDRY_API_KEY=FOUNDRY_KEY))
        with self.assertRaises(ConfigError) as caught:
            CloudUpstreams().upstream("POST", "/anthropic/v1/messages", CLIENT, b"{}")
        self.assertEqual(
            str(caught.exception),
            "Recording a Microsoft Foundry request through the vcr_kit proxy needs its "
            "resource: set ANTHROPIC_FOUNDRY_RESOURCE (or ANTHROPIC_FOUNDRY_BASE_URL).",
        )


@pytest.mark.inprocess
class ServesTest(unittest.TestCase):
    def test_the_cloud_paths_and_no_other(self) -> None:
        served = [
            "/model/anthropic.claude-opus-4-7-v1:0/invoke",
            "/inference-profiles",
            "/v1" + VERTEX_REST.format(region="global"),
            "/anthropic/v1/messages",
            "/anthropic/v1/messages/count_tokens?beta=true",
        ]
        not_served = ["/v1/messages", "/v1/models", "/anthropic", "/v1/projects/p"]
        self.assertEqual([p for p in served if not CloudUpstreams.serves(p)], [])
        self.assertEqual([p for p in not_served if CloudUpstreams.serves(p)], [])


@pytest.mark.inprocess
class WithoutGoogleAuthTest(unittest.TestCase):
    """Where google-auth is not installed (the default tox envs), recording a Vertex
    request says what to install."""

    def test_recording_says_what_to_install(self) -> None:
        if installed("google.auth"):
            self.skipTest("google-auth is installed here")
        patch_env(self, **CLEARED)
        path = "/v1" + VERTEX_REST.format(region="us-east5")
        with self.assertRaises(ConfigError) as caught:
            CloudUpstreams().upstream("POST", path, [], b"{}")
        self.assertEqual(
            str(caught.exception),
            "Recording a Vertex AI request through the vcr_kit proxy needs Google credentials "
            "on this machine (gcloud auth application-default login, or "
            "GOOGLE_APPLICATION_CREDENTIALS) and google-auth: pip install 'anthropic[vertex]'.",
        )
