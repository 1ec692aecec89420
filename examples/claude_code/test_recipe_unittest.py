"""The recipe as unittest: ``python -m unittest test_recipe_unittest`` in this folder."""

from __future__ import annotations

import subprocess
import tempfile
import unittest
from pathlib import Path

from recipe import claude, scratch_repository


class ClaudeSetupTest(unittest.TestCase):
    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.repo = scratch_repository(Path(folder.name))

    def test_the_slash_command_adds_the_note(self) -> None:
        answer = claude(self.repo, "/add-note buy milk")
        self.assertFalse(answer["is_error"], answer["result"])
        self.assertEqual((self.repo / "NOTES.md").read_text(), "# Notes\nbuy milk\n")
        changed = subprocess.run(["git", "status", "--short"], cwd=self.repo,
                                 capture_output=True, text=True, check=True).stdout  # fmt: skip
        self.assertEqual(changed, "?? NOTES.md\n")

    def test_the_mcp_server_tells_the_time(self) -> None:
        answer = claude(self.repo, "What time is it? [[tool:mcp__clock__now {}]]")
        self.assertRegex(answer["result"], r"^The tool said: time \d+$")


if __name__ == "__main__":
    unittest.main()
