"""JSON-RPC 2.0 as MCP uses it: what a message is, what answers it, what may be stored.

Both relays (stdio and Streamable HTTP) hand every payload they read to ``handle``,
which maps it to what goes back: one answer, a list of answers (a batch), or nothing
(notifications, the client's answers to the server). The rules, in one place:

- A request (``method`` and an ``id``) gets exactly one answer, with its id.
- A notification (``method``, no ``id``) and a response (``result`` or ``error``)
  get none.
- Anything else is ``-32600 Invalid Request``, with the message's id when it has a
  valid one (a string, a number or null), else with id null.
- A batch (a JSON array) is answered item by item, in a list (none when no item gets
  an answer), where the negotiated MCP protocol version allows batches: 2025-03-26
  and earlier. From 2025-06-18 on (batches were removed), and for an empty array, a
  batch is one ``-32600`` with id null: never silence.
- Only a valid response is stored or replayed (``response_problem``): ``jsonrpc``
  "2.0", the request's id, and exactly one of ``result`` and ``error`` (an object with
  an integer ``code`` and a string ``message``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "BATCHES_REMOVED",
    "DEFAULT_VERSION",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "Reply",
    "batches_allowed",
    "encode",
    "handle",
    "is_request",
    "is_response",
    "negotiated",
    "parse",
    "refusal",
    "response_problem",
    "valid_id",
]

#: JSON-RPC's answer to a message that is not JSON.
PARSE_ERROR: Final = {"code": -32700, "message": "Parse error"}
#: JSON-RPC's answer to JSON that is not a request, a notification nor a response.
INVALID_REQUEST: Final = {"code": -32600, "message": "Invalid Request"}
#: JSON-RPC's code for a failure inside the relay itself.
INTERNAL_ERROR: Final = -32603
#: The MCP protocol version that removed JSON-RPC batches (they came in 2025-03-26).
BATCHES_REMOVED: Final = "2025-06-18"
#: The version assumed before one is negotiated or named: the Streamable HTTP spec's
#: own assumption for a request without ``MCP-Protocol-Version``; stdio takes the same.
DEFAULT_VERSION: Final = "2025-03-26"
_VERSION: Final = re.compile(r"\d{4}-\d{2}-\d{2}")

#: Answers a request: its ``result`` or ``error`` member, without jsonrpc nor id.
Answer = Callable[[dict[str, Any]], dict[str, Any]]
#: Takes a message that gets no answer: a notification, or a response of the client's.
Tell = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Reply:
    """What goes back for one payload: ``body`` (an answer, a list of answers, or None
    for nothing) and whether the payload as a whole was refused (HTTP: a 400)."""

    body: Any
    refused: bool = False


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e400: no JSON can carry it back
        raise ValueError(f"number {text} is out of range")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def parse(data: bytes | str) -> Any:
    """The JSON value of one message; ``ValueError`` when it is not JSON (NaN,
    Infinity and numbers beyond a double's range included: no answer could echo
    them as JSON), however deep it nests."""
    try:
        return json.loads(data, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def encode(payload: Any) -> bytes:
    """``payload`` as compact UTF-8 JSON; a string that is not Unicode (a lone
    surrogate the client escaped) is sent back escaped, as it came."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, separators=(",", ":")).encode("ascii")


def valid_id(value: Any) -> bool:
    """A JSON-RPC id: a string, a number (not a boolean) or null."""
    if value is None or isinstance(value, str):
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_id(a: Any, b: Any) -> bool:
    return valid_id(a) and valid_id(b) and (isinstance(a, str) == isinstance(b, str)) and a == b


def _valid_error(error: Any) -> bool:
    if not isinstance(error, dict):
        return False
    code, message = error.get("code"), error.get("message")
    return isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str)


def is_request(message: Any) -> bool:
    """A request or a notification: ``jsonrpc`` "2.0", a string ``method``, ``params``
    (if any) an object or an array, and an ``id`` (if any) that is valid."""
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and isinstance(message.get("params", {}), (dict, list))
        and valid_id(message.get("id"))
    )


def response_problem(message: Any, request_id: Any) -> str | None:
    """Why ``message`` is not a valid response to the request ``request_id``; None
    when it is one."""
    if not isinstance(message, dict):
        return "it is not a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" is not "2.0"'
    if not _same_id(message.get("id"), request_id):
        return f"its id {json.dumps(message.get('id'))} is not the request's"
    has = [key for key in ("result", "error") if key in message]
    if len(has) != 1:
        return 'it has neither "result" nor "error"' if not has else "it has both"
    if has == ["error"] and not _valid_error(message["error"]):
        return 'its "error" is not an object with an integer code and a string message'
    return None


def is_response(message: Any) -> bool:
    """A response of the client's to a request of the server's (never answered)."""
    return (
        isinstance(message, dict)
        and "method" not in message
        and "id" in message
        and response_problem(message, message.get("id")) is None
    )


def batches_allowed(version: str) -> bool:
    """Whether MCP protocol ``version`` takes JSON-RPC batches (up to 2025-03-26)."""
    return _VERSION.fullmatch(version) is not None and version < BATCHES_REMOVED


def negotiated(request: Mapping[str, Any], answer: Mapping[str, Any]) -> str | None:
    """The protocol version an ``initialize`` answer settles; None for any other."""
    result = answer.get("result")
    if request.get("method") != "initialize" or not isinstance(result, dict):
        return None
    version = result.get("protocolVersion")
    return version if isinstance(version, str) else None


def _error(error: Mapping[str, Any], request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": dict(error)}


def _invalid(message: Any) -> dict[str, Any]:
    request_id = message.get("id") if isinstance(message, dict) else None
    return _error(INVALID_REQUEST, request_id if valid_id(request_id) else None)


def _one(message: Any, answer: Answer, tell: Tell) -> dict[str, Any] | None:
    if is_request(message):
        if "id" not in message:
            tell(message)
            return None
        try:
            body = answer(message)
        except Exception as exc:  # a bug of vcr_kit's: the client is told, the relay lives
            body = {"error": {"code": INTERNAL_ERROR,
                              "message": f"vcr_kit: {type(exc).__name__}: {exc}"}}  # fmt: skip
        return {"jsonrpc": "2.0", "id": message["id"], **body}
    if is_response(message):
        tell(message)
        return None
    return _invalid(message)


def refusal(payload: Any, version: str) -> dict[str, Any] | None:
    """The one error for a payload refused whole (an empty batch, or a batch that
    ``version`` does not allow); None when its messages are to be handled."""
    if not isinstance(payload, list):
        return None
    if not payload:
        return _error(INVALID_REQUEST)
    if not batches_allowed(version):
        return _error({
            "code": INVALID_REQUEST["code"],
            "message": f"Invalid Request: JSON-RPC batches are not allowed in MCP protocol "
                       f"version {version} (only up to 2025-03-26); send each message alone",
        })  # fmt: skip
    return None


def handle(payload: Any, *, version: str, answer: Answer, tell: Tell) -> Reply:
    """What goes back for ``payload`` (one parsed message or a batch) under protocol
    ``version``: requests answered by ``answer``, other messages given to ``tell``."""
    refused = refusal(payload, version)
    if refused is not None:
        return Reply(refused, refused=True)
    if isinstance(payload, list):
        answers = [a for item in payload if (a := _one(item, answer, tell)) is not None]
        return Reply(answers or None)
    one = _one(payload, answer, tell)
    return Reply(one, refused=not (is_request(payload) or is_response(payload)))
