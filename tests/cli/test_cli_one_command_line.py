"""One command line (issue 30, point 5), checked over every verb the parser has (a new
verb is in the table the moment it is in the parser): one program name in its usage
line, ``--fixtures DIR`` accepted, a folder that does not exist said so with exit 2, a
bad setting it reads exit 2, a setting it does not read (``VCR_MODE`` for ``status``)
no matter."""

from __future__ import annotations

import argparse
import signal
import unittest
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import temp_dir, vcr_environ
from tests.support.helpers.examples import examples
from vcr_kit._cli import build_parser

pytestmark = pytest.mark.inprocess

MODES = ("auto", "replay", "record", "off")


def verbs() -> dict[str, argparse.ArgumentParser]:
    """Every verb, from the parser itself."""
    parser = build_parser()
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices)


VERBS = verbs()


def options(verb: str) -> set[str]:
    return {flag for action in VERBS[verb]._actions for flag in action.option_strings}


#: The arguments a verb needs besides the folder to get as far as reading it (every
#: other verb: none). What follows ``--`` is never run: the folder is checked first.
EXTRA: dict[str, Callable[[Path], list[str]]] = {
    "show": lambda folder: ["x-000000000000.json"],
    "diff": lambda folder: ["--git", "HEAD"],
    "run": lambda folder: ["--", "true"],
    "mcp": lambda folder: ["--", "true"],
}


def argv(verb: str, folder: Path | None) -> list[str]:
    given_folder = [] if folder is None else ["--fixtures", str(folder)]
    return [verb, *given_folder, *EXTRA.get(verb, lambda f: [])(folder or Path("."))]


class _StillRunning(Exception):
    pass


@contextmanager
def at_most(seconds: float) -> Iterator[None]:
    """A command that passed its checks and started to serve is stopped, not waited for."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _StillRunning(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(*words: str, **env: str) -> tuple[int, str, str]:
    with vcr_environ(VCR_REPORT="0", **env), at_most(20):
        return cli(*words)


class EveryVerbTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = temp_dir(self)
        self.empty = self.tmp / "fixtures"
        self.empty.mkdir()
        self.missing = self.tmp / "nowhere" / "fixtures"
        self.file = self.tmp / "a-file"
        self.file.write_text("", encoding="utf-8")

    def test_the_table_knows_the_verbs(self) -> None:
        self.assertLessEqual(set(EXTRA), set(VERBS))
        self.assertIn("serve", VERBS)  # the proxy's verbs are in the parser too

    def test_one_program_name_in_every_usage_line(self) -> None:
        for verb in VERBS:
            with self.subTest(verb=verb):
                status, out, err = run(verb, "--help")
                self.assertEqual((status, err), (0, ""))
                self.assertTrue(out.startswith(f"usage: vcr_kit {verb} "), out)
                self.assertNotIn("python -m vcr_kit", out)

    def test_a_folder_that_does_not_exist_is_said_so_with_exit_2(self) -> None:
        for verb in VERBS:
            self.assertIn("--fixtures", options(verb), verb)
            with self.subTest(verb=verb):
                status, out, err = run(*argv(verb, self.missing), VCR_MODE="replay")
                self.assertEqual((status, out), (2, ""))
                if "--mode" in options(verb):  # a verb that may record: it would make it
                    self.assertEqual(err, f"vcr_kit: {self.missing} does not exist, nor does "
                                          f"{self.missing.parent}/ where it would be made; "
                                          "name the fixtures folder\n")  # fmt: skip
                else:
                    self.assertEqual(
                        err, f"vcr_kit: {self.missing} does not exist; name the fixtures folder\n"
                    )

    def test_a_fixtures_setting_that_is_not_a_folder_is_exit_2(self) -> None:
        for verb in VERBS:
            with self.subTest(verb=verb):
                self.assertEqual(
                    run(*argv(verb, None), VCR_MODE="replay", VCR_FIXTURES_DIR=str(self.file)),
                    (
                        2,
                        "",
                        f"vcr_kit: {self.file} (VCR_FIXTURES_DIR) is not a folder; set "
                        "VCR_FIXTURES_DIR to the fixtures folder, or name it with --fixtures DIR\n",
                    ),
                )

    @settings(max_examples=examples(40), deadline=None)
    @given(
        verb=st.sampled_from(sorted(VERBS)),
        mode=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1).filter(
            lambda text: text.strip().lower() not in MODES
        ),
    )
    @example(verb="status", mode="bogus")
    @example(verb="serve", mode="bogus")
    def test_a_bad_mode_is_exit_2_where_it_is_read_and_nothing_elsewhere(
        self, verb: str, mode: str
    ) -> None:
        words = argv(verb, self.empty)
        if verb == "diff":  # two files, no folder: nothing to read but them
            words = ["diff", str(self.file), str(self.file)]
        bad = run(*words, VCR_MODE=mode)
        if "--mode" in options(verb):  # the verbs that serve: the mode is theirs
            said = f"VCR_MODE={mode!r} is not a mode vcr_kit knows"
            self.assertEqual(bad, (2, "", f"vcr_kit: {said}; use one of: {', '.join(MODES)}.\n"))
        else:
            self.assertEqual(bad, run(*words, VCR_MODE="replay"))


class RulesSettingTest(unittest.TestCase):
    def test_rekey_reads_the_rules_turned_off_and_status_does_not(self) -> None:
        folder = temp_dir(self)
        status, out, err = run("rekey", str(folder), VCR_DISABLE_RULES="no_such_rule")
        self.assertEqual((status, out), (2, ""))
        self.assertTrue(err.startswith("vcr_kit: VCR_DISABLE_RULES: no rule is named "), err)
        self.assertEqual(run("status", str(folder), VCR_DISABLE_RULES="no_such_rule")[0], 0)


class MessagesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = temp_dir(self)

    def test_show_on_a_folder_says_what_to_do_and_never_to_remove_it(self) -> None:
        status, out, err = run("show", str(self.tmp))
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(
            err,
            f"vcr_kit: {self.tmp} is a folder; show takes fixture files: vcr_kit show "
            f"{self.tmp}/NAME.json (vcr_kit status {self.tmp} sums a folder up)\n",
        )
        self.assertNotIn("remove", err)

    def test_the_folder_given_twice_must_agree(self) -> None:
        other = self.tmp / "other"
        other.mkdir()
        self.assertEqual(
            run("status", str(self.tmp), "--fixtures", str(other)),
            (2, "", f"vcr_kit: the fixtures folder is given twice, as {self.tmp} and as "
                    f"--fixtures {other}: give one\n"),
        )  # fmt: skip
        self.assertEqual(run("check", str(self.tmp), "--fixtures", str(self.tmp))[0], 0)


if __name__ == "__main__":
    unittest.main()
