"""``rekey``: a new dehydrate rule, then rekey, then the suite replays with no API call."""

from __future__ import annotations

import shutil
import unittest

import pytest

import vcr_kit
from tests.support.helpers.cli_support import cli, record
from tests.support.helpers.env import temp_dir
from tests.support.helpers.loopback_case import LoopbackTestCase
from vcr_kit.dehydrate import Rule, add_rule, clear_rules

pytestmark = pytest.mark.inprocess

PROMPTS = ["Summarise session-1a2b3c4d please.", "Plain question, no session."]
RULE = Rule("session", r"session-[0-9a-f]{8}", "session-[SESSION]", trigger="session-")


class RekeyTest(LoopbackTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.folder = self.tmp
        self.addCleanup(clear_rules)

    def test_a_new_rule_then_rekey_then_replay_makes_no_api_call(self) -> None:
        record(self.server.url, self.folder, PROMPTS)
        record(self.server.url, self.folder, ["Stream about session-1a2b3c4d."], stream=True)
        before = sorted(p.name for p in self.folder.glob("*.json"))
        add_rule(RULE)

        status, out, _ = cli("rekey", str(self.folder), "--dry-run")
        self.assertEqual(status, 0, out)
        self.assertEqual(sorted(p.name for p in self.folder.glob("*.json")), before)
        self.assertEqual(
            out.splitlines()[-1],
            "vcr_kit: 3 fixtures; would be 2 renamed, 0 merged, 0 rewritten; 0 problems",
        )

        status, out, _ = cli("rekey", str(self.folder))
        self.assertEqual(status, 0, out)
        self.assertEqual(
            out.splitlines()[-1],
            "vcr_kit: 3 fixtures; 2 renamed, 0 merged, 0 rewritten; 0 problems",
        )
        # The stored request now says what the key says.
        texts = "".join(p.read_text(encoding="utf-8") for p in self.folder.glob("*.json"))
        self.assertIn("session-[SESSION]", texts)

        self.server.reset_log()
        with vcr_kit.client(base_url=self.server.url, fixtures_dir=self.folder, mode="replay") as c:
            for prompt in PROMPTS:
                c.messages.create(
                    model="claude-opus-4-7",
                    max_tokens=64,
                    messages=[{"role": "user", "content": prompt}],
                )
        replayed = record(
            self.server.url, self.folder, ["Stream about session-1a2b3c4d."], stream=True
        )
        self.assertEqual(self.server.log, [])
        self.assertEqual(replayed[0].content[0].text, "Echo: Stream about session-1a2b3c4d.")
        # A second rekey has nothing left to do.
        self.assertEqual(
            cli("rekey", str(self.folder))[1],
            "vcr_kit: 3 fixtures; 0 renamed, 0 merged, 0 rewritten; 0 problems\n",
        )

    def test_identical_duplicates_merge_and_different_answers_conflict(self) -> None:
        record(self.server.url, self.folder, ["About session-aaaa1111.", "About session-bbbb2222."])
        before = set(self.folder.glob("*.json"))
        record(self.server.url, self.folder, ["Plain question."])
        (plain,) = set(self.folder.glob("*.json")) - before
        shutil.copy(plain, self.folder / "post-v1-messages-000000000000.json")
        add_rule(RULE)

        status, out, _ = cli("rekey", str(self.folder))

        self.assertEqual(status, 1)
        lines = out.splitlines()
        self.assertIn(
            f"merge   {self.folder / 'post-v1-messages-000000000000.json'} -> {plain.name} "
            "(same answer)",
            lines,
        )
        (conflict,) = [line for line in lines if ": conflict: " in line]
        self.assertRegex(
            conflict,
            r"post-v1-messages-[0-9a-f]{12}\.json: conflict: .+, .+ hold different answers for "
            r"one request; keep one by hand, or delete them and record again$",
        )
        self.assertEqual(
            lines[-1], "vcr_kit: 4 fixtures; 0 renamed, 1 merged, 0 rewritten; 1 problem"
        )
        self.assertEqual(len(list(self.folder.glob("*.json"))), 3)

    def test_rules_can_come_from_a_file(self) -> None:
        record(self.server.url, self.folder, PROMPTS[:1])
        rules = temp_dir(self) / "rules.py"
        rules.write_text(
            "from vcr_kit.dehydrate import Rule, add_rule\n"
            "add_rule(Rule('session', r'session-[0-9a-f]{8}', 'session-[SESSION]', "
            "trigger='session-'))\n",
            encoding="utf-8",
        )
        status, out, _ = cli("rekey", str(self.folder), "--rules", str(rules))
        self.assertEqual(status, 0)
        self.assertTrue(out.startswith("rename  "), out)
        self.assertEqual(
            cli("rekey", str(self.folder), "--rules", str(temp_dir(self) / "no.py"))[0], 2
        )


if __name__ == "__main__":
    unittest.main()
