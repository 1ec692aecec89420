"""The record/replay proxy (``vcr_kit.proxy``, ``serve``, ``run``, the per-test option),
driven by the Python SDK, raw HTTP and curl, in front of the loopback server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
import threading
import time
import unittest
from pathlib import Path
from typing import Any

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, WEATHER_TOOL
from tests.support.helpers.env import (
    entries,
    environ_without_vcr,
    offline,
    run_captured,
    temp_dir,
)
from tests.support.helpers.loopback_case import LoopbackTestCase
from tests.support.helpers.paths import ROOT
from vcr_kit._core.httplib import sdk_library
from vcr_kit._proxy.server import Proxy, ProxyError

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens there
MISSING = "Fixture missing: {}. Re-run the tests with VCR_RECORD=1, then commit the result."
CONCURRENT = 20


def json_names(folder: Path) -> list[str]:
    return [name for name in entries(folder) if name.endswith(".json")]


class ProxyTestCase(LoopbackTestCase):
    temp_prefix = "vcr-proxy-"

    def setUp(self) -> None:
        super().setUp()
        self.logged: list[str] = []

    def proxy(self, **options: Any) -> Proxy:
        options.setdefault("fixtures_dir", self.fixtures)
        options.setdefault("upstream", self.server.url)
        options.setdefault("log", self.logged.append)
        running = Proxy(**options).start()
        self.addCleanup(running.stop)
        return running

    def sdk(self, url: str) -> anthropic.Anthropic:
        client = anthropic.Anthropic(base_url=url, api_key=self.key, max_retries=0)
        self.addCleanup(client.close)
        return client

    def assert_no_key(self) -> None:
        for name in json_names(self.fixtures):
            data = (self.fixtures / name).read_bytes()
            json.loads(data)  # readable JSON
            self.assertNotIn(self.key.encode(), data, name)


def ask(client: anthropic.Anthropic, text: str, **extra: Any) -> str:
    reply = client.messages.create(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": text}], **extra
    )
    return "".join(block.text for block in reply.content if block.type == "text")


def stream(client: anthropic.Anthropic, text: str) -> tuple[str, list[str]]:
    with client.messages.stream(
        model=MODEL,
        max_tokens=32,
        messages=[{"role": "user", "content": text}],
        tools=[WEATHER_TOOL],
    ) as events:
        said = "".join(events.text_stream)
        final = events.get_final_message()
    return said, [block.id for block in final.content if block.type == "tool_use"]


@pytest.mark.inprocess
class RecordReplayTest(ProxyTestCase):
    def test_records_then_replays_without_the_upstream(self) -> None:
        recording = self.proxy()
        client = self.sdk(recording.url)
        answers = (ask(client, "Hello proxy"), stream(client, "What is the weather in Oslo?"))
        self.assertEqual(answers[0], "Echo: Hello proxy")
        self.assertEqual(answers[1][0], "Let me check.")
        self.assertEqual(len(json_names(self.fixtures)), 2)
        self.assert_no_key()
        self.server.stop()

        replaying = self.proxy(mode="replay", upstream=UNREACHABLE)
        client = self.sdk(replaying.url)
        replayed = (ask(client, "Hello proxy"), stream(client, "What is the weather in Oslo?"))
        # The tool id the client saw while recording is the fixture's: a next request
        # quoting it keys the same on replay.
        self.assertEqual(replayed, answers)
        self.assertTrue(answers[1][1][0].startswith("toolu_vcr"))

    def test_metadata_is_neither_keyed_nor_stored(self) -> None:
        client = self.sdk(self.proxy().url)
        for session in ("one", "two"):
            ask(client, "Same question", metadata={"user_id": f"session-{session}"})
        (name,) = json_names(self.fixtures)
        stored = json.loads((self.fixtures / name).read_text())["request"]["body"]
        self.assertNotIn("metadata", stored)
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 1)

    def test_a_miss_in_replay_answers_an_anthropic_error_with_the_message(self) -> None:
        client = self.sdk(self.proxy(mode="replay").url)
        with self.assertRaises(anthropic.BadRequestError) as caught:
            ask(client, "Never recorded")
        (name,) = [p.name for p in self.fixtures.glob("*")] or [None]  # nothing written
        self.assertIsNone(name)
        self.assertEqual(caught.exception.status_code, 400)
        error = caught.exception.body["error"]  # type: ignore[index]
        self.assertEqual(error["type"], "invalid_request_error")
        message = error["message"]
        self.assertRegex(message, r"^Fixture missing: .*post-v1-messages-[0-9a-f]{12}\.json\. ")
        self.assertEqual(self.logged, [f"vcr_kit proxy: {message}"])
        self.assertEqual(self.server.log, [])

    def test_a_taken_port_is_refused_clearly(self) -> None:
        taken = self.proxy()
        with self.assertRaises(ProxyError) as caught:
            Proxy(port=taken.port, fixtures_dir=self.fixtures)
        self.assertEqual(
            caught.exception.args[-1],
            f"vcr_kit proxy cannot listen on 127.0.0.1:{taken.port}: Address already in use. "
            "Choose another --port, or 0 for a free one.",
        )

    def test_an_unreachable_upstream_is_named(self) -> None:
        client = self.sdk(self.proxy(upstream=UNREACHABLE).url)
        with self.assertRaises(anthropic.InternalServerError) as caught:
            ask(client, "Anyone there?")
        self.assertEqual(caught.exception.status_code, 502)
        expected = (
            "vcr_kit proxy cannot reach the upstream http://127.0.0.1:9: "
            "ConnectError: [Errno 111] Connection refused"
        )
        self.assertEqual(caught.exception.body["error"]["message"], expected)  # type: ignore[index]
        self.assertEqual(self.logged, [f"vcr_kit proxy: {expected}"])
        self.assertEqual(json_names(self.fixtures), [])

    def test_a_client_gone_mid_stream_leaves_no_fixture(self) -> None:
        running = self.proxy()
        body = json.dumps(
            {
                "model": MODEL,
                "max_tokens": 32,
                "stream": True,
                "messages": [{"role": "user", "content": "Leaving early [[slow-stream]]"}],
            }
        ).encode()
        with socket.create_connection(("127.0.0.1", running.port)) as conn:
            conn.sendall(
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                b"x-api-key: " + self.key.encode() + b"\r\n"
                b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            self.assertIn(b"event: message_start", conn.recv(65536) + conn.recv(65536))
        running.stop()  # waits for the in-flight request: whatever it would write is written
        self.assertEqual(json_names(self.fixtures), [])
        # The proxy let go of the upstream too, instead of reading a stream nobody wants.
        self.assertNotIn("Leaving early [[slow-stream]]", self.server.stream_finished)


@pytest.mark.inprocess
class CrossPathTest(ProxyTestCase):
    """One store: the proxy and the in-process client name and read the same files."""

    def test_recorded_through_the_proxy_replays_in_process(self) -> None:
        client = self.sdk(self.proxy().url)
        answers = (ask(client, "Cross one"), stream(client, "The weather in Rome?"))
        recorded = json_names(self.fixtures)
        self.server.stop()
        local = vcr_kit.client(
            mode="replay", fixtures_dir=self.fixtures, base_url=UNREACHABLE, api_key=self.key
        )
        self.addCleanup(local.close)
        self.assertEqual((ask(local, "Cross one"), stream(local, "The weather in Rome?")), answers)
        self.assertEqual(json_names(self.fixtures), recorded)

    def test_recorded_in_process_replays_through_the_proxy(self) -> None:
        local = vcr_kit.client(
            fixtures_dir=self.fixtures, base_url=self.server.url, api_key=self.key
        )
        self.addCleanup(local.close)
        answers = (ask(local, "Cross two"), stream(local, "The weather in Lima?"))
        recorded = json_names(self.fixtures)
        self.server.stop()
        client = self.sdk(self.proxy(mode="replay", upstream=UNREACHABLE).url)
        replayed = (ask(client, "Cross two"), stream(client, "The weather in Lima?"))
        self.assertEqual(replayed, answers)
        self.assertEqual(json_names(self.fixtures), recorded)


@pytest.mark.inprocess
class ConcurrentStreamsTest(ProxyTestCase):
    def test_twenty_streams_each_get_their_own_events_as_they_are_sent(self) -> None:
        running = self.proxy()
        results: dict[int, tuple[float, list[str], str]] = {}
        errors: list[BaseException] = []
        start = threading.Barrier(CONCURRENT)

        def one(number: int) -> None:
            try:
                text = f"Stream {number} [[slow-stream]]"
                body = {
                    "model": MODEL,
                    "max_tokens": 32,
                    "stream": True,
                    "messages": [{"role": "user", "content": text}],
                }
                first = 0.0
                names: list[str] = []
                said = []
                with sdk_library().Client(timeout=30) as http:
                    start.wait()
                    url = running.url + "/v1/messages"
                    headers = {"x-api-key": self.key}
                    with http.stream("POST", url, json=body, headers=headers) as response:
                        for line in response.iter_lines():
                            if line.startswith("event: "):
                                first = first or time.monotonic()
                                names.append(line.removeprefix("event: "))
                            elif line.startswith("data: ") and '"text_delta"' in line:
                                said.append(json.loads(line[6:])["delta"]["text"])
                results[number] = (first, names, "".join(said))
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(n,)) for n in range(CONCURRENT)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual(errors, [])
        leads = []
        for number in range(CONCURRENT):
            first, names, said = results[number]
            text = f"Stream {number} [[slow-stream]]"
            self.assertEqual(said, f"Echo: {text}")
            self.assertEqual(names[:3], ["message_start", "ping", "content_block_start"])
            self.assertEqual(names[-3:], ["content_block_stop", "message_delta", "message_stop"])
            leads.append(self.server.stream_finished[text] - first)
        # Each client saw its first event before the upstream had finished its stream.
        self.assertGreater(min(leads), 0.0, leads)
        self.assertEqual(len(json_names(self.fixtures)), CONCURRENT)
        if os.environ.get("VCR_PROXY_TIMINGS"):
            print(
                f"\nfirst event ahead of upstream end: min {min(leads):.3f} s, "
                f"median {statistics.median(leads):.3f} s, max {max(leads):.3f} s",
                file=sys.stderr,
            )


@pytest.mark.child
class CommandLineTest(ProxyTestCase):
    def env(self, **extra: str) -> dict[str, str]:
        return {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "1", **extra}

    def test_serve_prints_its_url_and_the_summary_on_sigterm(self) -> None:
        served = subprocess.Popen(
            [sys.executable, "-m", "vcr_kit", "serve", "--fixtures", str(self.fixtures),
             "--upstream", self.server.url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env(),
        )  # fmt: skip
        try:
            assert served.stdout is not None
            line = served.stdout.readline().strip()
            self.assertRegex(line, r"^vcr_kit proxy on http://127\.0\.0\.1:\d+$")
            url = line.rsplit(" ", 1)[1]
            self.assertEqual(  # the other providers, each under its prefix
                [served.stdout.readline().strip() for _ in range(2)],
                [f"vcr_kit: OpenAI clients: OPENAI_BASE_URL={url}/openai/v1",
                 f"vcr_kit: Google Gemini clients: GOOGLE_GEMINI_BASE_URL={url}/gemini"],
            )  # fmt: skip
            self.assertEqual(ask(self.sdk(line.rsplit(" ", 1)[1]), "Served"), "Echo: Served")
            served.send_signal(signal.SIGTERM)
            _, err = served.communicate(timeout=30)
        finally:
            if served.poll() is None:
                served.kill()
                served.communicate()
        self.assertEqual(served.returncode, 0, err)
        self.assertRegex(err, r"^vcr_kit: 0 replayed, 1 recorded, 0 missing; \$0\.\d{4} of API")

    def test_run_with_curl_records_then_replays_offline_elsewhere(self) -> None:
        curl = shutil.which("curl")
        if curl is None:
            self.skipTest("curl is not installed")
        body = json.dumps(
            {"model": MODEL, "max_tokens": 16, "stream": True,
             "messages": [{"role": "user", "content": "From curl"}]}
        )  # fmt: skip
        # The shell expands the proxy's URL, which only `run` knows.
        script = f"{curl} -sS -N $ANTHROPIC_BASE_URL/v1/messages -H 'x-api-key: {self.key}' " \
            f"-H 'content-type: application/json' -d '{body}'"  # fmt: skip
        command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures)]
        first = temp_dir(self)
        recorded = run_captured(
            [*command, "--upstream", self.server.url, "--", "sh", "-c", script],
            cwd=first, env=self.env(HOME=str(first)), timeout=60,
        )  # fmt: skip
        self.assertEqual(recorded.returncode, 0, recorded.stderr)
        self.assertEqual(text_of(recorded.stdout), "Echo: From curl")
        self.assertIn("0 replayed, 1 recorded, 0 missing", recorded.stderr)
        self.server.stop()
        second = temp_dir(self)
        replayed = run_captured(
            [*offline(), *command, "--mode", "replay", "--upstream", UNREACHABLE, "--", "sh", "-c",
             script],
            cwd=second, env=self.env(HOME=str(second)), timeout=60,
        )  # fmt: skip
        self.assertEqual(replayed.returncode, 0, replayed.stderr)
        self.assertIn("1 replayed, 0 recorded, 0 missing", replayed.stderr)
        self.assertEqual(text_of(replayed.stdout), text_of(recorded.stdout))
        self.assert_no_key()

    def test_run_exits_with_the_commands_status(self) -> None:
        done = run_captured(
            [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures), "--",
             sys.executable, "-c", "import os, sys; print(os.environ['ANTHROPIC_BASE_URL']); "
             "sys.exit(3)"],
            cwd=self.tmp, env=self.env(), timeout=60,
        )  # fmt: skip
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertRegex(done.stdout, r"^http://127\.0\.0\.1:\d+\n$")
        self.assertEqual(done.stderr, "vcr_kit: no requests\n")

    def test_run_has_claude_code_wait_for_its_mcp_servers(self) -> None:
        # Connected in the background, a slow MCP server's tools are in Claude Code's
        # first request or not by timing, and it would not replay; a user's own value
        # of the switch is kept.
        show = "import os; print(os.environ.get('MCP_CONNECTION_NONBLOCKING'))"
        for given, seen in ((None, "0"), ("1", "1")):
            env = self.env()
            env.pop("MCP_CONNECTION_NONBLOCKING", None)
            if given is not None:
                env["MCP_CONNECTION_NONBLOCKING"] = given
            done = run_captured(
                [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
                 "--", sys.executable, "-c", show],
                cwd=self.tmp, env=env, timeout=60,
            )  # fmt: skip
            self.assertEqual((done.returncode, done.stdout), (0, f"{seen}\n"), done.stderr)

    def test_run_without_a_command_is_a_usage_error(self) -> None:
        done = run_captured(
            [sys.executable, "-m", "vcr_kit", "run", "--port", "0"],
            cwd=self.tmp, env=self.env(), timeout=60,
        )  # fmt: skip
        self.assertEqual(done.returncode, 2)
        self.assertTrue(done.stderr.endswith("vcr_kit run: error: no command given after --\n"))


def text_of(sse: str) -> str:
    return "".join(
        json.loads(line[6:])["delta"]["text"]
        for line in sse.splitlines()
        if line.startswith("data: ") and '"text_delta"' in line
    )


@pytest.mark.child
class TestOptionTest(ProxyTestCase):
    """``VCRTestCase.vcr_proxy``: a child process records and replays through the test's
    proxy, and the test's own in-process client goes through it once, not twice."""

    def run_case(self) -> unittest.TestResult:
        fixtures, server_url, key = self.fixtures, self.server.url, self.key
        child = textwrap.dedent(
            """
            import anthropic
            with anthropic.Anthropic(max_retries=0) as client:
                reply = client.messages.create(
                    model="claude-opus-4-7", max_tokens=16,
                    messages=[{"role": "user", "content": "From a child"}],
                )
            print(reply.content[0].text)
            """
        )
        seen: list[Any] = []

        class Proxied(vcr_kit.VCRTestCase):
            vcr_proxy = True
            vcr_fixtures_dir = fixtures

            def test_child(self) -> None:
                url = os.environ["ANTHROPIC_BASE_URL"]
                done = subprocess.run(
                    [sys.executable, "-c", child], capture_output=True, text=True, check=False,
                    env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
                )  # fmt: skip
                seen.append((url, done.returncode, done.stdout, done.stderr))
                self.assertEqual(self.anthropic.messages.create(
                    model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "In process"}]
                ).content[0].text, "Echo: In process")  # fmt: skip
                self.assertEqual(len(self.vcr_journal.entries), 2)

        os.environ["ANTHROPIC_BASE_URL"] = server_url
        os.environ["ANTHROPIC_API_KEY"] = key
        result = unittest.TestResult()
        Proxied("test_child").run(result)
        self.assertEqual(os.environ["ANTHROPIC_BASE_URL"], server_url)  # restored
        self.assertEqual(result.errors + result.failures, [])
        url, status, out, err = seen[0]
        self.assertEqual((status, out), (0, "Echo: From a child\n"), err)
        self.assertNotEqual(url, server_url)
        return result

    def test_the_child_records_then_replays(self) -> None:
        self.run_case()
        self.assertEqual(len(json_names(self.fixtures)), 2)
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 2)
        self.run_case()
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 2)  # all replayed


if __name__ == "__main__":  # pragma: no cover
    unittest.main()


@pytest.mark.child
class PytestMarkerTest(ProxyTestCase):
    def test_the_marker_option_points_children_at_a_proxy_for_the_test(self) -> None:
        folder = temp_dir(self)
        (folder / "test_marked.py").write_text(
            textwrap.dedent(
                """
                import os, pytest

                @pytest.mark.vcr(proxy=True)
                def test_proxied():
                    assert os.environ["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
                    assert os.environ["ANTHROPIC_BASE_URL"] != UPSTREAM

                def test_unmarked():
                    assert os.environ["ANTHROPIC_BASE_URL"] == UPSTREAM
                """
            ).replace("UPSTREAM", repr(self.server.url))
        )
        env = {**environ_without_vcr(), "ANTHROPIC_BASE_URL": self.server.url}
        done = run_captured(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "."],
            cwd=folder, env=env, timeout=120,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("2 passed", done.stdout)


if __name__ == "__main__":  # pragma: no cover
    unittest.main()
