"""Only what the request earned is stored, at every provider (issue 31, point 5).

The properties of ``tests/unit/test_storable.py`` ask the decision itself; here the
real ``openai`` and ``google-genai`` SDKs, built by the code under test inside a
``VCRTestCase`` that records, call a server in this process that answers each class
of answer the request did not earn, in the provider's own wire format: a transient
status in its error shape, Gemini's 400 ``API_KEY_INVALID``, a cut stream (a chat
stream without ``data: [DONE]``, a Responses stream without ``response.completed``, a
Gemini stream whose chunks never gave a ``finishReason``), an HTML page, JSON cut
short, a success not of the endpoint's documented shape. None is written; the
provider's good answer, from the same server, is (so the test is not vacuous). And a
live key that a stream spells across its chunks is refused by the secrets gate.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import threading
import unittest
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import openai
import pytest
from google import genai
from google.genai import types

import vcr_kit
from tests.support.helpers.env import vcr_environ

pytestmark = [pytest.mark.inprocess, pytest.mark.providers]

JSON = "application/json"
SSE = "text/event-stream"
OPENAI_KEY = "sk-test-" + "k" * 32
GEMINI_KEY = "gm-test-" + "g" * 32
#: A wire answer: (status, content type, body).
Answer = tuple[int, str, bytes]


def as_json(status: int, value: Any) -> Answer:
    return status, JSON, json.dumps(value).encode()


def sse(*events: tuple[str | None, Any]) -> Answer:
    blocks = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        blocks.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return 200, SSE, "".join(blocks).encode()


CHAT = {"id": "chatcmpl-A1b2C3d4E5f6G7h8I9j0", "object": "chat.completion", "created": 1,
        "model": "gpt-4.1", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Hi."}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}  # fmt: skip
CHUNK = {"id": "chatcmpl-A1b2C3d4E5f6G7h8I9j0", "object": "chat.completion.chunk",
         "created": 1, "model": "gpt-4.1",
         "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}  # fmt: skip
RESPONSE = {"id": "resp_A1b2C3d4E5f6G7h8I9j0", "object": "response", "created_at": 1,
            "status": "completed", "model": "gpt-4.1", "output": [
                {"type": "message", "id": "msg_A1b2C3d4E5f6G7h8I9j0", "status": "completed",
                 "role": "assistant",
                 "content": [{"type": "output_text", "text": "Hi.", "annotations": []}]}],
            "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}  # fmt: skip
GEMINI = {"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "Hi."}]},
          "finishReason": "STOP"}], "modelVersion": "gemini-2.5-flash",
          "responseId": "A1b2C3d4E5f6G7h8I9j0",
          "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}}  # fmt: skip
UNFINISHED = {**GEMINI, "candidates": [{"index": 0,
              "content": {"role": "model", "parts": [{"text": "Hi"}]}}]}  # fmt: skip


def openai_error(status: int, kind: str) -> Answer:
    return as_json(status, {"error": {"message": "nope", "type": kind, "param": None,
                                      "code": None}})  # fmt: skip


def google_error(status: int, name: str, reason: str | None = None) -> Answer:
    error: dict[str, Any] = {"code": status, "message": "nope", "status": name}
    if reason is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                             "reason": reason, "domain": "googleapis.com"}]  # fmt: skip
    return as_json(status, {"error": error})


HTML: Answer = (200, "text/html; charset=utf-8", b"<html><body>Bad gateway</body></html>")
CUT_JSON: Answer = (200, JSON, b'{"id": "x", "obj')

#: (the call, its good answer, the answers it never stores, by what they are).
CASES: dict[str, tuple[str, Answer, dict[str, Answer]]] = {
    "openai chat": ("chat", as_json(200, CHAT), {
        "429": openai_error(429, "requests"), "401": openai_error(401, "invalid_request_error"),
        "503": openai_error(503, "server_error"), "html": HTML, "cut json": CUT_JSON,
        "not a chat.completion": as_json(200, {"ok": True}),
    }),
    "openai chat stream": ("chat stream", sse((None, CHUNK), (None, "[DONE]")), {
        "no [DONE]": sse((None, CHUNK)),
        "an error chunk": sse((None, CHUNK), (None, {"error": {"message": "overloaded",
                                                               "type": "server_error"}})),
    }),
    "openai responses stream": ("responses stream", sse(
        ("response.created", {"type": "response.created", "sequence_number": 0,
                              "response": {**RESPONSE, "status": "in_progress", "output": []}}),
        ("response.completed", {"type": "response.completed", "sequence_number": 1,
                                "response": RESPONSE})), {
        "no response.completed": sse(("response.created", {
            "type": "response.created", "sequence_number": 0,
            "response": {**RESPONSE, "status": "in_progress", "output": []}})),
    }),
    "gemini": ("gemini", as_json(200, GEMINI), {
        "400 API_KEY_INVALID": google_error(400, "INVALID_ARGUMENT", "API_KEY_INVALID"),
        "429": google_error(429, "RESOURCE_EXHAUSTED"), "500": google_error(500, "INTERNAL"),
        "html": HTML, "cut json": CUT_JSON, "not a generated content": as_json(200, {"x": 1}),
    }),
    "gemini stream": ("gemini stream", sse((None, GEMINI)), {
        "no finishReason": sse((None, UNFINISHED), (None, UNFINISHED)),
    }),
}  # fmt: skip


class _Server(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.calls += 1  # type: ignore[attr-defined]
        status, content_type, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Clients:
    """The SDKs' clients, built once as code does at import time (the seams record a
    client whatever its age); no retries: the test is about the file, not the SDK's
    patience."""

    def __init__(self, url: str) -> None:
        self.openai = openai.OpenAI(base_url=f"{url}/v1", api_key=OPENAI_KEY, max_retries=0)
        self.gemini = genai.Client(api_key=GEMINI_KEY, http_options=types.HttpOptions(
            base_url=url, retry_options=types.HttpRetryOptions(attempts=1)))  # fmt: skip

    def call(self, kind: str, prompt: str = "Say hi.") -> Any:
        messages: Any = [{"role": "user", "content": prompt}]
        if kind == "chat":
            return self.openai.chat.completions.create(model="gpt-4.1", messages=messages)
        if kind == "chat stream":
            return list(self.openai.chat.completions.create(
                model="gpt-4.1", messages=messages, stream=True))  # fmt: skip
        if kind == "responses stream":
            return list(self.openai.responses.create(model="gpt-4.1", input=prompt,
                                                     stream=True))  # fmt: skip
        if kind == "gemini":
            return self.gemini.models.generate_content(model="gemini-2.5-flash",
                                                       contents=prompt)  # fmt: skip
        return list(self.gemini.models.generate_content_stream(
            model="gemini-2.5-flash", contents=prompt))  # fmt: skip


class UnearnedAtEveryProviderTest(unittest.TestCase):
    server: ClassVar[ThreadingHTTPServer]
    clients: ClassVar[Clients]

    @classmethod
    def setUpClass(cls) -> None:
        cls.env = vcr_environ(VCR_REPORT="0")
        cls.env.__enter__()
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
        cls.server.calls = 0  # type: ignore[attr-defined]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        host, port = cls.server.server_address[:2]
        cls.clients = Clients(f"http://{host!s}:{port}")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.clients.openai.close()
        cls.server.shutdown()
        cls.server.server_close()
        cls.env.__exit__(None, None, None)

    def record(
        self, kind: str, answer: Answer, errors: list[str] | None = None, prompt: str = "Say hi."
    ) -> list[str]:
        """Record ``kind`` while the server gives ``answer``; the names of the files
        written. ``errors``: where the SDK's errors go (else none may happen but the
        SDK's own)."""
        folder = Path(tempfile.mkdtemp()).resolve()
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        self.server.answer = answer  # type: ignore[attr-defined]
        host, port = self.server.server_address[:2]
        clients = self.clients
        caught: list[str] = []

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = folder
            vcr_mode = "record"
            vcr_hosts = (f"{host!s}:{port}",)  # a gateway: the path tells the provider

            def test_it(self) -> None:
                try:
                    with warnings.catch_warnings():  # a model with no price yet: not the point
                        warnings.simplefilter("ignore")
                        clients.call(kind, prompt)
                except vcr_kit.VCRError as exc:
                    caught.append(str(exc))
                except Exception:  # what the SDK makes of a strange answer is its business
                    pass

        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(CodeUnderTest)
        )
        self.assertEqual([text for _, text in result.errors + result.failures], [])
        if errors is None:
            self.assertEqual(caught, [])
        else:
            errors += caught
        return sorted(p.name for p in folder.glob("*.json"))

    def test_no_answer_the_request_did_not_earn_is_written_and_a_good_one_is(self) -> None:
        for case, (kind, good, unearned) in CASES.items():
            provider = "gemini" if kind.startswith("gemini") else "openai"
            with self.subTest(case=case, answer="good"):
                written = self.record(kind, good)
                self.assertEqual(len(written), 1, written)
                self.assertTrue(written[0].startswith(f"{provider}-post-"), written)
            for what, answer in unearned.items():
                with self.subTest(case=case, answer=what):
                    self.assertEqual(self.record(kind, answer), [])

    def test_a_live_key_streamed_in_pieces_is_never_written(self) -> None:
        """The secrets gate joins each provider's streamed text before it scans: a key
        the answer spells across chunks is found (it joined Anthropic's alone)."""
        key = "sk-proj-" + "Lq7" * 12
        halves = (f"echo {key[:14]}", f"{key[14:]} done")
        chat = [(None, {**CHUNK, "choices": [{"index": 0, "delta": {"content": half}}]})
                for half in halves]  # fmt: skip
        gemini = [(None, {**UNFINISHED, "candidates": [{"index": 0, "content": {
            "role": "model", "parts": [{"text": half}]}}]}) for half in halves]  # fmt: skip
        gemini[-1][1]["candidates"][0]["finishReason"] = "STOP"
        for variable, kind, answer in (
            ("OPENAI_API_KEY", "chat stream", sse(*chat, (None, "[DONE]"))),
            ("GEMINI_API_KEY", "gemini stream", sse(*gemini)),
        ):
            with self.subTest(variable=variable), mock.patch.dict(os.environ, {variable: key}):
                errors: list[str] = []
                self.assertEqual(self.record(kind, answer, errors), [])
                self.assertEqual(len(errors), 1, errors)
                self.assertIn(f"it contains the value of {variable} in streamed block", errors[0])
                self.assertNotIn(key, errors[0])

    def test_a_key_shape_in_a_prompt_is_refused_before_the_call(self) -> None:
        """The request side of the gate, at each provider: the API is not called."""
        for kind, key, shape in (
            ("chat", "sk-proj-" + "Pq7_" * 10, "an OpenAI key (sk-proj-...)"),
            ("responses stream", "sk-svcacct-" + "Sv4-" * 10, "an OpenAI key (sk-proj-...)"),
            ("gemini", "AIza" + "b" * 35, "a Google API key (AIza...)"),
        ):
            with self.subTest(kind=kind):
                before = self.server.calls  # type: ignore[attr-defined]
                errors: list[str] = []
                written = self.record(kind, HTML, errors, prompt=f"Here: {key} (keep it)")
                self.assertEqual((written, self.server.calls), ([], before))  # type: ignore[attr-defined]
                self.assertEqual(len(errors), 1, errors)
                self.assertIn(f"the request itself contains {shape} at request.body.", errors[0])
                self.assertIn("The API was not called.", errors[0])
                self.assertNotIn(key, errors[0])


if __name__ == "__main__":
    unittest.main()
