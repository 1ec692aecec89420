"""A user's project, run the way users run it: real files, real processes.

The project (made in a temporary folder) builds its Anthropic clients at import
time, before any test starts, keeps its key only in ``.env``, and has unittest and
pytest tests. It is recorded from its own folder against the loopback server, then
replayed from the *parent* folder with the network removed, no key (``.env`` gone)
and no ``ANTHROPIC_BASE_URL``: the fixtures must be found in the project's own
``fixtures/``, whatever the current directory.
"""

from __future__ import annotations

import textwrap
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import (
    environ_without_vcr,
    offline_prefix,
    start_server,
    temp_dir,
)
from tests.support.helpers.forked_runs import driver

pytestmark = pytest.mark.child

KEY = "sk-ant-test-" + "p" * 32

APP = """
import anthropic

# Built when the module is imported, before any test runs, with no key in the
# environment: the key is only in .env, which nothing has read yet.
client = anthropic.Anthropic(max_retries=0)
async_client = anthropic.AsyncAnthropic(max_retries=0)
MODEL = "claude-opus-4-7"


def ask(question: str) -> str:
    reply = client.messages.create(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": question}]
    )
    return reply.content[0].text


async def ask_async(question: str) -> str:
    reply = await async_client.messages.create(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": question}]
    )
    return reply.content[0].text
"""

UNITTEST_TESTS = """
import unittest

import vcr_kit
from app import ask, ask_async


class AppTest(vcr_kit.VCRTestCase):
    def test_sync(self):
        self.assertEqual(ask("Hello module client"), "Echo: Hello module client")


class AsyncAppTest(vcr_kit.VCRMixin, unittest.IsolatedAsyncioTestCase):
    async def test_async(self):
        self.assertEqual(await ask_async("Hello async module client"),
                         "Echo: Hello async module client")
"""

PYTEST_TESTS = """
import pytest

from app import ask


@pytest.mark.vcr
def test_marked():
    assert ask("Hello from pytest") == "Echo: Hello from pytest"
"""


def make_project(parent: Path) -> Path:
    project = parent / "myproj"
    tests = project / "tests"
    tests.mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = myproj\n", encoding="utf-8")
    (project / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n", encoding="utf-8")
    (project / "app.py").write_text(textwrap.dedent(APP), encoding="utf-8")
    (tests / "__init__.py").write_text("", encoding="utf-8")
    (tests / "test_app_unittest.py").write_text(textwrap.dedent(UNITTEST_TESTS), "utf-8")
    (tests / "test_app_pytest.py").write_text(textwrap.dedent(PYTEST_TESTS), "utf-8")
    return project


class ProjectRunTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = start_server(self)
        self.parent = temp_dir(self)
        self.project = make_project(self.parent)

    def run_in(self, cwd: Path, command: list[str], offline: bool = False, **env: str):  # type: ignore[no-untyped-def]
        environ = environ_without_vcr() | {
            "VCR_REPORT": "1",
            "PYTHONPATH": str(self.project),
            **env,
        }
        # ``python [-W X] -m pytest|unittest ARGS``, forked from a driver (under ``unshare
        # -n`` when offline): a python start less the SDK's import (forked_runs).
        flags = command[: command.index("-m")]
        runner, args = command[command.index("-m") + 1], command[command.index("-m") + 2 :]
        runs = driver(offline_prefix() if offline else ())
        return runs.run(runner, args, flags=flags, cwd=cwd, env=environ, timeout=180)

    def test_module_level_clients_record_with_dotenv_and_replay_from_the_parent_folder(
        self,
    ) -> None:
        runners = {
            "pytest": ["-W", "error", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            "unittest": ["-W", "error", "-m", "unittest", "discover", "-t"],
        }
        # Record from the project's folder: key only in .env, the server in the environment.
        recorded = self.run_in(
            self.project,
            [*runners["pytest"], "tests"],
            VCR_MODE="auto",
            ANTHROPIC_BASE_URL=self.server.url,
        )
        self.assertEqual(recorded.returncode, 0, recorded.stdout + recorded.stderr)
        self.assertIn("3 passed", recorded.stdout)
        self.assertIn("vcr_kit: 0 replayed, 3 recorded, 0 missing", recorded.stderr)
        fixtures = sorted(p.name for p in (self.project / "fixtures").glob("*.json"))
        self.assertEqual(len(fixtures), 3)
        calls = len(self.server.log)
        self.assertEqual(calls, 3)
        self.assertTrue(all(r.headers.get("x-api-key") == KEY for r in self.server.log))

        # Replay from the parent folder, offline, with no key anywhere and no base URL.
        (self.project / ".env").unlink()
        replays = {
            "pytest": [*runners["pytest"], "myproj/tests"],
            "unittest": [*runners["unittest"], "myproj", "-s", "myproj/tests"],
        }
        for runner, command in replays.items():
            with self.subTest(runner=runner):
                done = self.run_in(self.parent, command, offline=True, CI="true")
                self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                expected = 3 if runner == "pytest" else 2
                self.assertIn(f"vcr_kit: {expected} replayed, 0 recorded, 0 missing", done.stderr)
                self.assertFalse((self.parent / "fixtures").exists())
        self.assertEqual(len(self.server.log), calls)
        self.assertEqual(
            sorted(p.name for p in (self.project / "fixtures").glob("*.json")), fixtures
        )

    def test_a_miss_names_the_absolute_folder(self) -> None:
        (self.project / ".env").unlink()
        done = self.run_in(
            self.parent,
            ["-m", "pytest", "-q", "-p", "no:cacheprovider", "myproj/tests/test_app_pytest.py"],
            offline=True,
            CI="true",
        )
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn(
            f"Fixture missing: {self.project / 'fixtures'}/post-v1-messages-", done.stdout
        )


if __name__ == "__main__":
    unittest.main()
