"""``python -m vcr_kit mcp --url URL``: a remote (Streamable HTTP) MCP server,
recorded and replayed.

Prints ``vcr_kit mcp on http://127.0.0.1:PORT/mcp`` once it listens (the URL to put
in ``.mcp.json`` as ``{"type": "http", "url": ...}``) and serves until SIGINT or
SIGTERM. Exit 1 when it cannot listen.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from .._core.config import Mode
from .._mcp.http import HOST, McpHttpFront
from ..dehydrate import dehydrate
from ._common import serve_until_stopped

__all__ = ["default_name", "parse_header", "serve_http"]

def default_name(url: str) -> str:
    """The server's name in the keys when ``--name`` is not given: the URL's host and
    path (no scheme, port, user or query: a token may hide there), dehydrated."""
    parts = urlsplit(url)
    return dehydrate(f"{parts.hostname or ''}{parts.path.rstrip('/')}")


def parse_header(text: str) -> tuple[str, str] | None:
    """``"Name: value"`` as a pair; None when it is not of that form."""
    name, colon, value = text.partition(":")
    name = name.strip()
    if not colon or not name or any(c.isspace() for c in name):
        return None
    return name, value.strip()


def serve_http(
    url: str,
    *,
    name: str,
    mode: Mode,
    fixtures_dir: Path,
    port: int,
    headers: Mapping[str, str],
) -> int:
    """Serve the front until SIGINT or SIGTERM; 0, or 1 if it cannot listen."""
    try:
        front = McpHttpFront(url, name=name, mode=mode, fixtures_dir=fixtures_dir,
                             port=port, headers=headers)  # fmt: skip
    except OSError as exc:
        print(f"vcr_kit: cannot listen on {HOST}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1

    def announce() -> None:
        front.start()
        print(f"vcr_kit mcp on {front.url}", flush=True)

    try:
        serve_until_stopped(announce)
    finally:
        front.stop()
    return 0
