"""The pytest plugin: ``@pytest.mark.vcr`` and the ``vcr`` fixture, run by a real pytest
in a subprocess, recording from the loopback server and replaying without it."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import run_captured
from tests.support.servers.loopback_server import LoopbackServer

pytestmark = pytest.mark.child

TESTS = textwrap.dedent(
    """
    import anthropic
    import pytest

    def ask(question):
        with anthropic.Anthropic(max_retries=0) as client:
            reply = client.messages.create(
                model="claude-opus-4-7", max_tokens=10,
                messages=[{"role": "user", "content": question}],
            )
        return reply.content[0].text

    @pytest.mark.vcr
    def test_marked():
        assert ask("plugin marked") == "Echo: plugin marked"

    def test_fixture(vcr):
        assert ask("plugin fixture") == "Echo: plugin fixture"
        assert [entry.event.value for entry in vcr.entries] == [EXPECTED]

    def test_unmarked_is_left_alone():
        from vcr_kit._core import config as _config
        assert not _config.is_active()
    """
)


class PytestPluginTest(unittest.TestCase):
    def run_pytest(self, folder: Path, env: dict[str, str], expected: str) -> str:
        (folder / "test_plugged.py").write_text(TESTS.replace("EXPECTED", repr(expected)))
        done = run_captured(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "."],
            cwd=folder,
            env=env,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stdout

    def test_marked_and_fixture_tests_record_then_replay(self) -> None:
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VCR_", "ANTHROPIC_")) and k not in ("CI", "PYTHONWARNINGS")
        }
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            (folder / "setup.cfg").write_text("")  # the project root: fixtures/ goes here
            with LoopbackServer() as server:
                env = dict(
                    base,
                    ANTHROPIC_BASE_URL=server.url,
                    ANTHROPIC_API_KEY="sk-ant-test-" + "p" * 32,
                    VCR_REPORT="0",
                )
                self.assertIn("3 passed", self.run_pytest(folder, env, "recorded"))
                self.assertEqual(len(server.requests_to("/v1/messages")), 2)
            self.assertEqual(len(list((folder / "fixtures").glob("*.json"))), 2)

            env = dict(base, CI="true", ANTHROPIC_BASE_URL="http://127.0.0.1:9", VCR_REPORT="0")
            self.assertIn("3 passed", self.run_pytest(folder, env, "replayed"))


if __name__ == "__main__":
    unittest.main()
