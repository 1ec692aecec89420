"""Claude Code anywhere: a session recorded in one repository replays offline in another
repository, on another machine and day, with no key.

Recorded through ``vcr_kit run`` against the loopback server in repository A (branch
``main``, user alice, TZ UTC, SHELL bash), replayed under ``unshare -n`` with
``CI=true`` and no key in repository B (another branch, user, commits, status, path
depth, HOME, TZ and SHELL). Runs in the ``clients`` tox env with the Node clients of
``test_clients_node.py``.
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.clients.test_clients_node import KEY, ClientTestCase
from tests.clients.test_proxy import offline
from tests.support.helpers.env import environ_without_vcr, run_captured, temp_dir
from tests.support.helpers.node_clients import claude_command, install_newest_claude_code
from tests.support.helpers.paths import ROOT
from tests.support.servers.mcp_http_server import McpHttpServer

pytestmark = pytest.mark.node

UNREACHABLE = "http://127.0.0.1:9"
TOOLS = "Bash,Read,Write,Edit,Agent,mcp__clock__now"
MCP_SERVER = ROOT / "examples" / "claude_code" / "clock_server.py"
WITH_FRONT = ROOT / "tests" / "support" / "children" / "with_mcp_front.py"
MCP_TOKEN = "mcp-token-" + "t" * 32
REPLAYED = r"[1-9]\d* replayed, 0 recorded, 0 missing"
RECORDED = r"0 replayed, [1-9]\d* recorded, 0 missing"


@dataclass(frozen=True)
class Setup:
    """Who and where a session runs: the repository's branch, git user and depth below
    the scratch folder, and the shell and time zone."""

    branch: str
    user: str
    depth: tuple[str, ...]
    tz: str
    shell: str
    days_later: int = 0


A = Setup(branch="main", user="alice", depth=("a",), tz="UTC", shell="/bin/bash")
B = Setup(
    branch="feature/elsewhere", user="bob", depth=("x", "y", "z"), tz="Asia/Tokyo",
    shell="/usr/bin/zsh", days_later=90,
)  # fmt: skip

#: Preloaded into Node (NODE_OPTIONS=--require): the clock runs DAYS days ahead.
SHIFT_DATE = """
const shift = DAYS * 24 * 3600 * 1000;
const RealDate = Date;
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) { super(RealDate.now() + shift); } else { super(...args); }
  }
  static now() { return RealDate.now() + shift; }
}
globalThis.Date = ShiftedDate;
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


class ClaudeCodeTestCase(ClientTestCase):
    #: Whether the scratch folder is a git repository (Claude Code then describes it).
    in_git = True
    #: Called with each scratch repository before the session (writes .mcp.json).
    prepare: Any = None

    def scratch_repo(self, setup: Setup) -> tuple[Path, dict[str, str]]:
        """A git repository with a CLAUDE.md, two commits by ``setup.user`` and a file
        not yet added, and an environment with its own HOME, TZ and SHELL."""
        base = temp_dir(self, prefix="vcr-cc-")
        repo = base.joinpath(*setup.depth, "repo")
        repo.mkdir(parents=True)
        (base / "home").mkdir()
        if not self.in_git:
            (repo / "CLAUDE.md").write_text("Answer briefly.\n", encoding="utf-8")
            return repo, self.environment(base, setup)
        git(repo, "init", "-q", "-b", setup.branch)
        git(repo, "config", "user.name", setup.user)
        git(repo, "config", "user.email", f"{setup.user}@example.com")
        (repo / "CLAUDE.md").write_text("Answer briefly.\n", encoding="utf-8")
        (repo / "notes.txt").write_text("first line\n", encoding="utf-8")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", f"start, by {setup.user}")
        (repo / "more.txt").write_text(f"{setup.user}\n", encoding="utf-8")
        git(repo, "add", "more.txt")
        git(repo, "commit", "-q", "-m", f"more from {setup.user}")
        (repo / f"draft-{setup.user}.txt").write_text("wip\n", encoding="utf-8")
        return repo, self.environment(base, setup)

    def environment(self, base: Path, setup: Setup) -> dict[str, str]:
        shift = base / "shift-date.cjs"
        shift.write_text(SHIFT_DATE.replace("DAYS", str(setup.days_later)), encoding="utf-8")
        return {
            # Node reads the date from its own clock: moved forward here, no faketime.
            "NODE_OPTIONS": f"--require {shift}",
            **environ_without_vcr(),
            "HOME": str(base / "home"),
            "TZ": setup.tz,
            "SHELL": setup.shell,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "PYTHONPATH": str(ROOT),
            "VCR_REPORT": "1",
        }

    #: A remote MCP server's URL: each Claude Code run then gets a ``vcr_kit mcp --url``
    #: front beside it, written into the repository's ``.mcp.json``.
    front: str | None = None

    def claude(self, *args: str) -> list[str]:
        command = claude_command(self.modules, *args)
        if self.front is None:
            return command
        config = args[args.index("--mcp-config") + 1]
        return [sys.executable, str(WITH_FRONT), config, "clock", "--", "--url", self.front,
                "--name", "clock", "--fixtures", str(self.fixtures),
                "--header", f"Authorization: Bearer {MCP_TOKEN}", "--", *command]  # fmt: skip

    def record(
        self, setup: Setup, command: list[str], prepare: Any = None
    ) -> tuple[Path, subprocess.CompletedProcess[str]]:
        repo, env = self.scratch_repo(setup)
        if prepare is not None:
            prepare(repo)
        env["ANTHROPIC_API_KEY"] = KEY
        run = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
               "--mode", "auto", "--upstream", self.server.url, "--", *command]  # fmt: skip
        done = run_captured(run, cwd=repo, env=env, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stderr, r"0 replayed, [1-9]\d* recorded, 0 missing")
        return repo, done

    def replay(
        self, setup: Setup, command: list[str], prepare: Any = None
    ) -> tuple[Path, subprocess.CompletedProcess[str]]:
        """Offline, in CI, with no key at all: how a CI job replays."""
        repo, env = self.scratch_repo(setup)
        if prepare is not None:
            prepare(repo)
        env["CI"] = "true"
        run = [*offline(), sys.executable, "-m", "vcr_kit", "run", "--fixtures",
               str(self.fixtures), "--upstream", UNREACHABLE, "--", *command]  # fmt: skip
        done = run_captured(run, cwd=repo, env=env, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stderr, r"[1-9]\d* replayed, 0 recorded, 0 missing")
        return repo, done

    def session(
        self, setup: Setup, prompts: list[str], *, replay: bool
    ) -> tuple[Path, list[dict[str, Any]]]:
        """Run each prompt in turn (the second on, with ``--continue``) in a new scratch
        repository of ``setup``: recording, or replaying offline in CI with no key.
        ``{repo}`` in a prompt is the repository's path; in the answers it is ``<repo>``."""
        repo, env = self.scratch_repo(setup)
        extra: list[str] = []
        if self.prepare is not None:
            self.prepare(repo)
            extra = ["--mcp-config", str(repo / ".mcp.json"), "--strict-mcp-config"]
        if replay:
            env["CI"] = "true"
            run = [*offline(), sys.executable, "-m", "vcr_kit", "run", "--fixtures",
                   str(self.fixtures), "--upstream", UNREACHABLE, "--"]  # fmt: skip
        else:
            env["ANTHROPIC_API_KEY"] = KEY
            run = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
                   "--mode", "auto", "--upstream", self.server.url, "--"]  # fmt: skip
        answers = []
        for turn, prompt in enumerate(prompts):
            command = self.claude(
                *(["--continue"] if turn else []), "-p", prompt.replace("{repo}", str(repo)),
                "--output-format", "json", "--allowedTools", TOOLS, *extra,
            )  # fmt: skip
            done = run_captured([*run, *command], cwd=repo, env=env, timeout=300)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertRegex(done.stderr, REPLAYED if replay else RECORDED)
            answer = self.answer(done.stdout)
            answer["result"] = answer["result"].replace(str(repo), "<repo>")
            answers.append(answer)
        return repo, answers

    def answer(self, output: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(output)
        return {key: found[key] for key in ("result", "num_turns", "is_error", "stop_reason")}


class NoKeyTest(ClaudeCodeTestCase):
    in_git = False  # the git block has its own test: this one is about the key alone

    def test_ci_without_a_key_replays_claude_code(self) -> None:
        command = self.claude("-p", "Hello without a key", "--output-format", "json")
        _, recorded = self.record(A, command)
        self.server.stop()
        _, replayed = self.replay(A, command)
        self.assertNotIn("Not logged in", replayed.stdout)
        self.assertEqual(
            self.answer(replayed.stdout),
            {"result": "Echo: Hello without a key", "num_turns": 1, "is_error": False,
             "stop_reason": "end_turn"},
        )  # fmt: skip
        self.assertEqual(self.answer(replayed.stdout), self.answer(recorded.stdout))


class AnotherRepositoryTest(ClaudeCodeTestCase):
    """Recorded in repository A, replayed in repository B: another branch, git user,
    commits, status, path depth, HOME, time zone, shell and date (90 days later)."""

    def test_a_plain_answer(self) -> None:
        command = self.claude("-p", "Hello from repository A", "--output-format", "json")
        _, recorded = self.record(A, command)
        self.server.stop()
        _, replayed = self.replay(B, command)
        self.assertEqual(self.answer(recorded.stdout)["result"], "Echo: Hello from repository A")
        self.assertEqual(self.answer(replayed.stdout), self.answer(recorded.stdout))

    def test_the_date_moves_in_replay(self) -> None:
        # The shifted clock is what Claude Code reads: its date line is 90 days on.
        script = "console.log(new Date().toISOString().slice(0, 10))"
        _, env_a = self.scratch_repo(A)
        _, env_b = self.scratch_repo(B)
        node = shutil.which("node") or "node"
        days = [
            run_captured([node, "-e", script], cwd=ROOT, env=env, timeout=60).stdout.strip()
            for env in (env_a, env_b)
        ]
        gap = datetime.date.fromisoformat(days[1]) - datetime.date.fromisoformat(days[0])
        self.assertIn(gap.days, (89, 90, 91))  # the time zones differ by hours

    def test_tool_turns_on_absolute_paths_in_one_session(self) -> None:
        prompts = [
            'Read [[tool:Read {"file_path":"{repo}/notes.txt"}]]',
            'Edit [[tool:Edit {"file_path":"{repo}/notes.txt","old_string":"first line",'
            '"new_string":"edited line"}]]',
            'Write [[tool:Write {"file_path":"{repo}/sub/new.txt","content":"written"}]]',
            'Run [[tool:Bash {"command":"cat {repo}/notes.txt {repo}/sub/new.txt",'
            '"description":"Show both"}]]',
        ]
        recorded_repo, recorded = self.session(A, prompts, replay=False)
        self.server.stop()
        replayed_repo, replayed = self.session(B, prompts, replay=True)
        self.assertEqual(replayed, recorded)
        self.assertEqual(
            [answer["result"] for answer in recorded[2:]],
            ["The tool said: File created successfully at: <repo>/sub/new.txt (file state is "
             "current in your context — no need to Read it back)",
             "The tool said: edited line\nwritten"],
        )  # fmt: skip
        for repo in (recorded_repo, replayed_repo):
            self.assertEqual((repo / "notes.txt").read_text(), "edited line\n")
            self.assertEqual((repo / "sub" / "new.txt").read_text(), "written")

    def test_a_subagent(self) -> None:
        prompts = ['Delegate [[tool:Agent {"description":"Greet","prompt":"Say hi from {repo} .",'
                   '"subagent_type":"general-purpose"}]]']  # fmt: skip
        _, recorded = self.session(A, prompts, replay=False)
        self.server.stop()
        _, replayed = self.session(B, prompts, replay=True)
        # The loopback model echoes the tool result, random agent id and all; what the
        # replay shows in its place is the rule's placeholder (no id would be right).
        said = recorded[0]["result"]
        self.assertFalse(recorded[0]["is_error"], said)
        if said.startswith("The tool said:"):  # 2.1.1xx answers when the subagent has
            self.assertRegex(said, r"^The tool said: Echo: Say hi from <repo> \.agentId: ")
        said = re.sub(r"[0-9a-f]{17}", "[AGENT_ID]", said)
        counts = r"(subagent_tokens|duration_ms): (\d+|\[TOKENS\])"
        said = re.sub(counts, r"\1: [N]", said)
        self.assertEqual(re.sub(counts, r"\1: [N]", replayed[0]["result"]), said)

    def test_an_mcp_tool_call_replays_without_the_server(self) -> None:
        def with_clock_server(repo: Path) -> None:
            # The server lives in repository A only: in B its command is missing.
            server = repo / "clock_server.py"
            if repo.parent.name == A.depth[-1]:
                shutil.copy(MCP_SERVER, server)
            config = {"mcpServers": {"clock": {
                "command": sys.executable,
                "args": ["-m", "vcr_kit", "mcp", "--name", "clock", "--fixtures",
                         str(self.fixtures), "--", sys.executable, str(server)],
            }}}  # fmt: skip
            (repo / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")

        prompts = ["What time is it? [[tool:mcp__clock__now {}]]"]
        self.prepare = with_clock_server
        _, recorded = self.session(A, prompts, replay=False)
        self.server.stop()
        _, replayed = self.session(B, prompts, replay=True)
        self.assertRegex(recorded[0]["result"], r"^The tool said: time \d+$")
        self.assertEqual(replayed, recorded)
        # initialize, tools/list, tools/call (and, by release, a few more)
        self.assertGreaterEqual(len(list(self.fixtures.glob("mcp-*.json"))), 3)

    def test_an_http_mcp_tool_call_replays_without_the_server(self) -> None:
        """The same through ``vcr_kit mcp --url``: Claude Code calls a remote (Streamable
        HTTP) server's tool through the front, which ``with_mcp_front.py`` starts beside
        it (in B, offline, the server stopped)."""
        with McpHttpServer(token=MCP_TOKEN) as mcp_server:
            self.prepare = lambda repo: (repo / ".mcp.json").write_text("{}", encoding="utf-8")
            self.front = mcp_server.url
            prompts = ["What time is it? [[tool:mcp__clock__now {}]]"]
            _, recorded = self.session(A, prompts, replay=False)
        self.server.stop()
        _, replayed = self.session(B, prompts, replay=True)
        self.assertRegex(recorded[0]["result"], r"^The tool said: time \d+$")
        self.assertEqual(replayed, recorded)
        self.assertEqual(mcp_server.calls, ["now"])
        stored = "".join(p.read_text() for p in self.fixtures.glob("mcp-*.json"))
        for secret in (MCP_TOKEN, *mcp_server.session_ids):
            self.assertNotIn(secret, stored)


AGENT_SCRIPT = """
import json, sys
import anyio
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, ResultMessage, query

repo = sys.argv[1]
hooked = []

async def before_write(input_data, tool_use_id, context):
    # A PreToolUse hook: sees the tool input the (replayed) model asked for.
    hooked.append(input_data["tool_input"]["file_path"].replace(repo, "<repo>"))
    return {}

async def main():
    options = ClaudeAgentOptions(
        allowed_tools=["Write", "Bash"], cwd=repo,
        hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[before_write])]},
        env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
    )
    prompt = ('Save it [[tool:Write {"file_path":"%s/out/hello.txt","content":"hi"}]]' % repo)
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            result = message.result.replace(repo, "<repo>")
    print(json.dumps({"result": result, "hooked": hooked}))

anyio.run(main)
"""


class NewestReleaseTest(AnotherRepositoryTest):
    """The same matrix with the newest Claude Code release."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.modules = install_newest_claude_code()


class AgentSdkAnotherRepositoryTest(ClaudeCodeTestCase):
    """claude-agent-sdk's ``query()`` with a tool and a hook, through ``vcr_kit run``:
    recorded in repository A, replayed offline in CI with no key in repository B."""

    def setUp(self) -> None:
        try:
            import claude_agent_sdk  # noqa: F401
        except ImportError:
            self.skipTest("claude-agent-sdk is installed in the clients env only")
        super().setUp()

    def agent(self, setup: Setup, *, replay: bool) -> tuple[Path, dict[str, Any]]:
        repo, env = self.scratch_repo(setup)
        script = repo.parent / "agent.py"
        script.write_text(AGENT_SCRIPT, encoding="utf-8")
        if replay:
            env["CI"] = "true"
            run = [*offline(), sys.executable, "-m", "vcr_kit", "run", "--fixtures",
                   str(self.fixtures), "--upstream", UNREACHABLE, "--"]  # fmt: skip
        else:
            env["ANTHROPIC_API_KEY"] = KEY
            run = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(self.fixtures),
                   "--mode", "auto", "--upstream", self.server.url, "--"]  # fmt: skip
        done = run_captured([*run, sys.executable, str(script), str(repo)], cwd=repo, env=env,
                            timeout=300)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stderr, REPLAYED if replay else RECORDED)
        found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return repo, found

    def test_query_with_a_tool_and_a_hook(self) -> None:
        recorded_repo, recorded = self.agent(A, replay=False)
        self.server.stop()
        replayed_repo, replayed = self.agent(B, replay=True)
        self.assertEqual(recorded["hooked"], ["<repo>/out/hello.txt"])
        self.assertTrue(recorded["result"].startswith("The tool said: File created"), recorded)
        self.assertEqual(replayed, recorded)
        for repo in (recorded_repo, replayed_repo):
            self.assertEqual((repo / "out" / "hello.txt").read_text(), "hi")
