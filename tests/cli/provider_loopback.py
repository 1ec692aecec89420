"""The smallest loopback server the command-line tests of issue 31 need: OpenAI Chat
Completions (plain, streamed, tools), Responses (plain, streamed), Embeddings and
Gemini ``generateContent`` / ``streamGenerateContent``, in their wire formats, each
checking its provider's credential header as the provider does.

Like ``loopback_server.LoopbackServer`` for Anthropic, it can "move": while
``drifting`` is set, a ``[[drift:reword]]``, ``[[drift:truncate]]``,
``[[drift:tool]]`` or ``[[drift:field]]`` marker in the last user text changes the
answer (other words; a token-limit stop; a tool input of another shape; a new field
in the envelope), so that ``vcr_kit drift`` meets each verdict. Every id and
``created`` is fresh on every answer, as the real APIs give them.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: vcr_kit's replay stand-in: the real APIs refuse it, so this server does too.
STAND_IN = "vcr-kit-replay-no-key"
_GEMINI_PATH = re.compile(r"/v1(?:beta)?/models/([^/:]+):(generateContent|streamGenerateContent)")
_WEATHER = re.compile(r"weather", re.IGNORECASE)


def _fresh(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def _last_text(value: Any) -> str:
    """The text of the last user input, whatever the API calls it."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        return _last_text(value[-1])
    if isinstance(value, dict):
        for key in ("content", "text", "parts", "input"):
            if key in value:
                return _last_text(value[key])
    return ""


class ProviderServer:
    """OpenAI and Gemini on 127.0.0.1 (a free port): ``url``; ``log`` holds each
    request's (method, path, headers, body)."""

    def __init__(self) -> None:
        self.drifting = False
        self.log: list[tuple[str, str, dict[str, str], Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> ProviderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def marker(self, text: str, name: str) -> bool:
        return self.drifting and f"[[drift:{name}]]" in text

    # ----------------------------------------------------------------- answers

    def words(self, text: str) -> str:
        said = text.split("[[", maxsplit=1)[0].strip()
        return f"You said it other ways: {said}" if self.marker(text, "reword") else f"Echo: {said}"

    def tool_input(self, text: str) -> dict[str, Any]:
        if self.marker(text, "tool"):
            return {"place": {"city": "Paris"}}
        return {"location": "Paris"}

    def usage_counts(self, text: str) -> tuple[int, int]:
        return len(text.split()) + 3, 5

    def chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the completion, its stream's chunks)."""
        text = _last_text(body.get("messages"))
        model = body.get("model")
        tools = body.get("tools") or []
        finish = "length" if self.marker(text, "truncate") else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": self.words(text),
                                   "refusal": None, "annotations": []}
        calls = []
        if tools and _WEATHER.search(text) and not any(
            m.get("role") == "tool" for m in body["messages"] if isinstance(m, dict)
        ):
            calls = [{"id": _fresh("call_"), "type": "function", "function": {
                "name": tools[0]["function"]["name"],
                "arguments": json.dumps(self.tool_input(text))}}]
            message = {"role": "assistant", "content": None, "refusal": None,
                       "annotations": [], "tool_calls": calls}
            finish = "tool_calls"
        prompt, completion = self.usage_counts(text)
        head = {"id": _fresh("chatcmpl-"), "created": int(time.time()), "model": model,
                "system_fingerprint": _fresh("fp_")[:12]}
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}
        whole = {**head, "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": usage, "service_tier": "default"}
        if self.marker(text, "field"):
            whole["moderation"] = {"flagged": False}
        chunk = {**head, "object": "chat.completion.chunk"}
        chunks = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                         "finish_reason": None}]}]
        if calls:
            call = calls[0]
            chunks.append({**chunk, "choices": [{"index": 0, "finish_reason": None, "delta": {
                "tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                "function": {"name": call["function"]["name"],
                                             "arguments": ""}}]}}]})
            chunks.append({**chunk, "choices": [{"index": 0, "finish_reason": None, "delta": {
                "tool_calls": [{"index": 0, "function": {
                    "arguments": call["function"]["arguments"]}}]}}]})
        else:
            for piece in re.findall(r"\S+\s*", str(message["content"])):
                chunks.append({**chunk, "choices": [{"index": 0, "delta": {"content": piece},
                                                     "finish_reason": None}]})
        chunks.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**chunk, "choices": [], "usage": usage})
        return whole, chunks

    def response(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the Responses answer, its stream's events)."""
        text = _last_text(body.get("input"))
        prompt, completion = self.usage_counts(text)
        item = {"type": "message", "id": _fresh("msg_"), "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": self.words(text), "annotations": []}]}
        incomplete = self.marker(text, "truncate")
        whole = {"id": _fresh("resp_"), "object": "response", "created_at": int(time.time()),
                 "status": "incomplete" if incomplete else "completed",
                 "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
                 "model": body.get("model"), "output": [item],
                 "previous_response_id": body.get("previous_response_id"),
                 "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                 "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                           "output_tokens": completion,
                           "output_tokens_details": {"reasoning_tokens": 0},
                           "total_tokens": prompt + completion}}
        started = {**whole, "status": "in_progress", "output": [], "usage": None}
        empty = {**item, "status": "in_progress", "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        events = [{"type": "response.created", "response": started},
                  {"type": "response.output_item.added", "output_index": 0, "item": empty},
                  {"type": "response.content_part.added", "item_id": item["id"],
                   "output_index": 0, "content_index": 0, "part": part},
                  {"type": "response.output_text.delta", "item_id": item["id"],
                   "output_index": 0, "content_index": 0, "delta": self.words(text)},
                  {"type": "response.output_item.done", "output_index": 0, "item": item},
                  {"type": "response.incomplete" if incomplete else "response.completed",
                   "response": whole}]
        for number, event in enumerate(events):
            event["sequence_number"] = number
        return whole, events

    def embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        given = body.get("input")
        inputs = given if isinstance(given, list) else [given]
        data = []
        for index, text in enumerate(inputs):
            vector = [round((len(str(text)) + i) / 100, 3) for i in range(8)]
            packed: Any = vector
            if body.get("encoding_format") == "base64":
                packed = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": packed})
        tokens = sum(len(str(t).split()) for t in inputs)
        return {"object": "list", "data": data, "model": body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def gemini(self, model: str, body: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        """(the generateContent answer, its stream's chunks)."""
        text = _last_text(body.get("contents"))
        finish = "MAX_TOKENS" if self.marker(text, "truncate") else "STOP"
        declared = [d for tool in body.get("tools") or [] for d in
                    tool.get("functionDeclarations") or tool.get("function_declarations") or []]
        parts: list[dict[str, Any]] = [{"text": self.words(text)}]
        if declared and _WEATHER.search(text):
            parts = [{"functionCall": {"name": declared[0]["name"],
                                       "args": self.tool_input(text)}}]
        prompt, completion = self.usage_counts(text)
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                 "totalTokenCount": prompt + completion}
        whole = {"candidates": [{"content": {"role": "model", "parts": parts},
                                 "finishReason": finish, "index": 0}],
                 "usageMetadata": usage, "modelVersion": model, "responseId": _fresh("")}
        if self.marker(text, "field"):
            whole["modelStatus"] = {"modelStage": "STABLE"}
        if "text" not in parts[0]:
            return whole, [whole]
        words = re.findall(r"\S+\s*", parts[0]["text"])
        chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": word}]},
                                   "index": 0}],
                   "modelVersion": model, "responseId": whole["responseId"]} for word in words]
        chunks[-1]["candidates"][0]["finishReason"] = finish
        chunks[-1]["usageMetadata"] = usage
        return whole, chunks


def _handler(server: ProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            url = urlsplit(self.path)
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.log.append(("POST", self.path, headers, body))
            found = _GEMINI_PATH.search(url.path)
            if found:
                key = headers.get("x-goog-api-key") or parse_qs(url.query).get("key", [""])[0]
                if not key or key == STAND_IN:
                    return self.json(400, {"error": {"code": 400, "message": "API key not valid.",
                                                     "status": "INVALID_ARGUMENT", "details": [
                                                         {"reason": "API_KEY_INVALID"}]}})
                whole, chunks = server.gemini(found.group(1), body)
                if found.group(2) == "streamGenerateContent":
                    return self.sse(f"data: {json.dumps(c)}\n\n" for c in chunks)
                return self.json(200, whole)
            auth = headers.get("authorization", "")
            if not auth.startswith("Bearer ") or auth[7:] in ("", STAND_IN):
                return self.json(401, {"error": {"message": "Incorrect API key provided.",
                                                 "type": "invalid_request_error",
                                                 "param": None, "code": "invalid_api_key"}})
            if url.path.endswith("/chat/completions"):
                whole, chunks = server.chat(body)
                if body.get("stream"):
                    events = [f"data: {json.dumps(c)}\n\n" for c in chunks]
                    return self.sse([*events, "data: [DONE]\n\n"])
                return self.json(200, whole)
            if url.path.endswith("/responses"):
                whole, events = server.response(body)
                if body.get("stream"):
                    return self.sse(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
                                    for e in events)
                return self.json(200, whole)
            if url.path.endswith("/embeddings"):
                return self.json(200, server.embeddings(body))
            return self.json(404, {"error": {"message": "Not found", "param": None,
                                             "type": "invalid_request_error", "code": None}})

        def json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def sse(self, events: Iterator[str] | list[str]) -> None:
            data = "".join(events).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
