"""OpenAI (and Azure OpenAI, and the OpenAI-compatible gateways): its traffic's facts.

Chat Completions, Responses and Embeddings as the ``openai`` SDK sends them. Its
answers' ids (``chatcmpl-``, ``resp_``, the Responses items' ``msg_``, ``fc_``,
``rs_``...) are given afresh on replay and keyed by their stand-ins when quoted back
(``previous_response_id``); tool-call ids (``call_``) are stable stand-ins, as
Anthropic's ``toolu_`` ids are. ``created``, ``system_fingerprint`` and a stream's
``obfuscation`` padding differ on every call: stored fixed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ..id_vocabulary import IdVocabulary
from .base import Provider, StoredEvents, Usage

__all__ = ["PROVIDER"]

#: What ``data:`` says when a Chat Completions stream has ended.
DONE: Final = "[DONE]"
#: The events that end a Responses stream with its answer (``response.failed`` is a
#: server error, never stored).
_RESPONSES_FINAL: Final = frozenset({"response.completed", "response.incomplete"})


def stream_refusal(events: StoredEvents) -> str | None:
    """A Chat Completions stream is whole when it ends ``data: [DONE]``; a Responses
    stream (typed events) when it reached ``response.completed`` (or
    ``response.incomplete``). An error in either is never stored."""
    typed = False
    finished = False
    for number, event in enumerate(events, 1):
        if not isinstance(event, dict):
            return f"the stream was cut mid-event (event {number} is not an event)"
        name = event.get("event")
        data = event.get("data")
        if name is not None:
            typed = True
        if "data" not in event:
            if event.get("data_text") == DONE and not typed:
                finished = True
                continue
            return f"the stream was cut mid-event (event {number} is not JSON)"
        if name in ("error", "response.failed") or (
            isinstance(data, dict) and isinstance(data.get("error"), dict) and name is None
        ):
            return f"the stream ended with an error (event {number}): it may depend on the moment"
        if name in _RESPONSES_FINAL:
            finished = True
    if finished:
        return None
    final = "response.completed" if typed else f"data: {DONE}"
    return f"the stream ended after {len(events)} events, before its final event ({final})"


def error_refusal(status: int, body: Any) -> str | None:
    """Beyond the statuses every provider shares: an exhausted quota is a 429 already."""
    del status, body
    return None


def is_error_object(body: Any) -> bool:
    return isinstance(body, Mapping) and isinstance(body.get("error"), Mapping)


#: (method, path (any prefix: a gateway's, Azure's deployment), what, its rule).
def _chat_completion(body: Any) -> str | None:
    if not isinstance(body, Mapping) or body.get("object") != "chat.completion":
        return 'its "object" is not "chat.completion"'
    if not isinstance(body.get("choices"), list):
        return 'it has no "choices" list'
    return None


def _response(body: Any) -> str | None:
    if not isinstance(body, Mapping) or body.get("object") != "response":
        return 'its "object" is not "response"'
    if not isinstance(body.get("output"), list):
        return 'it has no "output" list'
    return None


def _embeddings(body: Any) -> str | None:
    if not isinstance(body, Mapping) or body.get("object") != "list":
        return 'its "object" is not "list"'
    if not isinstance(body.get("data"), list):
        return 'it has no "data" list'
    return None


_RULES: Final = (
    ("POST", re.compile(r"(?:/.*)?/chat/completions"), "a chat completion", _chat_completion),
    ("POST", re.compile(r"(?:/.*)?/responses"), "a response", _response),
    ("POST", re.compile(r"(?:/.*)?/embeddings"), "a list of embeddings", _embeddings),
)


def shape_refusal(method: str, path: str, response: Mapping[str, Any]) -> tuple[str, str] | None:
    """A JSON success of a known endpoint that is not its documented object (a
    stream's events are judged by ``stream_refusal``)."""
    for rule_method, pattern, what, rule in _RULES:
        if rule_method == method.upper() and pattern.fullmatch(path):
            if "body" not in response:
                if response.keys() & {"text", "base64"}:
                    return "response", f"a {response.get('status')} that is not {what}: not JSON"
                return None
            why = rule(response["body"])
            if why is None:
                return None
            return "response.body", f"a {response.get('status')} that is not {what}: {why}"
    return None


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _entry(model: Any, usage: Mapping[str, Any], prompt: str, output: str) -> dict[str, Any]:
    """One usage entry in vcr_kit's terms: cached and cache-written prompt tokens apart
    from the others (OpenAI counts both inside the prompt), reasoning tokens inside the
    output (as OpenAI counts and bills them) and also on their own."""
    prompt_details = usage.get(f"{prompt}_details")
    output_details = usage.get(f"{output}_details")
    details = prompt_details if isinstance(prompt_details, dict) else {}
    cached = _count(details.get("cached_tokens"))
    written = _count(details.get("cache_write_tokens"))
    reasoning = (
        _count(output_details.get("reasoning_tokens")) if isinstance(output_details, dict) else 0
    )
    counted: dict[str, Any] = {
        "input_tokens": max(_count(usage.get(prompt)) - cached - written, 0),
        "output_tokens": _count(usage.get(output)),
        "cache_read_input_tokens": cached,
    }
    if written:  # GPT-5.6 on bills cache writes by their retention (30 minutes, 12 hours)
        counted["cache_creation_input_tokens"] = written
        split = details.get("cache_write_tokens_details")
        if isinstance(split, dict):
            counted["cache_creation"] = {
                "ephemeral_5m_input_tokens": _count(split.get("ttl_30m_tokens")),
                "ephemeral_1h_input_tokens": _count(split.get("ttl_12h_tokens")),
            }
    if reasoning:
        counted["reasoning_tokens"] = reasoning
    return {"provider": "openai", "model": model, "usage": counted}


def _usage_of(value: Any) -> Usage:
    if not isinstance(value, dict):
        return []
    usage = value.get("usage")
    if not isinstance(usage, dict):
        response = value.get("response")  # a Responses stream's final event
        return _usage_of(response) if isinstance(response, dict) else []
    if "input_tokens" in usage:  # Responses
        return [_entry(value.get("model"), usage, "input_tokens", "output_tokens")]
    if "completion_tokens" in usage or "prompt_tokens" in usage:  # Chat, Embeddings
        return [_entry(value.get("model"), usage, "prompt_tokens", "completion_tokens")]
    return []


def usage(response: Mapping[str, Any]) -> Usage:
    """The usage of a stored answer: its body's, or a stream's last that has one (a
    Chat Completions stream's usage chunk, a Responses stream's final event)."""
    if "events" in response and isinstance(response["events"], list):
        for event in reversed(response["events"]):
            found = _usage_of(event.get("data") if isinstance(event, dict) else None)
            if found:
                return found
        return []
    return _usage_of(response.get("body"))


_ERROR_TYPES: Final = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", "service_unavailable"),
}


def error_body(status: int, message: str) -> dict[str, Any]:
    default = ("server_error" if status >= 500 else "invalid_request_error", None)
    kind, code = _ERROR_TYPES.get(status, default)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


PROVIDER: Final = Provider(
    name="openai",
    title="OpenAI",
    host_pattern=(
        r"(?:[a-z]{2}\.)?api\.openai\.com"
        r"|[a-z0-9-]+\.openai\.azure\.com|[a-z0-9-]+\.cognitiveservices\.azure\.com"
    ),
    default_url="https://api.openai.com/v1",
    base_url_variables=("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT"),
    key_variables=(("OPENAI_API_KEY",), ("AZURE_OPENAI_API_KEY",)),
    secret_variables=("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "AZURE_OPENAI_API_KEY"),
    credential_headers=("authorization", "api-key"),
    credential_query=(),
    keyed_headers=("openai-beta",),
    path_pattern=re.compile(r"/(?:chat/completions|responses|embeddings|completions)(?:/|$)"),
    proxy_prefix="/openai",
    ids=IdVocabulary(
        tool_prefixes=("call_",),
        other_prefixes=(
            "chatcmpl-",
            "cmpl-",
            "resp_",
            "msg_",
            "fc_",
            "rs_",
            "ws_",
            "fs_",
            "ci_",
            "ig_",
            "ctc_",
            "file-",
            "batch_",
        ),
        id_fields=(),
        fixed_fields=(
            ("created", 0),
            ("created_at", 0),
            ("completed_at", 0),
            ("system_fingerprint", "fp_vcr"),
            ("obfuscation", ""),
        ),
    ),
    stream_refusal=stream_refusal,
    error_refusal=error_refusal,
    is_error_object=is_error_object,
    shape_refusal=shape_refusal,
    usage=usage,
    error_body=error_body,
    docs_page="providers/openai.md",
)
