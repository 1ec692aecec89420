"""``_store.cache``: a fixture parsed once per process while its file is unchanged."""

from __future__ import annotations

import json
import os
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import temp_dir
from vcr_kit._store.cache import MAX_CACHED_BYTES, MAX_CACHED_FILES, cached_fixture

pytestmark = pytest.mark.inprocess


def write_fixture(path: Path, text: str = "an answer") -> None:
    doc = {"vcr_kit_format": 1, "kind": "http", "request": {}, "response": {"text": text}}
    path.write_text(json.dumps(doc), encoding="utf-8")


class FixtureCacheTest(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = temp_dir(self)

    def test_an_unchanged_file_is_parsed_once(self) -> None:
        path = self.folder / "a.json"
        write_fixture(path)
        first = cached_fixture(path)
        assert first is not None
        first.memo["derived"] = 1
        self.assertIs(cached_fixture(path), first)

    def test_a_file_changed_in_place_or_replaced_is_parsed_again(self) -> None:
        path = self.folder / "a.json"
        write_fixture(path, "first")
        first = cached_fixture(path)
        with open(path, "r+b") as file:  # same inode and size
            data = file.read()
            file.seek(0)
            file.write(data.replace(b"first", b"FIRST"))
        second = cached_fixture(path)
        assert second is not None
        self.assertIsNot(second, first)
        self.assertEqual(second.doc["response"], {"text": "FIRST"})
        self.assertEqual(second.memo, {})
        other = self.folder / "b.json"
        write_fixture(other, "third")
        os.replace(other, path)
        third = cached_fixture(path)
        assert third is not None
        self.assertEqual(third.doc["response"], {"text": "third"})

    def test_nothing_is_kept_of_a_missing_unreadable_or_large_file(self) -> None:
        self.assertIsNone(cached_fixture(self.folder / "missing.json"))
        (self.folder / "not-json.json").write_text("{", encoding="utf-8")
        self.assertIsNone(cached_fixture(self.folder / "not-json.json"))
        (self.folder / "folder.json").mkdir()
        self.assertIsNone(cached_fixture(self.folder / "folder.json"))
        large = self.folder / "large.json"
        write_fixture(large, "x" * MAX_CACHED_BYTES)
        self.assertIsNone(cached_fixture(large))

    def test_the_least_recently_used_fixture_goes_first(self) -> None:
        paths = [self.folder / f"f{n}.json" for n in range(MAX_CACHED_FILES + 1)]
        for path in paths:
            write_fixture(path)
        first = cached_fixture(paths[0])
        second = cached_fixture(paths[1])
        for path in paths[2:]:
            cached_fixture(path)
        self.assertIs(cached_fixture(paths[1]), second)  # not yet the oldest
        self.assertIsNot(cached_fixture(paths[0]), first)  # the oldest: dropped, read again


if __name__ == "__main__":
    unittest.main()
