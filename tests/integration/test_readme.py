"""The README and the docs site: their interactive examples run as written, the README
is a first page whose links work on the package index too, every docs link in vcr_kit's
messages names a page that exists, and the CLI reference is the parsers' own help."""

from __future__ import annotations

import ast
import doctest
import importlib.util
import re
import unittest
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from tests.support.helpers.paths import ROOT
from vcr_kit._cli import COMMANDS, PROXY_COMMANDS

pytestmark = pytest.mark.inprocess

README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The docs site's address: README links and error messages point into it.
SITE = "https://vcr-kit.github.io/vcr_kit/"
#: A link into the site: the page's path (``faults/``, or ``""`` for the home page).
#: A page may be in a folder (``providers/openai/``).
_SITE_LINK = re.compile(re.escape(SITE) + r"((?:[a-z0-9-]+/)*[a-z0-9-]*)(#[a-z0-9-]+)?")
#: A markdown link or image whose target is not an absolute URL (nor a page anchor).
#: A fenced Python example (not a ``>>>`` session, which doctest runs).
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_RELATIVE_LINK = re.compile(r"\]\((?!https?://|#)([^)]*)\)")
MAX_README_LINES = 200
VERBS = [command.NAME for command in COMMANDS] + list(PROXY_COMMANDS)


def doc_pages() -> list[Path]:
    """The site's pages; ``_incoming/`` is text waiting to be placed, not in the site."""
    return sorted(p for p in DOCS.rglob("*.md") if "_incoming" not in p.relative_to(DOCS).parts)


def page_for(link_path: str) -> Path:
    """The source of a site address's page: ``faults/`` is ``docs/faults.md``."""
    slug = link_path.strip("/")
    return DOCS / f"{slug or 'index'}.md"


def load_hooks() -> ModuleType:
    hooks = ROOT / "tools" / "mkdocs_hooks.py"
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", hooks)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class InteractiveExamplesTest(unittest.TestCase):
    def test_interactive_examples_give_the_output_shown(self) -> None:
        attempted = 0
        for page in [README, *doc_pages()]:
            with self.subTest(page=str(page.relative_to(ROOT))):
                result = doctest.testfile(str(page), module_relative=False, verbose=False)
                self.assertEqual(result.failed, 0)
                if ">>> " in page.read_text(encoding="utf-8"):
                    self.assertGreater(result.attempted, 0)
                attempted += result.attempted
        self.assertGreater(attempted, 0)

    def test_every_python_example_is_valid_python(self) -> None:
        # Examples that need a key or a project to run are at least Python as written.
        flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        blocks = 0
        for page in [README, *doc_pages()]:
            for match in _PYTHON_BLOCK.finditer(page.read_text(encoding="utf-8")):
                source = match.group(1)
                if source.lstrip().startswith(">>>"):
                    continue
                blocks += 1
                with self.subTest(page=str(page.relative_to(ROOT)), block=source[:60]):
                    compile(source, str(page), "exec", flags=flags)
        self.assertGreater(blocks, 0)


class FirstPageTest(unittest.TestCase):
    def test_the_readme_is_a_first_page(self) -> None:
        lines = README.read_text(encoding="utf-8").splitlines()
        self.assertLessEqual(len(lines), MAX_README_LINES)

    def test_every_readme_link_works_on_the_package_index(self) -> None:
        # The README is the package's long description: a relative link breaks there.
        self.assertEqual(_RELATIVE_LINK.findall(README.read_text(encoding="utf-8")), [])

    def test_the_readme_shows_the_two_fresh_machine_commands(self) -> None:
        text = README.read_text(encoding="utf-8")
        self.assertIn("CI=true python -m unittest discover -s examples -t . -v", text)
        self.assertIn("python -m pip install tox && tox", text)


class SiteLinksTest(unittest.TestCase):
    def test_every_site_link_names_a_page_that_exists(self) -> None:
        sources = [README, ROOT / "CONTRIBUTING.md", ROOT / "ARCHITECTURE.md", *doc_pages()]
        sources += sorted((ROOT / "vcr_kit").rglob("*.py"))
        found = 0
        for source in sources:
            for match in _SITE_LINK.finditer(source.read_text(encoding="utf-8")):
                found += 1
                with self.subTest(source=str(source.relative_to(ROOT)), link=match.group(0)):
                    self.assertTrue(page_for(match.group(1)).is_file())
        self.assertGreater(found, 0)

    def test_no_message_sends_the_user_to_a_readme_section(self) -> None:
        for source in sorted((ROOT / "vcr_kit").rglob("*.py")):
            name = str(source.relative_to(ROOT))
            with self.subTest(source=name):
                text = source.read_text(encoding="utf-8")
                self.assertFalse("see README" in text, f"{name} points to a README section")

    @given(slug=st.sampled_from(sorted(p.stem for p in DOCS.glob("*.md"))))
    @example(slug="faults")
    @settings(max_examples=examples(20))
    def test_a_page_address_maps_back_to_its_page(self, slug: str) -> None:
        address = SITE if slug == "index" else f"{SITE}{slug}/"
        match = _SITE_LINK.fullmatch(address)
        assert match is not None
        self.assertEqual(page_for(match.group(1)), DOCS / f"{slug}.md")


class CliReferenceTest(unittest.TestCase):
    def test_the_reference_is_every_verbs_own_help(self) -> None:
        hooks = load_hooks()
        reference = hooks.cli_reference()
        self.assertEqual(hooks.verbs(), VERBS)
        for verb in VERBS:
            with self.subTest(verb=verb):
                self.assertIn(f"## `vcr_kit {verb}`\n", reference)
                help_text = hooks.help_text([verb, "--help"])
                self.assertIn("usage:", help_text)
                self.assertIn(help_text, reference)

    def test_the_cli_page_asks_for_the_generated_reference(self) -> None:
        hooks = load_hooks()
        page = (DOCS / "cli.md").read_text(encoding="utf-8")
        self.assertIn(hooks.MARKER, page)
        rendered = hooks.on_page_markdown(page)
        self.assertNotIn(hooks.MARKER, rendered)
        self.assertIn(hooks.help_text(["drift", "--help"]), rendered)


class ConfigurationReferenceTest(unittest.TestCase):
    def test_every_variable_vcr_kit_reads_is_on_the_configuration_page(self) -> None:
        page = (DOCS / "configuration.md").read_text(encoding="utf-8")
        names: set[str] = set()
        for source in (ROOT / "vcr_kit").rglob("*.py"):
            names |= set(re.findall(r"\b(?:VCR_[A-Z][A-Z_]*|FORCE_VCR)\b", source.read_text()))
        self.assertGreater(len(names), 10)
        for name in sorted(names):
            with self.subTest(variable=name):
                self.assertIn(f"`{name}", page)
