"""``vcr_kit serve`` and ``vcr_kit run``: the proxy from a shell.

``serve`` prints ``vcr_kit proxy on http://127.0.0.1:PORT`` (then each other provider's
base URL on it) and serves until SIGINT or SIGTERM; ``run -- CMD ARGS...`` runs one
command with ``ANTHROPIC_BASE_URL`` pointing at a proxy on a free port, and
``OPENAI_BASE_URL`` and ``GOOGLE_GEMINI_BASE_URL`` at its prefixes for those providers
(and, for Claude Code on Bedrock, Vertex or Foundry, that platform's base URL:
``_pointed_at``) and exits with its status. Both print the run summary
when they stop. Exit 2 on a usage error, 1 when the proxy cannot start.
"""

from __future__ import annotations

import argparse
import atexit
import os
import subprocess
import sys
from collections.abc import Sequence

from .._core.config import Mode, claude_code_clouds
from .._core.credentials import REPLAY_API_KEY, with_provider_stand_ins, with_stand_in_key
from .._core.providers import PROVIDERS
from .._ledger.summary import print_summary, summary_line
from .._proxy.cloud_upstream import CHILD_PATHS
from .._proxy.faults import lifetime_line, lifetime_spec
from .._proxy.server import Proxy, ProxyError
from ..errors import ConfigError
from ._common import (
    FINDINGS,
    UsageError,
    add_store_options,
    exit_status,
    mode_of,
    on_stop_signals,
    serve_until_stopped,
    store_settings,
    usage_error,
    verb_parser,
)

__all__ = ["RUN_DESCRIPTION", "RUN_USAGE", "SERVE_DESCRIPTION", "add_arguments", "run_main",
           "serve_main"]  # fmt: skip

SERVE_DESCRIPTION = (
    "Serve the Anthropic API (and OpenAI's and Gemini's, under /openai and /gemini) on "
    "127.0.0.1, recording and replaying fixtures, until Ctrl-C or SIGTERM."
)
RUN_DESCRIPTION = (
    "Run CMD with ANTHROPIC_BASE_URL (and OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL) pointing "
    "at a record/replay proxy; exit with CMD's status."
)
RUN_USAGE = "vcr_kit run [options] -- CMD [ARGS...]"

#: After SIGINT or SIGTERM, how long in-flight requests may finish before their
#: connections are shut: a stop is asked for now, whatever a client is doing.
STOP_GRACE = 3.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``serve`` and ``run`` (``run`` takes ``-- CMD ARGS...`` after them)."""
    parser.add_argument(
        "--port", type=int, default=0, help="port to listen on (default: a free one)"
    )
    add_store_options(parser)
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="where Anthropic misses are recorded from (default: ANTHROPIC_BASE_URL, "
        "else https://api.anthropic.com); OpenAI's and Gemini's from OPENAI_BASE_URL and "
        "GOOGLE_GEMINI_BASE_URL, else their own APIs",
    )
    parser.add_argument(
        "--faults",
        metavar="SPEC",
        help="inject faults in front of the recorded answers, e.g. overloaded*2 "
        "(default: VCR_FAULTS; see https://vcr-kit.github.io/vcr_kit/faults/)",
    )


def _start(args: argparse.Namespace) -> Proxy | int:
    """The proxy started, or the exit status after saying why it is not (2: a usage or
    configuration error, 1: it cannot listen)."""
    try:
        settings = store_settings(args)
        return Proxy(
            port=args.port,
            mode=mode_of(args),
            fixtures_dir=settings.fixtures_dir,
            upstream=args.upstream,
            # Its own plan, for its lifetime (VCR_FAULTS's too): a test's plan is per test.
            faults=lifetime_spec(args.faults),
        ).start()
    except (UsageError, ConfigError) as exc:
        print(f"vcr_kit: {exc.message}", file=sys.stderr)
        return exit_status(exc)
    except ProxyError as exc:
        print(f"vcr_kit: {exc.args[-1]}", file=sys.stderr)
        return FINDINGS


def _final_summary() -> None:
    """The summary, once: printed now, and no longer at exit."""
    atexit.unregister(print_summary)
    line = summary_line() or "vcr_kit: no requests"
    print(line, file=sys.stderr, flush=True)


def serve_main(argv: Sequence[str] | None = None) -> int:
    parser = verb_parser("serve", description=SERVE_DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    proxy = _start(args)
    if isinstance(proxy, int):
        return proxy

    def announce() -> None:
        print(f"vcr_kit proxy on {proxy.url}", flush=True)
        faults_line = lifetime_line(proxy.fault_plan)
        if faults_line:
            print(faults_line, flush=True)
        if proxy.needs_stand_in_key():
            print(
                "vcr_kit: replaying, no key needed: give clients without one "
                f"ANTHROPIC_API_KEY={REPLAY_API_KEY}",
                flush=True,
            )
        for variable, url in proxy.provider_base_urls.items():
            print(_provider_line(proxy, variable, url), flush=True)

    try:
        serve_until_stopped(announce)
    finally:
        proxy.stop(STOP_GRACE)  # in-flight requests finish first, or fail and record nothing
    _final_summary()
    return 0


def _provider_line(proxy: Proxy, variable: str, url: str) -> str:
    """What ``serve`` says about one provider: the base URL its clients are given, and,
    replaying, the stand-in key its SDK needs to build a client that has none."""
    provider = next(p for p in PROVIDERS.values() if variable in p.base_url_variables)
    line = f"vcr_kit: {provider.title} clients: {variable}={url}"
    if proxy.settings.mode is Mode.REPLAY:
        line += f" (without a key: {provider.key_variables[0][0]}={REPLAY_API_KEY})"
    return line


#: Claude Code's switch for connecting MCP servers in the background ("0": wait for them).
MCP_WAIT_VARIABLE = "MCP_CONNECTION_NONBLOCKING"


def _pointed_at(env: dict[str, str], cloud: str, url: str) -> dict[str, str]:
    """``env`` with Claude Code's ``cloud`` base URL at the proxy and its own
    authentication for that platform skipped: the proxy authenticates upstream itself
    while recording, and a replay needs no credentials."""
    child = {**env, f"CLAUDE_CODE_SKIP_{cloud.upper()}_AUTH": "1"}
    child[f"ANTHROPIC_{cloud.upper()}_BASE_URL"] = url + CHILD_PATHS[cloud]
    if cloud == "foundry":
        # The SDK refuses a base URL and a resource at once. The key stays with the proxy:
        # the child gets the stand-in, which the proxy drops (Claude Code 2.1.197 skipping
        # its auth with no key fails: "Expected azureADTokenProvider ... to return a string").
        child.pop("ANTHROPIC_FOUNDRY_RESOURCE", None)
        child["ANTHROPIC_FOUNDRY_API_KEY"] = REPLAY_API_KEY
    return child


def run_main(argv: Sequence[str] | None = None) -> int:
    parser = verb_parser("run", usage=RUN_USAGE, description=RUN_DESCRIPTION)
    add_arguments(parser)
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    else:
        command = []
    args = parser.parse_args(argv)
    if not command:
        return usage_error(parser, "no command given after --")
    proxy = _start(args)
    if isinstance(proxy, int):
        return proxy
    faults_line = lifetime_line(proxy.fault_plan)
    if faults_line:  # on stderr: the command's own output stays its own
        print(faults_line, file=sys.stderr, flush=True)
    # Each provider under its own prefix; the proxy read the user's own base URLs (where
    # it records from) when it started.
    env = {**os.environ, "ANTHROPIC_BASE_URL": proxy.url, **proxy.provider_base_urls}
    if proxy.needs_stand_in_key(env):  # replay needs no key: the child gets the stand-in
        env = with_stand_in_key(env)
    elif proxy.settings.mode is not Mode.OFF:
        # A provider's client with no key of its own replays too (its SDK will not build
        # without one), and a miss names the key recording it needs. Passing through
        # (mode off), a stand-in would only reach the provider and be refused.
        env = with_provider_stand_ins(env)
    for cloud in claude_code_clouds():  # Claude Code on a cloud: the proxy authenticates
        env = _pointed_at(env, cloud, proxy.url)
    # Claude Code connects its MCP servers in the background by default: whether a slow
    # server's tools are in the first request then depends on timing (a server started
    # to record is slower than one replayed), and the request would not replay. Waiting
    # for them makes the first request the same on every run; a user's own choice stays.
    env.setdefault(MCP_WAIT_VARIABLE, "0")
    signalled: list[int] = []
    try:
        try:
            child = subprocess.Popen(command, env=env)
        except OSError as exc:
            print(f"vcr_kit: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
            return 127

        def forward(signum: int) -> None:
            # The child decides when to stop; the proxy serves it until it has.
            signalled.append(signum)
            child.send_signal(signum)

        with on_stop_signals(forward):
            status = child.wait()
    finally:
        # Asked to stop: what a grandchild still has in flight fails within seconds.
        if signalled:
            proxy.stop(STOP_GRACE)
        else:
            proxy.stop()
    _final_summary()
    # A child killed by a signal: the shell's convention, 128 + the signal number.
    return status if status >= 0 else 128 - status
