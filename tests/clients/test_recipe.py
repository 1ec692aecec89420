"""The docs' Claude Code recipe (``examples/claude_code/``), as a user would run it.

Its unittest and pytest files are copied to a folder of their own and run twice:
recording on machine A (git user alice, default branch main, TZ UTC, SHELL bash, a
shallow temp folder), against the loopback server; then replaying on machine B
(another git user and default branch, TZ Asia/Tokyo, SHELL zsh, a deeper temp
folder and HOME, the clock 90 days on), offline, in CI, with no key and with the
MCP server's file deleted. Both runs must pass: the same answers, the same edits.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.clients.test_claude_code import SHIFT_DATE
from tests.clients.test_clients_node import KEY, ClientTestCase
from tests.clients.test_proxy import offline
from tests.support.helpers.env import environ_without_vcr, run_captured, temp_dir
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.node

RECIPE = ROOT / "examples" / "claude_code"


class RecipeTest(ClientTestCase):
    def machine(self, user: str, branch: str, *, tz: str, shell: str, depth: int,
                days_later: int) -> dict[str, str]:  # fmt: skip
        """The environment of a machine: its HOME (with a git config), temp folder,
        time zone, shell and clock."""
        base = temp_dir(self, prefix="vcr-machine-")
        home, tmp = base / "home", base.joinpath(*["t"] * depth)
        home.mkdir()
        tmp.mkdir(parents=True, exist_ok=True)
        (home / ".gitconfig").write_text(
            f"[user]\n\tname = {user}\n\temail = {user}@example.com\n"
            f"[init]\n\tdefaultBranch = {branch}\n",
            encoding="utf-8",
        )
        shift = base / "shift-date.cjs"
        shift.write_text(SHIFT_DATE.replace("DAYS", str(days_later)), encoding="utf-8")
        wrapper = self.modules / "@anthropic-ai" / "claude-code" / "cli-wrapper.cjs"
        return {
            **environ_without_vcr(),
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "TZ": tz,
            "SHELL": shell,
            "NODE_OPTIONS": f"--require {shift}",
            "CLAUDE_COMMAND": f"{shutil.which('node') or 'node'} {wrapper}",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "PYTHONPATH": str(ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def run_recipe(self, folder: Path, env: dict[str, str], prefix: list[str]) -> None:
        """Both test files pass, every test run (the agent one needs claude-agent-sdk,
        which the clients env installs)."""
        for command in (
            [sys.executable, "-m", "unittest", "-v", "test_recipe_unittest"],
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "test_recipe_pytest.py"],
        ):  # fmt: skip
            done = run_captured([*prefix, *command], cwd=folder, env=env, timeout=600)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertRegex(done.stdout + done.stderr, r"Ran 2 tests|\b3 passed\b")

    def test_recorded_on_one_machine_replays_on_another(self) -> None:
        folder = temp_dir(self, prefix="vcr-recipe-") / "claude_code"
        shutil.copytree(RECIPE, folder, ignore=shutil.ignore_patterns("fixtures", "__pycache__"))

        recording = self.machine(
            "alice", "main", tz="UTC", shell="/bin/bash", depth=1, days_later=0
        )
        recording.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=self.server.url)
        self.run_recipe(folder, recording, [])
        recorded = sorted(p.name for p in (folder / "fixtures").glob("*.json"))
        # initialize and tools/list (alike for every test of one client), now and dice.
        self.assertGreaterEqual(sum(name.startswith("mcp-") for name in recorded), 4)

        self.server.stop()
        (folder / "clock_server.py").unlink()  # replay needs only the fixtures
        replaying = self.machine(
            "bob", "trunk", tz="Asia/Tokyo", shell="/usr/bin/zsh", depth=4, days_later=90
        )
        replaying.update(CI="true", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
        self.run_recipe(folder, replaying, offline())
        # Nothing new was recorded: every request of machine B had its fixture.
        self.assertEqual(sorted(p.name for p in (folder / "fixtures").glob("*.json")), recorded)
