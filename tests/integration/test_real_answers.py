"""Real API answers through vcr_kit: what a caller gets while recording and in replay is
what the plain SDK parses, ids aside (issue 29, point 7).

Every Messages API call in ``../shared/real_answers/cassettes/`` (real answers: thinking,
server tools, citations, ``pause_turn``, streams, token counts, errors) is sent through
the real anthropic SDK three times, each cassette a conversation: plainly to a loopback
server that answers as the API did; through vcr_kit recording into a temp folder; and
through vcr_kit replaying, with no server. Each later request quotes the ids its caller
was given, as a program would. The parsed objects must be equal but for one consistent
renaming of ids per cassette and run (a bijection: an id the API repeats in a later
answer, such as the ``tool_use_id`` of a ``web_search_tool_result`` that resumes a
``pause_turn``, keeps the stand-in it already has), and while recording the API must
receive the request as recorded (vcr_kit sends the live ids its stand-ins stand for).
"""

from __future__ import annotations

import os
import tempfile
import unittest
from pathlib import Path
from typing import Any

import anthropic
import pytest

import vcr_kit
from tests.support.helpers.id_renaming import Renaming
from tests.support.helpers.real_answers import AnswerServer, Call, conversations, left_out, parsed
from vcr_kit._core import ids as _ids
from vcr_kit._core.httplib import sdk_library

pytestmark = pytest.mark.inprocess

_KEY = "not-a-real-key"
#: 426 fixture writes, each fsynced with its folder: in memory where there is a tmpfs.
_MEMORY = "/dev/shm"


class RealAnswersTest(unittest.TestCase):
    server: AnswerServer
    plain: anthropic.Anthropic
    live: Any

    @classmethod
    def setUpClass(cls) -> None:
        if not conversations():
            raise unittest.SkipTest("../shared/real_answers/ is not beside the clone")
        cls.server = AnswerServer().__enter__()
        cls.addClassCleanup(cls.server.__exit__, None, None, None)
        # One connection pool for every client: each new one loads the CA bundle (25 ms).
        cls.live = sdk_library().HTTPTransport()
        cls.addClassCleanup(cls.live.close)
        cls.plain = anthropic.Anthropic(
            base_url=cls.server.url,
            api_key=_KEY,
            max_retries=0,
            http_client=anthropic.DefaultHttpxClient(transport=cls.live),
        )

    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)
        folder = tempfile.TemporaryDirectory(dir=_MEMORY if os.path.isdir(_MEMORY) else None)
        self.addCleanup(folder.cleanup)
        self.folder = Path(folder.name)

    def client(self, mode: str, folder: Path) -> anthropic.Anthropic:
        transport = vcr_kit.VCRTransport(mode=mode, fixtures_dir=folder, live=self.live)
        return anthropic.Anthropic(
            base_url=self.server.url,
            api_key=_KEY,
            max_retries=0,
            http_client=anthropic.DefaultHttpxClient(transport=transport),
        )

    def failures(self, cassette: str, calls: tuple[Call, ...]) -> list[str]:
        """Each call of one cassette whose record or replay differs from the plain SDK's
        parse, or whose recording did not reach the API as recorded."""
        plain = []
        for call in calls:
            self.server.call = call
            plain.append(parsed(self.plain, call, call.body))
        found: list[str] = []
        folder = self.folder / cassette
        for mode in ("record", "replay"):
            _ids.forget()  # replay as a fresh process would: no live id known
            renaming, client = Renaming(), self.client(mode, folder)
            for call, expected in zip(calls, plain, strict=True):
                self.server.call = call if mode == "record" else None
                self.server.received = None
                try:
                    got = parsed(client, call, renaming.request(call.body))
                except vcr_kit.VCRError as error:
                    found.append(f"{call.name} {mode}: {type(error).__name__}: {str(error)[:200]}")
                    continue
                problems = renaming.differences(expected, got)
                if mode == "record" and self.server.received != call.body:
                    problems.append("the API did not receive the recorded request")
                if problems:
                    found.append(f"{call.name} {mode}: " + "; ".join(problems[:3]))
        return found

    def test_every_real_answer_is_what_the_plain_sdk_parses(self) -> None:
        found = [f for cassette, calls in conversations() for f in self.failures(cassette, calls)]
        total = sum(len(calls) for _, calls in conversations())
        self.assertEqual(total, 213, "the Messages API calls in the cassettes")
        self.assertEqual(len(left_out()), 15, left_out())  # other APIs, the Files API
        if found:
            self.fail(
                f"{len(found)} of {2 * total} record and replay runs differ:\n" + "\n".join(found)
            )


if __name__ == "__main__":
    unittest.main()
