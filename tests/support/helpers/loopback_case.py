"""The base of tests that drive the real SDK against the loopback server.

Each test gets the same start: no summary line, its own loopback server, an empty
fixtures folder and a fresh key-shaped recording key (which no fixture may hold).
"""

from __future__ import annotations

import unittest
from typing import Any

from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers.env import patch_env, start_server, temp_dir


def create(client: Any, text: str) -> Any:
    """One short ``messages.create`` with ``text`` as the user's message."""
    return client.messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": text}]
    )


class LoopbackTestCase(unittest.TestCase):
    #: The prefix of the test's temp folder's name (``tempfile``'s own when None): a
    #: subclass may name its folders, to tell them apart in a failure's paths.
    temp_prefix: str | None = None

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.server = start_server(self)
        self.tmp = temp_dir(self, prefix=self.temp_prefix)
        self.fixtures = self.tmp / "fixtures"
        self.key = recording_key()
