"""Faults through the proxy: the same spec for clients in other processes.

The SDK through ``Proxy(faults=...)`` meets each fault as it would a real failure;
``vcr_kit run`` reads ``VCR_FAULTS`` and curl, replaying offline under ``unshare -n``,
gets the API's error answers and then the recorded one.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import anthropic
import pytest

from tests.clients.test_proxy import ROOT, UNREACHABLE, ProxyTestCase, json_names, offline
from tests.support.children.sdk_scenarios import MODEL
from tests.support.helpers.env import environ_without_vcr, run_captured, temp_dir

HELLO = [{"role": "user", "content": "Hello through the proxy"}]
STORY = [{"role": "user", "content": "A story through the proxy"}]


@pytest.mark.inprocess
class ProxyFaultsTest(ProxyTestCase):
    def setUp(self) -> None:
        super().setUp()
        # Recorded through a proxy that injects faults: only the let-through attempt
        # reaches the upstream, and no fault is written.
        recording = self.proxy(mode="record", faults="overloaded:0.01*2")
        client = anthropic.Anthropic(base_url=recording.url, api_key=self.key)
        self.addCleanup(client.close)
        reply = client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
        self.assertEqual(reply.content[0].text, "Echo: Hello through the proxy")
        with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream:
            self.assertEqual(
                stream.get_final_message().content[0].text, "Echo: A story through the proxy"
            )
        # Each request: 2 faults, then the one call the schedule lets through.
        self.assertEqual(
            recording.fault_plan.names() if recording.fault_plan else [], ["overloaded"] * 4
        )
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 2)
        self.assertEqual(len(json_names(self.fixtures)), 2)
        for name in json_names(self.fixtures):
            text = (self.fixtures / name).read_text(encoding="utf-8")
            self.assertNotIn("req_vcrfault_", text)
            self.assertNotIn("overloaded_error", text)
        self.server.stop()

    def replaying(self, faults: str, **options: object) -> anthropic.Anthropic:
        running = self.proxy(mode="replay", upstream=UNREACHABLE, faults=faults)
        client = anthropic.Anthropic(base_url=running.url, api_key="replay", **options)  # type: ignore[arg-type]
        self.addCleanup(client.close)
        return client

    def story(self, client: anthropic.Anthropic) -> str:
        with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream:
            return str(stream.get_final_message().content[0].text)

    def test_the_sdk_retries_through_two_overloads_to_the_recorded_answer(self) -> None:
        reply = self.replaying("overloaded:0.01*2").messages.create(
            model=MODEL, max_tokens=32, messages=HELLO
        )
        self.assertEqual(reply.content[0].text, "Echo: Hello through the proxy")

    def test_each_fault_as_the_sdk_sees_it(self) -> None:
        table = {
            "overloaded": (anthropic.APIStatusError, 529),
            "rate_limit:0.01": (anthropic.RateLimitError, 429),
            "server_error": (anthropic.InternalServerError, 500),
            "timeout": (anthropic.APIStatusError, 504),
            "request_timeout": (anthropic.APIStatusError, 408),
            "reset": (anthropic.APIConnectionError, None),
            "refused": (anthropic.APIConnectionError, None),
            "empty": (anthropic.APIConnectionError, None),
            "read_timeout": (anthropic.APITimeoutError, None),
            "error_after:3": (anthropic.APIStatusError, 200),
        }
        for spec, (expected, status) in table.items():
            with self.subTest(spec):
                # Only the hung read needs a short timeout; a loaded machine may take
                # longer than that to answer any other.
                timeout = 1.0 if spec == "read_timeout" else 60.0
                client = self.replaying(spec, max_retries=0, timeout=timeout)
                with self.assertRaises(expected) as caught:
                    self.story(client)
                self.assertEqual(getattr(caught.exception, "status_code", None), status)

    def test_a_cut_stream_raises_as_a_real_drop(self) -> None:
        with self.assertRaises(Exception) as caught:
            self.story(self.replaying("cut_after:3", max_retries=0))
        self.assertEqual(
            str(caught.exception),
            "peer closed connection without sending complete message body "
            "(incomplete chunked read)",
        )

    def test_slowed_and_spaced_streams_still_deliver_the_recorded_answer(self) -> None:
        for spec in ("slow_first:0.05", "delay:0.01"):
            with self.subTest(spec):
                self.assertEqual(
                    self.story(self.replaying(spec)), "Echo: A story through the proxy"
                )


@pytest.mark.child
class CurlThroughRunTest(ProxyTestCase):
    def test_vcr_faults_reaches_curl_through_run_offline(self) -> None:
        curl = shutil.which("curl")
        if curl is None:
            self.skipTest("curl is not installed")
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "1"}
        body = json.dumps({"model": MODEL, "max_tokens": 16, "messages": HELLO})
        ask = (
            f"{curl} -sS -D - $ANTHROPIC_BASE_URL/v1/messages -H 'x-api-key: {self.key}' "
            f"-H 'content-type: application/json' -d '{body}'; echo"
        )
        command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures)]
        first = temp_dir(self)
        recorded = run_captured(
            [*command, "--upstream", self.server.url, "--", "sh", "-c", ask],
            cwd=first,
            env=dict(env, HOME=str(first)),
            timeout=60,
        )
        self.assertEqual(recorded.returncode, 0, recorded.stderr)
        self.server.stop()
        second = Path(tempfile.mkdtemp(dir=temp_dir(self)))
        replayed = run_captured(
            [
                *offline(),
                *command,
                "--mode",
                "replay",
                "--upstream",
                UNREACHABLE,
                "--",
                "sh",
                "-c",
                f"{ask}; {ask}; {ask}",
            ],
            cwd=second,
            env=dict(env, HOME=str(second), VCR_FAULTS="overloaded*2"),
            timeout=60,
        )
        self.assertEqual(replayed.returncode, 0, replayed.stderr)
        answers = replayed.stdout.split("HTTP/1.1 ")[1:]
        self.assertEqual([a.split(" ", 1)[0] for a in answers], ["529", "529", "200"])
        error = json.loads(answers[0].split("\n\n", 1)[1])
        self.assertEqual(error["error"], {"type": "overloaded_error", "message": "Overloaded"})
        self.assertIn(f"\nrequest-id: {error['request_id']}\n", answers[0])
        self.assertIn("Echo: Hello through the proxy", answers[2])
        self.assertIn("1 replayed, 0 recorded, 0 missing, 2 faults injected;", replayed.stderr)

    def test_run_takes_faults_on_its_command_line(self) -> None:
        curl = shutil.which("curl")
        if curl is None:
            self.skipTest("curl is not installed")
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        body = json.dumps({"model": MODEL, "max_tokens": 16, "messages": HELLO})
        ask = (f"{curl} -sS -D - $ANTHROPIC_BASE_URL/v1/messages -H 'x-api-key: {self.key}' "
               f"-H 'content-type: application/json' -d '{body}'")  # fmt: skip
        # An API error needs no fixture: it is answered in front of the (missing) one.
        done = run_captured(
            [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
             "--mode", "replay", "--faults", "rate_limit:2.5", "--", "sh", "-c", ask],
            cwd=self.tmp, env=env, timeout=60,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        # Said at start-up: the schedule lasts the proxy's lifetime, not a test's.
        self.assertEqual(
            done.stderr.splitlines()[0],
            "vcr_kit: injecting faults 'rate_limit:2.5'; one schedule for this proxy's "
            "lifetime: each distinct request meets them once, whichever client sends it "
            "(restart the proxy to start afresh)",
        )
        head = done.stdout.split("\n\n", 1)[0]
        self.assertTrue(head.startswith("HTTP/1.1 429 Too Many Requests\n"), head)
        self.assertIn("\nretry-after-ms: 2500\n", head)
        self.assertIn("\nretry-after: 3\n", head)
        self.assertIn("\nanthropic-ratelimit-requests-remaining: 0\n", head)
        self.assertEqual(json_names(self.fixtures), [])

    def test_serve_keeps_vcr_faults_schedule_for_its_lifetime_and_says_so(self) -> None:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0",
               "VCR_FAULTS": "overloaded"}  # fmt: skip
        served = subprocess.Popen(
            [sys.executable, "-m", "vcr_kit", "serve", "--fixtures", str(self.fixtures),
             "--upstream", self.server.url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            assert served.stdout is not None
            url = served.stdout.readline().strip().rsplit(" ", 1)[1]
            # Read here, not from communicate(): it reads the pipe itself and would miss
            # a line the first readline() already took into the file's buffer.
            said = served.stdout.readline()
            statuses = []
            for _ in range(2):  # two clients, as two test processes would be
                client = anthropic.Anthropic(base_url=url, api_key=self.key, max_retries=0)
                self.addCleanup(client.close)
                try:
                    client.messages.create(model=MODEL, max_tokens=16, messages=HELLO)
                    statuses.append(200)
                except anthropic.APIStatusError as exc:
                    statuses.append(exc.status_code)
            self.assertEqual(statuses, [529, 200])
            served.send_signal(signal.SIGTERM)
            served.communicate(timeout=30)
        finally:
            if served.poll() is None:
                served.kill()
                served.communicate()
        self.assertEqual(served.returncode, 0)
        # Said at start-up, after the URL: the schedule lasts the proxy's lifetime.
        self.assertEqual(
            said.splitlines()[0],
            "vcr_kit: injecting faults 'overloaded'; one schedule for this proxy's "
            "lifetime: each distinct request meets them once, whichever client sends it "
            "(restart the proxy to start afresh)",
        )

    def test_a_bad_vcr_faults_stops_run_naming_the_value(self) -> None:
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_FAULTS": "overloaded*-1"}
        done = run_captured(
            [
                sys.executable,
                "-m",
                "vcr_kit",
                "run",
                "--fixtures",
                str(self.fixtures),
                "--",
                "true",
            ],
            cwd=self.tmp,
            env=env,
            timeout=60,
        )
        self.assertEqual(done.returncode, 2)  # a configuration error (issue 30)
        self.assertEqual(
            done.stderr,
            "vcr_kit: VCR_FAULTS='overloaded*-1': overloaded*-1: N is a whole number from 1 to "
            "1000000, or 'always'. A fault spec is a comma-separated list of NAME, NAME:ARG, "
            "NAME*N or NAME@FILTER (see https://vcr-kit.github.io/vcr_kit/faults/).\n",
        )
