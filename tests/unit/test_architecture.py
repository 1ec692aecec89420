"""The house: layers you can see as folders, imports that only go down.

The layers contract (``setup.cfg``, ``[importlinter]``) is run as ``tox -e lint``
runs it, and shown to fail on an upward import and on an import between siblings
(checked in this process by import-linter's own contract, on the package's import
graph built once, with the one import added).
The rest is read from the source: no import circles, no module importing another
module's private name, the environment read in the few places that own it, and
every fixture kind known to every registry that has one entry per kind.
"""

from __future__ import annotations

import ast
import copy
import functools
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path
from typing import Any, ClassVar

import pytest

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
    "vcr_kit/__init__.py": "whether FORCE_VCR is set at all, before loading the settings",
}


def lint_imports(folder: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package in ``folder``, with the contract of its setup.cfg
    (found there: the releases for Python 3.10 take no config path as an argument)."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command as c; c()",
            "--no-cache",
            "--no-logo",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache  # every module parsed once for all the tests below
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


@functools.cache
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


#: Methods that change the object they are called on (lists, dicts, sets, deques).
MUTATING_METHODS = frozenset(
    {
        "append", "extend", "insert", "remove", "pop", "popitem", "clear", "update",
        "setdefault", "add", "discard", "sort", "reverse", "appendleft", "extendleft",
        "difference_update", "intersection_update", "symmetric_difference_update",
        "__setitem__", "__delitem__",
    }
)  # fmt: skip
#: The seams' one patch-and-restore registry, and the import hook it owns.
SEAM_REGISTRY = {"patches.py", "on_import.py"}


def _root_name(node: ast.expr) -> str | None:
    """``x`` of ``x``, ``x.a.b``, ``x[k].a``: the name an expression starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _bound_here(scope: Scope) -> tuple[set[str], set[str]]:
    """(names bound in ``scope``'s own body, names it declares ``global``), nested
    function and class bodies left out."""
    bound: set[str] = set()
    declared: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = scope.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        bound.update(a.arg for a in every)
    body = scope.body if isinstance(scope.body, list) else [scope.body]
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Global):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return bound - declared, declared


def mutated_module_names(source: str) -> list[str]:
    """The module-level names that code run after import changes: rebinds through
    ``global``, assigns or deletes items or attributes of, or reaches a mutating method
    of (called or handed on, ``task.add_done_callback(_tasks.discard)``)."""
    tree = ast.parse(source)
    module_names, _ = _bound_here(tree)
    found: set[str] = set()

    def visit(scope: Scope, shadowed: frozenset[str]) -> None:
        bound, declared = _bound_here(scope)
        found.update(declared)  # ``global x`` in a function: x is rebound at run time
        hidden = shadowed | bound
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        todo: list[ast.AST] = list(body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(node, hidden)
                todo.extend(node.decorator_list if not isinstance(node, ast.Lambda) else [])
                continue
            if isinstance(node, ast.ClassDef):
                todo.extend(node.body)  # a class body is no scope its methods see
                continue
            changed: ast.expr | None = None
            stored = isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
                node.ctx, (ast.Store, ast.Del)
            )
            if stored or (isinstance(node, ast.Attribute) and node.attr in MUTATING_METHODS):
                changed = node.value  # type: ignore[attr-defined]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr")
                and node.args
            ):
                changed = node.args[0]
            name = _root_name(changed) if changed is not None else None
            if name is not None and name in module_names and name not in hidden:
                found.add(name)
            todo.extend(ast.iter_child_nodes(node))

    for statement in tree.body:  # code run at import builds the module; only functions run later
        for node in ast.walk(statement):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(node, frozenset())
    return sorted(found)


@pytest.mark.child
class LayersContractTest(unittest.TestCase):
    graph: ClassVar[Any]
    contract: ClassVar[Any]

    @classmethod
    def setUpClass(cls) -> None:
        # The contract as setup.cfg declares it, and the package's import graph as
        # lint-imports builds it (grimp, with the session options of setup.cfg).
        import grimp
        from importlinter import api
        from importlinter.contracts.layers import LayersContract

        config = api.read_configuration(str(ROOT / "setup.cfg"))
        session = config["session_options"]
        (options,) = config["contracts_options"]
        assert options["type"] == "layers", options
        cls.contract = LayersContract(
            name=options["name"], session_options=session, contract_options=options
        )
        cls.graph = grimp.build_graph(
            *session["root_packages"],
            exclude_type_checking_imports=str(session.get("exclude_type_checking_imports"))
            == "True",
            cache_dir=None,
        )

    def check_with(self, module: str, line: str, imported: str) -> tuple[bool, str]:
        """The contract's verdict on the package with one more import, ``line`` in
        ``module``, and what lint-imports prints of a broken contract."""
        from importlinter.application import output

        graph = copy.deepcopy(self.graph)
        graph.add_import(importer=module, imported=imported, line_number=1, line_contents=line)
        check = self.contract.check(graph, verbose=False)
        with output.console.capture() as printed:
            if not check.kept:
                self.contract.render_broken_contract(check)
        return check.kept, printed.get()

    def test_the_layers_contract_is_kept(self) -> None:
        done = lint_imports(ROOT)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("Contracts: 1 kept, 0 broken.", done.stdout)
        # and the graph the next tests change is one that keeps it
        self.assertTrue(self.contract.check(copy.deepcopy(self.graph), verbose=False).kept)

    def test_an_import_that_climbs_a_layer_breaks_the_contract(self) -> None:
        kept, printed = self.check_with(
            "vcr_kit._core.fixture_names", "from .._seams import hosts", "vcr_kit._seams.hosts"
        )
        self.assertFalse(kept, printed)
        self.assertIn("vcr_kit._core.fixture_names -> vcr_kit._seams.hosts", printed)

    def test_an_import_between_siblings_breaks_the_contract(self) -> None:
        kept, printed = self.check_with(
            "vcr_kit._store.files", "from .._ledger import runs", "vcr_kit._ledger.runs"
        )
        self.assertFalse(kept, printed)
        self.assertIn("vcr_kit._store.files -> vcr_kit._ledger.runs", printed)


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
                    circles.append([*path[path.index(target) :], target])
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
class SeamStateTest(unittest.TestCase):
    """No seam keeps its own save/restore store: every patch, hook and wrapper made once
    is the registry's (``_seams/patches.py``), which ``PATCHES.reset()`` clears."""

    def test_no_seam_module_changes_a_module_level_name(self) -> None:
        found = {
            path.name: names
            for path in sorted((PACKAGE / "_seams").glob("*.py"))
            if path.name not in SEAM_REGISTRY
            and (names := mutated_module_names(path.read_text(encoding="utf-8")))
        }
        self.assertEqual(found, {})

    def test_the_check_sees_every_way_a_store_is_kept(self) -> None:
        source = """
import socket
from threading import Lock
_saved = {}
_users = [0]
_tasks = set()
_flag = False
_finder = []
_lock = Lock()
TABLE = {"a": 1}

def install(task):
    global _flag
    _flag = True
    _saved["x"] = socket.getaddrinfo
    _users[0] += 1
    task.add_done_callback(_tasks.discard)
    with _lock:
        print(TABLE["a"])

def uninstall():
    def inner():
        _finder.append(1)
    del _saved["x"]
    socket.getaddrinfo = None

def shadowed(_saved, _finder):
    _saved["x"] = 1
    _finder.append(1)
    TABLE = {}
    TABLE["b"] = 2
"""
        expected = ["_finder", "_flag", "_saved", "_tasks", "_users", "socket"]
        self.assertEqual(mutated_module_names(source), expected)


@pytest.mark.inprocess
class KindRegistryTest(unittest.TestCase):
    def test_every_cassette_kind_is_a_registered_kind(self) -> None:
        for cassette in (Recording, MessageCassette, StreamingCassette, TokenCountCassette):
            with self.subTest(cassette=cassette.__name__):
                self.assertIn(cassette.kind, KINDS)

    def test_every_kind_has_a_view_in_show(self) -> None:
        self.assertEqual(set(VIEWS), set(KINDS))


def assigned_module_names(source: str) -> set[str]:
    """Names a module binds by assignment (not its imports, functions or classes)."""
    names = set()
    for statement in ast.parse(source).body:
        targets = (
            statement.targets if isinstance(statement, ast.Assign)
            else [statement.target] if isinstance(statement, ast.AnnAssign | ast.AugAssign)
            else []
        )  # fmt: skip
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


@pytest.mark.inprocess
class StateTest(unittest.TestCase):
    """Process-wide state lives in a few objects with owners (ARCHITECTURE.md, State)."""

    def test_at_most_twenty_module_level_names_change_at_run_time(self) -> None:
        found = {
            f"{path.relative_to(ROOT)}: {name}"
            for path in sorted(PACKAGE.rglob("*.py"))
            for source in [path.read_text("utf-8")]
            for name in set(mutated_module_names(source)) & assigned_module_names(source)
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
        changed = set(mutated_module_names(source)) & assigned_module_names(source)
        self.assertEqual(changed, {"a", "b", "c", "d", "e"})


if __name__ == "__main__":
    unittest.main()
