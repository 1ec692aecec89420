"""Claude Code on Amazon Bedrock through ``vcr_kit run``.

With ``CLAUDE_CODE_USE_BEDROCK=1``, Claude Code talks to ``ANTHROPIC_BEDROCK_BASE_URL``,
not ``ANTHROPIC_BASE_URL``: ``vcr_kit run`` points that at its proxy with
``CLAUDE_CODE_SKIP_BEDROCK_AUTH=1`` (a signature made for the proxy's address would not
be valid upstream), and the proxy signs each request it records for the real host
with the machine's AWS credentials (botocore). Recorded against the loopback Bedrock
server (``tests/support/servers/cloud_server.py``, which refuses anything not signed with the
test key), then replayed with no credentials, no base URL and no network
(``tests/support/helpers/claude_code_cloud.py``).
"""

from __future__ import annotations

import pytest

from tests.clients.test_clients_node import TOOL_PROMPT
from tests.support.helpers.claude_code_cloud import ClaudeCodeOnCloudCase, Cloud
from tests.support.servers.cloud_server import AWS_KEY_ID, AWS_SECRET, CloudServer

pytestmark = pytest.mark.node

PROMPT = "Hello from Claude Code on Bedrock"
BEDROCK = Cloud(
    "bedrock",
    library="botocore",
    extra="bedrock",
    settings={"AWS_REGION": "us-east-1"},
    own=("AWS_",),
)


class ClaudeCodeOnBedrockTest(ClaudeCodeOnCloudCase):
    cloud = BEDROCK

    def recording(self, server: CloudServer) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "AWS_CONFIG_FILE": str(self.config / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.config / "no-aws-credentials"),
            "ANTHROPIC_BEDROCK_BASE_URL": server.url,
        }

    def test_recorded_with_the_machines_aws_credentials_replayed_with_none(self) -> None:
        # Claude Code asks Bedrock's control plane for its inference profiles first.
        server = self.record_and_replay(PROMPT, f"Echo: {PROMPT}", turns=1, requests=2)
        self.assertEqual(
            [path for path, _, _ in server.log],
            [
                "/inference-profiles",
                "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
            ],
        )
        self.assert_never_stored(self.fixtures, AWS_KEY_ID, AWS_SECRET, "Signature=", "x-amz-date")

    def test_a_tool_call_replays(self) -> None:
        # The tool id Claude Code quotes in its next request came base64 inside an
        # event-stream frame.
        self.record_and_replay(TOOL_PROMPT, "The tool said: vcr-tool-ok", turns=2, requests=3)
