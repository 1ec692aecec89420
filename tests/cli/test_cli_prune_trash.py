"""The trash of ``vcr_kit prune`` is honest: ``--undo`` takes the prunes newest first,
in the order they were made; a file that cannot go back is said, stays in the trash,
and does not block the prune before it; every message says what was done, and what
could not be done exits 1.

A state machine runs ``prune --yes``, re-records (the same bytes or others), removals,
``--undo`` and ``--empty-trash`` through the command line, in-process, on a real
folder, against a model of the folder and the trash, compared after each step. Each
prune is driven by a complete run record that names every fixture but those it should
move, as a test run would leave it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import temp_dir, working_dir
from tests.support.helpers.examples import examples
from vcr_kit._store import trash

pytestmark = pytest.mark.inprocess

NAMES = [f"post-v1-messages-{n:012x}.json" for n in range(4)]
CONTENTS = [b'{"v": 1}\n', b'{"v": 2}\n']
MOVED = re.compile(
    r"^vcr_kit: moved (\d+) unused fixtures? and 0 debris files to (fixtures/\.trash/[^/]+)/ "
    r"\(undo: vcr_kit prune --undo; delete for good: vcr_kit prune --empty-trash\)$"
)


def write_complete_run(fixtures: Path, number: int, used: list[str]) -> None:
    """A complete run's record (as pytest writes it) that used ``used``; runs numbered
    later finish later, and every one starts after any file here was written."""
    started = time.time() + 1000 + 10 * number
    record = {
        "run": f"run-{number:04d}", "pid": 1, "started": started, "finished": started + 1,
        "runner": "pytest", "command": "pytest", "complete": True,
        "why": f"every one of the {len(used)} collected tests passed", "hard": False,
        "defers": False, "used": sorted(used), "changed": [], "tests": {},
    }  # fmt: skip
    target = fixtures / ".runs" / record["run"]
    target.mkdir(parents=True)
    (target / "1.json").write_text(json.dumps(record), encoding="utf-8")


def files_below(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (the trash's own mark and .gitignore left out)."""
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and p.name not in (".vcr_kit-undone", ".gitignore")
    }


@dataclass
class Batch:
    folder: str  # as prune named it, relative to the project root
    files: dict[str, bytes]
    undone: bool = False


@dataclass
class Project:
    """A project root with a fixtures folder, and the prune command on it."""

    root: Path
    runs: int = 0
    outputs: list[str] = field(default_factory=list)

    @property
    def fixtures(self) -> Path:
        return self.root / "fixtures"

    def prune(self, *args: str) -> tuple[int, str, str]:
        with working_dir(self.root):
            return cli("prune", *args)

    def prune_all_but(self, used: list[str]) -> tuple[int, str, str]:
        self.runs += 1
        write_complete_run(self.fixtures, self.runs, used)
        return self.prune("--yes")


class TrashMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        root = Path(tempfile.mkdtemp()).resolve()
        (root / "fixtures").mkdir()
        self.project = Project(root)
        self.folder: dict[str, bytes] = {}
        self.batches: list[Batch] = []
        for name in NAMES:
            self.write(name, CONTENTS[0])

    def teardown(self) -> None:
        shutil.rmtree(self.project.root, ignore_errors=True)

    def write(self, name: str, content: bytes) -> None:
        (self.project.fixtures / name).write_bytes(content)
        self.folder[name] = content

    @precondition(lambda self: bool(self.folder))
    @rule(data=st.data())
    def prune(self, data: st.DataObject) -> None:
        present = sorted(self.folder)
        gone = data.draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
        status, out, err = self.project.prune_all_but([n for n in present if n not in gone])
        last = out.splitlines()[-1]
        self.assertions(status == 0 and err == "", (status, out, err))
        moved = MOVED.match(last)
        self.assertions(moved is not None, out)
        assert moved is not None
        self.assertions(int(moved[1]) == len(gone), out)
        for name in gone:
            self.assertions(f"unused  fixtures/{name}" in out.splitlines(), out)
        self.batches.append(Batch(moved[2], {n: self.folder.pop(n) for n in gone}))

    @rule(name=st.sampled_from(NAMES), content=st.sampled_from(CONTENTS))
    def rerecord(self, name: str, content: bytes) -> None:
        self.write(name, content)

    @precondition(lambda self: bool(self.folder))
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.folder)))
        (self.project.fixtures / name).unlink()
        del self.folder[name]

    @rule()
    def undo(self) -> None:
        status, out, err = self.project.prune("--undo")
        open_batches = [b for b in self.batches if not b.undone]
        if not open_batches:
            left = sum(len(b.files) for b in self.batches)
            why = (
                f"every prune in fixtures/.trash/ is undone; {left} file"
                f"{'' if left == 1 else 's'} that could not go back stay there: move them by "
                "hand, or delete them with vcr_kit prune --empty-trash"
                if left
                else "fixtures/.trash/ holds no prune"
            )
            self.assertions((status, out, err) == (1, "", f"vcr_kit: nothing to undo ({why})\n"),
                            (status, out, err))  # fmt: skip
            return
        batch = open_batches[-1]
        lines: list[str] = []
        restored, same, kept = [], [], []
        for name, content in sorted(batch.files.items()):
            if name not in self.folder:
                self.folder[name] = content
                restored.append(name)
                lines.append(f"restored  fixtures/{name}")
            elif self.folder[name] == content:
                same.append(name)
            else:
                kept.append(name)
        lines += [f"already in place  fixtures/{n} (the same bytes are there)" for n in same]
        lines += [f"kept in the trash  fixtures/{n} (a different file has its name now)"
                  for n in kept]  # fmt: skip
        batch.files = {n: c for n, c in batch.files.items() if n in kept}
        batch.undone = True
        if not kept:
            self.batches.remove(batch)
        plural = "" if len(restored) == 1 else "s"
        also = f"; {len(same)} already in place" if same else ""
        if kept:
            before = "; the next --undo goes to the prune before it" * (len(open_batches) > 1)
            total = len(restored) + len(same) + len(kept)
            expected_err = (
                f"vcr_kit: restored {len(restored)} of {total} file{'' if total == 1 else 's'} "
                f"from {batch.folder}/{also}; {len(kept)} could not go back (above) and stay "
                "there: move them by hand, or delete them with vcr_kit prune --empty-trash"
                f"{before}\n"
            )
            expected = (1, "\n".join(lines) + "\n", expected_err)
        else:
            count = f"{len(restored)} file{plural}"
            lines.append(f"vcr_kit: restored {count} from {batch.folder}/{also}")
            expected = (0, "\n".join(lines) + "\n", "")
        self.assertions((status, out, err) == expected, f"{(status, out, err)}\n!=\n{expected}")

    @rule()
    def empty_trash(self) -> None:
        status, out, err = self.project.prune("--empty-trash")
        count = sum(len(b.files) for b in self.batches)
        self.batches = []
        said = (
            f"vcr_kit: emptied fixtures/.trash/ ({count} file{'' if count == 1 else 's'} deleted)\n"
            if count
            else "vcr_kit: nothing to delete (fixtures/.trash/ holds no file)\n"
        )
        self.assertions((status, out, err) == (0, said, ""), (status, out, err))

    @invariant()
    def folder_and_trash_are_as_modelled(self) -> None:
        fixtures = self.project.fixtures
        actual = {p.name: p.read_bytes() for p in fixtures.glob("*.json")}
        self.assertions(actual == self.folder, (actual, self.folder))
        in_trash = files_below(fixtures / trash.TRASH_FOLDER)
        modelled = {
            str(Path(b.folder).relative_to("fixtures/.trash") / n): c
            for b in self.batches
            for n, c in b.files.items()
        }
        self.assertions(in_trash == modelled, (in_trash, modelled))
        open_batches = [str(p.relative_to(self.project.root)) for p in trash.batches(fixtures)]
        self.assertions(open_batches == [b.folder for b in self.batches if not b.undone],
                        (open_batches, self.batches))  # fmt: skip

    @staticmethod
    def assertions(holds: bool, story: object) -> None:
        if not holds:
            raise AssertionError(story)


TrashMachine.TestCase.settings = settings(
    max_examples=examples(30), stateful_step_count=20, deadline=None
)
TrashMachineTest = TrashMachine.TestCase


class UndoExamplesTest(unittest.TestCase):
    """The reviewer's cases, step by step, with every message pinned."""

    def setUp(self) -> None:
        root = temp_dir(self)
        (root / "fixtures").mkdir()
        self.project = Project(root)
        for name in NAMES[:2]:
            (self.project.fixtures / name).write_bytes(CONTENTS[0])

    def test_a_file_that_cannot_go_back_does_not_block_the_prune_before(self) -> None:
        first, second = NAMES[:2]
        self.project.prune_all_but([second])
        self.project.prune_all_but([])
        (self.project.fixtures / second).write_bytes(CONTENTS[1])  # re-recorded since
        (older, newer) = [str(b.relative_to(self.project.root))
                          for b in trash.batches(self.project.fixtures)]  # fmt: skip

        self.assertEqual(self.project.prune("--undo"), (
            1,
            f"kept in the trash  fixtures/{second} (a different file has its name now)\n",
            f"vcr_kit: restored 0 of 1 file from {newer}/; 1 could not go back (above) and "
            "stay there: move them by hand, or delete them with vcr_kit prune --empty-trash; "
            "the next --undo goes to the prune before it\n",
        ))  # fmt: skip
        self.assertEqual(self.project.prune("--undo"), (
            0, f"restored  fixtures/{first}\nvcr_kit: restored 1 file from {older}/\n", "",
        ))  # fmt: skip
        self.assertEqual((self.project.fixtures / second).read_bytes(), CONTENTS[1])
        self.assertEqual(self.project.prune("--undo"), (
            1, "",
            "vcr_kit: nothing to undo (every prune in fixtures/.trash/ is undone; 1 file that "
            "could not go back stay there: move them by hand, or delete them with vcr_kit "
            "prune --empty-trash)\n",
        ))  # fmt: skip
        emptied = "vcr_kit: emptied fixtures/.trash/ (1 file deleted)\n"
        self.assertEqual(self.project.prune("--empty-trash"), (0, emptied, ""))
        nothing = "vcr_kit: nothing to delete (fixtures/.trash/ holds no file)\n"
        self.assertEqual(self.project.prune("--empty-trash"), (0, nothing, ""))

    def test_prunes_made_in_one_second_are_undone_newest_first(self) -> None:
        # Batch names within one second end -2, -3, ... -10: compared as numbers. The
        # clock is held on one second, so that every prune here falls in it.
        (self.project.fixtures / NAMES[1]).unlink()
        made = []
        one_second = mock.patch.object(time, "strftime", return_value="20260101T000000")
        one_second.start()
        self.addCleanup(one_second.stop)
        for number in range(12):
            status, out, _ = self.project.prune_all_but([])
            self.assertEqual(status, 0, out)
            made.append(out.splitlines()[-1].split(" to ")[1].split("/ (")[0])
            (self.project.fixtures / NAMES[0]).write_bytes(b"%d" % number)
        os.remove(self.project.fixtures / NAMES[0])
        for number in reversed(range(12)):
            status, out, _ = self.project.prune("--undo")
            self.assertEqual((status, out.splitlines()[-1]),
                             (0, f"vcr_kit: restored 1 file from {made[number]}/"))  # fmt: skip
            content = (self.project.fixtures / NAMES[0]).read_bytes()
            self.assertEqual(content, CONTENTS[0] if number == 0 else b"%d" % (number - 1))
            os.remove(self.project.fixtures / NAMES[0])

    def test_a_file_that_cannot_be_moved_is_an_error_and_stays(self) -> None:
        if os.geteuid() == 0:
            self.skipTest("root may move any file")
        sub = self.project.fixtures / "sub"
        sub.mkdir()
        (sub / NAMES[2]).write_bytes(CONTENTS[0])
        write_complete_run(sub, 99, [])  # judged, like the folder above
        sub.chmod(0o500)  # its files cannot be moved out
        self.addCleanup(sub.chmod, 0o700)
        status, out, err = self.project.prune_all_but([])
        self.assertEqual(status, 1, out)
        self.assertEqual(err, (
            f"vcr_kit: cannot move fixtures/sub/{NAMES[2]} to fixtures/.trash/: Permission "
            "denied; it stays in place\nvcr_kit: 1 file could not be moved (above)\n"
        ))  # fmt: skip
        self.assertRegex(out.splitlines()[-1], MOVED)
        self.assertTrue((sub / NAMES[2]).exists())


if __name__ == "__main__":
    unittest.main()
