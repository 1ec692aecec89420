"""pytest integration (registered through the ``pytest11`` entry point).

``@pytest.mark.vcr`` (optionally ``@pytest.mark.vcr(mode="replay", fixtures_dir=..., proxy=True)``)
makes vcr_kit active for a test, exactly as ``VCRTestCase`` does: cassettes record and
replay, SDK clients built by the code under test are intercepted. The ``vcr`` fixture
does the same for tests that ask for it and returns the test's journal. Unmarked tests
are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import _journal
from ._testcase import vcr_session

_JOURNAL = pytest.StashKey[_journal.Journal]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "vcr(mode=None, fixtures_dir=None, proxy=False): record and replay the Anthropic API "
        "in this test (proxy=True: also for child processes, through ANTHROPIC_BASE_URL)",
    )


@pytest.fixture(autouse=True)
def _vcr_kit_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    marker = request.node.get_closest_marker("vcr")
    if marker is None:
        yield
        return
    with vcr_session(**marker.kwargs) as journal:
        request.node.stash[_JOURNAL] = journal
        yield


@pytest.fixture
def vcr(request: pytest.FixtureRequest) -> Iterator[_journal.Journal]:
    """vcr_kit active for this test; the journal of what it replayed, recorded or missed."""
    journal = request.node.stash.get(_JOURNAL, None)
    if journal is not None:  # already active through the marker
        yield journal
        return
    with vcr_session() as journal:
        yield journal
