"""TODO"""

from __future__ import annotations

import argparse

NAME = "diff"
HELP = "TODO"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    return 0
