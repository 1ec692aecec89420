"""No key needed to replay: ``run``, ``serve`` and ``vcr_kit.proxy()`` give a child
process without credentials the stand-in key when they replay, and only then.

The child is a real Python SDK script: built without a key, ``anthropic.Anthropic()``
refuses to start (as Claude Code says "Not logged in"), so it replays only if it was
given the stand-in. ``tests/clients/test_claude_code.py`` does the same with Claude Code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import unittest

import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers.env import (
    environ_without_vcr,
    patch_env,
    run_captured,
    start_server,
    temp_dir,
)
from tests.support.helpers.paths import ROOT
from vcr_kit._core.credentials import REPLAY_API_KEY

pytestmark = pytest.mark.child

UNREACHABLE = "http://127.0.0.1:9"

#: Prints the answer and the key the child was given; fails like Claude Code without one.
CHILD = textwrap.dedent(
    f"""
    import os, anthropic
    client = anthropic.Anthropic(max_retries=0)  # ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
    reply = client.messages.create(model={MODEL!r}, max_tokens=32,
                                   messages=[{{"role": "user", "content": "Hello keyless"}}])
    print(reply.content[0].text, "|", os.environ.get("ANTHROPIC_API_KEY"))
    """
)


class StandInKeyTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.fixtures = temp_dir(self, prefix="vcr-keyless-") / "fixtures"
        self.script = self.fixtures.parent / "child.py"
        self.script.write_text(CHILD, encoding="utf-8")
        self.key = recording_key()

    def env(self, **values: str) -> dict[str, str]:
        return {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0", **values}

    def vcr_run(self, env: dict[str, str], *options: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
                   *options, "--", sys.executable, str(self.script)]  # fmt: skip
        return run_captured(command, cwd=self.fixtures.parent, env=env, timeout=120)

    def record(self) -> None:
        server = start_server(self)
        done = self.vcr_run(self.env(ANTHROPIC_API_KEY=self.key), "--upstream", server.url)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, f"Echo: Hello keyless | {self.key}\n")
        server.stop()

    def test_run_in_ci_without_a_key_replays_with_the_stand_in(self) -> None:
        self.record()
        done = self.vcr_run(self.env(CI="true"), "--upstream", UNREACHABLE)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, f"Echo: Hello keyless | {REPLAY_API_KEY}\n")
        stored = "".join(p.read_text() for p in self.fixtures.glob("*.json"))
        self.assertNotIn(REPLAY_API_KEY, stored)
        self.assertNotIn(self.key, stored)

    def test_run_keeps_the_childs_own_credentials(self) -> None:
        self.record()
        token = "oauth-token-of-the-user-0123456789"
        done = self.vcr_run(
            self.env(CI="true", CLAUDE_CODE_OAUTH_TOKEN=token, ANTHROPIC_API_KEY=self.key),
            "--upstream", UNREACHABLE,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, f"Echo: Hello keyless | {self.key}\n")

    def test_run_gives_no_stand_in_when_it_may_record(self) -> None:
        # Auto mode: a user logged in to Claude Code (no key variable) records with that
        # login; a stand-in key would override it.
        self.record()
        done = self.vcr_run(self.env(), "--mode", "auto", "--upstream", UNREACHABLE)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("api_key", done.stderr)

    def test_proxy_block_gives_children_the_stand_in_when_replaying(self) -> None:
        self.record()
        with vcr_kit.proxy(mode="replay", fixtures_dir=self.fixtures, upstream=UNREACHABLE) as url:
            # What the block set in this process's environment, as a child inherits it.
            env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_BASE_URL": url}
            done = run_captured([sys.executable, str(self.script)], cwd=self.fixtures.parent,
                                env=env, timeout=120)  # fmt: skip
        self.assertNotIn("ANTHROPIC_API_KEY", os.environ)  # the block put it back
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, f"Echo: Hello keyless | {REPLAY_API_KEY}\n")

    def test_the_test_option_gives_children_the_stand_in(self) -> None:
        self.record()
        test = self.fixtures.parent / "test_child.py"
        test.write_text(textwrap.dedent(f"""
            import subprocess, sys, vcr_kit

            class ChildTest(vcr_kit.VCRTestCase):
                vcr_proxy = True
                vcr_fixtures_dir = {str(self.fixtures)!r}

                def test_child(self):
                    print(subprocess.run([sys.executable, {str(self.script)!r}],
                                         capture_output=True, text=True, check=True).stdout)
            """), encoding="utf-8")  # fmt: skip
        done = run_captured([sys.executable, "-m", "unittest", "test_child"],
                            cwd=self.fixtures.parent,
                            env=self.env(CI="true", ANTHROPIC_BASE_URL=UNREACHABLE),
                            timeout=120)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, f"Echo: Hello keyless | {REPLAY_API_KEY}\n\n")

    def test_serve_in_ci_without_a_key_names_the_stand_in(self) -> None:
        command = [sys.executable, "-m", "vcr_kit", "serve", "--fixtures", str(self.fixtures)]
        with subprocess.Popen(command, env=self.env(CI="true"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as serving:  # fmt: skip
            assert serving.stdout is not None
            first = serving.stdout.readline()
            serving.terminate()  # the hint, if any, is printed before serving starts
            # Read through the same buffered files: communicate() would read the pipes
            # themselves and miss what readline() already took in.
            assert serving.stderr is not None
            rest, errors = serving.stdout.read(), serving.stderr.read()
            serving.wait(timeout=60)
        self.assertRegex(first, r"^vcr_kit proxy on http://127\.0\.0\.1:\d+\n$", errors)
        url = first.strip().rsplit(" ", 1)[1]
        self.assertEqual(
            rest,
            f"vcr_kit: replaying, no key needed: give clients without one "
            f"ANTHROPIC_API_KEY={REPLAY_API_KEY}\n"
            f"vcr_kit: OpenAI clients: OPENAI_BASE_URL={url}/openai/v1 "
            f"(without a key: OPENAI_API_KEY={REPLAY_API_KEY})\n"
            f"vcr_kit: Google Gemini clients: GOOGLE_GEMINI_BASE_URL={url}/gemini "
            f"(without a key: GEMINI_API_KEY={REPLAY_API_KEY})\n",
        )
        self.assertEqual(json.dumps(sorted(p.name for p in self.fixtures.glob("*"))), "[]")


if __name__ == "__main__":
    unittest.main()
