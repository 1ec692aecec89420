"""The Node clients (the Claude Code CLI, ``@anthropic-ai/sdk``) the client tests drive:
installed once per checkout into ``.tox`` (git ignored), under a lock, since parallel
tox envs share it; and the skip every such test makes where Node is missing or the
clients env is not the one running.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path

from filelock import FileLock

from tests.support.helpers.paths import ROOT

__all__ = [
    "NPM_DIR",
    "NPM_PACKAGES",
    "claude_command",
    "install_newest_claude_code",
    "install_npm_packages",
    "node_tools",
    "require_node_clients",
]

NPM_DIR = ROOT / ".tox" / "npm-clients"
NPM_PACKAGES = ("@anthropic-ai/claude-code", "@anthropic-ai/sdk")
NEWEST_DIR = ROOT / ".tox" / "npm-claude-code-newest"
CLAUDE_CODE = "@anthropic-ai/claude-code"


def node_tools() -> tuple[str, str] | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    return None if node is None or npm is None else (node, npm)


def install_npm_packages() -> Path:
    """``node_modules`` with the packages, installed once per checkout (under a lock:
    parallel tox envs share it)."""
    tools = node_tools()
    assert tools is not None
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    with FileLock(str(NPM_DIR / ".install.lock")):
        modules = NPM_DIR / "node_modules"
        if not all((modules / name / "package.json").exists() for name in NPM_PACKAGES):
            done = subprocess.run(
                [tools[1], "install", "--no-audit", "--no-fund", "--prefix", str(NPM_DIR),
                 *NPM_PACKAGES],
                capture_output=True, text=True, check=False, timeout=900,
            )  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"npm install failed:\n{done.stderr}")
    return NPM_DIR / "node_modules"


def install_newest_claude_code() -> Path:
    """The newest Claude Code release, installed once per checkout into its own folder:
    npm alone installs the newest that names this Node in its engines, which may be
    older (the CLI is a native binary started by a small wrapper: Node's version does
    not matter to it)."""
    npm = shutil.which("npm") or "npm"
    NEWEST_DIR.mkdir(parents=True, exist_ok=True)
    with FileLock(str(NEWEST_DIR / ".install.lock")):
        wanted = subprocess.run([npm, "view", CLAUDE_CODE, "version"], capture_output=True,
                                text=True, check=True, timeout=300).stdout.strip()  # fmt: skip
        installed = NEWEST_DIR / "node_modules" / CLAUDE_CODE / "package.json"
        if not installed.exists() or json.loads(installed.read_text())["version"] != wanted:
            subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                            str(NEWEST_DIR), f"{CLAUDE_CODE}@{wanted}"],
                           capture_output=True, check=True, timeout=900)  # fmt: skip
    return NEWEST_DIR / "node_modules"


def require_node_clients() -> Path:
    """``node_modules`` with the Node clients; the test is skipped outside the clients
    env (``VCR_REQUIRE_CLIENTS``) or where Node and npm are missing."""
    if not os.environ.get("VCR_REQUIRE_CLIENTS"):
        raise unittest.SkipTest("the Node clients run in their own env: tox -e clients")
    if node_tools() is None:
        raise unittest.SkipTest("node and npm are needed to install the Node clients")
    return install_npm_packages()


def claude_command(modules: Path, *args: str) -> list[str]:
    """The Claude Code CLI of ``modules``, started through its wrapper, with ``args``."""
    wrapper = modules / "@anthropic-ai" / "claude-code" / "cli-wrapper.cjs"
    return [shutil.which("node") or "node", str(wrapper), *args]
