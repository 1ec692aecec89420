"""The Claude Code recipe's helpers: a scratch git repository set up as a project would
be (a CLAUDE.md, a custom slash command, an MCP server in ``.mcp.json``), and
``claude -p`` run in it through vcr_kit.

Recorded once (``VCR_MODE=record``, or any run outside CI with a key), replayed
offline in CI with no key: ``vcr_kit run`` gives Claude Code the stand-in key, the
Claude Code rules make the request the same in any repository, folder, HOME, time
zone and day, and ``vcr_kit mcp`` answers the MCP server's calls from fixtures.

The prompts here steer vcr_kit's own test model (``[[tool:NAME {input}]]`` asks it
to call a tool); with the real API, write the prompts your project needs.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
#: How to start Claude Code (``claude`` on PATH, unless CLAUDE_COMMAND says otherwise).
CLAUDE = shlex.split(os.environ.get("CLAUDE_COMMAND", "claude"))
TOOLS = "Read,Write,Edit,Bash,mcp__clock__now,mcp__clock__dice"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def scratch_repository(folder: Path) -> Path:
    """A git repository in ``folder`` with a CLAUDE.md, the ``/add-note`` command and
    the clock MCP server (through ``vcr_kit mcp``), committed by whoever runs it."""
    repo = folder / "repo"
    (repo / ".claude" / "commands").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "CLAUDE.md").write_text("Keep answers short.\n", encoding="utf-8")
    # A custom slash command: `/add-note TEXT` has Claude write TEXT into NOTES.md.
    note = {"file_path": str(repo / "NOTES.md"), "content": "# Notes\n$ARGUMENTS\n"}
    (repo / ".claude" / "commands" / "add-note.md").write_text(
        # The description is what Claude Code lists; without one it quotes the first
        # line, which here holds the repository's path.
        "---\ndescription: Add a note to NOTES.md\nargument-hint: TEXT\n---\n"
        f"Add the note to NOTES.md. [[tool:Write {json.dumps(note)}]]\n",
        encoding="utf-8",
    )
    # The MCP server, wrapped: recorded once, answered from fixtures afterwards (the
    # server need not even be installed where the tests replay).
    server = {
        "command": sys.executable,
        "args": ["-m", "vcr_kit", "mcp", "--name", "clock", "--fixtures", str(FIXTURES),
                 "--", sys.executable, str(HERE / "clock_server.py")],
    }  # fmt: skip
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"clock": server}}, indent=2))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "Scratch project")
    return repo


def claude(repo: Path, prompt: str) -> dict[str, Any]:
    """``claude -p PROMPT`` in ``repo`` through ``vcr_kit run``; its JSON result."""
    command = [
        sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(FIXTURES), "--",
        *CLAUDE, "-p", prompt, "--output-format", "json", "--allowedTools", TOOLS,
        "--mcp-config", str(repo / ".mcp.json"), "--strict-mcp-config",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"claude failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def agent_writes(repo: Path, file_name: str, text: str) -> tuple[str, list[str]]:
    """claude-agent-sdk's ``query()`` asked to write ``text`` into ``repo/file_name``,
    through ``vcr_kit.proxy()`` (run it with ``repo`` as the working directory: the
    rules see the folder as vcr_kit's own cwd). A ``PreToolUse`` hook notes the path
    of every Write. Returns the agent's result and the paths the hook saw."""
    import anyio
    from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, ResultMessage, query

    import vcr_kit

    hooked: list[str] = []

    async def before_write(input_data: Any, tool_use_id: Any, context: Any) -> Any:
        hooked.append(input_data["tool_input"]["file_path"])
        return {}

    async def ask(url: str) -> str:
        write = {"file_path": str(repo / file_name), "content": text}
        options = ClaudeAgentOptions(
            cwd=str(repo),
            allowed_tools=["Write"],
            hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[before_write])]},
            env={"ANTHROPIC_BASE_URL": url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        )
        result = ""
        prompt = f"Save it. [[tool:Write {json.dumps(write)}]]"
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                result = message.result or ""
        return result

    with vcr_kit.proxy(fixtures_dir=FIXTURES) as url:
        return anyio.run(ask, url), hooked
