"""Claude Code on Amazon Bedrock through ``vcr_kit run``.

With ``CLAUDE_CODE_USE_BEDROCK=1``, Claude Code talks to ``ANTHROPIC_BEDROCK_BASE_URL``,
not ``ANTHROPIC_BASE_URL``: ``vcr_kit run`` points that at its proxy with
``CLAUDE_CODE_SKIP_BEDROCK_AUTH=1`` (a signature made for the proxy's address would not
be valid upstream), and the proxy signs each request it records for the real host
with the machine's AWS credentials (botocore). Recorded against the loopback Bedrock
server (``tests/support/cloud_server.py``, which refuses anything not signed with the
test key), then replayed with no credentials, no base URL and no network. Runs in
the clients tox env (``VCR_REQUIRE_CLIENTS=1``), like the other Node clients.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import unittest
from pathlib import Path

from tests.clients.test_clients_node import TOOL_PROMPT, install_npm_packages, node_tools
from tests.clients.test_proxy import offline
from tests.support.cloud_server import AWS_KEY_ID, AWS_SECRET, CloudServer
from tests.support.env import environ_without_vcr, run_captured, temp_dir

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "Hello from Claude Code on Bedrock"


class ClaudeCodeOnBedrockTest(unittest.TestCase):
    modules: Path

    @classmethod
    def setUpClass(cls) -> None:
        if not os.environ.get("VCR_REQUIRE_CLIENTS"):
            raise unittest.SkipTest("the Node clients run in their own env: tox -e clients")
        if node_tools() is None:
            raise unittest.SkipTest("node and npm are needed to install the Node clients")
        if importlib.util.find_spec("botocore") is None:
            raise AssertionError("the clients env installs anthropic[bedrock] (botocore)")
        cls.modules = install_npm_packages()

    def run_claude(
        self, fixtures: Path, env: dict[str, str], replay: bool, prompt: str = PROMPT
    ) -> dict[str, object]:
        base = temp_dir(self, prefix="vcr-bedrock-")
        (base / "home").mkdir()
        wrapper = self.modules / "@anthropic-ai" / "claude-code" / "cli-wrapper.cjs"
        place = {
            **{k: v for k, v in environ_without_vcr().items() if not k.startswith("AWS_")},
            "HOME": str(base / "home"),
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "AWS_REGION": "us-east-1",
            "AWS_CONFIG_FILE": str(base / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(base / "no-aws-credentials"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "PYTHONPATH": str(ROOT),
            "VCR_REPORT": "1",
            **env,
        }
        if "ANTHROPIC_BEDROCK_BASE_URL" not in env:
            place.pop("ANTHROPIC_BEDROCK_BASE_URL", None)
        command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(fixtures)]
        if replay:
            command = [*offline(), *command, "--mode", "replay"]
        node = shutil.which("node") or "node"
        claude = [node, str(wrapper), "-p", prompt, "--output-format", "json"]
        done = run_captured(
            [*command, "--", *claude, "--allowedTools", "Bash"],
            cwd=base,
            env=place,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        answer = json.loads(done.stdout)
        return {
            "result": answer["result"],
            "is_error": answer["is_error"],
            "num_turns": answer["num_turns"],
            "summary": done.stderr.strip().splitlines()[-1].split(";")[0],
        }

    def test_recorded_with_the_machines_aws_credentials_replayed_with_none(self) -> None:
        fixtures = temp_dir(self, prefix="vcr-bedrock-fixtures-") / "fixtures"
        with CloudServer() as server:
            recording = {
                "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
                "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
                "ANTHROPIC_BEDROCK_BASE_URL": server.url,
            }
            recorded = self.run_claude(fixtures, recording, replay=False)
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
        for path in fixtures.glob("*.json"):
            data = path.read_text(encoding="utf-8")
            for secret in (AWS_KEY_ID, AWS_SECRET, "Signature=", "x-amz-date"):
                self.assertNotIn(secret, data, path.name)
        replayed = self.run_claude(fixtures, {}, replay=True)
        self.assertEqual(
            replayed, {**recorded, "summary": "vcr_kit: 2 replayed, 0 recorded, 0 missing"}
        )

    def test_a_tool_call_replays(self) -> None:
        # The tool id Claude Code quotes in its next request came base64 inside an
        # event-stream frame.
        fixtures = temp_dir(self, prefix="vcr-bedrock-fixtures-") / "fixtures"
        with CloudServer() as server:
            recording = {
                "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
                "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
                "ANTHROPIC_BEDROCK_BASE_URL": server.url,
            }
            recorded = self.run_claude(fixtures, recording, replay=False, prompt=TOOL_PROMPT)
        self.assertEqual(
            recorded,
            {
                "result": "The tool said: vcr-tool-ok",
                "is_error": False,
                "num_turns": 2,
                "summary": "vcr_kit: 0 replayed, 3 recorded, 0 missing",
            },
        )
        replayed = self.run_claude(fixtures, {}, replay=True, prompt=TOOL_PROMPT)
        self.assertEqual(
            replayed, {**recorded, "summary": "vcr_kit: 3 replayed, 0 recorded, 0 missing"}
        )
