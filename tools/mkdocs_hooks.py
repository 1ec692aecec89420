"""mkdocs hooks for the docs site: the command-line reference is built from vcr_kit's
own argument parsers each time the site is built, so it cannot drift from them.

A page that holds the marker line ``<!-- cli-reference -->`` gets, in its place, the
``--help`` of ``vcr_kit`` and of every verb, as the parsers print it. Nothing here
reaches the network: it runs vcr_kit's ``main`` in this process with ``--help``.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- cli-reference -->"
#: Help is wrapped at this width whatever the terminal that builds the site.
WIDTH = "100"


@contextlib.contextmanager
def _columns(width: str) -> Iterator[None]:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def verbs() -> list[str]:
    """Every verb of the command line, in the order of ``vcr_kit --help``."""
    from vcr_kit._cli import COMMANDS, PROXY_COMMANDS

    return [command.NAME for command in COMMANDS] + list(PROXY_COMMANDS)


def help_text(argv: list[str]) -> str:
    """What ``vcr_kit ARGV`` prints (``--help`` given): the parser's own words."""
    from vcr_kit._cli import main

    out = io.StringIO()
    with (
        _columns(WIDTH),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(io.StringIO()),
        contextlib.suppress(SystemExit),
    ):
        main(argv)
    return out.getvalue().rstrip() + "\n"


def cli_reference() -> str:
    """The reference in markdown: one section per verb, its help as printed."""
    parts = ["## `vcr_kit`\n", "```text\n" + help_text(["--help"]) + "```\n"]
    for verb in verbs():
        parts += [f"## `vcr_kit {verb}`\n", "```text\n" + help_text([verb, "--help"]) + "```\n"]
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs' hook: put the generated reference where a page asks for it."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
