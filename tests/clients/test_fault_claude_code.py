"""Claude Code through the proxy meets injected overloads: it retries as it would on
the real API, then shows the recorded answer.

Recorded through ``vcr_kit run`` against the loopback server (no faults), replayed
under ``unshare -n`` with ``CI=true``, no key, and ``VCR_FAULTS`` set: the proxy
reads it, and Claude Code's ``stream-json`` output shows each retry. Runs in the
``clients`` tox env (the CLI is installed from npm there).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.clients.test_claude_code import UNREACHABLE, A, ClaudeCodeTestCase
from tests.clients.test_proxy import offline
from tests.support.helpers.env import run_captured

pytestmark = pytest.mark.node


class ClaudeCodeRetriesTest(ClaudeCodeTestCase):
    in_git = False

    def replay_with_faults(self, faults: str, prompt: str) -> tuple[list[dict[str, Any]], str]:
        repo, env = self.scratch_repo(A)
        env |= {"CI": "true", "VCR_FAULTS": faults}
        command = self.claude("-p", prompt, "--output-format", "stream-json", "--verbose")
        run = [*offline(), sys.executable, "-m", "vcr_kit", "run", "--fixtures",
               str(self.fixtures), "--upstream", UNREACHABLE, "--", *command]  # fmt: skip
        done = run_captured(run, cwd=repo, env=env, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return lines, done.stderr

    def test_an_injected_overload_is_retried_then_the_recorded_answer_shown(self) -> None:
        prompt = "Hello through injected overloads"
        command = self.claude("-p", prompt, "--output-format", "json")
        _, recorded = self.record(A, command)
        self.server.stop()
        lines, stderr = self.replay_with_faults("overloaded*2", prompt)
        retries = [line for line in lines if line.get("subtype") == "api_retry"]
        self.assertEqual(
            [(r["attempt"], r["error_status"], r["error"]) for r in retries],
            [(1, 529, "overloaded"), (2, 529, "overloaded")],
        )
        result = lines[-1]
        self.assertEqual(result["type"], "result")
        self.assertEqual(result["result"], "Echo: Hello through injected overloads")
        self.assertEqual(result["result"], self.answer(recorded.stdout)["result"])
        self.assertFalse(result["is_error"])
        self.assertIn("1 replayed, 0 recorded, 0 missing, 2 faults injected;", stderr)
        for path in self.fixtures.glob("*.json"):
            self.assertNotIn("req_vcrfault_", path.read_text(encoding="utf-8"))
