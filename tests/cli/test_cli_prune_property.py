"""A property of run completeness: whatever runs were made (subsets, filters, skips,
failures, under pytest or unittest), ``vcr_kit prune --yes`` never removes a fixture
used by a test that exists in the project.

Each run is real: a child of ``tests/support/children/run_driver.py`` (forked, so the SDK is
imported once) runs ``pytest.main`` or ``python -m unittest`` with the generated
command line in a fresh copy of a small recorded project, and writes its run record
at exit as any test run does. Then ``prune`` runs on the copy. And so that the
property is not bought by never pruning: when one of the runs narrowed nothing, the
one fixture no test uses is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.cli_support import (
    KEY,
    cli,
    fixture_asking,
    make_suite_project,
    run_pytest,
)
from tests.support.helpers.env import environ_without_vcr, start_server, temp_dir, working_dir
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.child

TESTS = {"a": ["a1", "a2"], "b": ["b1", "b2"], "c": ["c1"]}
ALL = [name for names in TESTS.values() for name in names]
ORPHAN = "orphan-0123456789ab.json"
DRIVER = ROOT / "tests" / "support" / "children" / "run_driver.py"

#: Arguments that narrow the run one way or another, per runner.
PYTEST_NARROWING = [
    ["-k", "test_a"],
    ["-k", "a1 or b2"],
    ["-k", "not b1"],
    ["-m", "not slow"],
    ["--ignore=tests/test_b.py"],
    ["--ignore-glob=*_c.py"],
    ["--deselect", "tests/test_a.py::Suite::test_a2"],
    ["tests/test_a.py"],
    ["tests/test_b.py::Suite::test_b1"],
    ["-x"],
    ["--maxfail=1"],
    ["-o", "python_files=test_a.py"],
    ["--co"],
    ["--sw"],
]
PYTEST_HARMLESS = [["-q"], ["-v"], ["--tb=short"], ["-ra"]]
UNITTEST_NARROWING = [
    ["discover", "-p", "test_a*.py"],
    ["-k", "a1"],
    ["tests.test_a"],
    ["tests.test_b.Suite.test_b1"],
    ["-f"],
    ["discover", "-s", "tests"],
]
UNITTEST_HARMLESS = [["-v"], ["-q"], ["-b"]]


@dataclass
class Run:
    runner: str
    args: list[str]
    skip: list[str] = field(default_factory=list)
    fail: list[str] = field(default_factory=list)
    narrowed: bool = False


@st.composite
def runs(draw: Any) -> Run:
    runner = draw(st.sampled_from(["pytest", "unittest"]))
    narrowing, harmless = (
        (PYTEST_NARROWING, PYTEST_HARMLESS)
        if runner == "pytest"
        else (UNITTEST_NARROWING, UNITTEST_HARMLESS)
    )
    chosen = draw(st.lists(st.sampled_from(narrowing), max_size=2, unique_by=tuple))
    shown = draw(st.lists(st.sampled_from(harmless), max_size=2, unique_by=tuple))
    skip = draw(st.lists(st.sampled_from(ALL), max_size=2, unique=True))
    fail = draw(st.lists(st.sampled_from(ALL), max_size=2, unique=True))
    args = [word for option in [*shown, *chosen] for word in option]
    if runner == "pytest":
        args = ["-p", "no:cacheprovider", *args]
    elif chosen and chosen[0][0] == "discover":  # discover first, as the command wants
        args = [*chosen[0], *[w for o in [*shown, *chosen[1:]] for w in o]]
    return Run(runner, args, skip, fail, narrowed=bool(chosen or skip or fail))


class PruneAfterGeneratedRunsTest(unittest.TestCase):
    server: ClassVar[Any]
    template: ClassVar[Path]
    driver: ClassVar[subprocess.Popen[str]]
    folder: ClassVar[Path]

    @classmethod
    def setUpClass(cls) -> None:
        holder = unittest.TestCase()
        cls.server = start_server(holder)
        cls.addClassCleanup(holder.doCleanups)
        cls.folder = temp_dir(holder)
        cls.template = cls.folder / "template"
        fixtures = make_suite_project(cls.template, TESTS)
        done = run_pytest(cls.template, cls.server.url)  # records every fixture
        if done.returncode != 0:
            raise AssertionError(done.stdout + done.stderr)
        shutil.rmtree(fixtures / ".runs")  # each example is judged by its own runs only
        shutil.copyfile(fixture_asking(fixtures, "a1"), fixtures / ORPHAN)
        past = time.time() - 3600
        for path in fixtures.glob("*.json"):
            os.utime(path, (past, past))  # recorded before every run of the examples
        cls.driver = subprocess.Popen(
            [sys.executable, str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environ_without_vcr(),
        )
        cls.addClassCleanup(cls.driver.wait, 60)
        cls.addClassCleanup(cls.driver.stdin.close)  # type: ignore[union-attr]
        cls.examples = [0]

    def run_it(self, root: Path, run: Run, log: Path) -> int:
        env = environ_without_vcr()
        env.pop("PYTEST_ADDOPTS", None)
        env.update(
            LOOPBACK_URL=self.server.url,
            ANTHROPIC_API_KEY=KEY,
            VCR_FIXTURES_DIR=str(root / "fixtures"),
            VCR_REPORT="0",
            CI="true",  # replay only: every fixture exists
            SKIP_TESTS=",".join(run.skip),
            FAIL_TESTS=",".join(run.fail),
        )
        request = {"cwd": str(root), "env": env, "runner": run.runner, "args": run.args,
                   "log": str(log)}  # fmt: skip
        assert self.driver.stdin is not None
        assert self.driver.stdout is not None
        self.driver.stdin.write(json.dumps(request) + "\n")
        self.driver.stdin.flush()
        answer = self.driver.stdout.readline()
        self.assertTrue(answer, "the run driver died")
        status: int = json.loads(answer)["status"]
        return status

    @settings(
        max_examples=8,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(runs(), min_size=1, max_size=3))
    # issue 15's three examples, and whole runs under both runners
    @example([Run("unittest", ["discover", "-p", "test_a*.py"], narrowed=True)])
    @example([Run("pytest", ["-p", "no:cacheprovider", "--ignore=tests/test_b.py"], narrowed=True)])
    @example([Run("unittest", [], skip=["b1"], narrowed=True)])
    @example([Run("pytest", ["-p", "no:cacheprovider", "-q"])])
    @example([Run("unittest", ["-v"]), Run("pytest", ["-p", "no:cacheprovider", "-k", "a1"],
                                          narrowed=True)])  # fmt: skip
    def test_prune_never_removes_a_fixture_a_test_uses(self, made: list[Run]) -> None:
        self.examples[0] += 1
        root = self.folder / f"example-{self.examples[0]}"
        shutil.copytree(self.template, root)
        fixtures = root / "fixtures"
        used = {name: fixture_asking(fixtures, name).name for name in ALL}
        statuses = []
        for index, run in enumerate(made):
            statuses.append(self.run_it(root, run, root / f"run-{index}.log"))
        with working_dir(root):
            _, out, err = cli("prune", "--yes")
        left = {p.name for p in fixtures.glob("*.json")}
        story = f"runs: {made}, statuses: {statuses}\n{out}{err}"
        for run, status in zip(made, statuses, strict=True):
            if not run.narrowed:  # a whole, passing suite: the driver ran it for real
                self.assertEqual(status, 0, story)
        self.assertLessEqual(set(used.values()), left, story)
        if any(not run.narrowed for run in made):
            self.assertNotIn(ORPHAN, left, story)
        else:
            self.assertIn(ORPHAN, left, story)
        shutil.rmtree(root)

    examples: ClassVar[list[int]]


if __name__ == "__main__":
    unittest.main()
