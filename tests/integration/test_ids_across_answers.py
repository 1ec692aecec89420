"""An id the API repeats in a later answer keeps the stand-in it already has (issue 29,
point 7), in record and in replay, plain and streamed.

Generated conversations: each answer holds tool calls and results of every kind
(``tool_use``, ``server_tool_use`` and ``web_search_tool_result``, ``mcp_tool_use`` and
``mcp_tool_result``) and a container, their ids drawn from a small pool, so that an id
of one answer comes back in later ones, in the same block type or another, in the same
field or another. Each request quotes, as a program would, the earlier answers with the
ids its caller was given. The conversation goes through the real SDK three times: plain
(the answers as the API gives them), recorded through vcr_kit, replayed. What the
caller gets must be the plain answers renamed by one bijection of ids across the whole
conversation (``Renaming``): two places the API gave one id hold one stand-in.
"""

from __future__ import annotations

import json
import tempfile
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.children.sdk_scenarios import recording_key
from tests.support.helpers.env import temp_dir
from tests.support.helpers.examples import examples
from tests.support.helpers.id_renaming import Renaming
from tests.support.helpers.real_answers import AnswerServer, Call, parsed
from vcr_kit._core import ids as _ids
from vcr_kit._core.httplib import sdk_library
from vcr_kit._proxy.server import Proxy

pytestmark = pytest.mark.inprocess

http = sdk_library()
_KEY = "not-a-real-key"
UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens there
_PATH = "/v1/messages?beta=true"
#: Block type -> (the field holding its id, the id's prefix).
_BLOCKS: dict[str, tuple[str, str]] = {
    "tool_use": ("id", "toolu"),
    "server_tool_use": ("id", "srvtoolu"),
    "web_search_tool_result": ("tool_use_id", "srvtoolu"),
    "mcp_tool_use": ("id", "mcptoolu"),
    "mcp_tool_result": ("tool_use_id", "mcptoolu"),
}


def _live(prefix: str, n: int) -> str:
    return f"{prefix}_01Live{n:018d}"


@dataclass(frozen=True)
class Answer:
    """One answer of a conversation: its blocks (type, the number of its live id), its
    container's number (or None), its stop reason, and whether it is streamed."""

    blocks: tuple[tuple[str, int], ...]
    container: int | None
    stop_reason: str
    streamed: bool

    def content(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for kind, n in self.blocks:
            if kind == "text":
                out.append({"type": "text", "text": f"text {n}"})
                continue
            field, prefix = _BLOCKS[kind]
            block: dict[str, Any] = {"type": kind, field: _live(prefix, n)}
            if kind.endswith("_use"):
                block.update(name="web_search" if kind == "server_tool_use" else "lookup", input={})
            if kind.startswith("mcp_"):
                block.update(
                    {"server_name": "files"} if kind == "mcp_tool_use" else {"is_error": False}
                )
            if kind.endswith("_result"):
                block["content"] = []
            out.append(block)
        return out

    def message(self, number: int) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": f"msg_01Live{number:018d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-7",
            "content": self.content(),
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if self.container is not None:
            container = _live("container", self.container)
            message["container"] = {"id": container, "expires_at": "2026-01-01T00:00:00Z"}
        return message

    def body(self, number: int) -> bytes:
        message = self.message(number)
        if not self.streamed:
            return json.dumps(message).encode()
        start = {**message, "content": [], "stop_reason": None}
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, block in enumerate(message["content"]):
            opened = {**block, "text": ""} if block["type"] == "text" else block
            events.append({"type": "content_block_start", "index": index, "content_block": opened})
            if block["type"] == "text":
                delta = {"type": "text_delta", "text": block["text"]}
                events.append({"type": "content_block_delta", "index": index, "delta": delta})
            events.append({"type": "content_block_stop", "index": index})
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": self.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            }
        )
        events.append({"type": "message_stop"})
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _calls(answers: tuple[Answer, ...]) -> list[Call]:
    """The conversation's calls: request k quotes answers 0..k-1 (with live ids)."""
    calls = []
    history: list[dict[str, Any]] = []
    for number, answer in enumerate(answers):
        history.append({"role": "user", "content": f"turn {number}"})
        body = {
            "model": "claude-opus-4-7",
            "max_tokens": 64,
            "messages": list(history),
            "stream": answer.streamed,
        }
        kind = "text/event-stream" if answer.streamed else "application/json"
        calls.append(Call("generated", number, _PATH, {}, body, 200, kind, answer.body(number)))
        history.append({"role": "assistant", "content": answer.content()})
    return calls


_BLOCK = st.tuples(st.sampled_from([*_BLOCKS, "text"]), st.integers(0, 2))
_ANSWER = st.builds(
    Answer,
    blocks=st.lists(_BLOCK, min_size=1, max_size=4).map(tuple),
    container=st.none() | st.integers(0, 1),
    stop_reason=st.sampled_from(["end_turn", "pause_turn", "tool_use"]),
    streamed=st.booleans(),
)
_CONVERSATION = st.lists(_ANSWER, min_size=2, max_size=4).map(tuple)


def _pause_turn(streamed: bool) -> tuple[Answer, ...]:
    """The issue's case: a web search call ends one answer, its result opens the next."""
    return (
        Answer((("server_tool_use", 0),), None, "pause_turn", streamed),
        Answer((("web_search_tool_result", 0), ("text", 0)), None, "end_turn", streamed),
    )


def conversation(
    test: unittest.TestCase,
    answers: tuple[Answer, ...],
    api: Any,
    plain_client: anthropic.Anthropic,
    clients: dict[str, anthropic.Anthropic],
) -> None:
    """``answers`` through the plain client, then recorded and replayed through
    ``clients[mode]``: what the caller gets is the plain parse renamed by one bijection,
    and while recording the API (``api``: its ``call`` answers, ``received`` is what it
    got) gets the ids it gave, as the plain call sent them."""
    calls = _calls(answers)
    plain = []
    for call in calls:
        api.call = call
        plain.append(parsed(plain_client, call, call.body))
    for mode in ("record", "replay"):
        _ids.forget()  # replay as a fresh process does: no live id known
        renaming = Renaming()
        for call, expected in zip(calls, plain, strict=True):
            api.call = call if mode == "record" else None
            got = parsed(clients[mode], call, renaming.request(call.body))
            where = f"{mode}, answer {call.number}"
            test.assertEqual(renaming.differences(expected, got, where), [])
            if mode == "record":  # the API got its own ids back, as the plain call sent
                test.assertEqual(api.received, call.body, where)


class Api:
    """The API as an in-process transport: answers with ``call``, keeps what it got."""

    def __init__(self) -> None:
        self.call: Call | None = None
        self.received: Any = None

    def __call__(self, request: Any) -> Any:
        assert self.call is not None, "replay must not reach the API"
        self.received = json.loads(request.read())
        headers = {"content-type": self.call.content_type, "request-id": "req_generated"}
        return http.Response(self.call.status, headers=headers, content=self.call.answer)


class IdsAcrossAnswersTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    def client(self, api: Api, mode: str | None, folder: Path) -> anthropic.Anthropic:
        transport: Any = http.MockTransport(api)
        if mode is not None:
            transport = vcr_kit.VCRTransport(mode=mode, fixtures_dir=folder, live=transport)
        return anthropic.Anthropic(
            base_url="https://api.anthropic.com",
            api_key=_KEY,
            max_retries=0,
            http_client=anthropic.DefaultHttpxClient(transport=transport),
        )

    def check(self, answers: tuple[Answer, ...]) -> None:
        api = Api()
        with tempfile.TemporaryDirectory() as folder:
            clients = {mode: self.client(api, mode, Path(folder)) for mode in ("record", "replay")}
            conversation(self, answers, api, self.client(api, None, Path(folder)), clients)

    @given(_CONVERSATION)
    @example(_pause_turn(streamed=False))
    @example(_pause_turn(streamed=True))
    @example(  # a server tool id repeated in another block type and in a later tool call
        (
            Answer((("server_tool_use", 1), ("mcp_tool_use", 0)), 0, "pause_turn", True),
            Answer((("web_search_tool_result", 1),), 0, "pause_turn", False),
            Answer((("mcp_tool_result", 0), ("server_tool_use", 1)), 0, "end_turn", True),
        )
    )
    @settings(
        max_examples=examples(30),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    def test_a_repeated_id_keeps_its_stand_in(self, answers: tuple[Answer, ...]) -> None:
        self.check(answers)

    def test_a_stand_in_the_api_repeats_stays_itself(self) -> None:
        # The call that ends the first answer is replayed (a later process, mode auto):
        # its stand-in stands for no live id, so the API gets the stand-in itself and
        # repeats it in the result that opens the next answer, which is recorded.
        for streamed in (False, True):
            _ids.forget()
            first, second = _calls(_pause_turn(streamed))
            api = Api()
            with tempfile.TemporaryDirectory() as folder:
                api.call = first
                recorded = parsed(self.client(api, "record", Path(folder)), first, first.body)
                _ids.forget()
                client = self.client(api, "auto", Path(folder))
                api.call = None
                replayed = parsed(client, first, first.body)
                self.assertEqual(Renaming().differences(recorded, replayed), [])
                stand_in = (
                    recorded[1]["content_block"]["id"] if streamed else recorded["content"][0]["id"]
                )
                live = _live("srvtoolu", 0)
                echoed = second.answer.replace(live.encode(), stand_in.encode())
                api.call = Call(
                    "generated", 1, _PATH, {}, second.body, 200, second.content_type, echoed
                )
                body = json.loads(json.dumps(second.body).replace(live, stand_in))
                got = parsed(client, second, body)
            self.assertEqual(api.received, body)
            result = got[1]["content_block"] if streamed else got["content"][0]
            self.assertEqual(result["tool_use_id"], stand_in)


class ThroughTheProxyTest(unittest.TestCase):
    """The same rule through the record/replay proxy, which forwards a live answer with
    its stand-ins already in it, event by event (``_proxy/forwarding.py``)."""

    def test_a_paused_server_tool_keeps_its_stand_in(self) -> None:
        for streamed in (False, True):
            with self.subTest(streamed=streamed), AnswerServer() as api:
                _ids.forget()
                self.addCleanup(_ids.forget)
                folder = temp_dir(self)
                key = recording_key()
                proxies = {
                    "record": Proxy(mode="record", fixtures_dir=folder, upstream=api.url),
                    "replay": Proxy(mode="replay", fixtures_dir=folder, upstream=UNREACHABLE),
                }
                clients = {}
                for mode, proxy in proxies.items():
                    self.addCleanup(proxy.start().stop)
                    clients[mode] = anthropic.Anthropic(
                        base_url=proxy.url, api_key=key, max_retries=0
                    )
                plain = anthropic.Anthropic(base_url=api.url, api_key=key, max_retries=0)
                conversation(self, _pause_turn(streamed), api, plain, clients)


if __name__ == "__main__":
    unittest.main()
