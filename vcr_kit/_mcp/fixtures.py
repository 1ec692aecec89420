"""An MCP server's JSON-RPC requests as fixtures, whatever the transport.

``vcr_kit mcp -- CMD`` (stdio, ``mcp_stdio.py``) and ``vcr_kit mcp --url URL``
(Streamable HTTP, ``mcp_http.py``) answer a client's request here: one fixture
(``mcp-<hash>.json``) per request, keyed by the server's name, the method and the
dehydrated params (the JSON-RPC id and ``_meta`` left out: they differ on every run),
whose answer is the server's ``result`` or ``error``. The key has no word of the
transport, so one server's fixtures replay through either.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from .._core.config import Mode
from .._core.paths import display_path
from .._engine.cassette import fixture
from ..errors import VCRError
from .jsonrpc import response_problem

__all__ = [
    "FIXTURE_NAME",
    "HANDSHAKE",
    "MISS_CODE",
    "Unanswered",
    "answer_from_fixtures",
    "error_answer",
    "mcp_stored_request",
]

#: Fixture files are ``mcp-<12 hex>.json``.
FIXTURE_NAME: Final = "mcp"
#: The JSON-RPC error code of an answer vcr_kit could not give (server-error range).
MISS_CODE: Final = -32000
#: What a client says before anything else; a server started mid-session hears it first.
HANDSHAKE: Final = ("initialize", "notifications/initialized")


class Unanswered(Exception):
    """The server could not answer (it exited, is down, failed): the client gets a
    JSON-RPC error saying why, and nothing is stored."""


def mcp_stored_request(server: str, request: dict[str, Any]) -> dict[str, Any]:
    """What names ``request``'s fixture: the server, the method, the params but ``_meta``."""
    params = request.get("params")
    if isinstance(params, dict):
        params = {k: v for k, v in params.items() if k != "_meta"}
    return {"server": server, "method": request["method"], "params": params}


def error_answer(message: str) -> dict[str, Any]:
    """A JSON-RPC ``error`` member in vcr_kit's words (``-32000``, ``vcr_kit: ...``)."""
    return {"error": {"code": MISS_CODE, "message": f"vcr_kit: {message}"}}


def answer_from_fixtures(
    request: dict[str, Any],
    *,
    server: str,
    mode: Mode,
    fixtures_dir: str | Path | None,
    ask: Callable[[dict[str, Any]], Any],
) -> dict[str, Any]:
    """The ``result`` or ``error`` of ``request``: replayed, else ``ask(request)``
    (the server's whole response), recorded when it is a valid response to it. A miss,
    a refused write, an ``Unanswered``, an invalid response or a fixture that holds no
    valid answer is a JSON-RPC error for the client, never an exception."""
    key = mcp_stored_request(server, request)

    def live() -> dict[str, Any]:
        response = ask(request)
        problem = response_problem(response, request["id"])
        if problem is not None:
            raise Unanswered(
                f"the MCP server {server!r} answered {request['method']!r} with no valid "
                f"JSON-RPC response ({problem}); nothing was stored"
            )
        return {k: v for k, v in response.items() if k in ("result", "error")}

    try:
        with fixture(key, FIXTURE_NAME, mode=mode, fixtures_dir=fixtures_dir) as f:
            answer: Any = f.play(live)
    except VCRError as exc:
        return error_answer(exc.message)
    except Unanswered as exc:
        return error_answer(str(exc))
    # A fixture written by an earlier version (or by hand) may hold no valid answer.
    checked = {**answer, "jsonrpc": "2.0", "id": None} if isinstance(answer, dict) else answer
    problem = response_problem(checked, None)
    if problem is not None:
        return error_answer(f"fixture {display_path(f.path)} holds no valid JSON-RPC answer "
                            f"({problem}); delete it and record again")  # fmt: skip
    return {k: v for k, v in answer.items() if k in ("result", "error")}
