"""``vcr_kit mcp --url URL``: a remote (Streamable HTTP) MCP server recorded once,
replayed without it.

The server is ``tests/support/servers/mcp_http_server.py`` on loopback (the real wire format:
JSON answers, SSE streams with the server's own messages before the answer, session
ids, a bearer token); the front is a real ``vcr_kit mcp`` process; the client is this
test, speaking HTTP with ``http.client``. Replay runs offline (``unshare -n`` with
loopback up) in CI mode, the server stopped.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import signal
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.helpers.env import environ_without_vcr, offline_prefix, temp_dir
from tests.support.helpers.paths import ROOT
from tests.support.servers.mcp_http_server import McpHttpServer

pytestmark = pytest.mark.child

TOKEN = "sk-ant-api03-" + "Q" * 80 + "-AAAAAAAA"
MISSING = "Fixture missing: {}. Re-run the tests with VCR_RECORD=1, then commit the result."
READY = "vcr_kit mcp on http://127.0.0.1:"
DRIVER = ROOT / "tests" / "support" / "children" / "mcp_http_driver.py"

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments,
                       "_meta": {"progressToken": request_id}}}  # fmt: skip


def offline() -> list[str]:
    """``unshare -n`` with the loopback interface up (the front listens on it)."""
    prefix = offline_prefix()
    if not prefix:
        return []
    return [*prefix, "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh"]


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


def send(
    url: str, method: str, body: bytes = b"", session: str | None = None,
    extra: dict[str, str] | None = None,
) -> Reply:  # fmt: skip
    """One HTTP exchange with the front, as an MCP client frames it."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
    }
    if session is not None:
        headers["Mcp-Session-Id"] = session
    headers.update(extra or {})
    try:
        connection.request(method, parts.path, body=body, headers=headers)
        response = connection.getresponse()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                     response.read())  # fmt: skip
    finally:
        connection.close()


def post_to(
    url: str, message: Any, session: str | None = None, extra: dict[str, str] | None = None
) -> Reply:
    return send(url, "POST", json.dumps(message).encode(), session, extra)


def post(message: Any) -> dict[str, Any]:
    """A POST step of a driver script."""
    return {"verb": "POST", "body": message}


SESSION = [post(INITIALIZE), post(INITIALIZED), post(TOOLS_LIST), post(call(2, "now")),
           post(call(3, "dice", sides=1000))]  # fmt: skip


class McpHttpTest(unittest.TestCase):
    def setUp(self) -> None:
        self.base = temp_dir(self, prefix="vcr-mcp-http-")
        self.fixtures = self.base / "fixtures"

    def front_command(self, upstream: str, mode: str | None) -> list[str]:
        return [sys.executable, "-m", "vcr_kit", "mcp", "--url", upstream, "--port", "0",
                "--fixtures", str(self.fixtures), "--name", "clock",
                "--header", f"Authorization: Bearer {TOKEN}",
                *(["--mode", mode] if mode else [])]  # fmt: skip

    def start_front(self, upstream: str, mode: str) -> tuple[subprocess.Popen[str], str]:
        """A running ``vcr_kit mcp --url`` and its URL, read from the line it prints."""
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        front = subprocess.Popen(self.front_command(upstream, mode), cwd=self.base, env=env,
                                 stdout=subprocess.PIPE, text=True)  # fmt: skip
        self.addCleanup(self.kill, front)
        assert front.stdout is not None
        line = front.stdout.readline()
        self.assertTrue(line.startswith(READY), line)
        return front, line.split(" on ", 1)[1].strip()

    def kill(self, front: subprocess.Popen[str]) -> None:
        if front.poll() is None:
            front.kill()
        front.wait()
        if front.stdout is not None:
            front.stdout.close()

    def stop(self, front: subprocess.Popen[str], sig: int = signal.SIGTERM) -> None:
        front.send_signal(sig)
        self.assertEqual(front.wait(timeout=10), 0)

    def drive(
        self, script: list[dict[str, Any]], upstream: str, *, ci: bool = False,
        mode: str | None = None,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """The front's replies to ``script`` (``mcp_http_driver.py``: the client and the
        front in one process tree, so that under ``unshare -n`` they share loopback)."""
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0",
               **({"CI": "true"} if ci else {})}  # fmt: skip
        command = [*(offline() if ci else []), sys.executable, str(DRIVER), "--",
                   *self.front_command(upstream, mode)]  # fmt: skip
        done = subprocess.run(command, input=json.dumps(script), capture_output=True, text=True,
                              cwd=self.base, env=env, check=False, timeout=120)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        result = json.loads(done.stdout)
        self.assertEqual(result["returncode"], 0, done.stderr)  # it stopped on SIGTERM
        replies: list[dict[str, Any]] = result["replies"]
        return replies

    def fixture_texts(self) -> str:
        return "".join(p.read_text() for p in sorted(self.fixtures.glob("mcp-*.json")))

    def test_records_then_replays_offline_without_the_server(self) -> None:
        with McpHttpServer(token=TOKEN) as server:
            recorded = self.drive(SESSION, server.url, mode="record")
        self.assertEqual(server.calls, ["now", "dice"])
        self.assertEqual([r["status"] for r in recorded], [200, 202, 200, 200, 200])
        self.assertEqual(recorded[0]["session"], "vcr-kit-session-1")
        self.assertEqual({r["type"] for r in recorded} - {None}, {"application/json"})
        answers = [r["body"] for r in recorded]
        self.assertEqual(answers[0]["result"]["serverInfo"]["name"], "clock-http")
        tools = [tool["name"] for tool in answers[2]["result"]["tools"]]
        self.assertEqual(tools, ["now", "dice", "hang", "whoami"])
        self.assertEqual(answers[3]["id"], 2)  # the SSE answer, its progress notes left out
        self.assertRegex(answers[3]["result"]["content"][0]["text"], r"^time \d+$")
        self.assertRegex(answers[4]["result"]["content"][0]["text"], r"^rolled \d+ of 1000$")
        self.assertEqual(len(list(self.fixtures.glob("mcp-*.json"))), 4)

        # The server is gone; offline, in CI: the recorded answers, the same session id.
        self.assertEqual(self.drive(SESSION, server.url, ci=True), recorded)
        self.assertEqual(server.calls, ["now", "dice"])

    def test_no_token_nor_session_id_of_the_servers_in_any_fixture(self) -> None:
        with McpHttpServer(token=TOKEN) as server:
            self.drive(SESSION, server.url, mode="record")
        # The token reached the server on every message, and the session ids were its own.
        self.assertEqual(set(server.authorizations), {f"Bearer {TOKEN}"})
        self.assertEqual(len(server.session_ids), 1)
        stored = self.fixture_texts()
        self.assertIn("clock-http", stored)
        for secret in (TOKEN, "Bearer", server.session_ids[0], "vcr-kit-session"):
            self.assertNotIn(secret, stored)

    def test_an_answer_holding_the_token_is_refused_by_the_secret_check(self) -> None:
        with McpHttpServer(token=TOKEN) as server:
            replies = self.drive([*SESSION[:2], post(call(8, "whoami"))], server.url,
                                 mode="record")  # fmt: skip
        self.assertEqual(server.calls, ["whoami"])
        error = replies[-1]["body"]["error"]
        self.assertEqual(error["code"], -32000)
        self.assertRegex(error["message"], re.escape(
            "vcr_kit: Refusing to write fixture fixtures/mcp-") + "[0-9a-f]{12}" + re.escape(
            ".json: it contains an Anthropic key (sk-ant-...) at "
            "response.result.content[0].text. Nothing was written."))  # fmt: skip
        self.assertNotIn(TOKEN, self.fixture_texts())
        self.assertEqual(len(list(self.fixtures.glob("mcp-*.json"))), 1)  # the handshake only

    def test_a_miss_is_a_json_rpc_error_naming_the_fixture(self) -> None:
        with McpHttpServer(token=TOKEN) as server:
            self.drive(SESSION, server.url, mode="record")
        (reply,) = self.drive([post(call(7, "dice", sides=6))], server.url, ci=True)
        self.assertEqual(reply["status"], 200)
        answer = reply["body"]
        self.assertEqual((answer["jsonrpc"], answer["id"], answer["error"]["code"]),
                         ("2.0", 7, -32000))  # fmt: skip
        message = answer["error"]["message"]
        path = message.split("Fixture missing: ", 1)[1].split(". Re-run", 1)[0]
        self.assertTrue(Path(path).name.startswith("mcp-"), message)
        self.assertTrue(message.startswith("vcr_kit: " + MISSING.format(path)), message)

    def test_the_server_down_while_recording_is_an_error_naming_its_url(self) -> None:
        server = McpHttpServer()  # never started: nothing listens on its port
        server.stop()
        (reply,) = self.drive([post(INITIALIZE)], server.url, mode="record")
        self.assertEqual(reply["body"], {"jsonrpc": "2.0", "id": 0, "error": {
            "code": -32000,
            "message": f"vcr_kit: cannot reach the MCP server at {server.url}: "
                       "[Errno 111] Connection refused"}})  # fmt: skip
        self.assertEqual(list(self.fixtures.glob("*.json")), [])

    def test_a_refused_token_is_an_error_and_records_nothing(self) -> None:
        with McpHttpServer(token="another-token") as server:
            (reply,) = self.drive([post(INITIALIZE)], server.url, mode="record")
        self.assertEqual(reply["body"]["error"], {
            "code": -32000,
            "message": f"vcr_kit: the MCP server at {server.url} answered HTTP 401 to 'initialize'"
        })  # fmt: skip
        self.assertEqual(list(self.fixtures.glob("*.json")), [])

    def test_bad_json_is_a_parse_error(self) -> None:
        bad, empty = self.drive([{"verb": "POST", "raw": '{"jsonrpc": "2.0", "id": 1, "method"'},
                                 post([])], "http://127.0.0.1:9/mcp", ci=True)  # fmt: skip
        self.assertEqual(
            (bad["status"], bad["body"]),
            (
                400,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            ),
        )
        self.assertEqual(
            (empty["status"], empty["body"]),
            (
                400,
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32600, "message": "Invalid Request"},
                },
            ),
        )

    def test_a_batch_gets_its_answers_in_a_list_under_2025_03_26(self) -> None:
        old = {"MCP-Protocol-Version": "2025-03-26"}
        initialize = {**INITIALIZE, "params": {**INITIALIZE["params"],  # type: ignore[dict-item]
                                               "protocolVersion": "2025-03-26"}}  # fmt: skip
        batch = [{**post(initialize), "headers": old},
                 {**post([INITIALIZED, call(2, "now"), call(3, "dice", sides=6)]), "headers": old},
                 {**post([INITIALIZED]), "headers": old}]  # fmt: skip
        with McpHttpServer(token=TOKEN) as server:
            recorded = self.drive(batch, server.url, mode="record")
        self.assertEqual(recorded[0]["session"], "vcr-kit-session-1")
        self.assertEqual(recorded[0]["body"]["result"]["protocolVersion"], "2025-03-26")
        self.assertEqual([a["id"] for a in recorded[1]["body"]], [2, 3])
        self.assertEqual((recorded[2]["status"], recorded[2]["body"]), (202, None))
        self.assertEqual(self.drive(batch, server.url, ci=True), recorded)

    def test_a_batch_is_refused_with_an_error_from_2025_06_18(self) -> None:
        # Changed behaviour (issue 29.5): batches were removed in 2025-06-18; a batch
        # under it once got a list of answers, now the spec's -32600, never silence.
        with McpHttpServer(token=TOKEN) as server:
            replies = self.drive([post(INITIALIZE), post([call(2, "now")]), post([INITIALIZED])],
                                 server.url, mode="record")  # fmt: skip
        self.assertEqual(server.calls, [])
        for reply in replies[1:]:
            self.assertEqual((reply["status"], reply["body"]), (400, {
                "jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message":
                "Invalid Request: JSON-RPC batches are not allowed in MCP protocol version "
                "2025-06-18 (only up to 2025-03-26); send each message alone"}}))  # fmt: skip

    def test_a_get_is_405_and_a_delete_ends_the_session(self) -> None:
        got, first, second, deleted = self.drive(
            [{"verb": "GET"}, post(INITIALIZE), post(INITIALIZE), {"verb": "DELETE"}],
            "http://127.0.0.1:9/mcp", ci=True,
        )  # fmt: skip
        # Sessions are numbered in each process: the same ids on every run.
        self.assertEqual([first["session"], second["session"]],
                         ["vcr-kit-session-1", "vcr-kit-session-2"])  # fmt: skip
        self.assertEqual((got["status"], got["allow"]), (405, "POST, DELETE"))
        self.assertEqual(deleted["status"], 200)

    def test_fixtures_are_the_same_through_stdio(self) -> None:
        """Recorded over HTTP under ``--name clock``, replayed by ``vcr_kit mcp --name
        clock -- CMD`` (stdio) with the command missing: one key rule for both."""
        with McpHttpServer(token=TOKEN) as server:
            recorded = self.drive(SESSION, server.url, mode="record")
        lines = [step["body"] for step in SESSION]
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0", "CI": "true"}
        done = subprocess.run(
            [*offline_prefix(), sys.executable, "-m", "vcr_kit", "mcp", "--name", "clock",
             "--fixtures", str(self.fixtures), "--", sys.executable, str(self.base / "gone.py")],
            input="".join(json.dumps(m) + "\n" for m in lines), capture_output=True, text=True,
            cwd=self.base, env=env, check=False, timeout=120,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        replayed = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual(replayed, [r["body"] for r in recorded if r["body"] is not None])

    def test_a_session_begun_on_replay_starts_the_servers_session_to_record(self) -> None:
        with McpHttpServer(token=TOKEN) as server:
            front, url = self.start_front(server.url, mode="record")
            post_to(url, INITIALIZE)
            self.stop(front)
            self.assertEqual(server.session_ids, [server.session_ids[0]])
            # Auto mode: initialize replays, the new call hears the handshake first.
            front, url = self.start_front(server.url, mode="auto")
            session = post_to(url, INITIALIZE).headers["mcp-session-id"]
            self.assertEqual(post_to(url, INITIALIZED, session).status, 202)
            self.assertEqual(len(server.session_ids), 1)  # nothing asked yet
            client_key = {"X-Api-Key": "client-key-1234"}  # the client's own header
            answer = post_to(url, call(4, "dice", sides=6), session, client_key).json()
            self.assertEqual(send(url, "DELETE", session=session).status, 200)
            self.stop(front)
        self.assertRegex(answer["result"]["content"][0]["text"], r"^rolled [1-6] of 6$")
        self.assertEqual(len(server.session_ids), 2)
        self.assertEqual(server.deleted, [server.session_ids[1]])  # its session ended too
        self.assertEqual(server.api_keys[-1], "client-key-1234")  # reached the server
        self.assertNotIn("client-key-1234", self.fixture_texts())

    def test_stops_within_seconds_on_sigterm_and_sigint_mid_recording(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig), McpHttpServer(token=TOKEN) as server:
                front, url = self.start_front(server.url, mode="record")
                session = post_to(url, INITIALIZE).headers["mcp-session-id"]
                hang = call(5, "hang")
                hanging = threading.Thread(target=self.ignore_errors,
                                           args=(post_to, url, hang, session))  # fmt: skip
                hanging.start()
                while server.calls != ["hang"]:  # the call reached the server: in flight
                    time.sleep(0.01)
                started = time.monotonic()
                self.stop(front, sig)
                self.assertLess(time.monotonic() - started, 5)
                hanging.join(timeout=10)
            # The handshake was recorded; the cut call was not.
            self.assertEqual(len(list(self.fixtures.glob("mcp-*.json"))), 1)

    @staticmethod
    def ignore_errors(function: Any, *args: Any) -> None:
        with contextlib.suppress(OSError):  # the front went away mid-answer: as it should
            function(*args)

    def test_usage_errors(self) -> None:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        usage = "usage: vcr_kit mcp [options] (--url URL | -- SERVER_CMD [ARGS...])\n"
        for arguments, problem in [
            (["--url", "http://h/mcp", "--", "srv"],
             "give either --url or a server command after --, not both"),
            (["--url", "ftp://h/mcp"], "--url 'ftp://h/mcp' is not an http:// or https:// URL"),
            (["--url", "http://h/mcp", "--header", "Bearer x"],
             "--header 'Bearer x' is not of the form 'NAME: VALUE'"),
            (["--url", "http://h/mcp", "--port", "70000"],
             "--port 70000 is not a port number (0 to 65535; 0: a free one)"),
            (["--header", "A: b", "--", "srv"], "--header and --port go with --url"),
        ]:  # fmt: skip
            with self.subTest(arguments=arguments):
                done = subprocess.run([sys.executable, "-m", "vcr_kit", "mcp", *arguments],
                                      cwd=self.base, env=env, capture_output=True, text=True,
                                      check=False, timeout=60)  # fmt: skip
                self.assertEqual(done.returncode, 2)
                self.assertEqual(done.stderr, f"{usage}vcr_kit mcp: error: {problem}\n")

    def test_a_taken_port_is_said_and_exits_1(self) -> None:
        with McpHttpServer() as server:
            port = str(urlsplit(server.url).port)
            env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
            done = subprocess.run([sys.executable, "-m", "vcr_kit", "mcp", "--url", server.url,
                                   "--port", port], cwd=self.base, env=env, capture_output=True,
                                  text=True, check=False, timeout=60)  # fmt: skip
        self.assertEqual(done.returncode, 1)
        self.assertEqual(
            done.stderr, f"vcr_kit: cannot listen on 127.0.0.1:{port}: Address already in use\n"
        )


if __name__ == "__main__":
    unittest.main()
