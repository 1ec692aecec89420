"""The ``mcp`` SDK's real Streamable HTTP client through ``vcr_kit mcp --url``:
recorded against the loopback server, replayed offline (``unshare -n``) with the
server stopped. ``mcp`` is a test-only dependency of the clients tox env.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import unittest
from typing import Any

import pytest

from tests.integration.test_mcp_http import TOKEN, offline
from tests.support.helpers.env import environ_without_vcr, temp_dir
from tests.support.helpers.paths import ROOT
from tests.support.servers.mcp_http_server import McpHttpServer

pytestmark = pytest.mark.child

CLIENT = ROOT / "tests" / "support" / "children" / "mcp_sdk_client.py"


class McpSdkClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if importlib.util.find_spec("mcp") is None:
            if os.environ.get("VCR_REQUIRE_CLIENTS"):
                raise AssertionError("the clients env must have the mcp package")
            raise unittest.SkipTest("the mcp SDK runs in its own env: tox -e clients")

    def setUp(self) -> None:
        self.fixtures = temp_dir(self, prefix="vcr-mcp-sdk-") / "fixtures"

    def run_client(self, upstream: str, *, ci: bool) -> dict[str, Any]:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0",
               **({"CI": "true"} if ci else {"VCR_MODE": "record"})}  # fmt: skip
        front = [
            sys.executable,
            "-m",
            "vcr_kit",
            "mcp",
            "--url",
            upstream,
            "--name",
            "clock",
            "--fixtures",
            str(self.fixtures),
            "--header",
            f"Authorization: Bearer {TOKEN}",
        ]
        done = subprocess.run([*(offline() if ci else []), sys.executable, str(CLIENT), "--",
                               *front], capture_output=True, text=True, env=env,
                              cwd=self.fixtures.parent, check=False, timeout=120)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        got: dict[str, Any] = json.loads(done.stdout)
        return got

    def test_the_sdk_client_records_then_replays_offline(self) -> None:
        with McpHttpServer(token=TOKEN) as server:
            recorded = self.run_client(server.url, ci=False)
        self.assertEqual(server.calls, ["now", "dice"])
        self.assertEqual(server.deleted, server.session_ids)  # the client ended its session
        self.assertEqual(recorded["server"], "clock-http")
        self.assertEqual(recorded["tools"], ["now", "dice", "hang", "whoami"])
        self.assertRegex(recorded["now"], r"^time \d+$")
        self.assertRegex(recorded["dice"], r"^rolled \d+ of 1000$")
        self.assertEqual(recorded["returncode"], 0)
        self.assertEqual(self.run_client(server.url, ci=True), recorded)
        self.assertEqual(server.calls, ["now", "dice"])
        stored = "".join(p.read_text() for p in self.fixtures.glob("*.json"))
        for secret in (TOKEN, *server.session_ids):
            self.assertNotIn(secret, stored)


if __name__ == "__main__":
    unittest.main()
