"""Any folder, any file: replay and every command answer with a vcr_kit error or a report,
never another exception, never a wait without end (issue 15, part 4).

Hypothesis builds fixtures folders out of what gets into them: good fixtures, copies
under another request's name, files cut short, in another encoding, nested thousands
deep, large, sparse and larger than any fixture, named pipes, folders and links
called ``*.json``, links out of the folder and links that lead nowhere, at several
depths of subfolders. Then it replays every name (the generic fixture and the HTTP
client), and runs ``check``, ``status``, ``show``, ``diff``, ``unused``, ``prune`` and
``rekey`` over the folder in this process, and ``check`` and ``status`` in a child
process too. The properties: a good fixture replays its answer; a copy is refused; any
other file replays or raises a ``VCRError`` naming it; a command exits 0, 1 or 2 and
``check`` names every file that is not a good fixture.

A file read without end (a named pipe on main) would never return: a watchdog ends the
process with every thread's stack after ``WATCHDOG_SECONDS`` per example, so a hang is a
failure, not a stuck suite.
"""

from __future__ import annotations

import faulthandler
import functools
import json
import os
import shutil
import sys
import tempfile
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.children.sdk_scenarios import recording_key
from tests.support.helpers import fault_report
from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import environ_without_vcr, run_captured, vcr_environ
from tests.support.helpers.examples import examples
from tests.support.helpers.loopback_case import create
from tests.support.helpers.paths import ROOT
from vcr_kit._core.fixture_names import fixture_name

pytestmark = pytest.mark.child

#: Far above what any example takes (a second or two); only a hang reaches it.
WATCHDOG_SECONDS = 300
EXAMPLES = examples(int(os.environ.get("VCR_HOSTILE_EXAMPLES", "60")))
#: Larger than any fixture vcr_kit reads (``vcr_kit._store.files.MAX_FIXTURE_BYTES``).
HUGE = 512 * 1024 * 1024 + 1
SUBFOLDERS = ("", "sub", "sub/deeper", "other.d/x")
KINDS = (
    "good",
    "big",
    "copy",
    "truncated",
    "utf-16",
    "latin-1",
    "bom",
    "bad byte",
    "deep",
    "random bytes",
    "scalar",
    "empty",
    "huge",
    "fifo",
    "folder",
    "link out",
    "dangling link",
    "link loop",
    "other kind",
)
_seen: dict[str, int] = {}


@dataclass(frozen=True)
class Entry:
    """One file of a generated folder: the question whose fixture name it takes."""

    kind: str
    number: int
    where: str
    size: int = 0
    depth: int = 0
    cut: int = 0
    noise: bytes = b""

    def folder(self, root: Path) -> Path:
        return root / self.where if self.where else root

    def path(self, root: Path) -> Path:
        return self.folder(root) / fixture_name(question(self.number), "answer")


def question(number: int) -> dict[str, int]:
    return {"q": number}


def answer(number: int, size: int = 0) -> dict[str, Any]:
    return {"a": number, "text": "x" * size}


@functools.lru_cache(maxsize=64)
def good_bytes(number: int, size: int = 0) -> bytes:
    """A fixture exactly as vcr_kit writes it, recorded for real once per shape."""
    with tempfile.TemporaryDirectory() as scratch:
        with vcr_kit.fixture(question(number), "answer", mode="record", fixtures_dir=scratch) as f:
            f.play(lambda: answer(number, size))
        return (Path(scratch) / fixture_name(question(number), "answer")).read_bytes()


entries = st.builds(
    Entry,
    kind=st.sampled_from(KINDS),
    number=st.integers(0, 5),
    where=st.sampled_from(SUBFOLDERS),
    size=st.sampled_from([0, 1, 1000, 300_000, 3_000_000]),
    depth=st.integers(1, 6000),
    cut=st.integers(0, 10_000),
    noise=st.binary(max_size=64),
)


def content(entry: Entry) -> bytes | None:
    """The bytes of a file entry; None for the entries that are not plain files."""
    good = good_bytes(entry.number)
    text = good.decode("utf-8")
    at = entry.cut % len(good)
    deep = "[" * entry.depth + "]" * entry.depth
    other_kind = dict(json.loads(good), kind="http")
    makers = {
        "good": lambda: good,
        "big": lambda: good_bytes(entry.number, entry.size),
        "copy": lambda: good_bytes(entry.number + 100),
        "truncated": lambda: good[:at],
        "utf-16": lambda: text.encode("utf-16"),
        "latin-1": lambda: text.replace('"a"', '"\u00e9a"').encode("latin-1"),
        "bom": lambda: b"\xef\xbb\xbf" + good,
        "bad byte": lambda: good[:at] + b"\xff\xfe" + good[at:],
        "deep": lambda: text.replace(f'"a": {entry.number}', f'"a": {deep}').encode(),
        "random bytes": lambda: entry.noise,
        "scalar": lambda: b"[1, 2, 3]",
        "empty": lambda: b"",
        "other kind": lambda: json.dumps(other_kind).encode(),
    }
    make = makers.get(entry.kind)
    return None if make is None else make()


def build(root: Path, outside: Path, entry: Entry) -> None:
    """Write ``entry`` into the folder at ``root``; ``outside`` is a folder beside it."""
    path = entry.path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():  # two entries on one name: the first stays
        return
    data = content(entry)
    if data is not None:
        path.write_bytes(data)
    elif entry.kind == "huge":
        with open(path, "wb") as handle:  # sparse: no disk used
            handle.truncate(HUGE)
    elif entry.kind == "fifo":
        os.mkfifo(path)
    elif entry.kind == "folder":
        path.mkdir()
    elif entry.kind == "link out":
        target = outside / f"{entry.number}-{entry.where.replace('/', '_')}.json"
        target.write_bytes(good_bytes(entry.number))
        path.symlink_to(target)
    elif entry.kind == "dangling link":
        path.symlink_to(outside / "nothing-here.json")
    elif entry.kind == "link loop":
        path.symlink_to(path)


def replay(root: Path, entry: Entry) -> Any:
    def never() -> Any:
        raise AssertionError("replay mode called the function")

    with vcr_kit.fixture(
        question(entry.number), "answer", mode="replay", fixtures_dir=entry.folder(root)
    ) as f:
        return f.play(never)


class HostileFoldersTest(unittest.TestCase):
    http_name: ClassVar[str]
    http_bytes: ClassVar[bytes]

    @classmethod
    def setUpClass(cls) -> None:
        if not hasattr(os, "mkfifo"):
            raise unittest.SkipTest("named pipes and links are POSIX")
        cls.env = vcr_environ(VCR_REPORT="0")
        cls.env.__enter__()
        from tests.support.servers.loopback_server import LoopbackServer

        server = LoopbackServer().start()
        try:
            with tempfile.TemporaryDirectory() as scratch:
                with vcr_kit.client(
                    mode="record",
                    fixtures_dir=scratch,
                    base_url=server.url,
                    api_key=recording_key(),
                ) as client:
                    cls.http_answer = create(client, "Hostile").content[0].text
                (path,) = Path(scratch).glob("*.json")
                cls.http_name, cls.http_bytes = path.name, path.read_bytes()
        finally:
            server.stop()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.env.__exit__(None, None, None)
        fault_report.note(
            f"hostile folders: {sum(_seen.values())} files replayed and checked ("
            + ", ".join(f"{k} {v}" for k, v in sorted(_seen.items()))
            + "), each an answer, a vcr_kit error or a one-line report"
        )

    def setUp(self) -> None:
        faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
        self.addCleanup(faulthandler.cancel_dump_traceback_later)

    def folder(self) -> tuple[Path, Path]:
        scratch = Path(tempfile.mkdtemp()).resolve()
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        (scratch / "fixtures").mkdir()
        (scratch / "outside").mkdir()
        return scratch / "fixtures", scratch / "outside"

    # -- replay ------------------------------------------------------------------------

    def check_replay(self, root: Path, placed: list[Entry]) -> None:
        for entry in placed:
            _seen[entry.kind] = _seen.get(entry.kind, 0) + 1
            path = entry.path(root)
            try:
                got = replay(root, entry)
            except vcr_kit.VCRError as exc:
                self.assertNotIn(entry.kind, ("good", "big"), f"{entry}: {exc}")
                if entry.kind == "copy":
                    self.assertIsInstance(exc, vcr_kit.FixtureCorruptError)
                    self.assertIn("holds the answer to another request", str(exc))
                if not isinstance(exc, vcr_kit.FixtureMissingError):  # a dangling link
                    self.assertIn(str(path), str(exc), entry)
            except Exception as exc:  # the property: nothing else, ever
                raise AssertionError(f"{entry}: {type(exc).__name__}: {exc}"[:2000]) from exc
            else:  # an edited answer is the user's to make: only the request is checked
                self.assertNotEqual(entry.kind, "copy", entry)
                if entry.kind in ("good", "big"):
                    size = entry.size if entry.kind == "big" else 0
                    self.assertEqual(got, answer(entry.number, size), entry)

    def check_http_replay(self, root: Path, content_from: Path | None) -> None:
        """The HTTP client replaying a name that holds one of the generated files."""
        folder = root / "http"
        folder.mkdir()
        path = folder / self.http_name
        if content_from is None:
            path.write_bytes(self.http_bytes)
        elif content_from.is_symlink():
            path.symlink_to(os.readlink(content_from))
        elif content_from.is_dir():
            path.mkdir()
        elif content_from.is_file():
            shutil.copyfile(content_from, path)
        else:
            os.mkfifo(path)
        with vcr_kit.client(
            mode="replay", fixtures_dir=folder, base_url="http://127.0.0.1:9", max_retries=0
        ) as client:
            try:
                got = create(client, "Hostile").content[0].text
            except vcr_kit.VCRError as exc:
                self.assertIsNotNone(content_from, exc)
            except anthropic.APIError as exc:
                raise AssertionError(f"{content_from}: {type(exc).__name__}: {exc}") from exc
            else:
                self.assertEqual(got, self.http_answer)
        shutil.rmtree(folder)

    # -- the commands ------------------------------------------------------------------

    def command(self, *argv: str) -> tuple[int, str]:
        status, out, err = cli(*argv)
        self.assertIn(status, (0, 1, 2), (argv, out, err))
        self.assertNotIn("Traceback", out + err, argv)
        return status, out + err

    def check_commands(self, root: Path, placed: list[Entry]) -> None:
        _, out = self.command("check", str(root))
        for entry in placed:
            path = entry.path(root)
            named = any(line.startswith(f"{path}: ") for line in out.splitlines())
            if entry.kind in ("good", "big"):
                self.assertFalse(named, out)
            elif entry.kind in ("copy", "fifo", "folder", "huge", "link out", "empty"):
                self.assertTrue(named, f"{entry}\n{out}")
        self.command("status", str(root))
        self.command("unused", str(root))
        self.command("prune", "--dry-run", str(root))
        files = sorted({str(entry.path(root)) for entry in placed})
        self.command("show", *files)
        self.command("show", "--json", *files)
        for a, b in zip(files, files[1:] + files[:1], strict=True):
            self.command("diff", a, b)
        self.command("rekey", "--dry-run", str(root))
        self.command("rekey", str(root))
        self.command("prune", "--yes", str(root))
        self.command("check", str(root))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(placed=st.lists(entries, min_size=1, max_size=8), pick=st.integers(0, 8))
    def test_replay_and_every_command(self, placed: list[Entry], pick: int) -> None:
        faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)  # per example
        root, outside = self.folder()
        for entry in placed:
            build(root, outside, entry)
        placed = [e for e in placed if e.path(root).exists() or e.path(root).is_symlink()]
        # The first entry on a name is the one on disk: judge that one.
        kept: dict[Path, Entry] = {}
        for entry in placed:
            kept.setdefault(entry.path(root), entry)
        placed = [e for e in placed if kept[e.path(root)] is e]
        self.check_replay(root, placed)
        chosen = None if pick == len(placed) else placed[pick % len(placed)].path(root)
        self.check_http_replay(root, chosen)
        self.check_commands(root, placed)

    @settings(
        max_examples=examples(4),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(placed=st.lists(entries, min_size=1, max_size=8))
    def test_the_commands_in_a_child_process(self, placed: list[Entry]) -> None:
        root, outside = self.folder()
        for entry in placed:
            build(root, outside, entry)
        for command in ("check", "status"):
            done = run_captured(
                [sys.executable, "-W", "error", "-m", "vcr_kit", command, str(root)],
                cwd=ROOT,
                env=dict(environ_without_vcr(), VCR_REPORT="0"),
                timeout=WATCHDOG_SECONDS,
            )
            self.assertIn(done.returncode, (0, 1, 2), done.stderr)
            self.assertNotIn("Traceback", done.stdout + done.stderr)


def tearDownModule() -> None:
    fault_report.print_for_unittest("hostile")


if __name__ == "__main__":
    unittest.main()
