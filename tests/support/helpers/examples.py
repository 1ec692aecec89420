"""How many examples a hypothesis property tries.

``examples(n)`` is ``n``, the full power, unless ``VCR_TEST_EXAMPLES=fast``: then a
tenth of it (never fewer than ``min(n, 10)``), for the inner loop, where a quick
signal matters more than the rare case the full count finds. CI runs the full count.
"""

from __future__ import annotations

import os

__all__ = ["EXAMPLES_VAR", "examples"]

EXAMPLES_VAR = "VCR_TEST_EXAMPLES"


def examples(n: int) -> int:
    """``n`` examples, or a tenth of them under ``VCR_TEST_EXAMPLES=fast``."""
    if os.environ.get(EXAMPLES_VAR, "").strip().lower() == "fast":
        return max(min(n, 10), n // 10)
    return n
