"""What the commands share, one rule each in one place: the program name in every usage
line (``PROG``, ``verb_parser``), the fixtures folder (the positional ``FOLDER`` and
``--fixtures DIR``, checked by ``fixtures_folder``), the exit statuses (``exit_status``:
2 for a usage or configuration error, 1 for a finding), the stop signals, sizes."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Final, Protocol

from .._core.config import Mode, Settings, fixtures_dir_setting, load_settings, parse_mode
from .._core.paths import display_path
from .._store.files import unusable_folder
from ..errors import ConfigError, VCRError


class Command(Protocol):
    """A command module: ``NAME``, a one-line ``HELP``, its docstring as the description."""

    NAME: str
    HELP: str
    __doc__: str | None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


#: The program name in every usage line: ``vcr_kit`` and ``python -m vcr_kit`` are one.
PROG: Final = "vcr_kit"
#: Exit statuses: a finding (a problem in the fixtures, an answer that drifted), and a
#: usage or configuration error (nothing was done).
FINDINGS: Final = 1
USAGE_ERROR: Final = 2


class UsageError(Exception):
    """A command line (or a setting it reads) that cannot be acted on: exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def exit_status(exc: BaseException) -> int:
    """The exit status of an error out of a command: 2 for a usage or configuration
    error (``UsageError``, ``ConfigError``: a setting vcr_kit refuses), else 1."""
    return USAGE_ERROR if isinstance(exc, (UsageError, ConfigError)) else FINDINGS


def verb_parser(name: str, **options: object) -> argparse.ArgumentParser:
    """The parser of a command that parses its own arguments (``serve``, ``run``,
    ``mcp``), under the one program name."""
    parser = argparse.ArgumentParser(prog=f"{PROG} {name}", **options)  # type: ignore[arg-type]
    return parser


def usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    """What argparse says of a usage error (the usage line, then ``PROG VERB: error:``),
    returned as the status rather than raised."""
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return USAGE_ERROR

#: The signals that stop ``serve``, ``run`` and the MCP fronts (Ctrl-C, a process manager).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def on_stop_signals(handle: Callable[[int], None]) -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM call ``handle(signum)`` instead of
    their own handlers, which are put back after."""

    def handler(signum: int, frame: FrameType | None) -> None:
        handle(signum)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, own in previous.items():
            signal.signal(sig, own)


def serve_until_stopped(announce: Callable[[], None]) -> None:
    """Call ``announce`` (start, print the address), then return once SIGINT or SIGTERM
    arrives. The handlers are in place before ``announce``: a caller that stops the
    server as soon as it reads the address is never met by the default handler."""
    stopping = threading.Event()
    with on_stop_signals(lambda signum: stopping.set()):
        announce()
        while not stopping.wait(0.2):  # a timed wait lets the handler run promptly
            pass


_FIXTURES_HELP: Final = (
    "the fixtures folder (default: VCR_FIXTURES_DIR, else fixtures/ at the project root)"
)


def add_folder(parser: argparse.ArgumentParser) -> None:
    """The fixtures folder of a command that reads one: ``FOLDER`` or ``--fixtures DIR``
    (the same; given both, they must agree). ``folder_of`` reads them."""
    parser.add_argument("folder", nargs="?", metavar="FOLDER", help="the same as --fixtures DIR")
    add_fixtures_option(parser)


def add_fixtures_option(parser: argparse.ArgumentParser, help: str = _FIXTURES_HELP) -> None:
    """``--fixtures DIR`` alone: for the commands whose positional arguments are other
    things (``show``'s files, ``diff``'s sides, ``serve``)."""
    parser.add_argument("--fixtures", metavar="DIR", help=help)


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--fixtures DIR`` and ``--mode``, for the commands that serve other processes
    (``serve``, ``run``, ``mcp``); ``mode_of`` reads the second."""
    add_fixtures_option(parser)
    parser.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        help="auto, replay, record or off (default: VCR_MODE, else replay in CI, else auto)",
    )


def mode_of(args: argparse.Namespace) -> Mode | None:
    """The ``--mode`` given, or None for the environment's."""
    return None if args.mode is None else parse_mode(args.mode, "--mode")


def store_settings(args: argparse.Namespace) -> Settings:
    """The settings of a command that serves other processes (``add_store_options``):
    every setting a test reads (``ConfigError`` on a bad one), with the fixtures folder
    found as every command finds it. A folder not made yet is fine (the first recording
    makes it; a fault is answered with none), in a folder that exists."""
    settings = load_settings(mode=mode_of(args))
    folder = fixtures_folder(args, may_be_made=True)
    return load_settings(mode=settings.mode, fixtures_dir=folder.absolute())


def fixtures_folder(args: argparse.Namespace, *, may_be_made: bool = False) -> Path:
    """The fixtures folder the command line means: ``FOLDER`` or ``--fixtures DIR``, else
    ``VCR_FIXTURES_DIR``, else ``fixtures/`` at the project root (no other setting is
    read). ``UsageError`` saying what is wrong and what to do when it is not a folder
    vcr_kit can read; ``may_be_made``: one that does not exist yet is fine if the folder
    it would be made in does (a command that records makes it)."""
    given = [text for text in (getattr(args, "folder", None), args.fixtures) if text]
    if len(given) == 2 and Path(given[0]).absolute() != Path(given[1]).absolute():
        raise UsageError(
            f"the fixtures folder is given twice, as {given[0]} and as --fixtures "
            f"{given[1]}: give one"
        )
    if given:
        folder, source, fix = Path(given[0]), None, "name the fixtures folder"
    else:
        folder, source = fixtures_dir_setting()
        fix = (
            "set VCR_FIXTURES_DIR to the fixtures folder, or name it with --fixtures DIR"
            if source
            else "name the fixtures folder with --fixtures DIR (or set VCR_FIXTURES_DIR); "
            "a new project has none until its tests record one"
        )
    shown = display_path(folder) + (f" ({source or 'the default folder'})" if not given else "")
    if not folder.exists():
        parent = folder.absolute().parent
        if may_be_made and parent.is_dir() and not folder.is_symlink():
            return folder  # made by the first answer recorded (a fault needs none)
        if may_be_made:  # a typo in the path, most likely: nothing would be found there
            raise UsageError(
                f"{shown} does not exist, nor does {display_path(parent)}/ where it would "
                f"be made; {fix}"
            )
        raise UsageError(f"{shown} does not exist; {fix}")
    if not folder.is_dir():
        raise UsageError(f"{shown} is not a folder; {fix}")
    unusable = unusable_folder(folder)  # one vcr_kit cannot read
    if unusable is not None:
        raise UsageError(unusable.message)
    return folder


def folder_of(args: argparse.Namespace) -> Path | None:
    """``fixtures_folder``, or None after saying why there is none (exit 2)."""
    try:
        return fixtures_folder(args)
    except (UsageError, VCRError) as exc:
        print(f"vcr_kit: {exc.message}", file=sys.stderr)
        return None


def fail(message: str, status: int = FINDINGS) -> int:
    print(f"vcr_kit: {message}", file=sys.stderr)
    return status


def size(count: int) -> str:
    """Bytes for a person: ``812 B``, ``4.1 KB``, ``3.2 MB``."""
    if count < 1000:
        return f"{count} B"
    if count < 1_000_000:
        return f"{count / 1000:.1f} KB"
    return f"{count / 1_000_000:.1f} MB"


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
