"""Faults on demand, end to end: the real SDK meets injected faults in front of answers
recorded from the loopback server, replayed with no network at all.

The scenarios (``tests/support/children/fault_scenarios.py``) run twice in subprocesses: once
recording (``VCR_MODE=record``, the loopback server up), once replaying under
``unshare -n`` with ``CI=true`` and no key. What a real failure looks like is taken
from the loopback server itself (a dropped stream, an ``error`` event), so an
injected fault is held to the real one.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import recording_key
from tests.support.helpers.env import (
    environ_without_vcr,
    offline_prefix,
    patch_env,
    run_captured,
    temp_dir,
)
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.paths import ROOT as REPO
from tests.support.servers.loopback_server import LoopbackServer
from vcr_kit._core.httplib import sdk_library

pytestmark = pytest.mark.child

SCRIPT = REPO / "tests" / "support" / "children" / "fault_scenarios.py"
STORY = [{"role": "user", "content": "Tell a short story about retries."}]
HELLO = [{"role": "user", "content": "Say hello to the fault suite."}]
#: What an injected fault leaves in a body: none of it may reach a fixture.
FAULT_MARKS = (
    "req_vcrfault_",
    "overloaded_error",
    "rate_limit_error",
    "api_error",
    "timeout_error",
    '"type": "error"',
    "retry-after",
    "anthropic-ratelimit",
)


def _run(
    env: dict[str, str], fixtures: Path, out: Path, base_url: str | None, prefix: list[str]
) -> dict[str, Any]:
    command = [str(SCRIPT), "--fixtures", str(fixtures), "--out", str(out)]
    if base_url:
        command += ["--base-url", base_url]
    # ``python -W error SCRIPT ...``, forked from a driver (under the prefix, ``unshare
    # -n``, if any): a python start less the SDK's import (forked_runs).
    done = driver(prefix).run("script", command, flags=["-W", "error"], cwd=REPO, env=env,
                              timeout=180)  # fmt: skip
    if done.returncode != 0 or done.stderr:
        raise AssertionError(
            f"{' '.join(done.args)}: {done.returncode}\n{done.stderr}{done.stdout}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _real_failure(server: LoopbackServer, marker: str) -> BaseException:
    """What the SDK raises when the loopback server really fails a stream."""
    client = anthropic.Anthropic(api_key=recording_key(), base_url=server.url, max_retries=0)
    try:
        with client.messages.stream(
            model="claude-opus-4-7",
            max_tokens=64,
            messages=[{"role": "user", "content": f"story {marker}"}],
        ) as stream:
            stream.get_final_message()
    except Exception as exc:
        return exc
    finally:
        client.close()
    raise AssertionError(f"{marker} did not fail")


class FaultsOffline(unittest.TestCase):
    folder: ClassVar[Path]
    recorded: ClassVar[dict[str, Any]]
    replayed: ClassVar[dict[str, Any]]
    real_drop: ClassVar[BaseException]
    real_error_event: ClassVar[BaseException]
    server_requests: ClassVar[int]

    @classmethod
    def setUpClass(cls) -> None:
        cls.folder = Path(tempfile.mkdtemp()).resolve()
        cls.addClassCleanup(shutil.rmtree, cls.folder, True)
        env = environ_without_vcr()
        env["VCR_REPORT"] = "0"
        env.pop("PYTHONWARNINGS", None)
        with LoopbackServer() as server:
            recording = dict(env, VCR_MODE="record", ANTHROPIC_API_KEY=recording_key())
            cls.recorded = _run(
                recording, cls.folder / "fixtures", cls.folder / "rec.json", server.url, []
            )
            cls.server_requests = len(server.requests_to("/v1/messages"))
            cls.real_drop = _real_failure(server, "[[stream-drop]]")
            cls.real_error_event = _real_failure(server, "[[stream-error]]")
        replaying = dict(env, CI="true")
        cls.replayed = _run(
            replaying, cls.folder / "fixtures", cls.folder / "rep.json", None, offline_prefix()
        )

    def test_the_sdk_retries_absorb_two_overloads_and_return_the_recorded_message(self) -> None:
        seen = self.replayed["retries_absorb_two_overloads"]
        self.assertEqual(seen["text"], "Echo: Say hello to the fault suite.")
        self.assertEqual(seen["journal"], {"faults": 2, "replays": 1})
        self.assertEqual(seen["faults"], 2)

    def test_without_retries_the_overload_surfaces_with_the_injected_request_id(self) -> None:
        seen = self.replayed["no_retries_surface_the_overload"]
        error = seen["error"]
        # OverloadedError where the SDK has it (0.x releases keep it in
        # anthropic._exceptions); before it, the InternalServerError a 529 maps to.
        known = hasattr(anthropic, "OverloadedError") or hasattr(
            anthropic._exceptions, "OverloadedError"
        )
        expected = "OverloadedError" if known else "InternalServerError"
        self.assertEqual(error["class"], expected)
        self.assertIn("APIStatusError", error["classes"])
        self.assertEqual((error["status"], error["error_type"]), (529, "overloaded_error"))
        self.assertEqual([error["request_id"]], seen["injected_ids"])
        self.assertTrue(error["request_id"].startswith("req_vcrfault_"))

    def test_the_sdk_honours_a_rate_limits_retry_after(self) -> None:
        seen = self.replayed["rate_limit_retry_after"]
        # The SDK waits what retry-after(-ms) says (its own back-off would be 0.5 s and
        # more, with jitter), then gets the recorded answer.
        self.assertEqual(seen["waits"], [0.05, 0.05])
        self.assertEqual(seen["text"], "Echo: Say hello to the fault suite.")
        self.assertEqual(self.replayed["retries_absorb_two_overloads"]["waits"], [0.01, 0.01])

    def test_a_stream_cut_after_three_events_raises_what_a_real_drop_raises(self) -> None:
        seen = self.replayed["stream_cut"]
        real = self.real_drop
        self.assertEqual(seen["error"]["class"], type(real).__name__)
        self.assertEqual(seen["error"]["module"], type(real).__module__.split(".")[0])
        self.assertNotIn("text", seen)  # never a quiet end
        self.assertNotIn("message_stop", seen["events"])
        self.assertEqual(seen["journal"], {"faults": 1, "replays": 1})

    def test_a_mid_stream_error_event_is_the_apis(self) -> None:
        seen = self.replayed["stream_error_event"]
        real = self.real_error_event
        self.assertEqual(seen["error"]["class"], type(real).__name__)
        self.assertEqual(seen["error"]["error_type"], "overloaded_error")
        self.assertEqual(seen["error"]["status"], getattr(real, "status_code", None))
        self.assertIn("content_block_start", seen["events"])
        self.assertNotIn("message_stop", seen["events"])

    def test_a_slow_first_token_trips_the_clients_timeout(self) -> None:
        seen = self.replayed["slow_first_token"]
        self.assertEqual(seen["error"]["class"], "APITimeoutError")
        self.assertEqual(seen["events"], [])
        # One retry: the second attempt is not slowed and gets the recorded stream.
        retried = self.replayed["slow_first_then_retry"]
        self.assertEqual(retried["text"], "Echo: Tell a short story about retries.")
        self.assertEqual(retried["journal"], {"faults": 1, "replays": 1})

    def test_async_clients_retry_through_an_api_error_and_a_reset(self) -> None:
        seen = self.replayed["async_retries"]
        self.assertEqual(seen["text"], "Echo: Say hello to the fault suite.")
        self.assertEqual(seen["journal"], {"faults": 2, "replays": 1})

    def test_recording_saw_the_same_faults_and_called_the_api_once_per_request(self) -> None:
        for name, seen in self.recorded.items():
            if name == "sdk":
                continue
            with self.subTest(name):
                self.assertEqual(seen["faults"], self.replayed[name]["faults"])
                self.assertEqual(seen.get("text"), self.replayed[name].get("text"))
        # Record mode calls the API on every attempt the schedule lets through, and only
        # then: once in each scenario but the two whose only attempt got an API error
        # or timed out (no_retries_surface_the_overload, slow_first_token). Stream
        # faults need the recorded stream, so their attempt is a real call.
        self.assertEqual(self.server_requests, len(self.recorded) - 1 - 2)

    def test_no_fault_is_ever_written_to_a_fixture(self) -> None:
        files = sorted((self.folder / "fixtures").glob("*.json"))
        self.assertEqual(len(files), 2)
        for path in files:
            text = path.read_text(encoding="utf-8")
            for mark in FAULT_MARKS:
                self.assertNotIn(mark, text, path)


class FaultsInProcess(unittest.TestCase):
    """The same spec through the test integrations, on fixtures recorded here."""

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.fixtures = temp_dir(self) / "fixtures"
        with (
            LoopbackServer() as server,
            vcr_kit.client(
                mode="record",
                fixtures_dir=self.fixtures,
                api_key=recording_key(),
                base_url=server.url,
            ) as client,
        ):
            client.messages.create(model="claude-opus-4-7", max_tokens=32, messages=HELLO)
            with client.messages.stream(
                model="claude-opus-4-7", max_tokens=64, messages=STORY
            ) as stream:
                stream.get_final_message()

    def run_case(self, case: type[unittest.TestCase]) -> unittest.TestResult:
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
        return result

    def test_a_vcrtestcase_option_and_its_assertions(self) -> None:
        fixtures = self.fixtures

        class Absorbs(vcr_kit.VCRTestCase):
            vcr_mode = "replay"
            vcr_fixtures_dir = fixtures
            vcr_faults = "overloaded:0.01*2"

            def test_it(self) -> None:
                reply = anthropic.Anthropic().messages.create(
                    model="claude-opus-4-7", max_tokens=32, messages=HELLO
                )
                self.assertEqual(reply.content[0].text, "Echo: Say hello to the fault suite.")
                self.assertFaults(2)
                self.assertReplayed(1)
                self.assertNoLiveCalls()
                with self.assertRaises(AssertionError) as caught:
                    self.assertFaults(3)
                self.assertRegex(
                    str(caught.exception),
                    r"^vcr_kit: expected 3 injected fault\(s\), got 2: .*post-v1-messages-\w+"
                    r"\.json \(overloaded \(req_vcrfault_\w+\)\), ",
                )

        result = self.run_case(Absorbs)
        self.assertEqual((result.testsRun, result.failures, result.errors), (1, [], []))

    def test_vcr_faults_covers_a_whole_run_and_a_test_can_turn_it_off(self) -> None:
        fixtures = self.fixtures
        patch_env(self, VCR_FAULTS="overloaded*always")

        class Outage(vcr_kit.VCRTestCase):
            vcr_mode = "replay"
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                client = anthropic.Anthropic(max_retries=0)
                with self.assertRaises(anthropic.APIStatusError) as caught:
                    client.messages.create(model="claude-opus-4-7", max_tokens=32, messages=HELLO)
                self.assertEqual(caught.exception.status_code, 529)
                self.assertFaults(1)
                self.assertReplayed(0)

        class Spared(Outage):
            vcr_faults = ""

            def test_it(self) -> None:
                anthropic.Anthropic(max_retries=0).messages.create(
                    model="claude-opus-4-7", max_tokens=32, messages=HELLO
                )
                self.assertFaults(0)
                self.assertReplayed(1)

        for case in (Outage, Spared):
            result = self.run_case(case)
            self.assertEqual((result.testsRun, result.failures, result.errors), (1, [], []))

    def replay_story(self, spec: str, **options: Any) -> BaseException | str:
        client = vcr_kit.client(mode="replay", fixtures_dir=self.fixtures, **options)
        self.addCleanup(client.close)
        with vcr_kit.faults(spec):
            try:
                with client.messages.stream(
                    model="claude-opus-4-7", max_tokens=64, messages=STORY
                ) as stream:
                    return str(stream.get_final_message().content[0].text)
            except Exception as exc:
                return exc

    def test_each_transport_and_stream_fault_in_process(self) -> None:
        lib = sdk_library()
        table: dict[str, type[BaseException]] = {
            "reset": anthropic.APIConnectionError,
            "refused": anthropic.APIConnectionError,
            "empty": anthropic.APIConnectionError,
            "read_timeout": anthropic.APITimeoutError,
            # Past the client's read timeout: raised at the timeout (0.2 s below), not
            # after the wait.
            "slow_first:3000": anthropic.APITimeoutError,
            # A stalled stream raises what the transport raises on a stalled read: the
            # SDK does not wrap errors met while a stream is read.
            "delay:3000": lib.ReadTimeout,
            "cut_after:3": lib.RemoteProtocolError,
            "timeout": anthropic.APIStatusError,
            "request_timeout": anthropic.APIStatusError,
            "server_error": anthropic.InternalServerError,
        }
        for spec, expected in table.items():
            with self.subTest(spec):
                timeout = 0.2 if spec.endswith(":3000") else 5.0
                got = self.replay_story(spec, max_retries=0, timeout=timeout)
                self.assertIsInstance(got, expected)
        story = "Echo: Tell a short story about retries."
        self.assertEqual(self.replay_story("delay:0.001"), story)
        self.assertEqual(self.replay_story("overloaded:0.001*2"), story)

    def test_async_streams_are_cut_too(self) -> None:
        async def story() -> BaseException | str:
            client = vcr_kit.async_client(mode="replay", fixtures_dir=self.fixtures, max_retries=0)
            async with client:
                try:
                    async with client.messages.stream(
                        model="claude-opus-4-7", max_tokens=64, messages=STORY
                    ) as stream:
                        return str((await stream.get_final_message()).content[0].text)
                except Exception as exc:
                    return exc

        with vcr_kit.faults("cut_after:3") as plan:
            got = asyncio.run(story())
        self.assertEqual(type(got).__name__, "RemoteProtocolError")
        self.assertEqual(plan.names(), ["cut_after"])
        with vcr_kit.faults("delay:0.001,error_after:2"):
            self.assertEqual(asyncio.run(story()), "Echo: Tell a short story about retries.")
            got = asyncio.run(story())
        self.assertIsInstance(got, anthropic.APIStatusError)

    def test_a_bad_vcr_faults_fails_the_request_naming_the_value(self) -> None:
        patch_env(self, VCR_FAULTS="overloaded*2,cut")
        client = vcr_kit.client(mode="replay", fixtures_dir=self.fixtures, max_retries=0)
        with self.assertRaises(vcr_kit.ConfigError) as caught:
            client.messages.create(model="claude-opus-4-7", max_tokens=32, messages=HELLO)
        self.assertTrue(
            str(caught.exception).startswith("VCR_FAULTS='overloaded*2,cut': unknown fault 'cut'")
        )

    def test_the_pytest_marker_takes_the_same_spec(self) -> None:
        folder = temp_dir(self)
        shutil.copytree(self.fixtures, folder / "fixtures")
        (folder / "test_marked.py").write_text(
            textwrap.dedent(
                """
            import anthropic
            import pytest

            HELLO = [{"role": "user", "content": "Say hello to the fault suite."}]

            @pytest.mark.vcr(mode="replay", faults="server_error:0.01,overloaded:0.01")
            def test_absorbed(vcr):
                reply = anthropic.Anthropic().messages.create(
                    model="claude-opus-4-7", max_tokens=32, messages=HELLO
                )
                assert reply.content[0].text == "Echo: Say hello to the fault suite."
                assert (vcr.faults, vcr.replays) == (2, 1)
            """
            )
        )
        env = {k: v for k, v in environ_without_vcr().items() if k != "PYTHONWARNINGS"}
        env["VCR_REPORT"] = "1"
        done = run_captured(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "."],
            cwd=folder,
            env=env,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        # The summary counts the faults apart from the replay.
        self.assertIn("vcr_kit: 1 replayed, 0 recorded, 0 missing, 2 faults injected;", done.stderr)


if __name__ == "__main__":
    unittest.main()
