"""A success that is not the documented shape of its endpoint is never stored (issue 29,
point 8 a).

On main any JSON that parsed was stored under a 2xx: ``{"ok": true}`` from
``POST /v1/messages`` replayed forever as if the API had said it. The property, through
the real SDK recording against a server in this process that answers 200 with any
JSON: a required field of the endpoint's answer left out or of another JSON type, or
any JSON at all in place of the answer, whenever a field the API reference says the
answer holds is missing or of another type, is not written, and ``check`` reports the same
answer in a file already on disk; the documented answer itself is written.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import threading
import unittest
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import vcr_environ
from tests.support.helpers.examples import examples

pytestmark = pytest.mark.inprocess

MODEL = "claude-opus-4-7"
MESSAGES = [{"role": "user", "content": "Hello"}]
GOOD: dict[str, Any] = {
    "message": {
        "id": "msg_01A", "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
    },
    "count": {"input_tokens": 3},
    "batch": {
        "id": "msgbatch_01A", "type": "message_batch", "processing_status": "ended",
        "request_counts": {"processing": 0, "succeeded": 1, "errored": 0, "canceled": 0,
                           "expired": 0},
        "created_at": "2026-11-30T00:00:00Z", "ended_at": None, "expires_at":
        "2026-12-01T00:00:00Z", "archived_at": None, "cancel_initiated_at": None,
        "results_url": None,
    },
    "models": {
        "data": [{"id": MODEL, "type": "model", "display_name": "Opus",
                  "created_at": "2026-01-01T00:00:00Z"}],
        "has_more": False, "first_id": MODEL, "last_id": MODEL,
    },
}  # fmt: skip


#: What each endpoint's answer must hold, as the API reference documents it: (path,
#: what it must be). ``str``, ``int`` (a whole number, 0 or more), ``bool``, ``list``,
#: ``dict``, or the exact value. Each item of a list path (``data[]``) is checked too.
REQUIRED: dict[str, list[tuple[str, Any]]] = {
    "message": [("type", "message"), ("role", "assistant"), ("id", str), ("model", str),
                ("content", list), ("usage", dict), ("usage.input_tokens", int),
                ("usage.output_tokens", int)],
    "count": [("input_tokens", int)],
    "batch": [("type", "message_batch"), ("id", str), ("processing_status", str),
              ("created_at", str), ("expires_at", str), ("request_counts", dict),
              *((f"request_counts.{n}", int) for n in
                ("processing", "succeeded", "errored", "canceled", "expired"))],
    "models": [("data", list), ("has_more", bool), ("data[].type", "model"),
               ("data[].id", str), ("data[].display_name", str), ("data[].created_at", str)],
}  # fmt: skip


def documented(endpoint: str, body: Any) -> bool:
    """Whether ``body`` holds every field ``REQUIRED`` lists for ``endpoint``."""

    def values(value: Any, steps: list[str]) -> list[Any]:
        if not steps:
            return [value]
        step, rest = steps[0], steps[1:]
        if step.endswith("[]"):
            items = value.get(step[:-2]) if isinstance(value, dict) else None
            return [v for item in (items if isinstance(items, list) else [])
                    for v in values(item, rest)]  # fmt: skip
        found = isinstance(value, dict) and step in value
        return values(value[step], rest) if found else [_MISSING]

    for path, wanted in REQUIRED[endpoint]:
        for value in values(body, path.split(".")):
            if wanted is int:
                ok = type(value) is int and value >= 0
            elif isinstance(wanted, type):
                ok = type(value) is wanted
            else:
                ok = value == wanted
            if not ok:
                return False
    return True


_MISSING = object()


def call(endpoint: str) -> Callable[[anthropic.Anthropic], Any]:
    return {
        "message": lambda c: c.messages.create(model=MODEL, max_tokens=8, messages=MESSAGES),
        "count": lambda c: c.messages.count_tokens(model=MODEL, messages=MESSAGES),
        "batch": lambda c: c.messages.batches.retrieve("msgbatch_01A"),
        "models": lambda c: c.models.list(),
    }[endpoint]


class _Answers(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.answer()

    def answer(self) -> None:
        data = self.server.body  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.sampled_from(["message", "assistant", "model", "message_batch", "text"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["type", "id", "role", "content", "usage", "data",
                                       "input_tokens", "has_more", "text"]), inner, max_size=4),
    max_leaves=8,
)  # fmt: skip


def mutated(good: Any, data: st.DataObject) -> Any:
    """``good`` with one field (at any depth) left out or given another value, or any
    JSON in its place."""
    how = data.draw(st.sampled_from(["drop", "replace", "whole"]))
    if how == "whole":
        return data.draw(json_values)
    paths: list[tuple[Any, ...]] = []

    def walk(value: Any, here: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                paths.append((*here, key))
                walk(child, (*here, key))
        elif isinstance(value, list):
            for i, child in enumerate(value):
                paths.append((*here, i))
                walk(child, (*here, i))

    walk(good, ())
    path = data.draw(st.sampled_from(paths))
    copy = json.loads(json.dumps(good))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if how == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(json_values)
    return copy


class AnswerShapesTest(unittest.TestCase):
    server: ClassVar[ThreadingHTTPServer]

    @classmethod
    def setUpClass(cls) -> None:
        cls.env = vcr_environ(VCR_REPORT="0")
        cls.env.__enter__()
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()
        cls.env.__exit__(None, None, None)

    def setUp(self) -> None:
        self.folder = Path(tempfile.mkdtemp()).resolve()
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)

    def record(self, endpoint: str, body: Any) -> list[Path]:
        """Ask ``endpoint`` while the server answers ``body``; the fixtures written."""
        shutil.rmtree(self.folder)
        self.folder.mkdir()
        self.server.body = json.dumps(body).encode()  # type: ignore[attr-defined]
        host, port = self.server.server_address[:2]
        with vcr_kit.client(mode="record", fixtures_dir=self.folder, max_retries=0,
                            base_url=f"http://{host!s}:{port}",
                            api_key="sk-ant-test-" + "k" * 32) as client:  # fmt: skip
            # What the SDK makes of a strange answer is its own business: only the file counts.
            with contextlib.suppress(Exception):
                call(endpoint)(client)
        return sorted(self.folder.glob("*.json"))

    @settings(max_examples=examples(60), deadline=None)
    @given(endpoint=st.sampled_from(sorted(REQUIRED)), data=st.data())
    @example(endpoint="message", data=None)  # the reviewer's {"ok": true}
    def test_only_the_documented_shape_is_stored(self, endpoint: str, data: Any) -> None:
        body = {"ok": True} if data is None else mutated(GOOD[endpoint], data)
        assume(not documented(endpoint, body))  # still the documented shape: nothing to refuse
        written = self.record(endpoint, body)
        self.assertEqual(written, [], (endpoint, body))

    def test_the_documented_answers_are_stored(self) -> None:
        for endpoint, body in GOOD.items():
            with self.subTest(endpoint=endpoint):
                self.assertTrue(documented(endpoint, body))
                written = self.record(endpoint, body)
                self.assertEqual(len(written), 1, endpoint)
                status, out, err = cli("check", str(self.folder))
                self.assertEqual((status, err), (0, ""), out)

    def test_check_reports_one_an_earlier_version_wrote(self) -> None:
        (written,) = self.record("message", GOOD["message"])
        doc = json.loads(written.read_text(encoding="utf-8"))
        doc["response"]["body"] = {"ok": True}
        written.write_text(json.dumps(doc), encoding="utf-8")
        status, out, _ = cli("check", str(self.folder))
        self.assertEqual(status, 1, out)
        self.assertIn(
            f"{written}: response.body.type: a 200 from POST /v1/messages that is not a "
            "Message: None, not 'message'; such an answer is never stored (delete it and "
            "record again)",
            out,
        )
        with vcr_kit.client(mode="replay", fixtures_dir=self.folder, max_retries=0,
                            base_url="http://127.0.0.1:9") as client:  # fmt: skip
            with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                call("message")(client)
        self.assertIn("a 200 from POST /v1/messages that is not a Message", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
