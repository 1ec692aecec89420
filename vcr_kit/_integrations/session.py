"""Everything vcr_kit does around one test, whatever runs it (unittest or pytest).

Activation with the test's defaults, replay credentials, the journal, interception
of every client's requests to an Anthropic host, and optionally a proxy for child
processes: set up in this order, undone in the reverse order even when the test
fails or errors.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path

from .._core.config import Mode, activated, flag, load_dotenv_once, test_project_root
from .._core.credentials import (
    has_real_credentials,
    platform_stand_ins,
    provider_stand_ins,
    stand_in_key_while,
)
from .._engine.faults import faults_for_test
from .._engine.recorder import HttpRecorder
from .._ledger import journal as _journal
from .._seams.intercept import intercepting

__all__ = ["force_on", "vcr_session"]


@contextmanager
def _replay_credentials(project: Path | None) -> Iterator[bool]:
    """Yield whether a real key is set (``.env`` of the cwd or of the test's project
    included); if none is, the stand-in is set for the test, so that
    ``anthropic.Anthropic()`` in the code under test can be built and replayed (and
    each other provider's client that has no key gets one too)."""
    load_dotenv_once(project)
    real = has_real_credentials()
    with stand_in_key_while(not real), platform_stand_ins(), provider_stand_ins():
        yield real


@contextmanager
def vcr_session(
    mode: str | Mode | None = None,
    fixtures_dir: str | os.PathLike[str] | None = None,
    hosts: Sequence[str] = (),
    test_file: str | os.PathLike[str] | None = None,
    proxy: bool = False,
    *,
    faults: str | None = None,
) -> Iterator[_journal.Journal]:
    """Everything vcr_kit does around one test: activation with the test's defaults
    (its fixtures folder found from ``test_file``, not from the cwd), replay
    credentials, the journal, and interception of every client's requests to an
    Anthropic host (``hosts`` adds hosts to those); with ``proxy``, also a proxy that
    child processes reach through ``ANTHROPIC_BASE_URL``. ``faults``: a fault spec for
    this test's requests (instead of ``VCR_FAULTS``'s; "" for none); either way its
    schedule is the test's own."""
    if isinstance(hosts, str):
        hosts = [hosts]
    project = test_project_root(test_file)
    with (
        activated(mode, fixtures_dir, project),
        _replay_credentials(project) as can_record,
        _journal.journal() as journal,
        intercepting(HttpRecorder(can_record=can_record), hosts),
        _proxy_for_test() if proxy else nullcontext(),
        faults_for_test(faults),
    ):
        yield journal


def force_on() -> bool:
    """``FORCE_VCR=1``: vcr_kit on for the rest of this process, as in a test (the seams
    installed, the stand-in key set when there is no real one), so that a script's own
    ``anthropic.Anthropic()`` replays with no key. Called once, by ``import vcr_kit``;
    the session is closed at exit. Whether it was turned on (a typo in the value is a
    ``ConfigError``, as everywhere)."""
    if not flag("FORCE_VCR"):
        return False
    session = ExitStack()
    session.enter_context(vcr_session())
    atexit.register(session.close)  # also keeps it alive: collected, it would close now
    return True


def _proxy_for_test() -> AbstractContextManager[object]:
    """The proxy of a test that asks for one: its module (``http.server`` and the rest,
    several ms) is loaded only then."""
    from .._proxy.server import proxy_for_test

    return proxy_for_test()
