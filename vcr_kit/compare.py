"""Compare two answers to one request: identical, benign, regression or API drift.

``compare_answers(recorded, live, request=None)`` takes two stored HTTP answers (a
fixture's ``response``; with the stored ``request`` of an OpenAI or Gemini fixture,
they are compared as that provider's answers); ``compare_fixtures(a, b)`` two
fixtures (the provider read from their request), as files or as parsed
documents. Each returns a ``Verdict``: ``verdict`` (one of ``VERDICTS``, from the
best to the worst), ``reasons`` (one line per finding, its class first) and
``failed`` (a regression or API drift). ``vcr_kit drift`` and ``vcr_kit diff`` use
these; the rules are in ``vcr_kit._core.answer_verdict``.

    from vcr_kit import compare_fixtures

    verdict = compare_fixtures("old/post-v1-messages-1a2b.json", "new/post-v1-messages-1a2b.json")
    verdict.verdict   # "benign"
    verdict.reasons   # ("benign: other wording in block 0 (text)",)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._core.answer_verdict import (
    API_DRIFT,
    BENIGN,
    IDENTICAL,
    REGRESSION,
    VERDICTS,
    Verdict,
    compare_answers,
    compare_documents,
)
from ._core.paths import display_path
from ._store.scan import read
from .errors import FixtureCorruptError

__all__ = [
    "API_DRIFT",
    "BENIGN",
    "IDENTICAL",
    "REGRESSION",
    "VERDICTS",
    "Verdict",
    "compare_answers",
    "compare_fixtures",
]

Fixture = str | os.PathLike[str] | Mapping[str, Any]


def _document(fixture: Fixture) -> Mapping[str, Any]:
    if isinstance(fixture, Mapping):
        return fixture
    path = Path(fixture)
    found = read(path)
    if found.doc is None:
        raise FixtureCorruptError(f"{display_path(path)}: {found.error}", path)
    return found.doc


def compare_fixtures(recorded: Fixture, live: Fixture) -> Verdict:
    """The verdict on the fixture ``live`` against ``recorded`` (paths to fixture files,
    or their parsed documents). An unreadable file raises ``FixtureCorruptError``."""
    return compare_documents(_document(recorded), _document(live))
