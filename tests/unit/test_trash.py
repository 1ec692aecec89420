"""The trash of ``vcr_kit prune`` (vcr_kit._store.trash), on real files."""

from __future__ import annotations

import unittest

import pytest

from tests.support.helpers.env import temp_dir
from vcr_kit._store import trash

pytestmark = pytest.mark.inprocess


class TrashTest(unittest.TestCase):
    def setUp(self) -> None:
        self.root = temp_dir(self)
        (self.root / "sub").mkdir()
        for name in ("a.json", "b.json", "sub/c.json"):
            (self.root / name).write_text(name, encoding="utf-8")

    def test_undo_goes_back_one_prune_at_a_time(self) -> None:
        first = trash.move_to_trash(self.root, [self.root / "a.json", self.root / "sub/c.json"])
        second = trash.move_to_trash(self.root, [self.root / "b.json"])
        self.assertEqual(trash.batches(self.root), [first.batch, second.batch])
        self.assertEqual(second.moved, [self.root / "b.json"])
        kept = sorted(p.name for p in self.root.rglob("*.json"))
        self.assertEqual(kept, ["a.json", "b.json", "c.json"])  # in the trash, too
        self.assertFalse((self.root / "b.json").exists())

        assert second.batch is not None
        self.assertEqual(trash.restore(self.root, second.batch).restored, [self.root / "b.json"])
        self.assertEqual(trash.batches(self.root), [first.batch])
        assert first.batch is not None
        done = trash.restore(self.root, first.batch)
        self.assertEqual(done.restored, [self.root / "a.json", self.root / "sub/c.json"])
        self.assertEqual((self.root / "sub/c.json").read_text(encoding="utf-8"), "sub/c.json")
        self.assertEqual(trash.batches(self.root), [])

    def test_a_file_with_the_same_bytes_in_place_is_not_kept_twice(self) -> None:
        batch = trash.move_to_trash(self.root, [self.root / "a.json"]).batch
        assert batch is not None
        (self.root / "a.json").write_text("a.json", encoding="utf-8")  # re-recorded, same
        done = trash.restore(self.root, batch)
        self.assertEqual((done.restored, done.kept), ([], []))
        self.assertEqual(done.in_place, [self.root / "a.json"])
        self.assertEqual(trash.batches(self.root), [])

    def test_empty_deletes_every_prune(self) -> None:
        trash.move_to_trash(self.root, [self.root / "a.json"])
        trash.move_to_trash(self.root, [self.root / "b.json", self.root / "gone.json"])
        self.assertEqual(trash.empty(self.root).deleted, 2)
        self.assertFalse((self.root / trash.TRASH_FOLDER).exists())


if __name__ == "__main__":
    unittest.main()
