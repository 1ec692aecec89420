"""The ledger keys folders by one object per folder: a replay's notes then find theirs
by identity, never comparing two equal paths part by part."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

from vcr_kit._ledger.journal import folder_of

pytestmark = pytest.mark.inprocess


class FolderOfTest(unittest.TestCase):
    def test_the_fixtures_of_one_folder_share_its_object(self) -> None:
        one = folder_of(Path("/fixtures/here/answer-0123456789ab.json"))
        other = folder_of(Path("/fixtures/here/answer-ba9876543210.json"))
        self.assertEqual(one, Path("/fixtures/here"))
        self.assertIs(one, other)

    def test_other_folders_get_other_objects(self) -> None:
        self.assertEqual(folder_of(Path("/fixtures/there/a.json")), Path("/fixtures/there"))
        self.assertIsNot(
            folder_of(Path("/fixtures/there/a.json")), folder_of(Path("/fixtures/here/a.json"))
        )


if __name__ == "__main__":
    unittest.main()
