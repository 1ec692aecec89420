"""What the commands share: the command protocol, the folder argument, sizes."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Protocol

from .._core.config import Mode, parse_mode
from .._core.paths import display_path
from .._store.files import unusable_folder


class Command(Protocol):
    """A command module: ``NAME``, a one-line ``HELP``, its docstring as the description."""

    NAME: str
    HELP: str
    __doc__: str | None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


USAGE_ERROR = 2

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


def add_folder(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", nargs="?", metavar="FOLDER", help="default: VCR_FIXTURES_DIR or fixtures/"
    )


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--fixtures DIR`` and ``--mode``, for the commands that serve other processes
    (``serve``, ``run``, ``mcp``); ``mode_of`` reads the second."""
    parser.add_argument(
        "--fixtures", metavar="DIR", help="fixtures folder (default: VCR_FIXTURES_DIR or fixtures/)"
    )
    parser.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        help="auto, replay, record or off (default: VCR_MODE, else replay in CI, else auto)",
    )


def mode_of(args: argparse.Namespace) -> Mode | None:
    """The ``--mode`` given, or None for the environment's."""
    return None if args.mode is None else parse_mode(args.mode, "--mode")


def folder_of(args: argparse.Namespace) -> Path | None:
    """The fixtures folder the user means, or None (after saying why) if there is none."""
    if args.folder:
        folder = Path(args.folder)
    else:
        from .._core.config import load_settings

        folder = load_settings().fixtures_dir
    if not folder.is_dir():
        print(f"vcr_kit: {display_path(folder)} is not a folder", file=sys.stderr)
        return None
    unusable = unusable_folder(folder)  # one vcr_kit cannot read
    if unusable is not None:
        print(f"vcr_kit: {unusable.message}", file=sys.stderr)
        return None
    return folder


def fail(message: str, status: int = 1) -> int:
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
