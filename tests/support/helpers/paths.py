"""Where the repository is, found once from this file's place.

Test modules and support modules that are imported (not run as scripts) take ``ROOT``
from here rather than each counting its own ``parents[...]``, which a moved file gets
wrong silently. Scripts run as ``python tests/support/children/<script>.py`` still find the root
themselves: ``tests`` is not importable in them until they put the root on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

#: The repository's root folder: the one holding ``vcr_kit/``, ``tests/`` and ``fixtures/``.
ROOT = Path(__file__).resolve().parents[3]
