"""``vcr_kit mcp [options] -- SERVER_CMD ARGS...``: a stdio MCP server,
recorded and replayed; ``vcr_kit mcp --url URL`` the same for a remote one
(``mcp_http.py``).

Put it where the server's command goes (``.mcp.json``'s ``command`` and ``args``):
the client speaks to vcr_kit, which answers each request from a fixture
(``mcp-<hash>.json``) or, to record, from the server it starts. In replay mode
(the default in CI) the server is never started. Exit 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

from .._mcp.stdio import McpRelay
from ..dehydrate import dehydrate
from ..errors import ConfigError
from ._common import (
    UsageError,
    add_store_options,
    exit_status,
    store_settings,
    usage_error,
    verb_parser,
)
from .mcp_http import default_name, parse_header, serve_http

__all__ = ["DESCRIPTION", "USAGE", "add_arguments", "mcp_main"]

USAGE = "vcr_kit mcp [options] (--url URL | -- SERVER_CMD [ARGS...])"
DESCRIPTION = (
    "Stand in for an MCP server: answer its requests from fixtures, starting SERVER_CMD "
    "(stdio) or asking URL (Streamable HTTP) only to record."
)


def mcp_main(argv: Sequence[str] | None = None) -> int:
    parser = verb_parser("mcp", usage=USAGE, description=DESCRIPTION)
    add_arguments(parser)
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    problem = _usage_problem(args, command)
    if problem:
        return usage_error(parser, problem)
    try:
        settings = store_settings(args)
    except (UsageError, ConfigError) as exc:
        print(f"vcr_kit: {exc.message}", file=sys.stderr)
        return exit_status(exc)
    if args.url:
        headers = dict(pair for text in args.header if (pair := parse_header(text)))
        return serve_http(args.url, name=args.name or default_name(args.url),
                          mode=settings.mode, fixtures_dir=settings.fixtures_dir,
                          port=args.port, headers=headers)  # fmt: skip
    # The command's paths differ from machine to machine: dehydrated, like a request.
    name = args.name or dehydrate(" ".join([os.path.basename(command[0]), *command[1:]]))
    relay = McpRelay(
        command,
        name=name,
        mode=settings.mode,
        fixtures_dir=settings.fixtures_dir,
        client_in=sys.stdin.buffer,
        client_out=sys.stdout.buffer,
    )
    try:
        return relay.serve()
    except KeyboardInterrupt:
        return 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``mcp``'s options (the server's command goes after ``--``)."""
    add_store_options(parser)
    parser.add_argument(
        "--name",
        help="the server's name in the fixtures' keys (default: the command and its "
        "arguments, or the URL's host and path): two servers must not share one, and "
        "one server has the same fixtures through either transport under one name",
    )
    parser.add_argument(
        "--url", help="a remote MCP server's endpoint: serve it on 127.0.0.1 instead of stdio"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="with --url: the port to listen on (default: a free one)",
    )
    parser.add_argument(
        "--header", action="append", default=[], metavar="'NAME: VALUE'",
        help="with --url: a header for the server while recording, such as "
        "'Authorization: Bearer ...' (never stored); may be repeated",
    )  # fmt: skip


def _usage_problem(args: argparse.Namespace, command: list[str]) -> str | None:
    """What is wrong with the arguments, in argparse's words; None when nothing is."""
    if args.url and command:
        return "give either --url or a server command after --, not both"
    if not args.url:
        if args.header or args.port:
            return "--header and --port go with --url"
        return None if command else "no server command given after -- (nor --url)"
    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"--url {args.url!r} is not an http:// or https:// URL"
    for text in args.header:
        if parse_header(text) is None:
            return f"--header {text!r} is not of the form 'NAME: VALUE'"
    if not 0 <= args.port <= 65535:
        return f"--port {args.port} is not a port number (0 to 65535; 0: a free one)"
    return None
