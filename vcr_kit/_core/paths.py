"""Paths as a person reads them in a message."""

from __future__ import annotations

from pathlib import Path

__all__ = ["display_path"]


def display_path(path: Path) -> str:
    """The path as the user would type it: relative to the cwd when it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
