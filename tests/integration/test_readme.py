"""The README's interactive examples run as written."""

from __future__ import annotations

import doctest
import unittest

import pytest

from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.inprocess

README = ROOT / "README.md"


class ReadmeTest(unittest.TestCase):
    def test_interactive_examples_give_the_output_shown(self) -> None:
        result = doctest.testfile(str(README), module_relative=False, verbose=False)
        self.assertGreater(result.attempted, 0)
        self.assertEqual(result.failed, 0)
