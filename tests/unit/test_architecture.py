"""The house: layers you can see as folders, imports that only go down.

The layers contract (``setup.cfg``, ``[importlinter]``) is run as ``tox -e lint``
runs it, and shown to fail on an upward import and on an import between siblings.
The rest is read from the source: no import circles, no module importing another
module's private name, the environment read in the few places that own it, and
every fixture kind known to every registry that has one entry per kind.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import temp_dir
from tests.support.helpers.paths import ROOT
from vcr_kit._cli._render import VIEWS
from vcr_kit._core.kinds import KINDS
from vcr_kit._engine.cassette import Recording
from vcr_kit._engine.sdk_cassettes import MessageCassette, StreamingCassette, TokenCountCassette

PACKAGE = ROOT / "vcr_kit"
#: The modules that read (or set) environment variables, and why each may.
ENVIRONMENT_READERS = {
    "vcr_kit/_core/config.py": "vcr_kit's own variables, ANTHROPIC_BASE_URL, tox and xdist",
    "vcr_kit/_core/credentials.py": "the API keys",
    "vcr_kit/_store/rescue.py": "XDG_CACHE_HOME, where a paid answer is rescued",
    "vcr_kit/dehydrate.py": "HOME and CLAUDE_CONFIG_DIR, the machine paths it replaces",
    "vcr_kit/_cli/proxy.py": "the environment a child process inherits",
}


def lint_imports(folder: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package in ``folder``, with the contract of its setup.cfg
    (found there: the releases for Python 3.10 take no config path as an argument)."""
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
         "--no-cache", "--no-logo"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def runtime_imports(path: Path) -> list[tuple[str, str, int]]:
    """(module imported from, name imported, line) for every import that runs, inside
    functions too; imports under ``if TYPE_CHECKING:`` only name types."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            found.extend((source, alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "", node.lineno) for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the vcr_kit modules it imports at run time."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = set()
        for source, imported, _ in runtime_imports(path):
            if f"{source}.{imported}" in MODULES:
                targets.add(f"{source}.{imported}")
            elif source in MODULES:
                targets.add(source)
        graph[name] = targets - {name}
    return graph


@pytest.mark.child
class LayersContractTest(unittest.TestCase):
    def lint_with(self, module: str, line: str) -> subprocess.CompletedProcess[str]:
        """``lint-imports`` over a copy of the package in which ``module`` (a path below
        ``vcr_kit/``) also has ``line``."""
        folder = temp_dir(self)
        shutil.copytree(PACKAGE, folder / "vcr_kit", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "setup.cfg", folder / "setup.cfg")
        target = folder / "vcr_kit" / module
        target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n")
        return lint_imports(folder)

    def test_the_layers_contract_is_kept(self) -> None:
        done = lint_imports(ROOT)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("Contracts: 1 kept, 0 broken.", done.stdout)

    def test_an_import_that_climbs_a_layer_breaks_the_contract(self) -> None:
        done = self.lint_with("_core/fixture_names.py", "from .._seams import hosts")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("Contracts: 0 kept, 1 broken.", done.stdout)
        self.assertIn("vcr_kit._core.fixture_names -> vcr_kit._seams.hosts", done.stdout)

    def test_an_import_between_siblings_breaks_the_contract(self) -> None:
        done = self.lint_with("_store/files.py", "from .._ledger import runs")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("vcr_kit._store.files -> vcr_kit._ledger.runs", done.stdout)


@pytest.mark.inprocess
class ImportRulesTest(unittest.TestCase):
    def test_no_import_circles(self) -> None:
        graph = import_graph()
        state: dict[str, int] = {}  # 1: on the current path, 2: done
        circles: list[list[str]] = []

        def visit(node: str, path: list[str]) -> None:
            state[node] = 1
            for target in sorted(graph.get(node, ())):
                if state.get(target) == 1:
                    circles.append([*path[path.index(target):], target])
                elif target not in state:
                    visit(target, [*path, target])
            state[node] = 2

        for module in sorted(graph):
            if module not in state:
                visit(module, [module])
        self.assertEqual(circles, [])

    def test_the_graph_sees_the_imports_inside_functions(self) -> None:
        # The circle check above must not be blind: the proxy is imported lazily.
        self.assertIn("vcr_kit._proxy.server", import_graph()["vcr_kit._integrations.session"])

    def test_no_module_imports_another_modules_private_name(self) -> None:
        found = []
        for path in MODULES.values():
            for source, imported, line in runtime_imports(path):
                if not source.startswith("vcr_kit") or not imported.startswith("_"):
                    continue
                if imported.startswith("__") or f"{source}.{imported}" in MODULES:
                    continue  # a dunder (__version__), or a private module: both fine
                found.append(f"{path.relative_to(ROOT)}:{line}: {source}.{imported}")
        self.assertEqual(found, [])

    def test_the_environment_is_read_where_it_is_owned(self) -> None:
        readers = {
            str(path.relative_to(ROOT))
            for path in MODULES.values()
            if "os.environ" in (text := path.read_text(encoding="utf-8")) or "getenv(" in text
        }
        self.assertEqual(readers, set(ENVIRONMENT_READERS))


@pytest.mark.inprocess
class KindRegistryTest(unittest.TestCase):
    def test_every_cassette_kind_is_a_registered_kind(self) -> None:
        for cassette in (Recording, MessageCassette, StreamingCassette, TokenCountCassette):
            with self.subTest(cassette=cassette.__name__):
                self.assertIn(cassette.kind, KINDS)

    def test_every_kind_has_a_view_in_show(self) -> None:
        self.assertEqual(set(VIEWS), set(KINDS))


if __name__ == "__main__":
    unittest.main()


#: Methods that change a list, dict, set or deque in place.
_MUTATORS = frozenset(
    {
        *("append", "extend", "insert", "remove", "pop", "popitem", "clear", "update"),
        *("add", "discard", "setdefault", "appendleft", "popleft", "move_to_end", "sort"),
        "reverse",
    }
)


def _root_name(node: ast.expr) -> str | None:
    """``NAME`` for ``NAME``, ``NAME.a.b`` and ``NAME.a[k]``: the module-level name a
    change through this expression lands on."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def names_changed_at_run_time(tree: ast.Module) -> set[str]:
    """Module-level names that functions change: rebound through ``global``, their
    items assigned or deleted, a mutating method called on them, or (so that a state
    object counts as the one name it is) an attribute of theirs assigned or mutated."""
    bound = set()
    for statement in tree.body:
        targets = (
            statement.targets if isinstance(statement, ast.Assign)
            else [statement.target] if isinstance(statement, ast.AnnAssign | ast.AugAssign)
            else []
        )  # fmt: skip
        for target in targets:
            bound |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    changed: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                changed |= set(node.names)
            elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store | ast.Del
            ):
                changed.add(_root_name(node) or "")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS
            ):
                changed.add(_root_name(node.func.value) or "")
    return changed & bound


@pytest.mark.inprocess
class StateTest(unittest.TestCase):
    """Process-wide state lives in a few objects with owners (ARCHITECTURE.md, State)."""

    def test_at_most_twenty_module_level_names_change_at_run_time(self) -> None:
        found = {
            f"{path.relative_to(ROOT)}: {name}"
            for path in sorted((ROOT / "vcr_kit").rglob("*.py"))
            for name in names_changed_at_run_time(ast.parse(path.read_text("utf-8")))
        }
        self.assertLessEqual(len(found), 20, "\n".join(sorted(found)))

    def test_the_count_sees_each_kind_of_change(self) -> None:
        source = textwrap.dedent(
            """
            import threading
            a = 0
            b = {}
            c = []
            d = State()
            e = State()
            untouched = []
            lock = threading.Lock()
            def f(x):
                global a
                a = 1
                b[x] = 1
                c.append(x)
                d.field = x
                e.items.clear()
                local = []
                local.append(x)
                with lock:
                    return untouched[0]
            """
        )
        self.assertEqual(names_changed_at_run_time(ast.parse(source)), {"a", "b", "c", "d", "e"})
