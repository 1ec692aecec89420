"""Claude Code on a cloud platform (Bedrock, Vertex AI, Foundry) through ``vcr_kit run``:
the setup the platforms' tests share.

Each records against the loopback cloud server (``tests/support/servers/cloud_server.py``,
which refuses a request without the platform's test credential) with only that
platform's credentials on the machine, then replays under ``unshare -n`` with none,
no base URL and ``CI=true``. Runs in the clients tox env
(``VCR_REQUIRE_CLIENTS=1``), like the other Node clients.
"""

from __future__ import annotations

import json
import sys
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from tests.support.helpers.env import (
    environ_without_vcr,
    installed,
    offline,
    run_captured,
    temp_dir,
)
from tests.support.helpers.node_clients import claude_command, require_node_clients
from tests.support.helpers.paths import ROOT
from tests.support.servers.cloud_server import CloudServer

__all__ = ["ClaudeCodeOnCloudCase", "Cloud"]


@dataclass(frozen=True)
class Cloud:
    """What Claude Code needs to be told to use one platform."""

    #: ``bedrock``, ``vertex`` or ``foundry``: ``CLAUDE_CODE_USE_<NAME>``.
    name: str
    #: The module recording through the proxy needs (botocore, google.auth), and its extra.
    library: str = ""
    extra: str = ""
    #: The platform's settings (region, project), given in both runs.
    settings: dict[str, str] = field(default_factory=dict)
    #: Prefixes of the variables that hold this machine's own credentials for it:
    #: cleared, so only what a test gives is there.
    own: tuple[str, ...] = ()

    @property
    def base_url_variable(self) -> str:
        return f"ANTHROPIC_{self.name.upper()}_BASE_URL"


class ClaudeCodeOnCloudCase(unittest.TestCase):
    cloud: ClassVar[Cloud]
    modules: ClassVar[Path]
    last_base: Path
    #: Where the last recording ran (Claude Code's cwd; its HOME below it).
    recorded_in: Path

    @classmethod
    def setUpClass(cls) -> None:
        cls.modules = require_node_clients()
        if cls.cloud.library and not installed(cls.cloud.library):
            raise AssertionError(
                f"the clients env installs anthropic[{cls.cloud.extra}] ({cls.cloud.library})"
            )

    def setUp(self) -> None:
        self.config = temp_dir(self, prefix=f"vcr-{self.cloud.name}-config-")
        self.fixtures = self.config / "fixtures"

    def recording(self, server: CloudServer) -> dict[str, str]:
        """The variables a recording is given: this platform's credentials (whose
        files, if any, go in ``self.config``) and ``server`` as its base URL."""
        raise NotImplementedError

    def record_and_replay(
        self, prompt: str, result: str, turns: int, requests: int | None = None
    ) -> CloudServer:
        """Record ``prompt`` against a loopback cloud server (``requests`` requests, one a
        turn by default), then replay it offline with no credentials: the same answer
        both times. The server, stopped, with its log."""
        with CloudServer() as server:
            recording = self.recording(server)
            recorded = self.run_claude(self.fixtures, recording, replay=False, prompt=prompt)
        self.recorded_in = self.last_base
        count = turns if requests is None else requests
        answer = {"result": result, "is_error": False, "num_turns": turns}
        summary = f"vcr_kit: 0 replayed, {count} recorded, 0 missing"
        self.assertEqual(recorded, {**answer, "summary": summary})
        replayed = self.run_claude(self.fixtures, {}, replay=True, prompt=prompt)
        summary = f"vcr_kit: {count} replayed, 0 recorded, 0 missing"
        self.assertEqual(replayed, {**answer, "summary": summary})
        return server

    def run_claude(
        self, fixtures: Path, env: dict[str, str], *, replay: bool, prompt: str
    ) -> dict[str, object]:
        """One ``claude -p PROMPT`` through ``vcr_kit run``: recording with ``env`` (the
        platform's credentials and base URL), or replaying offline."""
        base = temp_dir(self, prefix=f"vcr-{self.cloud.name}-")
        (base / "home").mkdir()
        #: Where the last run ran (its folder is also its cwd, its HOME below it).
        self.last_base = base
        place = {
            **{k: v for k, v in environ_without_vcr().items() if not k.startswith(self.cloud.own)},
            "HOME": str(base / "home"),
            f"CLAUDE_CODE_USE_{self.cloud.name.upper()}": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "PYTHONPATH": str(ROOT),
            "VCR_REPORT": "1",
            **self.cloud.settings,
            **env,
        }
        if self.cloud.base_url_variable not in env:
            place.pop(self.cloud.base_url_variable, None)
        command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(fixtures)]
        if replay:  # as a CI job replays: replay mode by default, no credentials
            command = [*offline(), *command]
            place["CI"] = "true"
        claude = claude_command(self.modules, "-p", prompt, "--output-format", "json")
        done = run_captured(
            [*command, "--", *claude, "--allowedTools", "Bash"], cwd=base, env=place, timeout=300
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        answer = json.loads(done.stdout)
        return {
            "result": answer["result"],
            "is_error": answer["is_error"],
            "num_turns": answer["num_turns"],
            "summary": done.stderr.strip().splitlines()[-1].split(";")[0],
        }

    def assert_never_stored(self, fixtures: Path, *secrets: str) -> None:
        """No fixture holds any of ``secrets`` (credential values, their shapes)."""
        paths = sorted(fixtures.glob("*.json"))
        self.assertTrue(paths)
        for path in paths:
            data = path.read_text(encoding="utf-8")
            for secret in secrets:
                self.assertFalse(secret in data, f"{secret!r} is in {path.name}")
