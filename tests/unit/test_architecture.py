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
import unittest
from pathlib import Path
from typing import Any, ClassVar

from vcr_kit._cli._render import VIEWS
from vcr_kit._core.kinds import KINDS
from vcr_kit._engine.cassette import Recording
from vcr_kit._engine.sdk_cassettes import MessageCassette, StreamingCassette, TokenCountCassette

ROOT = Path(__file__).resolve().parents[2]
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
            "vcr_kit._core.keys", "from .._seams import hosts", "vcr_kit._seams.hosts"
        )
        self.assertFalse(kept, printed)
        self.assertIn("vcr_kit._core.keys -> vcr_kit._seams.hosts", printed)

    def test_an_import_between_siblings_breaks_the_contract(self) -> None:
        kept, printed = self.check_with(
            "vcr_kit._store.files", "from .._ledger import runs", "vcr_kit._ledger.runs"
        )
        self.assertFalse(kept, printed)
        self.assertIn("vcr_kit._store.files -> vcr_kit._ledger.runs", printed)


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


class KindRegistryTest(unittest.TestCase):
    def test_every_cassette_kind_is_a_registered_kind(self) -> None:
        for cassette in (Recording, MessageCassette, StreamingCassette, TokenCountCassette):
            with self.subTest(cassette=cassette.__name__):
                self.assertIn(cassette.kind, KINDS)

    def test_every_kind_has_a_view_in_show(self) -> None:
        self.assertEqual(set(VIEWS), set(KINDS))


if __name__ == "__main__":
    unittest.main()
