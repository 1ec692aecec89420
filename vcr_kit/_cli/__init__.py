"""The vcr_kit command line: see, show, check, prune and re-key the fixtures on disk,
and serve them to other processes through the record/replay proxy.

Usage: vcr_kit COMMAND [options]   (the same as python -m vcr_kit)

Every command that reads fixtures takes the folder as --fixtures DIR (status, check,
unused, prune, rekey and drift also as FOLDER; default: VCR_FIXTURES_DIR, else
fixtures/ at the project root). A command reads only the settings it uses. Exit
status: 0 when all is well, 1 when a problem was found, 2 on a usage or configuration
error. A bad file is reported, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import VCRError
from . import check, diff, drift, prune, rekey, show, status, unused
from ._common import PROG, Command, UsageError, exit_status, fail

#: One module per command; a new command is a new module and one entry here.
COMMANDS: tuple[Command, ...] = (status, check, show, diff, drift, unused, prune, rekey)
#: The proxy's commands parse their own arguments (``run`` takes ``-- CMD ARGS...``,
#: which a subparser would mangle); their options are in the parser for ``--help``.
PROXY_COMMANDS: dict[str, str] = {
    "serve": "serve the record/replay proxy on 127.0.0.1 until Ctrl-C or SIGTERM",
    "run": "run a command with ANTHROPIC_BASE_URL set to a proxy: run [options] -- CMD ARGS",
    "mcp": "stand in for an MCP server, recorded and replayed: mcp [options] -- CMD ARGS "
    "(stdio), or mcp [options] --url URL (HTTP)",
}


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
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
    _add_proxy_commands(commands)
    return parser


def _add_proxy_commands(commands: Any) -> None:
    """``serve``, ``run`` and ``mcp`` as their own parsers have them (their ``main``
    parses the command line; these are for ``--help`` and the reference)."""
    from . import mcp, proxy

    usage = {"run": proxy.RUN_USAGE, "mcp": mcp.USAGE}
    described = {
        "serve": proxy.SERVE_DESCRIPTION,
        "run": proxy.RUN_DESCRIPTION,
        "mcp": mcp.DESCRIPTION,
    }
    for name, text in PROXY_COMMANDS.items():
        sub = commands.add_parser(
            name, help=text, usage=usage.get(name), description=described[name]
        )
        (mcp.add_arguments if name == "mcp" else proxy.add_arguments)(sub)


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
    except UsageError as exc:  # found past argparse: a folder that does not exist
        return fail(exc.message, exit_status(exc))
    except VCRError as exc:  # a setting vcr_kit refuses (VCR_LOCK_TIMEOUT=-1): its own words
        return fail(exc.message, exit_status(exc))
    except OSError as exc:  # a folder that vanished, a disk error: one line, no traceback
        return fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
    return status
