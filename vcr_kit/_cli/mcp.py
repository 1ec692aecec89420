"""``python -m vcr_kit mcp [options] -- SERVER_CMD ARGS...``: a stdio MCP server,
recorded and replayed.

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

from .._core.config import load_settings
from .._seams.mcp_stdio import McpRelay
from ..dehydrate import dehydrate
from ..errors import ConfigError
from ._common import add_store_options, mode_of

__all__ = ["mcp_main"]


def mcp_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vcr_kit mcp",
        usage="python -m vcr_kit mcp [options] -- SERVER_CMD [ARGS...]",
        description="Stand in for a stdio MCP server: answer its requests from fixtures, "
        "starting SERVER_CMD only to record.",
    )
    add_store_options(parser)
    parser.add_argument(
        "--name",
        help="the server's name in the fixtures' keys (default: the command and its "
        "arguments): two servers must not share one",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.print_usage(sys.stderr)
        print("python -m vcr_kit mcp: error: no server command given after --", file=sys.stderr)
        return 2
    try:
        settings = load_settings(
            mode=mode_of(args),
            fixtures_dir=args.fixtures,
        )
    except ConfigError as exc:
        print(f"vcr_kit: {exc}", file=sys.stderr)
        return 2
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
