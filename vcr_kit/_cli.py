"""``python -m vcr_kit check [FOLDER]``: check committed fixtures before CI does.

Every ``*.json`` below the folder (default: the fixtures folder of the settings)
must parse as a vcr_kit fixture, have a valid name, and hold no key: the same
checks a write makes, run over what is already on disk (a hand edit, a merge, a
file written by an older vcr_kit). Exit status 1 when anything is wrong.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ._config import load_settings
from ._keys import validate_name
from ._secrets import find_secret
from ._store import LOCK_FOLDER, display_path, parse_document
from .errors import VCRError


def check_folder(folder: Path) -> tuple[int, list[str]]:
    """(fixtures checked, one line per problem)."""
    problems: list[str] = []
    files = sorted(p for p in folder.rglob("*.json") if LOCK_FOLDER not in p.parts)
    for path in files:
        try:
            validate_name(path.name)
            data = path.read_bytes()
            doc = parse_document(data, path)
            if "response" not in doc:
                problems.append(f"{display_path(path)}: no 'response'")
            secret = find_secret(data, document=doc.get("response"))
            if secret is not None:
                what, where = secret
                problems.append(
                    f"{display_path(path)}: contains {what} {where}; remove it and record again"
                )
        except VCRError as exc:
            problems.append(f"{display_path(path)}: {exc.message}")
    return len(files), problems


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["serve"], ["run"]):  # their own parsers: `run` takes `-- CMD ARGS...`
        from ._proxy_cli import run_main, serve_main

        return serve_main(argv[1:]) if argv[0] == "serve" else run_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m vcr_kit", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="serve a record/replay proxy on 127.0.0.1")
    commands.add_parser("run", help="run a command with ANTHROPIC_BASE_URL set to a proxy")
    check = commands.add_parser("check", help="check every fixture in a folder")
    check.add_argument("folder", nargs="?", help="default: VCR_FIXTURES_DIR or fixtures/")
    args = parser.parse_args(argv)

    folder = Path(args.folder) if args.folder else load_settings().fixtures_dir
    if not folder.is_dir():
        print(f"vcr_kit: {display_path(folder)} is not a folder", file=sys.stderr)
        return 2
    count, problems = check_folder(folder)
    for line in problems:
        print(line)
    print(f"vcr_kit: {count} fixtures checked, {len(problems)} problems")
    return 1 if problems else 0
