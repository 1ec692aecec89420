"""Record every SDK scenario against the loopback server, then replay it with no network.

For each style (the transparent client, and cassettes around a plain SDK client):
record in a subprocess with ``VCR_MODE=record``, record once more over the same
server, stop the server, and replay in a subprocess that has no network at all
(``unshare -n``), with ``CI=true``, no key and the default ``api.anthropic.com``.
The code under test must see exactly what it saw while recording, with fresh
message ids.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.support.children.sdk_scenarios import (
    PROMPTS,
    expected_view,
    fixture_files,
    recording_key,
    run_scenarios,
)
from tests.support.helpers.env import environ_without_vcr, offline_prefix, vcr_environ
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.paths import ROOT as REPO
from tests.support.servers.loopback_server import LoggedRequest, LoopbackServer

SCRIPT = REPO / "tests" / "support" / "children" / "sdk_scenarios.py"
EXPECTED = REPO / "tests" / "support" / "expected"
COMMITTED = REPO / "fixtures"
SCRIPT_TIMEOUT = 120
_SERVER_REQUEST_ID = re.compile(r"req_[A-Za-z0-9]{24}")


def base_env() -> dict[str, str]:
    env = environ_without_vcr()
    env["VCR_REPORT"] = "0"  # the run summary would make stderr non-empty
    return env


def run_script(
    style: str,
    fixtures: Path,
    out: Path,
    env: dict[str, str],
    *,
    base_url: str | None = None,
    prefix: list[str] | None = None,
) -> dict[str, Any]:
    command = [str(SCRIPT), "--style", style, "--fixtures", str(fixtures), "--out", str(out)]
    if base_url is not None:
        command += ["--base-url", base_url]
    # Forked from a driver (under the prefix, ``unshare -n``, if any): a python start less
    # the SDK's import (tests/support/helpers/forked_runs.py).
    done = driver(prefix or ()).run("script", command, flags=["-W", "error"], cwd=REPO, env=env,
                                    timeout=SCRIPT_TIMEOUT)  # fmt: skip
    if done.returncode != 0 or done.stderr:
        raise AssertionError(
            f"{' '.join(done.args)} exited with {done.returncode}:\n{done.stderr}{done.stdout}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def last_user_text(request: LoggedRequest) -> Any:
    if request.path != "/v1/messages":
        return None
    return request.json()["messages"][-1]["content"]


def error_request_ids(result: dict[str, Any]) -> list[str]:
    return [result["observations"][side]["error"]["request_id"] for side in ("sync", "async")]


def replace_all(data: bytes, replacements: dict[str, str]) -> bytes:
    for old, new in replacements.items():
        data = data.replace(old.encode(), new.encode())
    return data


def load_fixture(data: bytes) -> Any:
    return json.loads(data)


@pytest.mark.child
@pytest.mark.matrix
class RoundTrip:
    """Mixin: one record/re-record/replay cycle per style, in ``setUpClass``."""

    style: ClassVar[str]
    fixtures: ClassVar[Path]
    key: ClassVar[str]
    recorded: ClassVar[dict[str, Any]]
    rerecorded: ClassVar[dict[str, Any]]
    replayed: ClassVar[dict[str, Any]]
    first_files: ClassVar[dict[str, bytes]]
    second_files: ClassVar[dict[str, bytes]]
    first_log: ClassVar[list[LoggedRequest]]
    second_log: ClassVar[list[LoggedRequest]]
    log_before_stop: ClassVar[int]
    log_after_replay: ClassVar[int]
    isolation: ClassVar[str]
    #: The SDK (or cassette) stream and page classes each side saw: proof of the async path.
    expected_classes: ClassVar[dict[str, dict[str, str]]]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()  # type: ignore[misc]
        work = Path(tempfile.mkdtemp(prefix=f"vcr-sdk-{cls.style}-"))
        cls.addClassCleanup(shutil.rmtree, work)  # type: ignore[attr-defined]
        cls.fixtures = work / "fixtures"
        cls.key = recording_key()
        record_env = {**base_env(), "VCR_MODE": "record", "ANTHROPIC_API_KEY": cls.key}
        with LoopbackServer() as server:
            cls.recorded = run_script(
                cls.style, cls.fixtures, work / "record.json", record_env, base_url=server.url
            )
            cls.first_log = list(server.log)
            cls.first_files = fixture_files(cls.fixtures)
            server.reset_log()
            # The second recording runs in this process: the same scenarios, the same server.
            with vcr_environ(VCR_MODE="record", ANTHROPIC_API_KEY=cls.key):
                cls.rerecorded = run_scenarios(cls.style, server.url, str(cls.fixtures))
            cls.second_log = list(server.log)
            cls.second_files = fixture_files(cls.fixtures)
            cls.log_before_stop = len(server.log)
        # Offline: no server, no key, no mode (CI makes replay the default), default base URL.
        # Empty key variables (rather than none) keep a developer's .env from supplying one.
        replay_env = {
            **base_env(),
            "CI": "true",
            "ANTHROPIC_API_KEY": "",
            "ANTHROPIC_AUTH_TOKEN": "",
        }
        if cls.style == "cassette":
            # Cassette blocks outside a test pass through unless vcr_kit is switched on.
            replay_env["FORCE_VCR"] = "1"
        # Without unshare the server is stopped by now, and the replay targets the default
        # api.anthropic.com with a dummy key: an escaped request fails the comparison.
        prefix = offline_prefix()
        cls.isolation = "unshare -n" if prefix else "server stopped (unshare unavailable)"
        cls.replayed = run_script(
            cls.style, cls.fixtures, work / "replay.json", replay_env, prefix=prefix
        )
        cls.log_after_replay = len(server.log)

    # -- helpers ------------------------------------------------------------------------

    def fixture_docs(self) -> dict[str, Any]:
        return {
            name: load_fixture(data)
            for name, data in self.second_files.items()
            if not name.startswith(".locks/")
        }

    def error_id_map(self) -> dict[str, str]:
        """The request ids the server gave the two 400s: first recording -> second."""
        pairs = zip(
            error_request_ids(self.recorded), error_request_ids(self.rerecorded), strict=True
        )
        return dict(pairs)

    def requests_for(self, log: list[LoggedRequest], prompt: str) -> list[LoggedRequest]:
        return [r for r in log if last_user_text(r) == prompt]

    # -- replay equals record -----------------------------------------------------------

    def test_replay_observes_what_recording_observed(self) -> None:
        self.assertEqual(self.replayed["observations"], self.rerecorded["observations"])
        self.assertEqual(expected_view(self.replayed), expected_view(self.rerecorded))

    def test_second_recording_observes_what_the_first_did(self) -> None:
        self.assertEqual(len(self.error_id_map()), 2)
        self.assertEqual(self.recorded["observations"], self.rerecorded["observations"])

    def test_sync_and_async_observe_the_same_answers(self) -> None:
        sides = {}
        classes = {}
        for side in ("sync", "async"):
            observed = dict(self.replayed["observations"][side])
            error, overloaded = observed.pop("error"), observed.pop("overloaded_once")
            self.assertEqual(
                (error["class"], error["status_code"], error["error_type"]),
                ("BadRequestError", 400, "invalid_request_error"),
            )
            self.assertEqual(overloaded["texts"], [f"Echo: {PROMPTS['overloaded:' + side]}"])
            classes[side] = {
                key: value.pop("stream_class", None) or value.pop("page_class", None)
                for key, value in observed.items()
                if isinstance(value, dict) and ("stream_class" in value or "page_class" in value)
            }
            sides[side] = observed
        self.assertEqual(sides["sync"], sides["async"])
        self.assertEqual(classes, self.expected_classes)

    def test_replay_hands_out_fresh_unique_message_ids(self) -> None:
        replay_ids = self.replayed["message_ids"]
        record_ids = self.recorded["message_ids"] + self.rerecorded["message_ids"]
        self.assertEqual(len(replay_ids), len(self.recorded["message_ids"]))
        self.assertEqual(len(set(replay_ids)), len(replay_ids))
        self.assertEqual(set(replay_ids) & set(record_ids), set())
        for message_id in replay_ids:
            self.assertRegex(message_id, r"\Amsg_vcr_[0-9a-f]{16,}\Z")
        for message_id in replay_ids:
            self.assertNotRegex(message_id, r"\Amsg_vcr_\d+\Z")  # the ids stored in files

    def test_replay_hands_out_fresh_request_ids(self) -> None:
        request_ids = self.replayed["request_ids"]
        self.assertEqual(len(set(request_ids)), len(request_ids))
        for request_id in request_ids:
            self.assertRegex(request_id, r"\Areq_vcr_[0-9a-f]{16,}\Z")
        self.assertEqual(set(request_ids) & set(self.rerecorded["request_ids"]), set())

    def test_tool_use_ids_are_the_recorded_ones(self) -> None:
        tool_ids = self.replayed["tool_use_ids"]
        self.assertEqual(tool_ids, self.recorded["tool_use_ids"])
        self.assertEqual(len(tool_ids), 2)  # the sync and the async tool loop
        self.assertEqual(len(set(tool_ids)), 1)  # one fixture: the same stored id
        (tool_id,) = set(tool_ids)
        self.assertRegex(tool_id, r"\Atoolu_vcr[0-9a-f]{21}\Z")
        holders = [name for name, data in self.second_files.items() if tool_id.encode() in data]
        self.assertEqual(len(holders), 2, holders)  # turn 1's answer and turn 2's request

    # -- the server ---------------------------------------------------------------------

    def test_replay_sent_no_request(self) -> None:
        self.assertEqual(self.log_after_replay, self.log_before_stop, self.isolation)

    def test_every_scenario_reached_the_server_while_recording(self) -> None:
        sides = 2
        calls_per_side = 11 if self.style == "client" else 9
        # +1 per side: the first attempt of the [[overloaded-once]] request got a 529.
        self.assertEqual(len(self.first_log), sides * (calls_per_side + 1))
        # The server remembers the bodies it overloaded once: no 529 the second time.
        self.assertEqual(len(self.second_log), sides * calls_per_side)

    def test_the_529_reached_the_server_but_not_the_fixtures(self) -> None:
        for side in ("sync", "async"):
            prompt = PROMPTS[f"overloaded:{side}"]
            self.assertEqual(len(self.requests_for(self.first_log, prompt)), 2, side)
            self.assertEqual(len(self.requests_for(self.second_log, prompt)), 1, side)
            (retry,) = self.requests_for(self.first_log, prompt)[1:]
            self.assertEqual(retry.headers["x-stainless-retry-count"], "1")
        for name, data in {**self.first_files, **self.second_files}.items():
            self.assertNotIn(b"overloaded_error", data, name)
            self.assertNotIn(b"Overloaded", data, name)

    # -- the files ----------------------------------------------------------------------

    def test_rerecording_rewrites_the_same_bytes(self) -> None:
        self.assertEqual(sorted(self.first_files), sorted(self.second_files))
        changed = sorted(n for n in self.first_files if self.first_files[n] != self.second_files[n])
        self.assertEqual(changed, [])
        # The errors too: the server, like the real API, gave the two 400s new request ids
        # the second time; vcr_kit keeps an error's request id, and a re-recorded answer
        # that differs only in those ids leaves the file as it was.
        errors = sorted(
            n for n, data in self.second_files.items() if b"invalid_request_error" in data
        )
        self.assertEqual(len(errors), 2)
        ids = self.error_id_map()
        for name in errors:
            first_ids = re.findall(_SERVER_REQUEST_ID, self.first_files[name].decode())
            self.assertTrue(first_ids, name)
            for request_id in first_ids:  # and the second recording handed out the kept id
                self.assertEqual(ids[request_id], request_id, name)

    def test_fixture_folder_holds_fixtures_and_locks_only(self) -> None:
        for name in self.second_files:
            if name.startswith(".locks/"):
                self.assertRegex(name, r"\A\.locks/(\.gitignore|[^/]+\.json\.lock)\Z")
            else:
                self.assertRegex(name, r"\A[^/.][^/]*\.json\Z")
        self.assertNotIn(".tmp", "".join(self.second_files))

    def test_recording_key_is_in_no_fixture(self) -> None:
        self.assertTrue(self.second_files)
        for name, data in {**self.first_files, **self.second_files}.items():
            self.assertNotIn(self.key.encode(), data, name)
            self.assertNotIn(b"sk-ant-", data, name)

    def test_every_fixture_is_a_versioned_document(self) -> None:
        kinds = sorted(doc["kind"] for doc in self.fixture_docs().values())
        expected = (
            ["http"] * 12
            if self.style == "client"
            else ["message"] * 8 + ["stream"] * 2 + ["token_count"]
        )
        self.assertEqual(kinds, expected)
        for name, doc in self.fixture_docs().items():
            self.assertEqual(list(doc)[:2], ["vcr_kit_format", "kind"], name)
            self.assertEqual(doc["vcr_kit_format"], 1, name)
            data = self.second_files[name]
            self.assertTrue(data.endswith(b"}\n"), name)
            self.assertEqual(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", data.decode())


@pytest.mark.child
@pytest.mark.matrix
class ClientRoundTripTest(RoundTrip, unittest.TestCase):
    style = "client"
    expected_classes: ClassVar[dict[str, dict[str, str]]] = {
        "sync": {
            "stream_create": "Stream",
            "stream_helper_text_stream": "MessageStream",
            "models": "SyncPage[ModelInfo]",
        },
        "async": {
            "stream_create": "AsyncStream",
            "stream_helper_text_stream": "AsyncMessageStream",
            "models": "AsyncPage[ModelInfo]",
        },
    }

    def stream_events(self, prompt: str) -> list[dict[str, Any]]:
        (doc,) = [
            doc
            for doc in self.fixture_docs().values()
            if (doc["request"].get("body") or {}).get("messages")
            == [{"role": "user", "content": prompt}]
        ]
        self.assertEqual(doc["request"]["body"]["stream"], True)
        self.assertEqual(doc["response"]["status"], 200)
        self.assertEqual(
            doc["response"]["headers"]["content-type"], "text/event-stream; charset=utf-8"
        )
        events: list[dict[str, Any]] = doc["response"]["events"]
        return events

    def test_stream_fixture_is_the_list_of_its_events(self) -> None:
        for prompt, key in (
            (PROMPTS["stream_create"], "stream_create"),
            (PROMPTS["stream_helper"], "stream_helper_events"),
        ):
            events = self.stream_events(prompt)
            self.assertIsInstance(events, list)
            for event in events:
                self.assertEqual(sorted(event), ["data", "event"])
                self.assertEqual(event["data"]["type"], event["event"])
            names = [event["event"] for event in events]
            self.assertEqual(names[0], "message_start")
            self.assertEqual(names[1], "ping")  # kept, as sent; the SDK skips it
            self.assertEqual(names[-1], "message_stop")
            raw = [name for name in names if name != "ping"]
            observed = self.replayed["observations"]["sync"][key]
            if key == "stream_create":
                self.assertEqual(raw, observed["event_types"])
            else:
                helper_only = ("text", "thinking", "signature", "input_json", "citation")
                self.assertEqual(
                    raw, [t for t in observed["helper_event_types"] if t not in helper_only]
                )

    def test_models_list_replays(self) -> None:
        for side in ("sync", "async"):
            models = self.replayed["observations"][side]["models"]
            self.assertEqual(
                [m["id"] for m in models["data"]],
                ["claude-opus-4-7", "claude-sonnet-4-6", "claude-haiku-4-5"],
            )
        self.assertEqual(
            self.replayed["observations"]["async"]["models"]["page_class"], "AsyncPage[ModelInfo]"
        )


@pytest.mark.child
@pytest.mark.matrix
class CassetteRoundTripTest(RoundTrip, unittest.TestCase):
    style = "cassette"
    expected_classes: ClassVar[dict[str, dict[str, str]]] = {
        "sync": {"stream_create": "list_iterator"},
        "async": {"stream_create": "async_generator"},
    }

    def test_stream_fixture_is_the_list_of_its_events(self) -> None:
        streams = {
            doc["request"]["messages"][0]["content"]: doc
            for doc in self.fixture_docs().values()
            if doc["kind"] == "stream"
        }
        self.assertEqual(
            sorted(streams), sorted([PROMPTS["stream_create"], PROMPTS["stream_helper"]])
        )
        observed = self.replayed["observations"]["sync"]
        for prompt, types in (
            (PROMPTS["stream_create"], observed["stream_create"]["event_types"]),
            (PROMPTS["stream_helper"], observed["stream_helper_events"]["helper_event_types"]),
        ):
            events = streams[prompt]["response"]
            self.assertIsInstance(events, list)
            for event in events:
                self.assertEqual(sorted(event), ["$sdk", "data"])
            self.assertEqual([event["data"]["type"] for event in events], types)
            self.assertEqual(types[0], "message_start")
            self.assertEqual(types[-1], "message_stop")


def sdk_neutral(value: Any) -> Any:
    """``value`` without what differs between SDK releases for the same wire JSON: fields
    a release fills with None that another lacks (``stop_details``, ``citations``), and
    the type parameters some releases print in class names (``ParsedMessage[~T]``)."""
    if isinstance(value, dict):
        return {
            k: (
                re.sub(r"\[.*\]$", "", v) if k == "class" and isinstance(v, str) else sdk_neutral(v)
            )
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [sdk_neutral(v) for v in value]
    return value


@pytest.mark.inprocess
class CommittedFixturesTest(unittest.TestCase):
    """The fixtures in the repository replay offline to the observations in tests/support/expected,
    under every supported SDK release (recorded under 2.x)."""

    def test_committed_fixtures_replay_offline(self) -> None:
        for style in ("client", "cassette"):
            with self.subTest(style=style):
                # FORCE_VCR: outside a VCRTestCase, cassette blocks would pass through.
                with vcr_environ(CI="true", FORCE_VCR="1"):
                    result = run_scenarios(style, None, str(COMMITTED / f"sdk_{style}"))
                expected = json.loads((EXPECTED / f"sdk_{style}.json").read_text("utf-8"))
                self.assertEqual(
                    sdk_neutral(json.loads(json.dumps(expected_view(result)))),
                    sdk_neutral(expected),
                )
                ids = result["message_ids"]
                self.assertEqual(len(set(ids)), len(ids))


if __name__ == "__main__":
    unittest.main()
