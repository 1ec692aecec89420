"""``vcr_kit.dehydrate``: the rule table, hydrate, the token-count normalisation.

Pure functions on strings and JSON values: tables for every rule, hypothesis for
the properties (idempotence, no-trigger strings untouched, hydrate undoes dehydrate).
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import patch_env, working_dir
from tests.support.helpers.examples import examples
from vcr_kit import dehydrate as dh
from vcr_kit._core.config import load_settings
from vcr_kit.dehydrate import (
    DEFAULT_RULES,
    PathRule,
    Rule,
    WholeStringRule,
    add_rule,
    clear_rules,
    config_home,
    cwd_slug,
    dehydrate,
    dehydrate_json,
    hydrate,
    hydrate_json,
    json_text_may_change,
    map_strings,
    normalize_for_token_count,
    user_rules,
)
from vcr_kit.errors import ConfigError

pytestmark = pytest.mark.inprocess


@contextmanager
def patch_env_values(**values: str) -> Iterator[None]:
    with mock.patch.dict(os.environ, values):
        yield


CWD = "/home/u/proj"
HOME = "/home/u/.claude"
WIN_CWD = "C:\\Users\\me\\proj"
WIN_HOME = "C:\\Users\\me\\.claude"
POSIX = {"cwd": CWD, "config_home": HOME}
WINDOWS = {"cwd": WIN_CWD, "config_home": WIN_HOME}

#: Every literal without which a default rule leaves a text alone (from the rules
#: themselves, so a rule added later cannot make the property below flaky).
TRIGGERS = tuple(
    literal
    for rule in DEFAULT_RULES
    for literal in (getattr(rule, "trigger", None), getattr(rule, "marker", None))
    if literal
)

PROPERTY_SETTINGS = settings(deadline=None, max_examples=examples(300))


class DefaultRulesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_rule_table(self) -> None:
        rows: list[tuple[str, str, dict[str, str], str]] = [
            ("num_files", 'Found num_files="12" files', POSIX, 'Found num_files="[NUM]" files'),
            (
                "num_files twice",
                'num_files="1" and num_files="300"',
                POSIX,
                'num_files="[NUM]" and num_files="[NUM]"',
            ),
            ("num_files not a number", 'num_files="many"', POSIX, 'num_files="many"'),
            ("duration_ms", '<r duration_ms="4521"/>', POSIX, '<r duration_ms="[DURATION]"/>'),
            ("cost_usd integer", 'cost_usd="3"', POSIX, 'cost_usd="[COST]"'),
            ("cost_usd decimal", 'total cost_usd="0.0421".', POSIX, 'total cost_usd="[COST]".'),
            (
                "config home",
                "read /home/u/.claude/settings.json",
                POSIX,
                "read [CONFIG_HOME]/settings.json",
            ),
            ("cwd", "edit /home/u/proj/main.py now", POSIX, "edit [CWD]/main.py now"),
            ("cwd alone", "/home/u/proj", POSIX, "[CWD]"),
            ("cwd given with a trailing slash", "/home/u/proj/a", {"cwd": CWD + "/"}, "[CWD]/a"),
            (
                "config home before cwd",
                "/home/u/.claude/x and /home/u/y",
                {"cwd": "/home/u", "config_home": HOME},
                "[CONFIG_HOME]/x and [CWD]/y",
            ),
            (
                "available commands",
                "Available commands: /a /b",
                POSIX,
                "Available commands: [COMMANDS]",
            ),
            (
                "available commands keeps the next lines",
                "Intro\nAvailable commands: /help /clear\nnext line /x\n",
                POSIX,
                "Intro\nAvailable commands: [COMMANDS]\nnext line /x\n",
            ),
            (
                "files modified replaces the whole string",
                "Note:\nFiles modified by user:\n  a.py\n  b.py\nend",
                POSIX,
                "Files modified by user: [FILES]",
            ),
            (
                "files modified wins over every other rule",
                'num_files="3" /home/u/proj Files modified by user: x',
                POSIX,
                "Files modified by user: [FILES]",
            ),
            (
                "windows backslashes",
                "C:\\Users\\me\\proj\\src\\a.py",
                WINDOWS,
                "[CWD]\\src\\a.py",
            ),
            ("windows forward slashes", "C:/Users/me/proj/src/a.py", WINDOWS, "[CWD]/src/a.py"),
            (
                "windows JSON-escaped",
                '{"path": "C:\\\\Users\\\\me\\\\proj\\\\a.py"}',
                WINDOWS,
                '{"path": "[CWD]\\\\a.py"}',
            ),
            ("windows lower-case drive in the text", "c:\\Users\\me\\proj", WINDOWS, "[CWD]"),
            (
                "windows lower-case drive in the cwd",
                "C:\\Users\\me\\proj\\x and C:/Users/me/proj/y",
                {"cwd": "c:\\Users\\me\\proj"},
                "[CWD]\\x and [CWD]/y",
            ),
            (
                "windows config home",
                "C:\\Users\\me\\.claude\\settings.json",
                WINDOWS,
                "[CONFIG_HOME]\\settings.json",
            ),
            (
                "windows path boundary",
                "C:\\Users\\me\\project",
                WINDOWS,
                "C:\\Users\\me\\project",
            ),
            (
                "windows path glued to the next windows path",
                "C:\\Users\\me\\projC:\\Users\\me\\proj",
                WINDOWS,
                "[CWD][CWD]",
            ),
            (
                "closing tag intact",
                "<system-reminder>\n/home/u/proj\n</system-reminder>",
                POSIX,
                "<system-reminder>\n[CWD]\n</system-reminder>",
            ),
            (
                "closing tag intact with a windows cwd",
                "<system-reminder>in C:\\Users\\me\\proj</system-reminder>",
                WINDOWS,
                "<system-reminder>in [CWD]</system-reminder>",
            ),
            ("boundary: a longer name", "/work/apple/x", {"cwd": "/work/app"}, "/work/apple/x"),
            ("boundary: a sub path", "/work/app/x", {"cwd": "/work/app"}, "[CWD]/x"),
            ("boundary: underscore", "/work/app_old", {"cwd": "/work/app"}, "/work/app_old"),
            ("boundary: dash", "/work/app-2", {"cwd": "/work/app"}, "/work/app-2"),
            ("boundary: full stop", "see /work/app.", {"cwd": "/work/app"}, "see [CWD]."),
            ("boundary: quote", '"/work/app"', {"cwd": "/work/app"}, '"[CWD]"'),
            ("a root cwd replaces nothing", "a/b /x", {"cwd": "/"}, "a/b /x"),
            ("plain text untouched", "Hello, world </b>", POSIX, "Hello, world </b>"),
        ]
        for label, text, paths, expected in rows:
            with self.subTest(label):
                self.assertEqual(dehydrate(text, **paths), expected)

    def test_config_home_from_claude_config_dir(self) -> None:
        patch_env(self, CLAUDE_CONFIG_DIR="/opt/agent-home")
        self.assertEqual(config_home(), "/opt/agent-home")
        self.assertEqual(
            dehydrate("/opt/agent-home/settings.json", cwd=CWD), "[CONFIG_HOME]/settings.json"
        )
        self.assertEqual(hydrate("[CONFIG_HOME]/a"), "/opt/agent-home/a")

    def test_config_home_defaults_to_dot_claude_in_home(self) -> None:
        patch_env(self, HOME="/home/tester")
        self.assertEqual(config_home(), "/home/tester/.claude")
        self.assertEqual(dehydrate("/home/tester/.claude/x", cwd=CWD), "[CONFIG_HOME]/x")

    def test_cwd_defaults_to_the_real_working_directory(self) -> None:
        here = os.getcwd()
        self.assertEqual(dehydrate(here + "/pkg/mod.py"), "[CWD]/pkg/mod.py")
        with tempfile.TemporaryDirectory() as tmp, working_dir(os.path.realpath(tmp)) as cwd:
            real = str(cwd)
            self.assertEqual(real, os.path.realpath(tmp))
            self.assertEqual(dehydrate(f"cat {real}/a.txt"), "cat [CWD]/a.txt")
            self.assertEqual(hydrate("cat [CWD]/a.txt"), f"cat {real}/a.txt")
            # The old cwd is no longer this machine's cwd: not [CWD] (a checkout in the
            # temp folder, as CI's may be, is still [TMPDIR]/..., by the temp_dir rule).
            if not real.startswith(here) and not here.startswith(real):
                self.assertNotIn("[CWD]", dehydrate(here + "/x"))
                self.assertTrue(dehydrate(here + "/x").endswith("/x"))


class HydrateTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_hydrate_table(self) -> None:
        rows = [
            ('num_files="[NUM]"', 'num_files="1"'),
            ('duration_ms="[DURATION]"', 'duration_ms="100"'),
            ("[CONFIG_HOME]/settings.json", "/home/u/.claude/settings.json"),
            ("[CWD]/main.py", "/home/u/proj/main.py"),
            ("[CWD] and [CWD]", "/home/u/proj and /home/u/proj"),
            # No restore for these: the original value is gone for good.
            ('cost_usd="[COST]"', 'cost_usd="[COST]"'),
            ("Available commands: [COMMANDS]", "Available commands: [COMMANDS]"),
            ("Files modified by user: [FILES]", "Files modified by user: [FILES]"),
            ("no placeholder", "no placeholder"),
        ]
        for text, expected in rows:
            with self.subTest(text):
                self.assertEqual(hydrate(text, **POSIX), expected)

    def test_hydrate_uses_this_machines_cwd_by_default(self) -> None:
        self.assertEqual(hydrate("[CWD]/x"), os.getcwd() + "/x")

    def test_round_trip_of_path_only_strings(self) -> None:
        rows = [
            ("/home/u/proj", POSIX),
            ("/home/u/proj/src/a.py", POSIX),
            ("/home/u/.claude/projects/x.jsonl", POSIX),
            ("C:\\Users\\me\\proj\\src\\a.py", WINDOWS),
            ("C:\\Users\\me\\.claude\\x", WINDOWS),
        ]
        for text, paths in rows:
            with self.subTest(text):
                dry = dehydrate(text, **paths)
                self.assertNotEqual(dry, text)
                self.assertEqual(hydrate(dry, **paths), text)


class TokenCountTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_cwd_slug(self) -> None:
        self.assertEqual(cwd_slug("/home/u/proj"), "-home-u-proj")
        self.assertEqual(cwd_slug("C:\\Users\\me\\my proj"), "C--Users-me-my-proj")
        self.assertEqual(cwd_slug(), "".join(c if c.isalnum() else "-" for c in os.getcwd()))

    def test_normalize_table(self) -> None:
        rows = [
            (
                "~/.claude/projects/-home-u-proj/log.jsonl",
                "~/.claude/projects/[CWD_SLUG]/log.jsonl",
            ),
            ("session 123e4567-e89b-12d3-a456-426614174000 ok", "session [UUID] ok"),
            ("ID 123E4567-E89B-12D3-A456-426614174000", "ID [UUID]"),
            ("at 2024-05-01T12:30:45.123Z.", "at [TIMESTAMP]."),
            ("at 2024-05-01 12:30:45+02:00", "at [TIMESTAMP]"),
            ("at 2024-05-01T12:30:45", "at [TIMESTAMP]"),
            ('/home/u/proj num_files="4"', '[CWD] num_files="[NUM]"'),
            ("a date alone 2024-05-01 stays", "a date alone 2024-05-01 stays"),
            ("not a uuid 123e4567-e89b-12d3", "not a uuid 123e4567-e89b-12d3"),
        ]
        for text, expected in rows:
            with self.subTest(text):
                self.assertEqual(normalize_for_token_count(text, **POSIX), expected)

    def test_plain_dehydrate_keeps_uuids_and_timestamps(self) -> None:
        # The cwd slug is a default rule since Claude Code names its project folder by it.
        text = "123e4567-e89b-12d3-a456-426614174000 2024-05-01T12:30:45Z -home-u-proj"
        self.assertEqual(
            dehydrate(text, **POSIX),
            "123e4567-e89b-12d3-a456-426614174000 2024-05-01T12:30:45Z [CWD_SLUG]",
        )


class ClaudeCodeEnvironmentTest(unittest.TestCase):
    """What the Claude Code CLI puts in its environment block (checked on 2.1.197)."""

    def test_the_environment_block_keys_the_same_in_any_folder_home_and_day(self) -> None:
        block = (
            "# Environment\n - Primary working directory: {cwd}\n - OS Version: {os}\n"
            "memory in `{home}/.claude/projects/{slug}/memory/`.\n"
            "# currentDate\nToday's date is {date}.\n"
        )
        one = block.format(
            cwd="/tmp/a/proj",
            slug="-tmp-a-proj",
            home="/tmp/a/home",
            os="Linux 6.18.44-fc-v857",
            date="2026-11-30",
        )
        two = block.format(
            cwd="/srv/b/work",
            slug="-srv-b-work",
            home="/home/b",
            os="Darwin 24.1.0",
            date="2027-01-02",
        )
        expected = (
            "# Environment\n - Primary working directory: [CWD]\n - OS Version: [OS_VERSION]\n"
            "memory in `[CONFIG_HOME]/projects/[CWD_SLUG]/memory/`.\n"
            "# currentDate\nToday's date is [DATE].\n"
        )
        self.assertEqual(
            dehydrate(one, cwd="/tmp/a/proj", config_home="/tmp/a/home/.claude"), expected
        )
        self.assertEqual(dehydrate(two, cwd="/srv/b/work", config_home="/home/b/.claude"), expected)

    def test_older_date_spelling_and_slug_boundary(self) -> None:
        self.assertEqual(dehydrate("Today's date: 2025-06-01", **POSIX), "Today's date: [DATE]")
        self.assertEqual(dehydrate("-home-u-projects", **POSIX), "-home-u-projects")


GIT_BLOCK = (
    "# Environment\n - Primary working directory: {cwd}\n - Is a git repository: true\n"
    " - Platform: {platform}\n - Shell: {shell}\n - OS Version: {os}\n"
    " - You are powered by the model named {model}. The exact model ID is {model_id}.\n\n"
    "gitStatus: This is the git status at the start of the conversation. Note that this "
    "status is a snapshot in time, and will not update during the conversation.\n\n"
    "Current branch: {branch}\n\nMain branch (you will usually use this for PRs): {main}\n\n"
    "Git user: {user}\n\nStatus:\n{status}\n\nRecent commits:\n{commits}"
)
REPO_A = dict(  # noqa: C408 (keyword arguments read as the template's fields)
    cwd="/tmp/a/repo", platform="linux", shell="bash", os="Linux 6.1", model="Opus 4.8",
    model_id="claude-opus-4-8", branch="main", main="main", user="alice",
    status="?? draft-alice.txt", commits="cefb3b6 more from alice\n1d560e1 start, by alice",
)  # fmt: skip
REPO_B = dict(  # noqa: C408
    cwd="/srv/x/y/z/repo", platform="darwin", shell="bash (login shell: zsh)", os="Darwin 24.1.0",
    model="Sonnet 5", model_id="claude-sonnet-5", branch="feature/elsewhere", main="trunk",
    user="Bob Smith", status=" M notes.txt\n?? draft-bob.txt\nD  old.txt", commits="abcdef0 x",
)  # fmt: skip


class ClaudeCodeRulesTest(unittest.TestCase):
    """The Claude Code rule set: two repositories, two machines, one key."""

    def setUp(self) -> None:
        patch_env(self)
        self.addCleanup(dh.disable_rules_from_environment, ())

    def test_two_repositories_and_machines_dehydrate_alike(self) -> None:
        one = dehydrate(GIT_BLOCK.format(**REPO_A), cwd=REPO_A["cwd"])
        two = dehydrate(GIT_BLOCK.format(**REPO_B), cwd=REPO_B["cwd"])
        self.assertEqual(one, two)
        self.assertEqual(
            one,
            GIT_BLOCK.format(
                cwd="[CWD]", platform="[PLATFORM]", shell="[SHELL]", os="[OS_VERSION]",
                model="[MODEL_ANNOUNCEMENT]", model_id="", branch="[GIT_BRANCH]",
                main="[GIT_MAIN_BRANCH]", user="[GIT_USER]", status="[GIT_STATUS]",
                commits="[GIT_COMMITS]",
            ).replace("[MODEL_ANNOUNCEMENT]. The exact model ID is .", "[MODEL_ANNOUNCEMENT]"),
        )  # fmt: skip

    def test_a_subagents_result_keys_alike_on_every_run(self) -> None:
        result = (
            "agentId: {id} (use SendMessage with to: '{id}', summary: '<5-10 word recap>' to "
            "continue this agent)\n<usage>subagent_tokens: {tokens}\ntool_uses: 0\n"
            "duration_ms: {ms}</usage>"
        )
        one = dehydrate(result.format(id="a61499dafac37cc5c", tokens=11473, ms=96), **POSIX)
        two = dehydrate(result.format(id="0b2c3d4e5f6a7b8c9", tokens=11480, ms=1520), **POSIX)
        self.assertEqual(one, two)
        self.assertEqual(one, result.format(id="[AGENT_ID]", tokens="[TOKENS]", ms="[DURATION]"))
        # 2.1.3xx: the subagent runs in the background and a notification reports it.
        notice = (
            "<task-notification>\n<task-id>{id}</task-id>\n<output-file>/var/claude-0/-r/"
            "87ac9aab-8571-499c-9e87-d63271050fa2/tasks/{id}.output</output-file>\n<usage>"
            "<subagent_tokens>{tokens}</subagent_tokens><tool_uses>0</tool_uses>"
            "<duration_ms>{ms}</duration_ms></usage>\n</task-notification>"
        )
        self.assertEqual(
            dehydrate(notice.format(id="af2b3f5333afb33ea", tokens=7419, ms=337), **POSIX),
            notice.format(id="[AGENT_ID]", tokens="[TOKENS]", ms="[DURATION]").replace(
                "87ac9aab-8571-499c-9e87-d63271050fa2", "[SESSION]"
            ),
        )

    def test_the_newer_block_in_the_first_message_too(self) -> None:
        # 2.1.3xx: a system reminder in the first message, headed "# gitStatus".
        newer = GIT_BLOCK.replace("gitStatus: This", "<system-reminder>\n# gitStatus\nThis")
        one = dehydrate(newer.format(**REPO_A), cwd=REPO_A["cwd"])
        self.assertEqual(one, dehydrate(newer.format(**REPO_B), cwd=REPO_B["cwd"]))
        self.assertIn("Git user: [GIT_USER]\n\nStatus:\n[GIT_STATUS]\n", one)

    def test_git_lines_outside_claude_codes_block_are_kept(self) -> None:
        text = "Git user: alice\nCurrent branch: main\nStatus:\n?? a.txt"
        self.assertEqual(dehydrate(text, **POSIX), text)

    def test_home_and_temp_folders_and_their_restore(self) -> None:
        self.addCleanup(setattr, tempfile, "tempdir", None)
        tmp_one, tmp_two = (tempfile.mkdtemp(prefix="vcr-t") for _ in range(2))
        self.addCleanup(os.rmdir, tmp_one)
        self.addCleanup(os.rmdir, tmp_two)
        text = f"read /home/carol/notes and {tmp_one}/out.log, not /home/carolyn, /x{tmp_one}"
        with patch_env_values(HOME="/home/carol", TMPDIR=tmp_one):
            tempfile.tempdir = None  # gettempdir() caches TMPDIR
            dry = dehydrate(text, **POSIX)
        self.assertEqual(
            dry, f"read [HOME]/notes and [TMPDIR]/out.log, not /home/carolyn, /x{tmp_one}"
        )
        with patch_env_values(HOME="/Users/dave", TMPDIR=tmp_two):
            tempfile.tempdir = None
            self.assertEqual(
                hydrate(dry, **POSIX),
                f"read /Users/dave/notes and {tmp_two}/out.log, not /home/carolyn, /x{tmp_one}",
            )

    def test_a_rule_turned_off_keeps_its_text(self) -> None:
        text = GIT_BLOCK.format(**REPO_A)
        dh.disable_rule("git_user")
        self.addCleanup(dh.enable_rule, "git_user")
        self.assertIn("Git user: alice\n", dehydrate(text, **POSIX))
        self.assertIn("Current branch: [GIT_BRANCH]", dehydrate(text, **POSIX))
        self.assertEqual(dh.disabled_rules(), ("git_user",))
        dh.enable_rule("git_user")
        self.assertIn("Git user: [GIT_USER]\n", dehydrate(text, **POSIX))

    def test_vcr_disable_rules_turns_rules_off_while_it_is_set(self) -> None:
        text = GIT_BLOCK.format(**REPO_A)
        with patch_env_values(VCR_DISABLE_RULES=" shell, git_commits "):
            load_settings()
            self.assertEqual(dh.disabled_rules(), ("git_commits", "shell"))
            dry = dehydrate(text, **POSIX)
        self.assertIn(" - Shell: bash\n", dry)
        self.assertIn("Recent commits:\ncefb3b6 more from alice", dry)
        self.assertIn("Git user: [GIT_USER]", dry)
        load_settings()  # the variable is gone: every rule is back
        self.assertEqual(dh.disabled_rules(), ())
        self.assertIn(" - Shell: [SHELL]\n", dehydrate(text, **POSIX))
        with patch_env_values(VCR_DISABLE_RULES="shell,gitstatus"):
            with self.assertRaises(ConfigError) as caught:
                load_settings()
        self.assertRegex(
            str(caught.exception),
            r"^VCR_DISABLE_RULES: no rule is named 'gitstatus'; the rules are: "
            r"agent_duration_ms, .*, .*, temp_dir\. Fix or unset VCR_DISABLE_RULES\.$",
        )

    def test_an_unknown_rule_name_is_refused_with_the_known_ones(self) -> None:
        with self.assertRaises(ValueError) as caught:
            dh.disable_rule("git_usr")
        self.assertRegex(
            str(caught.exception),
            r"^disable_rule\(\): no rule is named 'git_usr'; the rules are: "
            r"agent_duration_ms, agent_id, agent_output_file, agent_task_id, agent_tokens, "
            r"available_commands, config_home, .*, "
            r"git_user, .*, temp_dir$",
        )


class UserRulesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        clear_rules()

    def tearDown(self) -> None:
        clear_rules()

    def test_add_rule_applies_and_clear_rules_removes(self) -> None:
        ticket = Rule("ticket", r"JIRA-\d+", "JIRA-[ID]", "JIRA-", ("[ID]", "0"))
        self.assertEqual(dehydrate("fix JIRA-123", **POSIX), "fix JIRA-123")
        add_rule(ticket)
        self.assertEqual(user_rules(), (ticket,))
        self.assertEqual(dehydrate("fix JIRA-123", **POSIX), "fix JIRA-[ID]")
        self.assertEqual(hydrate("fix JIRA-[ID]", **POSIX), "fix JIRA-0")
        # Defaults still apply alongside the user rule.
        self.assertEqual(
            dehydrate('JIRA-7 num_files="2" /home/u/proj', **POSIX),
            'JIRA-[ID] num_files="[NUM]" [CWD]',
        )
        clear_rules()
        self.assertEqual(user_rules(), ())
        self.assertEqual(dehydrate("fix JIRA-123", **POSIX), "fix JIRA-123")

    def test_whole_string_and_path_rules(self) -> None:
        add_rule(WholeStringRule("env", "Environment dump:", "Environment dump: [ENV]"))
        add_rule(PathRule("build", "[BUILD]", lambda: "/var/build/out"))
        self.assertEqual(dehydrate("x\nEnvironment dump:\nA=1", **POSIX), "Environment dump: [ENV]")
        self.assertEqual(dehydrate("/var/build/out/a.o", **POSIX), "[BUILD]/a.o")
        self.assertEqual(hydrate("[BUILD]/a.o", **POSIX), "/var/build/out/a.o")

    def test_rules_parameter_replaces_the_table(self) -> None:
        ticket = Rule("ticket", r"JIRA-\d+", "JIRA-[ID]", "JIRA-")
        text = 'JIRA-9 num_files="3" /home/u/proj'
        self.assertEqual(
            dehydrate(text, rules=[ticket], **POSIX), 'JIRA-[ID] num_files="3" /home/u/proj'
        )
        self.assertEqual(dehydrate(text, rules=[], **POSIX), text)
        self.assertEqual(hydrate('num_files="[NUM]"', rules=[]), 'num_files="[NUM]"')

    def test_rule_without_trigger_always_runs(self) -> None:
        self.assertEqual(dehydrate("a1 b22", rules=[Rule("digits", r"\d+", "#")]), "a# b#")

    def test_add_rule_refuses_other_values(self) -> None:
        with self.assertRaises(TypeError) as caught:
            add_rule("JIRA-\\d+")  # type: ignore[arg-type]
        self.assertEqual(
            str(caught.exception),
            "add_rule() takes a Rule, WholeStringRule or PathRule, not 'JIRA-\\\\d+'",
        )
        self.assertEqual(user_rules(), ())


class JsonValuesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_dehydrate_json_leaves_keys_and_non_strings(self) -> None:
        value: Any = {
            "/home/u/proj": "/home/u/proj/a.py",
            "n": 12,
            "f": 1.5,
            "b": True,
            "none": None,
            "list": ["/home/u/proj", 7, {'num_files="3"': 'num_files="3"'}],
        }
        expected = {
            "/home/u/proj": "[CWD]/a.py",
            "n": 12,
            "f": 1.5,
            "b": True,
            "none": None,
            "list": ["[CWD]", 7, {'num_files="3"': 'num_files="[NUM]"'}],
        }
        self.assertEqual(dehydrate_json(value, **POSIX), expected)
        back = hydrate_json(expected, **POSIX)
        self.assertEqual(back["/home/u/proj"], "/home/u/proj/a.py")
        self.assertEqual(back["list"], ["/home/u/proj", 7, {'num_files="3"': 'num_files="1"'}])
        self.assertEqual(back["n"], 12)

    def test_map_strings(self) -> None:
        value = {"k": "v", "n": [1, "a", None, True, 2.5, {"x": "y"}]}
        self.assertEqual(
            map_strings(value, str.upper),
            {"k": "V", "n": [1, "A", None, True, 2.5, {"x": "Y"}]},
        )
        self.assertEqual(map_strings("abc", str.upper), "ABC")
        self.assertEqual(map_strings(3, str.upper), 3)
        self.assertEqual(value, {"k": "v", "n": [1, "a", None, True, 2.5, {"x": "y"}]})


# -- properties ---------------------------------------------------------------------

FRAGMENTS = [
    'num_files="12"',
    'duration_ms="4521"',
    'cost_usd="0.42"',
    'cost_usd="3"',
    "Available commands: /a /b",
    "Available commands:",
    "Files modified by user:",
    "\n",
    "/",
    "\\",
    ":",
    "-",
    "_",
    "</system-reminder>",
    "[CWD]",
    "[NUM]",
    '="7"',
]


def _spellings(path: str) -> list[str]:
    forms = {path, path.replace("\\", "/"), path.replace("\\", "\\\\")}
    if path[1:2] == ":":
        forms |= {p[0].swapcase() + p[1:] for p in forms}
    return sorted(forms)


PATH_FRAGMENTS = [
    *_spellings(CWD),
    *_spellings(HOME),
    *_spellings(WIN_CWD),
    *_spellings(WIN_HOME),
    CWD + "/src",
    WIN_CWD + "\\src",
    "/home/u",
]

sprinkled = st.lists(
    st.one_of(st.text(max_size=8), st.sampled_from(FRAGMENTS + PATH_FRAGMENTS)), max_size=14
).map("".join)


class DehydratePropertiesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    @PROPERTY_SETTINGS
    @given(st.text())
    def test_idempotent_on_any_text(self, s: str) -> None:
        once = dehydrate(s)
        self.assertEqual(dehydrate(once), once)
        once = dehydrate(s, **POSIX)
        self.assertEqual(dehydrate(once, **POSIX), once)

    @PROPERTY_SETTINGS
    @given(sprinkled, st.sampled_from([POSIX, WINDOWS]))
    def test_idempotent_on_text_with_patterns_and_paths(
        self, s: str, paths: dict[str, str]
    ) -> None:
        once = dehydrate(s, **paths)
        self.assertEqual(dehydrate(once, **paths), once)

    @PROPERTY_SETTINGS
    @given(sprinkled)
    def test_idempotent_with_this_machines_paths(self, s: str) -> None:
        s = s.replace(CWD, os.getcwd())
        once = dehydrate(s)
        self.assertEqual(dehydrate(once), once)

    @PROPERTY_SETTINGS
    @given(
        st.lists(
            st.one_of(
                st.text(max_size=8),
                st.sampled_from(
                    [
                        "num_files",
                        'files="1"',
                        "duration_ms",
                        "cost_usd",
                        "Available commands",
                        "Files modified by user",
                        "/home/u/pro",
                        "/home/u/.clau",
                        "[CWD]",
                        "</system-reminder>",
                        "=",
                        '"12"',
                        ":",
                    ]
                ),
            ),
            max_size=12,
        ).map("".join)
    )
    def test_text_without_triggers_is_unchanged(self, s: str) -> None:
        assume(not any(t in s for t in TRIGGERS))
        assume(CWD not in s and HOME not in s)
        self.assertEqual(dehydrate(s, **POSIX), s)

    @PROPERTY_SETTINGS
    @given(
        st.lists(
            st.one_of(
                st.text(
                    alphabet="abcXYZ019 .,-_\n\t",
                    max_size=8,
                ),
                st.sampled_from(["{cwd}", "{cwd}/src/a.py", "{cwd}.", " {cwd} "]),
            ),
            max_size=12,
        ).map("".join),
        st.sampled_from([POSIX, WINDOWS]),
    )
    def test_hydrate_undoes_dehydrate_for_safe_text_and_the_cwd(
        self, template: str, paths: dict[str, str]
    ) -> None:
        s = template.replace("{cwd}", paths["cwd"])
        self.assertEqual(hydrate(dehydrate(s, **paths), **paths), s)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), sprinkled),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


class JsonTextGateTest(unittest.TestCase):
    """``json_text_may_change`` lets the key skip the walk; it must never skip a change."""

    def setUp(self) -> None:
        patch_env(self)

    @PROPERTY_SETTINGS
    @given(json_values, st.booleans(), st.sampled_from([POSIX, WINDOWS]))
    def test_a_text_said_unchanged_is_unchanged_by_the_walk(
        self, value: Any, ascii_only: bool, paths: dict[str, str]
    ) -> None:
        text = json.dumps(value, ensure_ascii=ascii_only)
        if not json_text_may_change(text, **paths):
            self.assertEqual(dehydrate_json(value, **paths), value)

    def test_plain_conversations_skip_and_patterned_ones_do_not(self) -> None:
        plain = json.dumps({"messages": [{"role": "user", "content": "Hi, there é"}]})
        self.assertFalse(json_text_may_change(plain, **POSIX))
        for content in ('<x num_files="3"/>', f"see {POSIX['cwd']}/a.py"):
            with self.subTest(content=content):
                text = json.dumps({"messages": [{"content": content}]})
                self.assertTrue(json_text_may_change(text, **POSIX))
        # Windows paths hold backslashes, which JSON escapes: always walk.
        self.assertTrue(json_text_may_change(plain, **WINDOWS))
        # A writer that escapes "/" could hide a path: walk.
        self.assertTrue(json_text_may_change('{"a": "\\/x"}', **POSIX))


class ModuleSurfaceTest(unittest.TestCase):
    def test_default_rules_are_the_originals_in_order_then_claude_codes(self) -> None:
        names = [rule.name for rule in dh.DEFAULT_RULES]
        self.assertEqual(
            names,
            [
                "files_modified",
                "num_files",
                "duration_ms",
                "cost_usd",
                "config_home",
                "cwd",
                "available_commands",
                "cwd_slug",
                "current_date",
                "os_version",
                "git_branch",
                "git_main_branch",
                "git_user",
                "git_status_lines",
                "git_commits",
                "platform",
                "shell",
                "model_announcement",
                "agent_id",
                "agent_tokens",
                "agent_task_id",
                "agent_output_file",
                "agent_duration_ms",
                "home",
                "temp_dir",
            ],
        )
        self.assertEqual(dh.DEFAULT_RULES[-len(dh.CLAUDE_CODE_RULES) :], dh.CLAUDE_CODE_RULES)
        self.assertEqual([r.name for r in dh.TOKEN_COUNT_RULES], ["uuid", "timestamp"])

    def test_path_rule_short_paths_are_ignored(self) -> None:
        self.assertEqual(dehydrate("C:\\x", cwd="C:\\"), "C:\\x")
        self.assertEqual(dehydrate("/a/b", cwd="/a"), "/a/b")


if __name__ == "__main__":
    unittest.main()
