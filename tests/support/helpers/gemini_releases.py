"""Where the supported ``google-genai`` releases differ in shape, not behaviour.

The tests run on the newest google-genai and on the oldest release we support (tox's
``sdk-0.125`` env pins it). Where an older release does the same thing differently, the
tests take the difference from here, so they check the same behaviour on both:

- the HTTP library the sync client sends with: httpx2 in 3.x (when installed), httpx
  before;
- the Developer API version the client calls by default: ``v1`` from 3.0, ``v1beta``
  before (the paths the server sees and the fixture names follow it).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from google.genai import version

__all__ = ["API_VERSION", "http_library"]

_MAJOR = int(version.__version__.split(".")[0])


def _sent_with() -> ModuleType:
    if _MAJOR >= 3:
        try:
            return importlib.import_module("httpx2")
        except ImportError:  # 3.x falls back on httpx
            pass
    return importlib.import_module("httpx")


http_library = _sent_with()
API_VERSION = "v1" if _MAJOR >= 3 else "v1beta"
