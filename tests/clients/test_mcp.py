"""``vcr_kit mcp -- SERVER_CMD``: a stdio MCP server recorded once, replayed without it.

The client is this test, speaking JSON-RPC lines to a real ``vcr_kit mcp`` process;
the server is the recipe's ``examples/claude_code/clock_server.py``, whose answers (the
time, a random number) differ on every call, and which logs each tool call to a file.
Replay runs offline (``unshare -n``), in CI, with the server's command missing from the machine.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import threading
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.clients.test_proxy import offline
from tests.support.helpers.env import environ_without_vcr, temp_dir
from tests.support.helpers.paths import ROOT
from vcr_kit._core.config import Mode
from vcr_kit._mcp.stdio import McpRelay

SERVER = ROOT / "examples" / "claude_code" / "clock_server.py"
#: Answers ``tools/call`` with neither ``result`` nor ``error``.
BARE = ROOT / "tests" / "support" / "children" / "mcp_bare_server.py"
MISSING = "Fixture missing: {}. Re-run the tests with VCR_RECORD=1, then commit the result."

HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
]  # fmt: skip


def call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments,
                       "_meta": {"progressToken": request_id}}}  # fmt: skip


@pytest.mark.child
class McpRelayTest(unittest.TestCase):
    def setUp(self) -> None:
        self.base = temp_dir(self, prefix="vcr-mcp-")
        self.fixtures = self.base / "fixtures"
        self.log = self.base / "server.log"

    def relay(
        self, messages: list[dict[str, Any]], *, server: Path = SERVER, ci: bool = False,
        mode: str | None = None,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """The answers ``vcr_kit mcp`` gives to ``messages``, in order."""
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0",
               "MCP_CLOCK_LOG": str(self.log), **({"CI": "true"} if ci else {})}  # fmt: skip
        command = [sys.executable, "-m", "vcr_kit", "mcp", "--fixtures", str(self.fixtures),
                   *(["--mode", mode] if mode else []), "--name", "clock",
                   "--", sys.executable, str(server)]  # fmt: skip
        done = subprocess.run(
            [*(offline() if ci else []), *command], cwd=self.base, env=env, check=False,
            input="".join(json.dumps(m) + "\n" for m in messages).encode(),
            capture_output=True, timeout=120,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr.decode())
        return [json.loads(line) for line in done.stdout.decode().splitlines()]

    def server_calls(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def test_records_then_replays_without_the_server(self) -> None:
        session = [*HANDSHAKE, call(2, "now"), call(3, "dice", sides=1000)]
        recorded = self.relay(session)
        self.assertEqual([answer["id"] for answer in recorded], [0, 1, 2, 3])
        self.assertEqual(recorded[0]["result"]["serverInfo"]["name"], "clock")
        self.assertRegex(recorded[2]["result"]["content"][0]["text"], r"^time \d+$")
        self.assertEqual(self.server_calls(), ["now", "dice"])
        self.assertEqual(len(list(self.fixtures.glob("mcp-*.json"))), 4)

        # In CI, offline, with the server's file gone: the recorded time and number.
        replayed = self.relay(session, server=self.base / "gone.py", ci=True)
        self.assertEqual(replayed, recorded)
        self.assertEqual(self.server_calls(), ["now", "dice"])  # it never ran again

    def test_a_miss_is_a_json_rpc_error_naming_the_fixture(self) -> None:
        self.relay([*HANDSHAKE, call(2, "now")])
        (answer,) = self.relay([call(7, "dice", sides=6)], ci=True)[-1:]
        self.assertEqual(answer["id"], 7)
        self.assertEqual(answer["error"]["code"], -32000)
        message = answer["error"]["message"]
        path = message.split("Fixture missing: ", 1)[1].split(". Re-run", 1)[0]
        self.assertTrue(Path(path).name.startswith("mcp-"), message)
        self.assertTrue(message.startswith("vcr_kit: " + MISSING.format(path)), message)

    def test_a_server_started_mid_session_hears_the_handshake_first(self) -> None:
        self.relay([*HANDSHAKE, call(2, "now")])
        self.log.unlink()
        # The handshake and the first call replay; the new call starts the server.
        answers = self.relay([*HANDSHAKE, call(2, "now"), call(3, "dice", sides=6)], mode="auto")
        self.assertEqual(self.server_calls(), ["dice"])
        self.assertRegex(answers[-1]["result"]["content"][0]["text"], r"^rolled [1-6] of 6$")

    def test_the_servers_request_to_the_client_is_relayed_while_it_works(self) -> None:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        command = [sys.executable, "-m", "vcr_kit", "mcp", "--fixtures", str(self.fixtures),
                   "--mode", "auto", "--", sys.executable, str(SERVER)]  # fmt: skip
        with subprocess.Popen(command, cwd=self.base, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE) as relay:  # fmt: skip
            # A relay stuck waiting (the bug this guards against) is killed: the test
            # then fails on the empty answer instead of hanging the run.
            watchdog = threading.Timer(60, relay.kill)
            watchdog.start()
            self.addCleanup(watchdog.cancel)
            to_relay, from_relay = relay.stdin, relay.stdout
            assert to_relay is not None
            assert from_relay is not None

            def send(message: dict[str, Any]) -> None:
                to_relay.write(json.dumps(message).encode() + b"\n")
                to_relay.flush()

            send(HANDSHAKE[0])
            self.assertEqual(json.loads(from_relay.readline())["id"], 0)
            send(call(5, "roots"))
            # The server asks the client while the client's call waits for it.
            asked = json.loads(from_relay.readline())
            self.assertEqual(asked, {"jsonrpc": "2.0", "id": "ask-roots", "method": "roots/list"})
            send({"jsonrpc": "2.0", "id": "ask-roots",
                  "result": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}})  # fmt: skip
            answer = json.loads(from_relay.readline())
            to_relay.close()
            relay.wait(timeout=60)
        self.assertEqual(answer["id"], 5)
        self.assertEqual(answer["result"]["content"][0]["text"], "2 roots")

    def test_no_server_command_is_a_usage_error(self) -> None:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        done = subprocess.run([sys.executable, "-m", "vcr_kit", "mcp", "--name", "clock"],
                              cwd=self.base, env=env, capture_output=True, text=True,
                              check=False, timeout=60)  # fmt: skip
        self.assertEqual(done.returncode, 2)
        self.assertEqual(
            done.stderr,
            "usage: vcr_kit mcp [options] (--url URL | -- SERVER_CMD [ARGS...])\n"
            "vcr_kit mcp: error: no server command given after -- (nor --url)\n",
        )
        self.assertEqual(done.stdout, "")

    def test_recording_with_the_server_missing_says_so(self) -> None:
        (answer,) = self.relay([HANDSHAKE[0]], server=self.base / "gone.py", mode="record")[:1]
        # A server that cannot start (its file is missing) exits before answering.
        self.assertEqual(answer["error"]["code"], -32000)
        self.assertEqual(
            answer["error"]["message"],
            "vcr_kit: the MCP server 'clock' exited before answering 'initialize'; "
            "its output is on stderr",
        )
        self.assertEqual(list(self.fixtures.glob("mcp-*.json")), [])

    def test_an_object_id_is_refused_and_the_next_request_answered(self) -> None:
        # Once a TypeError that ended the relay: the next request got no answer.
        object_id = {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        answers = self.relay([HANDSHAKE[0], object_id, call(2, "now"), ping], server=BARE,
                             mode="record")  # fmt: skip
        self.assertEqual(answers[0]["result"]["serverInfo"]["name"], "bare")
        self.assertEqual(
            answers[1],
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
        )
        # An answer with neither result nor error is the client's error, and not stored.
        self.assertEqual(answers[2], {"jsonrpc": "2.0", "id": 2, "error": {"code": -32000,
            "message": "vcr_kit: the MCP server 'clock' answered 'tools/call' with no valid "
                       'JSON-RPC response (it has neither "result" nor "error"); nothing was '
                       "stored"}})  # fmt: skip
        self.assertEqual(answers[3], {"jsonrpc": "2.0", "id": 3, "result": {}})
        self.assertEqual(len(answers), 4)
        self.assertEqual(len(list(self.fixtures.glob("mcp-*.json"))), 2)  # initialize, ping


@pytest.mark.child
class ServerGoneAtOnceTest(unittest.TestCase):
    def test_a_server_that_exits_at_once_is_answered_never_awaited(self) -> None:
        # A server whose output ends before the relay has registered its first request
        # (``true`` exits in a millisecond) once left that request waiting forever.
        # Each try is a real server process; several tries meet the race.
        command = shutil.which("true")
        if command is None:
            self.skipTest("no `true` command here")
        fixtures = temp_dir(self, prefix="vcr-mcp-gone-") / "fixtures"
        request = json.dumps(HANDSHAKE[0]).encode() + b"\n"
        for attempt in range(10):
            out = io.BytesIO()
            relay = McpRelay([command], name="gone", mode=Mode.RECORD, fixtures_dir=fixtures,
                             client_in=io.BytesIO(request), client_out=out)  # fmt: skip
            serving = threading.Thread(target=relay.serve, daemon=True)
            serving.start()
            serving.join(timeout=30)
            self.assertFalse(serving.is_alive(), f"try {attempt}: still waiting for the server")
            (answer,) = [json.loads(line) for line in out.getvalue().splitlines()]
            self.assertEqual(
                answer["error"]["message"],
                "vcr_kit: the MCP server 'gone' exited before answering 'initialize'; "
                "its output is on stderr",
            )
        self.assertEqual(list(fixtures.glob("mcp-*.json")), [])


if __name__ == "__main__":
    unittest.main()
