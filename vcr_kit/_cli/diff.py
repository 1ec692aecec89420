"""Show what differs between two fixtures: a unified diff of their requests, then of
their answers (pretty JSON, sorted keys), then the verdict on the change (identical,
benign, regression or API drift: see vcr_kit.compare).

Between two folders (diff OLD_FOLDER NEW_FOLDER), or the fixtures folder at two
git revisions (diff --git REV [REV2], the second one the working tree by
default): one line per fixture that differs, with its verdict and why, and the
fixtures only one side has.

Exit status 0 when they are the same, 1 when they differ, as diff(1) does.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .._core.answer_verdict import IDENTICAL, compare_documents
from .._core.paths import display_path
from .._store.scan import read_named, scan
from ._common import USAGE_ERROR, add_fixtures_option, fail, fixtures_folder

NAME = "diff"
HELP = "what differs between two fixtures, two folders or two git revisions, and its verdict"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", nargs="?",
                        help="a fixture file, or a folder (with --git: a revision)")
    parser.add_argument("b", metavar="B", nargs="?",
                        help="another fixture file or folder (with --git: a revision, "
                             "default the working tree)")
    parser.add_argument("--git", action="store_true",
                        help="compare the fixtures folder at revision A with B (or the "
                             "working tree)")
    add_fixtures_option(parser, help="with --git: the fixtures folder (default: "
                        "VCR_FIXTURES_DIR, else fixtures/ at the project root)")


def _lines(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def run(args: argparse.Namespace) -> int:
    if args.fixtures and not args.git:
        return fail("diff: --fixtures goes with --git (diff --git REV [REV2] --fixtures DIR)",
                    USAGE_ERROR)
    if args.git:
        return _git(args)
    if args.a is None or args.b is None:
        return fail("diff: give two fixture files, two folders, or --git REV [REV2]", USAGE_ERROR)
    a_path, b_path = Path(args.a), Path(args.b)
    if a_path.is_dir() and b_path.is_dir():
        return _folders(a_path, b_path, display_path(a_path), display_path(b_path))
    return _files(a_path, b_path)


def _files(a_path: Path, b_path: Path) -> int:
    a, b = read_named(a_path), read_named(b_path)
    if a.doc is None or b.doc is None:
        bad = a if a.doc is None else b
        return fail(f"{display_path(bad.path)}: {bad.error}", 2)
    name_a, name_b = display_path(a.path), display_path(b.path)
    out: list[str] = []
    for part in ("request", "response", "usage"):
        out += difflib.unified_diff(
            _lines(a.doc.get(part)),
            _lines(b.doc.get(part)),
            f"{name_a} ({part})",
            f"{name_b} ({part})",
            lineterm="",
        )
    if a.doc.get("kind") != b.doc.get("kind"):
        out.insert(0, f"kind: {a.doc.get('kind')} != {b.doc.get('kind')}")
    if out:
        verdict = compare_documents(a.doc, b.doc)
        out.append(f"verdict: {verdict.verdict}")
        out += [f"  {reason}" for reason in verdict.reasons]
    print("\n".join(out) if out else f"vcr_kit: {name_a} and {name_b} are the same")
    return 1 if out else 0


def _folders(a: Path, b: Path, name_a: str, name_b: str) -> int:
    """One line per fixture that differs between the folders ``a`` and ``b``."""
    old = {f.path.relative_to(a).as_posix(): f for f in scan(a)}
    new = {f.path.relative_to(b).as_posix(): f for f in scan(b)}
    lines: list[str] = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            lines.append(f"only in {name_a}  {name}")
            continue
        if name not in old:
            lines.append(f"only in {name_b}  {name}")
            continue
        before, after = old[name], new[name]
        if before.doc is None or after.doc is None:
            bad = before if before.doc is None else after
            lines.append(f"unreadable  {name}: {bad.error}")
            continue
        if before.doc == after.doc:
            continue
        verdict = compare_documents(before.doc, after.doc)
        why = "; ".join(verdict.reasons) or "the same answer (its request or usage differs)"
        lines.append(f"{verdict.verdict}  {name}: {why}")
    for line in lines:
        print(line)
    if not lines:
        print(f"vcr_kit: {name_a} and {name_b} hold the same fixtures")
        return 0
    counted = [line.split("  ", 1)[0] for line in lines]
    summary = ", ".join(f"{counted.count(k)} {k}" for k in dict.fromkeys(counted))
    print(f"vcr_kit: {summary}")
    changed = [k for k in counted if k != IDENTICAL]
    return 1 if changed else 0


def _git(args: argparse.Namespace) -> int:
    if args.a is None:
        return fail("diff --git: name a revision (diff --git REV [REV2])", USAGE_ERROR)
    folder = fixtures_folder(args)  # a UsageError (exit 2) says what is wrong with it
    try:
        top = Path(_run_git(folder, "rev-parse", "--show-toplevel").decode().strip())
        relative = folder.resolve().relative_to(top.resolve()).as_posix()
    except (OSError, subprocess.CalledProcessError, ValueError) as exc:
        return fail(f"diff --git: {display_path(folder)} is not in a git work tree ({exc})",
                    USAGE_ERROR)
    with tempfile.TemporaryDirectory(prefix="vcr_kit-diff-") as temp:
        try:
            old = _at_revision(top, relative, args.a, Path(temp) / "a")
            new = folder if args.b is None else _at_revision(top, relative, args.b,
                                                             Path(temp) / "b")
        except subprocess.CalledProcessError as exc:
            error = exc.stderr.decode("utf-8", "replace").strip().splitlines()
            return fail(f"diff --git: {error[-1] if error else exc}", USAGE_ERROR)
        return _folders(old, new, args.a, args.b or "the working tree")


def _run_git(cwd: Path, *words: str) -> bytes:
    done = subprocess.run(["git", *words], cwd=cwd, capture_output=True, check=True)
    return done.stdout


def _at_revision(top: Path, relative: str, revision: str, into: Path) -> Path:
    """The fixtures folder ``relative`` (to the work tree ``top``) as it was at
    ``revision``, written out below ``into``."""
    into.mkdir(parents=True)
    archive = into / "fixtures.tar"
    data = _run_git(top, "archive", "--format=tar", revision, "--", relative)
    archive.write_bytes(data)
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        if hasattr(tarfile, "data_filter"):  # 3.10.12+: refuses paths out of ``into``
            tar.extractall(into, members=members, filter="data")
        else:  # git's own tree of files and folders
            tar.extractall(into, members=members)
    archive.unlink()
    return into / relative
