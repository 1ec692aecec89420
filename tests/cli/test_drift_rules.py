"""``vcr_kit drift`` end to end on its rules (issue 29, point 1): it writes only what
the request earned, a transient live answer is ``unanswered`` whatever the fixture
holds, a bad option value is a usage error, and every answer not written is in the
text report with why. In this process: a canned API on loopback answers what a test
sets (any status, any body, or a dropped connection), to the real HTTP library drift
sends with. The pure rules are properties in ``tests/unit/test_drift_rules.py``."""

from __future__ import annotations

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.cli_support import KEY, cli
from tests.support.helpers.env import patch_env, temp_dir
from tests.support.helpers.examples import examples
from vcr_kit._core.fixture_names import http_name

pytestmark = pytest.mark.inprocess

OPUS = "claude-opus-4-7"
SONNET = "claude-sonnet-4-6"
#: What the canned API answers: (status, content type, body bytes); None: it drops the
#: connection without a word; "echo": a message from the model the request asks.
Answer = tuple[int, str, bytes] | str | None


class _CannedHandler(BaseHTTPRequestHandler):
    server: _CannedServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        self.server.asked.append(body)
        answer = self.server.answer
        if answer is None:
            self.close_connection = True
            self.connection.close()
            return
        if answer == "echo":
            model = body.get("model")
            data = json.dumps(message(model, f"{model} says hi.")).encode()
            status, content_type = 200, "application/json"
        else:
            assert isinstance(answer, tuple)
            status, content_type, data = answer
        self.send_response(status)
        if content_type:
            self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _CannedServer(ThreadingHTTPServer):
    daemon_threads = True
    answer: Answer = "echo"
    asked: list[Any]


def message(model: Any = OPUS, text: str = "Hi.") -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }


def error_body(kind: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": "no"}}).encode()


def stored_request(prompt: str = "Say hi.", model: str = OPUS) -> dict[str, Any]:
    return {
        "method": "POST",
        "path": "/v1/messages",
        "body": {
            "model": model,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": prompt}],
        },
    }


def write_fixture(
    folder: Path, request: dict[str, Any], response: dict[str, Any], name: str | None = None
) -> Path:
    """An HTTP fixture as a recording writes it (named by its request unless ``name``)."""
    path = folder / (name or http_name("POST", request["path"], request))
    doc = {
        "vcr_kit_format": 1,
        "kind": "http",
        "request": request,
        "response": response,
        "usage": [
            {"model": request["body"]["model"], "usage": {"input_tokens": 5, "output_tokens": 3}}
        ],
    }
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


STORED_400 = {
    "status": 400,
    "headers": {"content-type": "application/json"},
    "body": json.loads(error_body("invalid_request_error")),
}
STORED_OK = {"status": 200, "headers": {"content-type": "application/json"}, "body": message()}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json"))}


class _DriftCase(unittest.TestCase):
    api: ClassVar[_CannedServer]

    @classmethod
    def setUpClass(cls) -> None:
        cls.api = _CannedServer(("127.0.0.1", 0), _CannedHandler)
        cls.api.asked = []
        thread = threading.Thread(target=cls.api.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        cls.addClassCleanup(thread.join, 5)
        cls.addClassCleanup(cls.api.server_close)
        cls.addClassCleanup(cls.api.shutdown)

    def setUp(self) -> None:
        host, port = self.api.server_address[:2]
        patch_env(
            self,
            VCR_REPORT="0",
            ANTHROPIC_BASE_URL=f"http://{host!s}:{port}",
            ANTHROPIC_API_KEY=KEY,
        )
        self.api.answer, self.api.asked = "echo", []
        self.work = temp_dir(self)

    def folder(self) -> Path:
        """A new empty fixtures folder, and the API as new (once per hypothesis example:
        ``setUp`` runs once for them all)."""
        self.api.answer, self.api.asked = "echo", []
        return temp_dir(self)

    def drift(self, folder: Path, *args: str) -> tuple[int, dict[str, Any], str]:
        report = folder.parent / f"{folder.name}-report.json"
        status, out, err = cli(
            "drift", str(folder), "--timeout", "10", "--json", str(report), *args
        )
        self.assertEqual(err, "", out)
        return status, json.loads(report.read_text(encoding="utf-8")), out


# --------------------------------------------------------------------------- #
# A transient live answer is unanswered, whatever the fixture holds
# --------------------------------------------------------------------------- #

MOMENT = st.sampled_from([401, 403, 408, 409, 425, 429]) | st.integers(500, 599)
TRANSIENT = st.one_of(
    st.tuples(
        MOMENT,
        st.just("application/json"),
        st.sampled_from(
            [
                error_body("rate_limit_error"),
                error_body("api_error"),
                error_body("overloaded_error"),
            ]
        ),
    ),
    st.tuples(
        st.sampled_from([200, 400, 404, 502]),
        st.just("text/html"),
        st.just(b"<html><body>502 Bad Gateway</body></html>"),
    ),
    st.tuples(
        st.sampled_from([200, 400]),
        st.sampled_from(["text/plain", ""]),
        st.just(b"upstream says no"),
    ),
    st.just(None),  # the connection dropped
)


class TransientTest(_DriftCase):
    @settings(
        max_examples=examples(8),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(TRANSIENT, st.sampled_from([STORED_400, STORED_OK]))
    # The reviewer's cases: a 429, a 401, an HTML 502 against a fixture holding a 400.
    @example((429, "application/json", error_body("rate_limit_error")), STORED_400)
    @example((401, "application/json", error_body("authentication_error")), STORED_400)
    @example((502, "text/html", b"<html>502 Bad Gateway</html>"), STORED_400)
    def test_a_transient_answer_is_unanswered_exit_1(
        self, live: Answer, stored: dict[str, Any]
    ) -> None:
        folder = self.folder()
        write_fixture(folder, stored_request(), stored)
        before = snapshot(folder)
        self.api.answer = live
        status, report, out = self.drift(folder, "--update")
        (row,) = report["fixtures"]
        self.assertEqual(row["verdict"], "unanswered", row["reasons"])
        self.assertRegex(row["reasons"][0], r": not a change of the answer, run again$")
        self.assertEqual(status, 1)
        self.assertEqual(snapshot(folder), before)  # and nothing written
        self.assertIn("1 unanswered;", out)


# --------------------------------------------------------------------------- #
# --update writes only what the request earned
# --------------------------------------------------------------------------- #


class UpdateTest(_DriftCase):
    @settings(
        max_examples=examples(3),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        st.sampled_from([SONNET, "claude-haiku-4-5", "claude-opus-4-1"]),
        st.sampled_from(["", f"{OPUS}="]),
    )
    @example(SONNET, "")  # the reviewer's case: --model claude-sonnet-4-6
    def test_update_with_model_writes_beside_under_the_new_requests_own_name(
        self, model: str, old: str
    ) -> None:
        folder = self.folder()
        answer = {**STORED_OK, "body": message(OPUS, f"{OPUS} says hi.")}  # the echo's
        opus = write_fixture(folder, stored_request(), answer)
        before = opus.read_bytes()
        status, report, out = self.drift(folder, "--update", "--model", old + model)
        self.assertEqual([asked["model"] for asked in self.api.asked], [model])
        self.assertEqual(opus.read_bytes(), before)  # the Opus fixture keeps Opus's answer
        new = folder / http_name("POST", "/v1/messages", stored_request(model=model))
        doc = json.loads(new.read_text(encoding="utf-8"))
        self.assertEqual(doc["request"], stored_request(model=model))
        self.assertEqual(doc["response"]["body"]["model"], model)
        self.assertEqual(report["fixtures"][0]["written"], f"written to {new}")
        self.assertIn(
            f"\n{opus.name}: its request with model {OPUS} -> {model} written to {new}\n"
            "vcr_kit: wrote 1 fixture\n",
            out,
        )
        self.assertEqual(
            cli("check", str(folder))[:2], (0, "vcr_kit: 2 fixtures checked, 0 problems\n")
        )
        # Replayed, each request gets its own model's answer.
        status, report, _ = self.drift(folder)
        self.assertEqual((status, report["counts"]["identical"]), (0, 2))

    def test_a_file_named_for_another_request_is_not_written_and_the_report_says_why(
        self,
    ) -> None:
        folder = self.folder()
        other = http_name("POST", "/v1/messages", stored_request("Something else."))
        copied = write_fixture(folder, stored_request(), STORED_OK, name=other)
        before = copied.read_bytes()
        self.api.answer = (200, "application/json", json.dumps(message(text="Hey.")).encode())
        status, report, out = self.drift(folder, "--update")
        self.assertEqual(copied.read_bytes(), before)
        own = http_name("POST", "/v1/messages", stored_request())
        why = (
            f"not written: its stored request is named {own}, not {other}: the file holds "
            "another request's answer (vcr_kit check reports it); record it again"
        )
        self.assertEqual(report["fixtures"][0]["written"], why)
        self.assertIn(
            f"\n{other}: {why}\nvcr_kit: wrote 0 fixtures, 1 not written (why above)\n", out
        )
        self.assertEqual(status, 0)  # a benign rewording: nothing failed, nothing written

    def test_check_reports_the_fixture_an_earlier_update_with_model_wrote(self) -> None:
        # What `drift --update --model claude-sonnet-4-6` wrote before: the Opus request,
        # its name, and Sonnet's answer.
        folder = self.folder()
        path = write_fixture(
            folder, stored_request(), {**STORED_OK, "body": message(SONNET, "Sonnet.")}
        )
        status, out, _ = cli("check", str(folder))
        self.assertEqual(
            (status, out),
            (
                1,
                f"{path}: response: the answer is {SONNET}'s, but the stored request asks "
                f"{OPUS}: this file answers another request (an earlier vcr_kit drift "
                "--update --model wrote such files). Delete it and record again\n"
                "vcr_kit: 1 fixtures checked, 1 problem\n",
            ),
        )


# --------------------------------------------------------------------------- #
# A bad option value is a usage error
# --------------------------------------------------------------------------- #


class OptionsTest(_DriftCase):
    def usage(self, *args: str) -> str:
        """stderr of a drift run refused as a usage error (exit 2), nothing sent."""
        folder = self.folder()
        write_fixture(folder, stored_request(), STORED_OK)
        status, out, err = cli("drift", str(folder), *args)
        self.assertEqual((status, out), (2, ""), err)
        self.assertEqual(self.api.asked, [])
        return err

    @settings(
        max_examples=examples(10),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        st.sampled_from(["--timeout", "--jobs", "--sample"]),
        st.sampled_from(["0", "-1", "-0.5", "nan", "inf", "-inf", "ten", "", "1e999"]),
    )
    @example("--timeout", "0")  # the reviewer's cases
    @example("--timeout", "-1")
    @example("--jobs", "-inf")
    def test_a_bad_number_is_a_usage_error_naming_the_option_and_value(
        self, option: str, value: str
    ) -> None:
        if option != "--timeout" and value == "inf":
            value = "1.5"  # a count's own bad value
        err = self.usage(f"{option}={value}")  # "-inf" alone would read as an option
        self.assertRegex(err, r"^usage: vcr_kit drift ")
        self.assertIn(f"vcr_kit drift: error: argument {option}: {value!r}: ", err)

    def test_the_messages(self) -> None:
        self.assertTrue(
            self.usage("--timeout", "0").endswith(
                "vcr_kit drift: error: argument --timeout: '0': not a number of seconds above 0 "
                "(say 30 or 2.5)\n"
            )
        )
        self.assertTrue(
            self.usage("--jobs", "0").endswith(
                "vcr_kit drift: error: argument --jobs: '0': give 1 or more\n"
            )
        )
        self.assertTrue(
            self.usage("--sample", "x").endswith(
                "vcr_kit drift: error: argument --sample: 'x': not a whole number (say 4)\n"
            )
        )

    def test_bad_models_folders_and_conflicts(self) -> None:
        into = self.work / "into"
        a_file = self.work / "a-file"
        a_file.write_text("x", encoding="utf-8")
        for args, message in [
            (
                ["--model", "claude sonnet"],
                "--model 'claude sonnet': 'claude sonnet' is not a model id (letters, digits and "
                ". _ : @ / + -, such as claude-sonnet-4-6)",
            ),
            (
                ["--model", "=claude-sonnet-4-6"],
                "--model '=claude-sonnet-4-6': say NEW or OLD=NEW (a model id on each side)",
            ),
            (
                ["--model", SONNET, "--model", "claude-haiku-4-5"],
                "--model 'claude-haiku-4-5': every model is already asked as claude-sonnet-4-6; "
                "give one new model for each",
            ),
            (
                ["--model", f"{OPUS}={SONNET}", "--model", f"{OPUS}=claude-haiku-4-5"],
                f"--model '{OPUS}=claude-haiku-4-5': {OPUS} is already asked as {SONNET}; give "
                "one new model for each",
            ),
            (
                ["--update", "--into", str(into)],
                "--update and --into: --update writes in the fixtures folder, --into in another; "
                "give one",
            ),
            (
                ["--dry-run", "--update"],
                "--dry-run with --update: a dry run sends nothing, so it has nothing to write; "
                "drop one",
            ),
            (["--into", str(a_file)], f"--into {a_file}: not a folder"),
            (
                ["--json", str(self.work / "nowhere" / "r.json")],
                f"--json {self.work / 'nowhere' / 'r.json'}: its folder does not exist",
            ),
            (["--json", str(self.work)], f"--json {self.work}: a folder, not a file"),
        ]:
            with self.subTest(args=args):
                self.assertEqual(self.usage(*args), f"vcr_kit: {message}\n")
        folder = self.folder()
        inside = folder / "sonnet"
        status, _, err = cli("drift", str(folder), "--into", str(inside))
        self.assertEqual(
            (status, err),
            (
                2,
                f"vcr_kit: --into {inside} is inside the fixtures folder {folder}: its "
                "answers would be fixtures of the suite; give a folder outside it\n",
            ),
        )
        status, _, err = cli("drift", str(folder), "--json", str(folder / "r.json"))
        self.assertEqual(
            (status, err),
            (
                2,
                f"vcr_kit: --json {folder / 'r.json'} is inside the fixtures folder {folder}: "
                "check would find a file that is no fixture; give a file outside it\n",
            ),
        )
        status, _, err = cli("drift", str(self.work / "missing"))
        self.assertEqual(
            (status, err),
            (2, f"vcr_kit: {self.work / 'missing'} does not exist; name the fixtures folder\n"),
        )
