"""Claude Code on Amazon Bedrock through ``vcr_kit run``.

With ``CLAUDE_CODE_USE_BEDROCK=1``, Claude Code talks to ``ANTHROPIC_BEDROCK_BASE_URL``,
not ``ANTHROPIC_BASE_URL``: ``vcr_kit run`` points that at its proxy with
``CLAUDE_CODE_SKIP_BEDROCK_AUTH=1`` (a signature made for the proxy's address would not
be valid upstream), and the proxy signs each request it records for the real host
with the machine's AWS credentials (botocore). Recorded against the loopback Bedrock
server (``tests/support/cloud_server.py``, which refuses anything not signed with the
test key), then replayed with no credentials, no base URL and no network
(``tests/support/claude_code_cloud.py``).
"""

from __future__ import annotations

from tests.clients.test_clients_node import TOOL_PROMPT
from tests.support.claude_code_cloud import ClaudeCodeOnCloudCase, Cloud
from tests.support.cloud_server import AWS_KEY_ID, AWS_SECRET, CloudServer
from tests.support.env import temp_dir

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

    def setUp(self) -> None:
        base = temp_dir(self, prefix="vcr-bedrock-config-")
        self.fixtures = base / "fixtures"
        self.recording = {
            "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "AWS_CONFIG_FILE": str(base / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(base / "no-aws-credentials"),
        }

    def test_recorded_with_the_machines_aws_credentials_replayed_with_none(self) -> None:
        with CloudServer() as server:
            recording = {**self.recording, "ANTHROPIC_BEDROCK_BASE_URL": server.url}
            recorded = self.run_claude(self.fixtures, recording, replay=False, prompt=PROMPT)
            paths = [path for path, _, _ in server.log]
        self.assertEqual(
            recorded,
            {
                "result": f"Echo: {PROMPT}",
                "is_error": False,
                "num_turns": 1,
                "summary": "vcr_kit: 0 replayed, 2 recorded, 0 missing",
            },
        )
        self.assertEqual(
            paths,
            [
                "/inference-profiles",
                "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
            ],
        )
        self.assert_never_stored(self.fixtures, AWS_KEY_ID, AWS_SECRET, "Signature=", "x-amz-date")
        replayed = self.run_claude(self.fixtures, {}, replay=True, prompt=PROMPT)
        self.assertEqual(
            replayed, {**recorded, "summary": "vcr_kit: 2 replayed, 0 recorded, 0 missing"}
        )

    def test_a_tool_call_replays(self) -> None:
        # The tool id Claude Code quotes in its next request came base64 inside an
        # event-stream frame.
        with CloudServer() as server:
            recording = {**self.recording, "ANTHROPIC_BEDROCK_BASE_URL": server.url}
            recorded = self.run_claude(self.fixtures, recording, replay=False, prompt=TOOL_PROMPT)
        self.assertEqual(
            recorded,
            {
                "result": "The tool said: vcr-tool-ok",
                "is_error": False,
                "num_turns": 2,
                "summary": "vcr_kit: 0 replayed, 3 recorded, 0 missing",
            },
        )
        replayed = self.run_claude(self.fixtures, {}, replay=True, prompt=TOOL_PROMPT)
        self.assertEqual(
            replayed, {**recorded, "summary": "vcr_kit: 3 replayed, 0 recorded, 0 missing"}
        )
