"""Replay by the request as it is, and the fixtures kept parsed per process.

Recorded through the real SDK against the loopback server, replayed with the server
gone. A fixture is served from what was kept of it only while its file is the same
(an edit in place, even of the same size, is read again), and only when no dehydrate
rule would change the request: a request that holds this machine's folder now is
keyed as ``[CWD]`` and is not answered by the file its text named before.
"""

from __future__ import annotations

import json
import os
import stat
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from tests.support.helpers.env import patch_env, temp_dir, working_dir
from tests.support.servers.loopback_server import LoopbackServer
from vcr_kit import client
from vcr_kit.errors import FixtureCorruptError, FixtureMissingError

pytestmark = pytest.mark.inprocess

MODEL = "claude-opus-4-7"


def ask(sdk: object, text: str) -> str:
    message = sdk.messages.create(  # type: ignore[attr-defined]
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": text}]
    )
    answer: str = message.content[0].text
    return answer


class ReplayCacheTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.fixtures = temp_dir(self)

    def record(self, text: str) -> Path:
        with (
            LoopbackServer() as server,
            client(
                mode="record",
                fixtures_dir=self.fixtures,
                api_key="test-key",
                base_url=server.url,
                max_retries=0,
            ) as sdk,
        ):
            self.assertEqual(ask(sdk, text), f"Echo: {text}")
        (path,) = [p for p in self.fixtures.glob("*.json") if p.stat().st_size]
        return path

    def replayer(self) -> object:
        sdk = client(mode="replay", fixtures_dir=self.fixtures, max_retries=0)
        self.addCleanup(sdk.close)
        return sdk

    def test_a_fixture_edited_in_place_is_read_again_even_at_the_same_size(self) -> None:
        path = self.record("first question")
        sdk = self.replayer()
        self.assertEqual(ask(sdk, "first question"), "Echo: first question")
        self.assertEqual(ask(sdk, "first question"), "Echo: first question")  # kept
        with open(path, "r+b") as file:  # same inode, same size, another answer
            data = file.read()
            file.seek(0)
            file.write(data.replace(b"Echo: first question", b"Echo: FIRST QUESTION"))
        self.assertEqual(path.stat().st_size, len(data))
        self.assertEqual(ask(sdk, "first question"), "Echo: FIRST QUESTION")

    def test_an_edit_the_timestamps_cannot_show_is_still_read(self) -> None:
        # A filesystem that stamps files in whole seconds (or a kernel's coarse clock):
        # the edit below, made within the same step, leaves inode, size and both times
        # as they were. The step is frozen at the recording's own time.
        path = self.record("third question")
        real_stat = os.stat
        stamp = real_stat(path).st_ctime_ns

        def coarse_stat(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            info = real_stat(target, *args, **kwargs)
            if os.fspath(target) != str(path):
                return info
            fields = list(info)
            fields[stat.ST_MTIME] = fields[stat.ST_CTIME] = stamp // 10**9
            extra = {name: getattr(info, name) for name in ("st_atime", "st_atime_ns")}
            extra.update(st_mtime=stamp / 1e9, st_ctime=stamp / 1e9)
            return os.stat_result(fields, {**extra, "st_mtime_ns": stamp, "st_ctime_ns": stamp})

        sdk = self.replayer()
        with mock.patch("os.stat", coarse_stat):
            before = os.stat(path)
            self.assertEqual(ask(sdk, "third question"), "Echo: third question")
            self.assertEqual(ask(sdk, "third question"), "Echo: third question")
            with open(path, "r+b") as file:
                data = file.read()
                file.seek(0)
                file.write(data.replace(b"Echo: third question", b"Echo: THIRD QUESTION"))
            after = os.stat(path)
            self.assertEqual(
                (after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns),
                (before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns),
            )
            self.assertEqual(ask(sdk, "third question"), "Echo: THIRD QUESTION")

    def test_a_fixture_replaced_by_another_file_is_read_again(self) -> None:
        path = self.record("second question")
        sdk = self.replayer()
        self.assertEqual(ask(sdk, "second question"), "Echo: second question")
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["response"]["body"]["content"][0]["text"] = "a new answer"
        other = path.with_suffix(".new")
        other.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        os.replace(other, path)
        self.assertEqual(ask(sdk, "second question"), "a new answer")

    def test_a_request_a_rule_now_changes_is_not_answered_by_its_old_file(self) -> None:
        # The folder is under the temp folder, whose own rule would replace it first.
        patch_env(self, VCR_REPORT="0", VCR_DISABLE_RULES="temp_dir")
        project = temp_dir(self, "project")
        question = f"what is in {project}/notes.txt?"
        self.record(question)  # recorded elsewhere: the folder is text like any other
        sdk = self.replayer()
        self.assertEqual(ask(sdk, question), f"Echo: {question}")
        with working_dir(project), self.assertRaises(FixtureMissingError) as caught:
            ask(sdk, question)  # here it is the cwd: keyed as [CWD]/notes.txt, not recorded
        self.assertIn("Fixture missing", str(caught.exception))

    def test_a_request_the_default_rules_now_change_is_not_answered_by_its_old_file(
        self,
    ) -> None:
        # The default rules' paths are kept while the cwd and $HOME stay the same.
        home = "/vcr-kit-elsewhere/someone"
        question = f"what is in {home}/notes.txt?"
        self.record(question)  # recorded elsewhere: the folder is text like any other
        sdk = self.replayer()
        self.assertEqual(ask(sdk, question), f"Echo: {question}")
        patch_env(self, VCR_REPORT="0", HOME=home)
        with self.assertRaises(FixtureMissingError) as caught:
            ask(sdk, question)  # now it is the home folder: keyed as [HOME]/notes.txt
        self.assertIn("Fixture missing", str(caught.exception))

    def test_a_huge_integer_is_not_answered_by_the_fixture_of_its_nearest_float(
        self,
    ) -> None:
        # Replay looks a request up by orjson's parse first, which makes an integer
        # beyond 64 bits the nearest float: the key of a fixture recorded with that
        # float. The fixture is not served for it; the exact parse keys the integer.
        def ask_with(sdk: object, seed: float | int) -> str:
            message = sdk.messages.create(  # type: ignore[attr-defined]
                model=MODEL,
                max_tokens=32,
                extra_body={"seed": seed},
                messages=[{"role": "user", "content": "seeded question"}],
            )
            answer: str = message.content[0].text
            return answer

        huge = 2**64 + 1
        with (
            LoopbackServer() as server,
            client(
                mode="record",
                fixtures_dir=self.fixtures,
                api_key="test-key",
                base_url=server.url,
                max_retries=0,
            ) as sdk,
        ):
            ask_with(sdk, float(huge))
            ask_with(sdk, 2**70)  # an integer recorded as it is is answered as it is
        sdk = self.replayer()
        self.assertEqual(ask_with(sdk, float(huge)), "Echo: seeded question")
        self.assertEqual(ask_with(sdk, 2**70), "Echo: seeded question")
        with self.assertRaises(FixtureMissingError) as caught:
            ask_with(sdk, huge)
        self.assertIn("Fixture missing", str(caught.exception))

    def test_a_client_whose_requests_the_rules_change_skips_the_quick_look_up(
        self,
    ) -> None:
        # Claude Code's requests hold this folder and today's date: looked up by the
        # request as it is first, each would be parsed twice. After one such request the
        # next one goes the exact way first; a request found as it is turns it back.
        import anthropic

        from vcr_kit import VCRTransport

        project = temp_dir(self, "project")
        patch_env(self, VCR_REPORT="0", VCR_DISABLE_RULES="temp_dir")
        with (
            LoopbackServer() as server,
            client(
                mode="record",
                fixtures_dir=self.fixtures,
                api_key="test-key",
                base_url=server.url,
                max_retries=0,
            ) as recording,
        ):
            with working_dir(project):
                ask(recording, f"what is in {project}/notes.txt?")
            ask(recording, "a plain question")
        transport = VCRTransport(mode="replay", fixtures_dir=self.fixtures)
        sdk = anthropic.Anthropic(
            api_key="test-key",
            max_retries=0,
            http_client=anthropic.DefaultHttpxClient(transport=transport),
        )
        self.addCleanup(sdk.close)
        with working_dir(project):
            self.assertEqual(
                ask(sdk, f"what is in {project}/notes.txt?"),
                f"Echo: what is in {project}/notes.txt?",
            )
        self.assertFalse(transport.recorder._quick_first)
        self.assertEqual(ask(sdk, "a plain question"), "Echo: a plain question")
        self.assertTrue(transport.recorder._quick_first)

    def test_a_fixture_copied_under_another_requests_name_does_not_answer_it(self) -> None:
        # The prepared way serves a file only when its stored request is the request
        # (the whole SHA1 of their canonical bytes): the full way then names the copy.
        first = self.record("question one")
        first.rename(first.with_suffix(".kept"))
        second = self.record("question two")
        first.with_suffix(".kept").replace(second)  # question one's fixture, two's name
        sdk = self.replayer()
        with self.assertRaises(FixtureCorruptError) as caught:
            ask(sdk, "question two")
        self.assertIn("holds the answer to another request", str(caught.exception))
        self.assertIn(f"not {second.name}", str(caught.exception))

    def test_a_price_set_after_the_first_replay_prices_the_next_one(self) -> None:
        # A kept fixture keeps its usage priced; set_price must still take effect.
        from vcr_kit import Price, reset_session_cost, session_cost, set_price
        from vcr_kit._ledger import cost as _cost

        self.record("priced question")
        sdk = self.replayer()
        self.addCleanup(_cost.COST.reset)
        self.addCleanup(reset_session_cost)
        reset_session_cost()
        ask(sdk, "priced question")
        listed = session_cost()
        self.assertGreater(listed.input_tokens, 0)
        self.assertLess(listed.usd, 1)
        set_price(MODEL, Price(1_000_000, 0, 0, 0, 0))  # $1 per input token
        reset_session_cost()
        ask(sdk, "priced question")
        self.assertAlmostEqual(session_cost().usd, listed.input_tokens)

    def test_each_replay_is_counted_in_the_cost_and_the_journal(self) -> None:
        # A replay's note is made once per fixture and its cost only counted, added up
        # when the session cost is asked: every replay must still be there, once.
        from vcr_kit import reset_session_cost, session_cost
        from vcr_kit._ledger.journal import Event, journal

        path = self.record("counted question")
        sdk = self.replayer()
        self.addCleanup(reset_session_cost)
        reset_session_cost()
        ask(sdk, "counted question")
        once = session_cost()
        self.assertEqual(once.calls, 1)
        with journal() as seen:
            for _ in range(3):
                ask(sdk, "counted question")
        total = session_cost()
        self.assertEqual(total.calls, 4)
        self.assertEqual(total.input_tokens, 4 * once.input_tokens)
        self.assertAlmostEqual(total.usd, 4 * once.usd)
        self.assertEqual(seen.paths(Event.REPLAYED), [path] * 3)
        self.assertAlmostEqual(sum(e.cost_usd for e in seen.entries), 3 * once.usd)
        ask(sdk, "counted question")  # counted, not yet added up: a reset drops it too
        reset_session_cost()
        ask(sdk, "counted question")
        self.assertEqual(session_cost().calls, 1)


if __name__ == "__main__":
    unittest.main()
