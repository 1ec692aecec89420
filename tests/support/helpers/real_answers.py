"""The real API calls of ``../shared/real_answers/cassettes/`` as data, and a loopback
server that answers with them.

The cassettes (vcrpy YAML, copied from a public repository, never edited) hold real
Anthropic API requests and answers: thinking, server tools, citations, ``pause_turn``,
streams, token counts, errors. ``conversations()`` reads them once (PyYAML's C loader:
about a quarter of a second for all of them) into ``Call``s; ``AnswerServer`` serves
whichever answer the test puts up next, and keeps the body each request carried, so a
test can see what reached "the API".
"""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import anthropic

from tests.support.helpers.real_streams import REAL_ANSWERS

__all__ = ["AnswerServer", "Call", "conversations", "left_out", "parsed"]

#: The endpoints the anthropic SDK's Messages client reaches; the other calls in the
#: cassettes go to other APIs (OpenAI, Gemini, Bedrock, a file download) or the Files
#: API (a multipart upload), which this data does not exercise.
_MESSAGES_HOST = "api.anthropic.com"
_MESSAGES_PATHS = ("/v1/messages", "/v1/messages/count_tokens")
#: Request headers that reach the SDK call as they were recorded (the rest are the
#: recording client's own, or set by the SDK itself).
_KEPT_REQUEST_HEADERS = ("anthropic-beta",)


@dataclass(frozen=True)
class Call:
    """One recorded interaction: what was sent and what the API answered."""

    cassette: str
    number: int
    path: str  # with its query: /v1/messages?beta=true
    headers: dict[str, str]
    body: Any  # the request's JSON
    status: int
    content_type: str
    answer: bytes

    @property
    def name(self) -> str:
        return f"{self.cassette}#{self.number}"

    @property
    def streamed(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def beta(self) -> bool:
        return "beta=true" in self.path

    @property
    def counts_tokens(self) -> bool:
        return self.path.split("?")[0].endswith("/count_tokens")


@functools.cache
def conversations() -> tuple[tuple[str, tuple[Call, ...]], ...]:
    """(cassette file name, its Messages API calls in order) for every cassette; none
    where shared/ is not beside the clone."""
    return tuple((name, calls) for name, calls, _ in _read_all())


@functools.cache
def left_out() -> tuple[str, ...]:
    """``cassette#n uri`` of each interaction that is not a Messages API call."""
    return tuple(line for _, _, skipped in _read_all() for line in skipped)


@functools.cache
def _read_all() -> tuple[tuple[str, tuple[Call, ...], tuple[str, ...]], ...]:
    if not REAL_ANSWERS.is_dir():
        return ()
    import yaml  # a test dependency; only this data needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found = []
    for path in sorted(REAL_ANSWERS.glob("*.yaml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        calls: list[Call] = []
        skipped: list[str] = []
        for number, interaction in enumerate(doc["interactions"]):
            call = _call(path.name, number, interaction)
            if call is None:
                skipped.append(f"{path.name}#{number} {interaction['request']['uri']}")
            else:
                calls.append(call)
        found.append((path.name, tuple(calls), tuple(skipped)))
    return tuple(found)


def _call(cassette: str, number: int, interaction: dict[str, Any]) -> Call | None:
    request, response = interaction["request"], interaction["response"]
    uri = urlsplit(request["uri"])
    if uri.hostname != _MESSAGES_HOST or uri.path not in _MESSAGES_PATHS:
        return None
    body = request["parsed_body"] if "parsed_body" in request else json.loads(request["body"])
    headers = {
        name: values[0]
        for name, values in request["headers"].items()
        if name.lower() in _KEPT_REQUEST_HEADERS
    }
    status = response["status"]
    content_type = response["headers"].get("content-type", ["application/json"])[0]
    if "parsed_body" in response:
        answer = json.dumps(response["parsed_body"]).encode()
    else:
        text = (
            response["body"]["string"] if isinstance(response["body"], dict) else response["body"]
        )
        answer = text if isinstance(text, bytes) else text.encode()
    return Call(
        cassette=cassette,
        number=number,
        path=uri.path + (f"?{uri.query}" if uri.query else ""),
        headers=headers,
        body=body,
        status=status["code"] if isinstance(status, dict) else int(status),
        content_type=content_type,
        answer=answer,
    )


def parsed(client: anthropic.Anthropic, call: Call, body: Any) -> Any:
    """What the SDK parses of ``call``'s answer: the message, the token count, the
    stream's events, and the error it raises (as ``{"error": ...}``)."""
    beta = call.beta
    if call.counts_tokens:
        cast: Any = (
            anthropic.types.beta.BetaMessageTokensCount
            if beta
            else anthropic.types.MessageTokensCount
        )
    else:
        cast = anthropic.types.beta.BetaMessage if beta else anthropic.types.Message
    event = (
        anthropic.types.beta.BetaRawMessageStreamEvent
        if beta
        else anthropic.types.RawMessageStreamEvent
    )
    options: Any = {"headers": call.headers}
    got: list[Any] = []
    try:
        if not call.streamed:
            return client.post(call.path, cast_to=cast, body=body, options=options).model_dump(
                mode="json"
            )
        stream = client.post(
            call.path,
            cast_to=cast,
            body=body,
            options=options,
            stream=True,
            stream_cls=anthropic.Stream[event],
        )
        got.extend(e.model_dump(mode="json") for e in stream)
        return got
    except anthropic.APIStatusError as error:
        return [
            *got,
            {"error": type(error).__name__, "status": error.status_code, "body": error.body},
        ]


class AnswerServer:
    """A loopback HTTP server that answers every request with ``self.call``'s answer
    and keeps the last request's JSON body in ``self.received``."""

    def __init__(self) -> None:
        self.call: Call | None = None
        self.received: Any = None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> AnswerServer:
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def _handler(owner: AnswerServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms wait

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            owner.received = json.loads(self.rfile.read(length) or b"null")
            call = owner.call
            assert call is not None, "the test puts an answer up before each call"
            self.send_response(call.status)
            self.send_header("content-type", call.content_type)
            self.send_header("content-length", str(len(call.answer)))
            self.send_header("request-id", f"req_real_{call.number}")
            self.end_headers()
            self.wfile.write(call.answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
