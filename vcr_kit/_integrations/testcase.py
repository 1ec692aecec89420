"""unittest integration: ``VCRMixin`` and ``VCRTestCase``.

Subclass ``VCRTestCase`` (or put ``VCRMixin`` before ``IsolatedAsyncioTestCase``)
and, for each test: vcr_kit is active, ``self.anthropic`` / ``self.async_anthropic``
record and replay, SDK clients that the code under test builds itself are
intercepted, and ``self.vcr_journal`` lists what was replayed, recorded or missing.
Everything is set up in ``run()``, so a ``setUp`` that forgets ``super().setUp()``
changes nothing, and everything is undone even when the test fails or errors.
"""

from __future__ import annotations

import os
import sys
import unittest
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._core.config import Mode
from .._core.paths import display_path
from .._ledger import journal as _journal
from .._ledger import runs as _runs
from .._seams.transport import async_client, client
from ..errors import VCRError
from .session import vcr_session
from .unittest_run import judged_test

if TYPE_CHECKING:  # aliased: the mixin's `anthropic` property would shadow the module
    import anthropic as sdk

__all__ = ["VCRMixin", "VCRTestCase"]


class VCRMixin:
    """Record/replay for every test of a ``unittest.TestCase`` (sync or async)."""

    #: The mode of this class's tests (``VCR_MODE`` still wins, to re-record a suite).
    vcr_mode: ClassVar[str | Mode | None] = None
    #: Where this class's fixtures live (default: ``VCR_FIXTURES_DIR``, else ``fixtures/``
    #: at the root of the project this test file belongs to); relative to that root.
    vcr_fixtures_dir: ClassVar[str | os.PathLike[str] | None] = None
    #: Hosts to record and replay besides ``api.anthropic.com``, ``ANTHROPIC_BASE_URL``'s
    #: and ``VCR_HOSTS``'s (``"gateway.internal"``, ``"127.0.0.1:8080"``).
    vcr_hosts: ClassVar[Sequence[str]] = ()
    #: Run a record/replay proxy per test and point ``ANTHROPIC_BASE_URL`` at it, for
    #: code that calls Claude from a child process (Claude Code, claude-agent-sdk).
    vcr_proxy: ClassVar[bool] = False
    #: Faults injected in front of the recorded answers (``"overloaded*2"``; see the docs'
    #: Faults page); None: ``VCR_FAULTS``'s, "" for none.
    vcr_faults: ClassVar[str | None] = None

    vcr_journal: _journal.Journal
    _vcr_clients: dict[str, Any]

    def run(self, result: unittest.TestResult | None = None) -> unittest.TestResult | None:
        # The run record names the tests that used each fixture (``vcr_kit drift``).
        test_id = self.id() if isinstance(self, unittest.TestCase) else type(self).__qualname__
        file = getattr(sys.modules.get(type(self).__module__), "__file__", None)
        with (
            judged_test(result),
            _runs.testing(test_id, file, testcase=True),
            ExitStack() as session,
        ):
            try:
                session.enter_context(self._vcr_session())
            except VCRError as exc:  # a setting vcr_kit refuses (VCR_MODE=bogus): this test's
                if not isinstance(result, unittest.TestResult) or not isinstance(
                    self, unittest.TestCase
                ):
                    raise  # pytest's unittest support reports it per test itself
                return _refused(self, result, exc)
            return super().run(result)  # type: ignore[misc, no-any-return]

    @contextmanager
    def _vcr_session(self) -> Iterator[None]:
        self._vcr_clients = {}
        module = sys.modules.get(type(self).__module__)
        with vcr_session(
            self.vcr_mode,
            self.vcr_fixtures_dir,
            self.vcr_hosts,
            getattr(module, "__file__", None),
            self.vcr_proxy,
            faults=self.vcr_faults,
        ) as journal:
            self.vcr_journal = journal
            try:
                yield
            finally:
                sync_client = self._vcr_clients.pop("sync", None)
                if sync_client is not None:
                    sync_client.close()

    @property
    def anthropic(self) -> sdk.Anthropic:
        """A recording/replaying ``anthropic.Anthropic`` for this test (closed after it)."""
        if "sync" not in self._vcr_clients:
            self._vcr_clients["sync"] = client()
        made: sdk.Anthropic = self._vcr_clients["sync"]
        return made

    @property
    def async_anthropic(self) -> sdk.AsyncAnthropic:
        """A recording/replaying ``anthropic.AsyncAnthropic`` for this test.

        Under ``IsolatedAsyncioTestCase`` it is closed after the test; elsewhere close
        it yourself (``await client.close()``) in the loop that used it.
        """
        if "async" not in self._vcr_clients:
            made = async_client()
            add_async_cleanup = getattr(self, "addAsyncCleanup", None)
            if add_async_cleanup is not None:
                add_async_cleanup(made.close)
            self._vcr_clients["async"] = made
        result: sdk.AsyncAnthropic = self._vcr_clients["async"]
        return result

    # -- what happened in this test ---------------------------------------------------

    def _vcr_paths(self, event: _journal.Event) -> list[Path]:
        return self.vcr_journal.paths(event)

    def _vcr_assert_count(self, event: _journal.Event, count: int | None) -> None:
        paths = self._vcr_paths(event)
        listing = ", ".join(display_path(p) for p in paths) or "none"
        if count is None and not paths:
            raise AssertionError(f"vcr_kit: expected at least one {event.value} fixture, got none")
        if count is not None and len(paths) != count:
            raise AssertionError(
                f"vcr_kit: expected {count} {event.value} fixture(s), got {len(paths)}: {listing}"
            )

    def assertReplayed(self, count: int | None = None) -> None:
        """Fail unless this test replayed ``count`` fixtures (or at least one)."""
        self._vcr_assert_count(_journal.Event.REPLAYED, count)

    def assertRecorded(self, count: int | None = None) -> None:
        """Fail unless this test recorded ``count`` fixtures (or at least one)."""
        self._vcr_assert_count(_journal.Event.RECORDED, count)

    def assertFaults(self, count: int | None = None) -> None:
        """Fail unless this test's code was given ``count`` injected faults (or at least one)."""
        given = [e for e in self.vcr_journal.entries if e.event is _journal.Event.FAULT]
        if (count is None and given) or len(given) == count:
            return
        listing = ", ".join(_what(entry) for entry in given) or "none"
        expected = "at least one" if count is None else str(count)
        raise AssertionError(
            f"vcr_kit: expected {expected} injected fault(s), got {len(given)}: {listing}"
        )

    def assertNoLiveCalls(self) -> None:
        """Fail if this test called the API (recorded, passed through, or live in mode
        ``off`` or from a client vcr_kit could not wrap) instead of replaying."""
        live = [entry for entry in self.vcr_journal.entries if entry.event in _LIVE_EVENTS]
        if live:
            listing = ", ".join(f"{entry.event.value} {_what(entry)}" for entry in live)
            raise AssertionError(
                f"vcr_kit: expected replay only, but the API was called: {listing}"
            )


def _refused(
    test: unittest.TestCase, result: unittest.TestResult, exc: VCRError
) -> unittest.TestResult:
    """``test`` errors with vcr_kit's message, as a test whose ``setUp`` raised does: the
    runner goes on to the next test and ends with its summary (an exception out of
    ``run`` would stop the whole run with a traceback through the runner). No traceback:
    the message names the setting and what to do."""
    result.startTest(test)
    try:
        result.addError(test, (type(exc), exc, None))  # type: ignore[arg-type]
    finally:
        result.stopTest(test)
    return result


def _what(entry: _journal.Entry) -> str:
    """The fixture an entry is about (and why it was not written, for one that was
    not), or what it is about when there is no fixture."""
    if entry.path is None:
        return entry.detail or "(no fixture)"
    return display_path(entry.path) + (f" ({entry.detail})" if entry.detail else "")


_LIVE_EVENTS = frozenset(
    {_journal.Event.RECORDED, _journal.Event.PASSED_THROUGH, _journal.Event.LIVE}
)


class VCRTestCase(VCRMixin, unittest.TestCase):
    """``unittest.TestCase`` with vcr_kit active for every test."""
