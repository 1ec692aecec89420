"""The recipe as pytest: ``python -m pytest test_recipe_pytest.py`` in this folder."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from recipe import agent_writes, claude, scratch_repository


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return scratch_repository(tmp_path)


def test_the_slash_command_adds_the_note(repo: Path) -> None:
    answer = claude(repo, "/add-note call the bank")
    assert not answer["is_error"], answer["result"]
    assert (repo / "NOTES.md").read_text() == "# Notes\ncall the bank\n"
    changed = subprocess.run(["git", "status", "--short"], cwd=repo,
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert changed == "?? NOTES.md\n"


def test_the_mcp_server_rolls_the_dice(repo: Path) -> None:
    answer = claude(repo, 'Roll it. [[tool:mcp__clock__dice {"sides":20}]]')
    assert re.fullmatch(r"The tool said: rolled \d+ of 20", answer["result"])


def test_an_agent_program_with_a_hook(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("claude_agent_sdk")
    monkeypatch.chdir(repo)
    result, hooked = agent_writes(repo, "hello.txt", "hi there")
    assert hooked == [str(repo / "hello.txt")]
    assert (repo / "hello.txt").read_text() == "hi there"
    assert result.startswith("The tool said: File created successfully")
