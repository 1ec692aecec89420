"""Whether a test runner's command line leaves the suite whole: pure judges of pytest's
and ``python -m unittest``'s arguments, for the run record (``vcr_kit prune``).

They judge by positive evidence: an argument is accepted only when it is known to
change nothing about which tests are collected and run (output, warnings, workers,
coverage). Anything else, an option of a plugin vcr_kit does not know included,
makes the run partial. Two kinds of reason are told apart:

- ``collection``: the collected suite itself may be smaller than the project's (a
  test path, ``--ignore``, ``--lf``, ``-o``, an unknown option); nothing can make
  up for it.
- ``selection``: tests were chosen among those collected (``-k``, ``-m``,
  ``--deselect``, ``-x``, a shard plugin's options); the run is still complete if
  every collected test passed, in this process or in another shard of the run.

A collection narrowed only by place (test paths: ``pytest tests/api``; a start
folder: ``python -m unittest discover -s examples``) is told apart too (``paths``):
a run over it that passed everything is complete over that part (``runs.Coverage``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["Scope", "judge_pytest_args", "judge_unittest_argv"]


@dataclass(frozen=True)
class Scope:
    """Why a command line does not select the whole suite (both empty: it does)."""

    collection: tuple[str, ...] = field(default=())
    selection: tuple[str, ...] = field(default=())
    #: The test paths or start folder the collection was narrowed to, as given; and
    #: the reasons in ``collection`` that say so.
    paths: tuple[str, ...] = field(default=())
    place: tuple[str, ...] = field(default=())

    @property
    def whole(self) -> bool:
        return not self.collection and not self.selection

    @property
    def by_place(self) -> bool:
        """The collection was narrowed by place only (paths, no node ids, nothing
        else): a run that passed all it collected is complete over ``paths``."""
        return bool(self.paths) and all(reason in self.place for reason in self.collection)


# -- pytest ---------------------------------------------------------------------------

#: Options without a value that change only what is shown, or make tests stricter.
_PYTEST_FLAGS: Final = frozenset(
    {
        "--quiet",
        "--verbose",
        "--showlocals",
        "--no-showlocals",
        "--strict-markers",
        "--strict-config",
        "--strict",
        "--disable-warnings",
        "--disable-pytest-warnings",
        "--no-header",
        "--no-summary",
        "--failed-first",
        "--ff",
        "--new-first",
        "--nf",
        "--setup-show",
        "--full-trace",
        "--runxfail",
        "--force-short-summary",
        "--cov-append",
        "--cov-branch",
        "--no-cov",
        "--no-cov-on-fail",
    }
)
#: Options whose value changes only output, warnings, workers, temp folders, coverage.
_PYTEST_VALUED: Final = frozenset(
    {
        "-r",
        "--tb",
        "--color",
        "--code-highlight",
        "--capture",
        "--durations",
        "--durations-min",
        "-W",
        "--pythonwarnings",
        "--basetemp",
        "--junitxml",
        "--junit-xml",
        "--junit-prefix",
        "--log-level",
        "--log-cli-level",
        "--log-format",
        "--log-date-format",
        "--log-file",
        "--log-file-level",
        "--show-capture",
        "--import-mode",
        "--verbosity",
        "--assert",
        "-n",
        "--numprocesses",
        "--maxprocesses",
        "--dist",
        "--timeout",
        "--randomly-seed",
        "--cov-report",
        "--cov-config",
        "--cov-fail-under",
    }
)
#: ``-p`` values that leave collection alone.
_PYTEST_PLUGINS: Final = frozenset(
    {"no:cacheprovider", "no:randomly", "randomly", "xdist", "no:xdist", "no:warnings"}
)
#: Options that choose tests among those collected; value-taking ones map to True.
_PYTEST_SELECTING: Final = {
    "-k": True,
    "-m": True,
    "--deselect": True,
    "-x": False,
    "--exitfirst": False,
    "--maxfail": True,
    "--sw": False,
    "--stepwise": False,
    "--sw-skip": False,
    "--stepwise-skip": False,
    # shard plugins: pytest-split, pytest-shard
    "--splits": True,
    "--group": True,
    "--splitting-algorithm": True,
    "--shard-id": True,
    "--num-shards": True,
}
_SHORT_FLAGS: Final = frozenset("qvsl")
_SHORT_VALUED: Final = frozenset("rnWpkmco")


def judge_pytest_args(args: Sequence[str]) -> Scope:
    """Judge pytest's arguments (the ini ``addopts``, ``PYTEST_ADDOPTS`` and the
    command line, in that order)."""
    collection: list[str] = []
    selection: list[str] = []
    positional: list[str] = []
    words = list(args)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            if index < len(words):
                collection.append(_PATHS_GIVEN)
                positional += words[index:]
            break
        if not word.startswith("-") or word == "-":
            collection.append(_PATHS_GIVEN)
            positional.append(word)
            continue
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            needs_value = _pytest_long_needs_value(name, bool(equals))
            if needs_value is None:
                collection.append(f"{name} was given (an option vcr_kit does not know)")
                continue
            if needs_value and not equals:
                value = words[index] if index < len(words) else ""
                index += 1
            _pytest_option(name, value, collection, selection)
            continue
        index = _pytest_short_cluster(word, words, index, collection, selection)
    # A node id (path::name) picks tests inside a file: not a part chosen by place.
    paths = () if any("::" in w or w == "-" for w in positional) else tuple(positional)
    place = (_PATHS_GIVEN,) if paths else ()
    return Scope(tuple(_unique(collection)), tuple(_unique(selection)), paths, place)


_PATHS_GIVEN: Final = "test paths or node ids were given"


def _pytest_long_needs_value(name: str, inline: bool) -> bool | None:
    """True or False: whether ``name`` takes a value; None: not an option known here."""
    if name in _PYTEST_SELECTING:
        return _PYTEST_SELECTING[name]
    if name == "--cov":  # both a flag and a valued option: only --cov=X takes one
        return inline
    if name in _PYTEST_FLAGS:
        return False
    if name in _PYTEST_VALUED:
        return True
    return None


def _pytest_option(name: str, value: str, collection: list[str], selection: list[str]) -> None:
    if name == "-p":
        if value not in _PYTEST_PLUGINS:
            collection.append(f"-p {value} was given (a plugin may change what is collected)")
    elif name in _PYTEST_SELECTING:
        selection.append(f"{name} was given")


def _pytest_short_cluster(
    word: str, words: list[str], index: int, collection: list[str], selection: list[str]
) -> int:
    """Judge ``-qvx`` or ``-rA`` or ``-n 4``; return the index after it (and its value)."""
    letters = word[1:]
    for position, letter in enumerate(letters):
        if letter in _SHORT_FLAGS:
            continue
        if letter == "x":
            selection.append("-x was given")
            continue
        if letter in _SHORT_VALUED:
            value = letters[position + 1 :].lstrip("=")
            if not value:
                value = words[index] if index < len(words) else ""
                index += 1
            option = f"-{letter}"
            if letter in "co":
                collection.append(f"{option} was given (it may change what is collected)")
            elif letter in "km":
                selection.append(f"{option} was given")
            else:
                _pytest_option(option, value, collection, selection)
            return index
        collection.append(f"-{letter} was given (an option vcr_kit does not know)")
        return index
    return index


# -- python -m unittest ---------------------------------------------------------------

_UNITTEST_FLAGS: Final = frozenset(
    {"-v", "--verbose", "-q", "--quiet", "-b", "--buffer", "-c", "--catch", "--locals"}
)
_DEFAULT_PATTERN: Final = "test*.py"
#: The command a run of ``python -m unittest`` shows in ``sys.argv[0]``.
UNITTEST_PROGRAM: Final = "python -m unittest"


def judge_unittest_argv(argv: Sequence[str], cwd: Path | None = None) -> Scope:
    """Judge ``sys.argv`` of a unittest run: whole only for ``python -m unittest``
    (or ``... discover``) with the default start folder (the cwd), the default
    pattern ``test*.py``, and no test names, ``-k`` or ``-f``."""
    if not argv or not (argv[0] == UNITTEST_PROGRAM or argv[0].endswith("unittest")):
        program = os.path.basename(argv[0]) if argv else "?"
        return Scope(
            collection=(f"{program} is not python -m unittest (vcr_kit cannot see its selection)",)
        )
    here = (cwd or Path.cwd()).resolve()
    args = list(argv[1:])
    discover = args[:1] == ["discover"]
    if discover:
        args = args[1:]
    collection: list[str] = []
    selection: list[str] = []
    positional: list[str] = []
    start: list[tuple[str, str]] = []  # (the reason, the folder) of a start folder given
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        name, has_value, inline = word.partition("=")
        if word in _UNITTEST_FLAGS:
            continue
        if word in ("-f", "--failfast"):
            selection.append(f"{word} was given")
        elif name in ("-k", "-s", "--start-directory", "-t", "--top-level-directory",
                      "-p", "--pattern", "--durations"):  # fmt: skip
            value = inline if has_value else (args[index] if index < len(args) else "")
            if not has_value:
                index += 1
            _unittest_option(name, value, here, collection, start)
        elif word.startswith("-"):
            collection.append(f"{word} was given (an option vcr_kit does not know)")
        else:
            positional.append(word)
    if positional and not discover:
        collection.append(f"test names were given ({' '.join(positional)})")
    elif positional:  # discover's positional form: start folder, pattern, top folder
        for option, value in zip(("-s", "-p", "-t"), positional[:3], strict=False):
            _unittest_option(option, value, here, collection, start)
        if positional[3:]:
            collection.append(f"{positional[3]!r} was given (an argument vcr_kit does not know)")
    return Scope(
        tuple(_unique(collection)),
        tuple(_unique(selection)),
        tuple(_unique(folder for _, folder in start[-1:])),  # the last -s wins, as in argparse
        tuple(reason for reason, _ in start),
    )


def _unittest_option(
    name: str, value: str, here: Path, collection: list[str], start: list[tuple[str, str]]
) -> None:
    if name == "--durations":  # output only
        return
    if name == "-k":
        collection.append(f"-k {value} was given")
    elif name in ("-p", "--pattern"):
        if value != _DEFAULT_PATTERN:
            collection.append(f"the pattern {value!r} was given (not {_DEFAULT_PATTERN!r})")
    elif (here / value).resolve() != here:  # -s or -t: a folder
        reason = f"{name} {value} was given (a start folder other than the current one)"
        collection.append(reason)
        if name in ("-s", "--start-directory"):
            start.append((reason, str((here / value).resolve())))


def _unique(reasons: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(reasons))
