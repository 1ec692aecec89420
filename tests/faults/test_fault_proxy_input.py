"""The proxy answers every request: bad framing gets a 400 in the API's error shape, a
body that stops arriving a 408, and SIGTERM stops ``serve`` whatever its clients do.

A real ``python -m vcr_kit serve`` process, in front of the loopback server, fed raw
bytes over a socket.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers.env import entries, environ_without_vcr
from tests.support.helpers.loopback_case import LoopbackTestCase
from tests.support.helpers.paths import ROOT
from vcr_kit._engine.request_body import BODY_TIMEOUT

pytestmark = pytest.mark.child

#: Generous: a hang detector, not a timing test (today a stalled client holds serve
#: for ten minutes).
STOP_LIMIT = 15.0
PREFIX = "vcr_kit proxy cannot read the request: "
SUFFIX = " Nothing was sent upstream."


def error_json(message: str, error_type: str = "invalid_request_error") -> dict[str, object]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


class StallingUpstream:
    """An upstream that starts a streamed answer, sends one event, and then nothing:
    what a proxy sees mid-recording when the API is slow."""

    def __init__(self, test: unittest.TestCase) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.release = threading.Event()
        test.addCleanup(self.close)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.listener.accept()
            with conn:
                conn.recv(65536)
                event = b'event: message_start\ndata: {"type": "message_start"}\n\n'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(event), event)
                )
                self.release.wait(60)

    def close(self) -> None:
        self.release.set()
        self.listener.close()


class ServeTestCase(LoopbackTestCase):
    temp_prefix = "vcr-proxy-input-"

    def setUp(self) -> None:
        super().setUp()
        self.served, self.port = self.serve(self.server.url)

    def serve(self, upstream: str) -> tuple[subprocess.Popen[str], int]:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        served = subprocess.Popen(
            [sys.executable, "-m", "vcr_kit", "serve", "--fixtures", str(self.fixtures),
             "--mode", "auto", "--upstream", upstream],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.addCleanup(self.reap, served)
        assert served.stdout is not None
        line = served.stdout.readline().strip()  # readiness: the URL line
        self.assertRegex(line, r"^vcr_kit proxy on http://127\.0\.0\.1:\d+$")
        return served, int(line.rsplit(":", 1)[1])

    @staticmethod
    def reap(served: subprocess.Popen[str]) -> None:
        if served.poll() is None:
            served.kill()
        served.communicate()

    def connect(self, port: int | None = None) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", port or self.port), timeout=30)
        self.addCleanup(sock.close)
        return sock

    def head(self, *lines: str) -> bytes:
        return ("\r\n".join(["POST /v1/messages HTTP/1.1", "host: 127.0.0.1", *lines]) +
                "\r\n\r\n").encode("ascii")  # fmt: skip

    def answer(self, sock: socket.socket) -> tuple[int, dict[str, object]]:
        """The whole answer, read until the proxy closes the connection."""
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        self.assertTrue(data, "the proxy closed the connection without an answer")
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        return status, json.loads(body)


class BadFramingTest(ServeTestCase):
    def test_bad_framing_gets_a_400_in_the_api_error_shape(self) -> None:
        body = b'{"model": "claude-opus-4-7"}'
        cases = [
            ("content-length abc", self.head("content-length: abc") + body,
             "Content-Length 'abc' is not a number of bytes."),
            ("negative content-length", self.head("content-length: -5") + body,
             "Content-Length '-5' is not a number of bytes."),
            ("two content-lengths", self.head("content-length: 3", "content-length: 4") + body,
             "Content-Length is given twice, with different values (3, 4)."),
            ("bad chunk size", self.head("transfer-encoding: chunked") + b"zz\r\n" + body,
             "Chunk size 'zz' is not a hexadecimal number of bytes."),
            ("negative chunk size", self.head("transfer-encoding: chunked") + b"-5\r\nab\r\n",
             "Chunk size '-5' is not a hexadecimal number of bytes."),
            ("chunk without its line end",
             self.head("transfer-encoding: chunked") + b"2\r\nabcd\r\n0\r\n\r\n",
             "A chunk of 2 bytes is not followed by a line end."),
            ("shorter than announced", self.head("content-length: 100") + body,
             f"The request body ended after {len(body)} of the 100 bytes its Content-Length "
             "announced."),
            ("chunked, cut short", self.head("transfer-encoding: chunked") + b"40\r\nabc",
             "The request body ended after 3 of the 64 bytes its chunk size announced."),
        ]  # fmt: skip
        for name, raw, problem in cases:
            with self.subTest(name):
                sock = self.connect()
                sock.sendall(raw)
                sock.shutdown(socket.SHUT_WR)  # the client is done sending
                self.assertEqual(self.answer(sock), (400, error_json(PREFIX + problem + SUFFIX)))
        self.assertEqual(self.server.log, [])  # nothing reached the upstream
        self.assertEqual(entries(self.fixtures), [])
        self.assertIsNone(self.served.poll())  # still serving

    def test_a_body_larger_than_any_api_request_gets_a_413_unread(self) -> None:
        sock = self.connect()
        sock.sendall(self.head("content-length: 999999999999") + b"{")
        message = (
            f"{PREFIX}its body (999999999999 bytes) is larger than the proxy takes "
            f"(536870912 bytes).{SUFFIX}"
        )
        self.assertEqual(self.answer(sock), (413, error_json(message, "request_too_large")))

    def test_a_body_that_stops_arriving_gets_a_408(self) -> None:
        sock = self.connect()
        sock.sendall(self.head("content-length: 100") + b'{"model": ')  # then nothing
        message = (
            f"{PREFIX}its body stopped arriving (nothing for {BODY_TIMEOUT:g} seconds).{SUFFIX}"
        )
        self.assertEqual(self.answer(sock), (408, error_json(message, "timeout_error")))
        self.assertEqual(self.server.log, [])


class StopTest(ServeTestCase):
    def assert_stops_on(self, stop: signal.Signals) -> None:
        sock = self.connect()
        sock.sendall(self.head("content-length: 100000") + b'{"model": "claude')  # and waits
        self.served.send_signal(stop)
        try:
            _, err = self.served.communicate(timeout=STOP_LIMIT)
        except subprocess.TimeoutExpired:
            self.fail(f"serve still running {STOP_LIMIT:g} s after {stop.name}")
        self.assertEqual(self.served.returncode, 0, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(entries(self.fixtures), [])
        self.assertEqual(self.server.log, [])

    def test_sigterm_stops_serve_while_a_client_holds_half_a_body(self) -> None:
        self.assert_stops_on(signal.SIGTERM)

    def test_sigint_stops_serve_while_a_client_holds_half_a_body(self) -> None:
        self.assert_stops_on(signal.SIGINT)

    def test_sigterm_mid_recording_fails_the_record_cleanly(self) -> None:
        upstream = StallingUpstream(self)
        served, port = self.serve(upstream.url)
        body = json.dumps(
            {"model": "claude-opus-4-7", "max_tokens": 16, "stream": True,
             "messages": [{"role": "user", "content": "Stalled"}]}
        ).encode()  # fmt: skip
        raw = self.head(
            "content-type: application/json", "x-api-key: sk-ant-test-" + "k" * 32,
            f"content-length: {len(body)}",
        ) + body  # fmt: skip
        sock = self.connect(port)
        sock.sendall(raw)
        seen = b""
        while b"message_start" not in seen:  # the record is in flight
            chunk = sock.recv(65536)
            self.assertTrue(chunk, seen)
            seen += chunk
        served.send_signal(signal.SIGTERM)
        try:
            _, err = served.communicate(timeout=STOP_LIMIT)
        except subprocess.TimeoutExpired:
            self.fail(f"serve still running {STOP_LIMIT:g} s after SIGTERM mid-recording")
        self.assertEqual(served.returncode, 0, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(entries(self.fixtures), [])  # no fixture, no temp file
        # The lock is free and the folder sound: the same request records at once.
        again = self.connect()
        again.sendall(raw)
        again.shutdown(socket.SHUT_WR)
        self.assertIn(b"200 OK", again.recv(65536))
        while again.recv(65536):  # the whole answer: the fixture is written before its end
            pass
        again.close()
        self.assertEqual(len([n for n in entries(self.fixtures) if n.endswith(".json")]), 1)


#: ``vcr_kit run``'s child: starts a grandchild that records through the proxy against a
#: stalling upstream, then waits; on SIGTERM it exits at once, the grandchild does not.
CHILD = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    grand = subprocess.Popen([sys.executable, "-c", os.environ["GRANDCHILD"]])
    with open(os.environ["GRAND_PID"], "w") as f:
        f.write(str(grand.pid))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    time.sleep(120)
""")
GRANDCHILD = textwrap.dedent("""
    import json, os, socket, time
    port = int(os.environ["ANTHROPIC_BASE_URL"].rsplit(":", 1)[1])
    body = json.dumps({"model": "claude-opus-4-7", "max_tokens": 16, "stream": True,
                       "messages": [{"role": "user", "content": "Stalled"}]}).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /v1/messages HTTP/1.1\\r\\nhost: x\\r\\nx-api-key: sk-ant-test-"
                 + b"k" * 32 + b"\\r\\ncontent-length: %d\\r\\n\\r\\n" % len(body) + body)
    seen = b""
    while b"message_start" not in seen:
        seen += sock.recv(65536)
    open(os.environ["IN_FLIGHT"], "w").close()
    time.sleep(120)
""")


def log_text(log: Any) -> str:
    log.seek(0)
    return str(log.read())


class RunStopTest(ServeTestCase):
    def test_sigterm_to_run_fails_a_grandchilds_record_within_seconds(self) -> None:
        upstream = StallingUpstream(self)
        pid_file, in_flight = self.tmp / "grand.pid", self.tmp / "in-flight"
        env = {
            **environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0",
            "GRANDCHILD": GRANDCHILD, "GRAND_PID": str(pid_file), "IN_FLIGHT": str(in_flight),
        }  # fmt: skip
        # Files, not pipes: the grandchild keeps what it inherits open after run exits.
        log = (self.tmp / "run.log").open("w+")
        self.addCleanup(log.close)
        run = subprocess.Popen(
            [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
             "--mode", "auto", "--upstream", upstream.url, "--", sys.executable, "-c", CHILD],
            stdout=log, stderr=subprocess.STDOUT, text=True, env=env,
        )  # fmt: skip
        self.addCleanup(self.reap_quietly, run)
        self.addCleanup(self.kill_grandchild, pid_file)
        deadline = time.monotonic() + 60
        while not in_flight.exists():  # readiness: the grandchild's record is in flight
            if run.poll() is not None or time.monotonic() > deadline:
                self.fail(f"the grandchild's record never started: {log_text(log)}")
            time.sleep(0.05)
        run.send_signal(signal.SIGTERM)
        try:
            run.wait(timeout=STOP_LIMIT)
        except subprocess.TimeoutExpired:
            self.fail(f"run still running {STOP_LIMIT:g} s after SIGTERM")
        self.assertEqual(run.returncode, 0, log_text(log))
        self.assertNotIn("Traceback", log_text(log))
        self.assertEqual(entries(self.fixtures), [])

    @staticmethod
    def reap_quietly(run: subprocess.Popen[str]) -> None:
        if run.poll() is None:
            run.kill()
        run.wait()

    @staticmethod
    def kill_grandchild(pid_file: Path) -> None:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


if __name__ == "__main__":
    unittest.main()
