"""Other processes and languages through the proxy: the Claude Code CLI, a Node script
on ``@anthropic-ai/sdk``, and ``claude-agent-sdk``'s ``query()`` in a ``VCRTestCase``.

Each records against the loopback server, then replays offline (``unshare -n``, with
only the loopback interface up) from another folder under another HOME, and must
print the same. They run in the ``clients`` tox env (``VCR_REQUIRE_CLIENTS=1``), which
CI runs: the npm packages are installed once into ``.tox/npm-clients`` (git ignored),
and the tests skip only where Node or npm is missing; ``claude-agent-sdk`` (a 165 MB
wheel) is a dependency of that env only, where its absence is a failure. Elsewhere
they are skipped, so that each of the other envs does not install and run them again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.clients.test_proxy import offline
from tests.support.helpers.env import environ_without_vcr, run_captured, start_server, temp_dir
from tests.support.helpers.node_clients import claude_command, require_node_clients
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.node

KEY = "sk-ant-test-clients-" + "k" * 24
TOOL_PROMPT = 'Check [[tool:Bash {"command":"echo vcr-tool-ok","description":"Say ok"}]]'

NODE_SCRIPT = textwrap.dedent(
    """
    const Anthropic = require("@anthropic-ai/sdk");
    const client = new Anthropic({ maxRetries: 0 });  // ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
    (async () => {
      const made = await client.messages.create({
        model: "claude-opus-4-7", max_tokens: 32,
        messages: [{ role: "user", content: "Hello from Node" }],
      });
      console.log("create:", made.content[0].text);
      const stream = client.messages.stream({
        model: "claude-opus-4-7", max_tokens: 32,
        messages: [{ role: "user", content: "Streamed to Node" }],
      });
      const pieces = [];
      stream.on("text", (text) => pieces.push(text));
      const final = await stream.finalMessage();
      console.log("stream:", pieces.join(""), "|", final.stop_reason);
    })().catch((error) => { console.error(String(error)); process.exit(1); });
    """
)


class ClientTestCase(unittest.TestCase):
    modules: Path

    @classmethod
    def setUpClass(cls) -> None:
        cls.modules = require_node_clients()

    def setUp(self) -> None:
        self.fixtures = temp_dir(self, prefix="vcr-clients-") / "fixtures"
        self.server = start_server(self)

    def place(self) -> tuple[Path, dict[str, str]]:
        """A fresh project folder and an environment with its own HOME."""
        base = temp_dir(self, prefix="vcr-place-")
        (base / "home").mkdir()
        (base / "project").mkdir()
        env = {
            **environ_without_vcr(),
            "HOME": str(base / "home"),
            "ANTHROPIC_API_KEY": KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "PYTHONPATH": str(ROOT),
            "VCR_REPORT": "1",
            "NODE_PATH": str(self.modules),
        }
        return base / "project", env

    def through_proxy(
        self, command: list[str], *, replay: bool
    ) -> subprocess.CompletedProcess[str]:
        folder, env = self.place()
        run = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures)]
        if replay:
            run = [*offline(), *run, "--mode", "replay", "--upstream", "http://127.0.0.1:9"]
        else:
            run = [*run, "--upstream", self.server.url]
        done = run_captured([*run, "--", *command], cwd=folder, env=env, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done

    def assert_fixtures_clean(self) -> None:
        names = sorted(p.name for p in self.fixtures.glob("*.json"))
        self.assertTrue(names)
        for name in names:
            data = (self.fixtures / name).read_bytes()
            json.loads(data)
            self.assertNotIn(KEY.encode(), data, name)

    def record_then_replay(self, command: list[str]) -> tuple[str, str]:
        recorded = self.through_proxy(command, replay=False)
        self.assertRegex(recorded.stderr, r"0 replayed, [1-9]\d* recorded, 0 missing")
        self.server.stop()
        replayed = self.through_proxy(command, replay=True)
        self.assertRegex(replayed.stderr, r"[1-9]\d* replayed, 0 recorded, 0 missing")
        self.assert_fixtures_clean()
        return recorded.stdout, replayed.stdout


class ClaudeCodeTest(ClientTestCase):
    def claude(self, prompt: str) -> list[str]:
        return claude_command(
            self.modules, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash"
        )

    def result(self, output: str) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(output)
        return {key: answer[key] for key in ("result", "num_turns", "is_error", "stop_reason")}

    def test_a_plain_answer_replays_elsewhere_offline(self) -> None:
        recorded, replayed = self.record_then_replay(self.claude("Hello from Claude Code"))
        self.assertEqual(
            self.result(recorded),
            {"result": "Echo: Hello from Claude Code", "num_turns": 1, "is_error": False,
             "stop_reason": "end_turn"},
        )  # fmt: skip
        self.assertEqual(self.result(replayed), self.result(recorded))

    def test_a_tool_call_replays_elsewhere_offline(self) -> None:
        recorded, replayed = self.record_then_replay(self.claude(TOOL_PROMPT))
        self.assertEqual(self.result(recorded)["result"], "The tool said: vcr-tool-ok")
        self.assertEqual(self.result(recorded)["num_turns"], 2)
        self.assertEqual(self.result(replayed), self.result(recorded))


class NodeSdkTest(ClientTestCase):
    def test_create_and_stream_replay_elsewhere_offline(self) -> None:
        script = temp_dir(self) / "ask.cjs"
        script.write_text(NODE_SCRIPT, encoding="utf-8")
        recorded, replayed = self.record_then_replay([shutil.which("node") or "node", str(script)])
        self.assertEqual(
            recorded, "create: Echo: Hello from Node\nstream: Echo: Streamed to Node | end_turn\n"
        )
        self.assertEqual(replayed, recorded)


AGENT_TEST = textwrap.dedent(
    """
    import anyio
    import vcr_kit
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    class AgentTest(vcr_kit.VCRTestCase):
        vcr_proxy = True
        vcr_fixtures_dir = FIXTURES

        def test_query(self):
            async def ask():
                options = ClaudeAgentOptions(allowed_tools=["Bash"], env=dict(
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"))
                async for message in query(prompt=PROMPT, options=options):
                    if isinstance(message, ResultMessage):
                        return message.result, message.num_turns
            print("RESULT", anyio.run(ask))
    """
)


class AgentSdkTest(ClientTestCase):
    def setUp(self) -> None:
        try:
            import claude_agent_sdk  # noqa: F401
        except ImportError:
            if os.environ.get("VCR_REQUIRE_CLIENTS"):
                raise
            self.skipTest("claude-agent-sdk is not installed: run tox -e clients")
        super().setUp()

    def run_agent(self, *, replay: bool) -> str:
        folder, env = self.place()
        source = AGENT_TEST.replace("FIXTURES", repr(str(self.fixtures)))
        (folder / "test_agent.py").write_text(source.replace("PROMPT", repr(TOOL_PROMPT)))
        env["VCR_MODE"] = "replay" if replay else "auto"
        # The test option takes the upstream from ANTHROPIC_BASE_URL, as `run` does.
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9" if replay else self.server.url
        command = [sys.executable, "-m", "unittest", "-v", "test_agent"]
        done = run_captured([*(offline() if replay else []), *command], cwd=folder, env=env,
                            timeout=300)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stdout

    def test_query_in_a_vcr_test_case_replays_elsewhere_offline(self) -> None:
        recorded = self.run_agent(replay=False)
        self.assertEqual(recorded, "RESULT ('The tool said: vcr-tool-ok', 2)\n")
        self.server.stop()
        self.assertEqual(self.run_agent(replay=True), recorded)
        self.assert_fixtures_clean()
