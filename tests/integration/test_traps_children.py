"""The traps of issue 30 (point 3) that need a process of their own: ``@pytest.mark.vcr``
with what it would ignore, in a real pytest run (no call made, each test errors with
its words); ``FORCE_VCR=1`` in a plain script whose own client replays with no key.
Each run is a process forked from the run driver (``forked_runs``): a python start of
its own, less the SDK's import."""

from __future__ import annotations

import textwrap
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import environ_without_vcr, temp_dir
from tests.support.helpers.forked_runs import driver
from tests.support.servers.loopback_server import LoopbackServer

pytestmark = pytest.mark.child

KEY = "sk-ant-test-" + "f" * 32

MARKED = textwrap.dedent(
    """
    import anthropic
    import pytest

    def ask():
        with anthropic.Anthropic(max_retries=0) as client:
            client.messages.create(
                model="claude-opus-4-7", max_tokens=10,
                messages=[{"role": "user", "content": "hello"}],
            )

    @pytest.mark.vcr("replay")
    def test_positional():
        ask()

    @pytest.mark.vcr(mdoe="replay")
    def test_misspelt():
        ask()

    @pytest.mark.vcr(mode="bogus")
    def test_bad_value():
        ask()
    """
)

SCRIPT = textwrap.dedent(
    """
    import os

    import anthropic

    import vcr_kit  # noqa: F401  (FORCE_VCR=1: vcr_kit on for this process)

    client = anthropic.Anthropic(base_url=os.environ["LOOPBACK_URL"], max_retries=0)
    reply = client.messages.create(
        model="claude-opus-4-7", max_tokens=10,
        messages=[{"role": "user", "content": "from a script"}],
    )
    print(reply.content[0].text)
    """
)


class ChildTrapsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = temp_dir(self)
        (self.folder / "setup.cfg").write_text("")  # the project root: fixtures/ goes here
        self.server = LoopbackServer().start()
        self.addCleanup(self.server.stop)

    def env(self, **values: str) -> dict[str, str]:
        env = environ_without_vcr()
        env.pop("PYTEST_ADDOPTS", None)
        env.update(LOOPBACK_URL=self.server.url, VCR_REPORT="0", **values)
        return env

    def test_the_marker_refuses_what_it_would_ignore_and_no_call_is_made(self) -> None:
        (self.folder / "test_marked.py").write_text(MARKED, encoding="utf-8")
        env = self.env(ANTHROPIC_BASE_URL=self.server.url, ANTHROPIC_API_KEY=KEY)
        env.pop("CI", None)  # mode auto: a positional "replay" ignored would record
        done = driver().run("pytest", ["-q", "-p", "no:cacheprovider", "."], cwd=self.folder,
                            env=env)  # fmt: skip
        valid = "; its keywords are mode=, fixtures_dir=, hosts=, proxy=, faults="
        for line in (
            f"@pytest.mark.vcr('replay'): the marker takes keywords only (mode='replay'?){valid}",
            f"@pytest.mark.vcr(mdoe='replay'): unknown keyword mdoe= (did you mean mode=?){valid}",
            "@pytest.mark.vcr(mode='bogus'): "
            "mode='bogus' is not a mode vcr_kit knows; use one of: auto, replay, record, off.",
        ):  # each test errors at setup with its line alone: no traceback
            self.assertIn(line, done.stdout.splitlines(), done.stdout)
        self.assertIn("3 errors", done.stdout)
        self.assertEqual(self.server.requests_to("/v1/messages"), [])
        self.assertFalse((self.folder / "fixtures").exists())

    def test_force_vcr_a_scripts_own_client_records_then_replays_with_no_key(self) -> None:
        script = self.folder / "script.py"
        script.write_text(SCRIPT, encoding="utf-8")
        recording = self.env(FORCE_VCR="1", ANTHROPIC_API_KEY=KEY)
        recording.pop("CI", None)
        done = driver().run("script", [str(script)], cwd=self.folder, env=recording)
        self.assertEqual((done.returncode, done.stdout), (0, "Echo: from a script\n"), done.stderr)
        fixtures = list(Path(self.folder / "fixtures").glob("*.json"))
        self.assertEqual(len(fixtures), 1)
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 1)

        # No key at all, CI: replay only; the SDK would refuse to build a client without one.
        replaying = self.env(FORCE_VCR="1", CI="true", ANTHROPIC_API_KEY="",
                             ANTHROPIC_AUTH_TOKEN="")  # fmt: skip
        done = driver().run("script", [str(script)], cwd=self.folder, env=replaying)
        self.assertEqual((done.returncode, done.stdout), (0, "Echo: from a script\n"), done.stderr)
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 1)  # none more


if __name__ == "__main__":
    unittest.main()
