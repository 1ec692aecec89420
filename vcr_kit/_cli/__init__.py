"""The vcr_kit command line: see, show, check, prune and re-key the fixtures on disk,
and serve them to other processes through the record/replay proxy.

Usage: vcr_kit COMMAND [FOLDER] [options]   (the same as python -m vcr_kit)

Every command takes the fixtures folder (default: VCR_FIXTURES_DIR, else fixtures/
at the project root) and reads fixtures below it. Exit status: 0 when all is well,
1 when a problem was found, 2 on a usage error. A bad file is reported, never a
traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import VCRError
from . import check, diff, drift, prune, rekey, show, status, unused
from ._common import Command, fail

#: One module per command; a new command is a new module and one entry here.
COMMANDS: tuple[Command, ...] = (status, check, show, diff, drift, unused, prune, rekey)
#: The proxy's commands parse their own arguments (``run`` takes ``-- CMD ARGS...``,
#: which a subparser would mangle); listed here for ``--help``.
PROXY_COMMANDS: dict[str, str] = {
    "serve": "serve the record/replay proxy on 127.0.0.1 until Ctrl-C or SIGTERM",
    "run": "run a command with ANTHROPIC_BASE_URL set to a proxy: run [options] -- CMD ARGS",
    "mcp": "stand in for an MCP server, recorded and replayed: mcp [options] -- CMD ARGS "
    "(stdio), or mcp [options] --url URL (HTTP)",
}


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="vcr_kit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"vcr_kit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(
            command.NAME,
            help=command.HELP,
            description=command.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    for name, text in PROXY_COMMANDS.items():
        commands.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (argparse exits 2 on a usage error)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["mcp"]:
        from .mcp import mcp_main

        return mcp_main(words[1:])
    if words[:1] and words[0] in PROXY_COMMANDS:
        from .proxy import run_main, serve_main

        return serve_main(words[1:]) if words[0] == "serve" else run_main(words[1:])
    args = build_parser().parse_args(words)
    try:
        status: int = args.run(args)
    except BrokenPipeError:  # `vcr_kit status | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    except VCRError as exc:  # a setting vcr_kit refuses (VCR_MODE=nonsense): its own words
        return fail(exc.message)
    except OSError as exc:  # a folder that vanished, a disk error: one line, no traceback
        return fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
    return status
