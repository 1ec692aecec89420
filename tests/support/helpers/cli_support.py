"""Helpers of the command-line tests: real fixtures recorded by the SDK over the
loopback server, the command line run in-process, a tiny pytest project to run as
a real test run (which writes a real run record)."""

from __future__ import annotations

import contextlib
import io
import os
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.support.helpers.env import environ_without_vcr
from tests.support.helpers.forked_runs import driver
from vcr_kit._cli import main

KEY = "sk-ant-test-" + "k" * 32
MODEL = "claude-opus-4-7"


def cli(*argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``vcr_kit ARGV`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:  # argparse: usage errors, --help, --version
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def record(url: str, folder: Path, prompts: list[str], *, stream: bool = False) -> list[Any]:
    """Ask each prompt through ``vcr_kit.client`` (mode auto: recorded on a miss)."""
    import vcr_kit

    answers = []
    with vcr_kit.client(base_url=url, api_key=KEY, fixtures_dir=folder, max_retries=0) as c:
        for prompt in prompts:
            messages = [{"role": "user", "content": prompt}]
            if stream:
                with c.messages.stream(model=MODEL, max_tokens=64, messages=messages) as s:
                    answers.append(s.get_final_message())
            else:
                answers.append(c.messages.create(model=MODEL, max_tokens=64, messages=messages))
    return answers


TEST_MODULE = """
import os

import anthropic
import pytest


def ask(prompt):
    client = anthropic.Anthropic(base_url=os.environ["LOOPBACK_URL"], max_retries=0)
    reply = client.messages.create(
        model="claude-opus-4-7", max_tokens=64, messages=[{"role": "user", "content": prompt}]
    )
    return reply.content[0].text


@pytest.mark.vcr
def test_greeting():
    assert ask(os.environ["GREETING"]).startswith("Echo: ")


@pytest.mark.vcr
def test_farewell():
    assert ask("Say goodbye.") == "Echo: Say goodbye."
"""


def make_project(root: Path) -> Path:
    """A project with two recorded-API tests; its fixtures go to ``root/fixtures``."""
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_ask.py").write_text(textwrap.dedent(TEST_MODULE), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n", encoding="utf-8")
    return root / "fixtures"


def run_pytest(root: Path, url: str, *args: str, **env: str) -> Any:
    """Run the project's suite in a new process, as a developer or CI would (``pytest
    ARGS``, forked from the run driver: ``forked_runs``)."""
    environ = environ_without_vcr()
    environ.pop("PYTEST_XDIST_WORKER", None)
    environ.pop("PYTEST_ADDOPTS", None)
    environ.update(
        {
            "LOOPBACK_URL": url,
            "ANTHROPIC_API_KEY": KEY,
            "VCR_FIXTURES_DIR": str(root / "fixtures"),
            "GREETING": "Say hello.",
            **env,
        }
    )
    return driver().run("pytest", ["-q", "-p", "no:cacheprovider", *args], cwd=root, env=environ)


SUITE_HEAD = """
import os
import unittest

import anthropic

from vcr_kit import VCRTestCase

SKIP = os.environ.get("SKIP_TESTS", "").split(",")
FAIL = os.environ.get("FAIL_TESTS", "").split(",")
STOP = os.environ.get("INTERRUPT_TESTS", "").split(",")
SKIP_FILES = os.environ.get("SKIP_FILES", "").split(",")


def ask(prompt):
    client = anthropic.Anthropic(base_url=os.environ["LOOPBACK_URL"], max_retries=0)
    reply = client.messages.create(
        model="claude-opus-4-7", max_tokens=64, messages=[{"role": "user", "content": prompt}]
    )
    return reply.content[0].text


class Suite(VCRTestCase):
    @classmethod
    def setUpClass(cls):
        if __name__.rpartition(".")[2].removeprefix("test_") in SKIP_FILES:
            raise unittest.SkipTest("SKIP_FILES names " + __name__)

    def check(self, name):
        if name in FAIL:
            self.fail("FAIL_TESTS names " + name)
        if name in STOP:
            raise KeyboardInterrupt(name)  # as Ctrl-C would
        self.assertEqual(ask("Ask for " + name), "Echo: Ask for " + name)
"""

SUITE_TEST = """
    @unittest.skipIf({name!r} in SKIP, "SKIP_TESTS names {name}")
    def test_{name}(self):
        self.check({name!r})
"""


def make_suite_project(root: Path, files: dict[str, list[str]]) -> Path:
    """A project of ``VCRTestCase`` tests that both pytest and ``python -m unittest``
    run whole: ``tests/test_<file>.py`` holds a test per name, each asking the API
    one question of its own (so each has its own fixture). ``SKIP_TESTS``,
    ``FAIL_TESTS`` and ``INTERRUPT_TESTS`` (comma-separated names) skip a test with
    ``skipIf``, fail it, or raise ``KeyboardInterrupt`` in it, before it asks;
    ``SKIP_FILES`` (file stems) skips a file's tests in ``setUpClass``. Returns the
    fixtures folder."""
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "__init__.py").write_text("", encoding="utf-8")
    for stem, names in files.items():
        body = SUITE_HEAD + "".join(SUITE_TEST.format(name=name) for name in names)
        (root / "tests" / f"test_{stem}.py").write_text(body, encoding="utf-8")
    (root / "setup.py").write_text("", encoding="utf-8")  # the project's root marker
    return root / "fixtures"


def run_unittest(root: Path, url: str, *args: str, **env: str) -> Any:
    """``python -m unittest ARGS`` in ``root``, in a new process, as a developer would
    (forked from the run driver: ``forked_runs``)."""
    environ = environ_without_vcr()
    environ.update(
        {
            "LOOPBACK_URL": url,
            "ANTHROPIC_API_KEY": KEY,
            "VCR_FIXTURES_DIR": str(root / "fixtures"),
            **env,
        }
    )
    return driver().run("unittest", args, cwd=root, env=environ)


def fixture_asking(folder: Path, name: str) -> Path:
    """The fixture whose request asks for test ``name``'s answer."""
    for path in folder.glob("*.json"):
        if f'"Ask for {name}"' in path.read_text(encoding="utf-8"):
            return path
    raise AssertionError(f"no fixture asks for {name}")


def backdate(folder: Path, seconds: float = 3600) -> None:
    """Set every fixture in ``folder`` as written ``seconds`` ago: a run started now
    starts strictly after them, on any file system's clock granularity (no sleep)."""
    past = time.time() - seconds
    for path in folder.glob("*.json"):
        os.utime(path, (past, past))
