"""Which HTTP library the installed Anthropic SDK is built on, found without importing it.

anthropic 1.0 and later use ``httpx2``; the 0.x releases use ``httpx``. The two have
the same API (``httpx2`` is the renamed successor), so vcr_kit's recorder works on
either through the request and response objects it is handed; it only needs to
know which module to build new ones from. Importing ``anthropic`` costs about
three seconds here, so the answer comes from the installed distribution's metadata,
and vcr_kit never imports an HTTP library that the SDK does not use.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Final

__all__ = ["SDK_LIBRARY_NAMES", "library_of", "loaded_libraries", "sdk_library", "sdk_library_name"]

#: The HTTP libraries an SDK release may be built on, newest first.
SDK_LIBRARY_NAMES: Final = ("httpx2", "httpx")


@lru_cache(maxsize=1)
def sdk_library_name() -> str:
    """``"httpx2"`` for anthropic >= 1.0, ``"httpx"`` for 0.x."""
    version = _sdk_version_text()
    major = version.split(".", 1)[0]
    return "httpx" if major == "0" else "httpx2"


def _sdk_version_text() -> str:
    # anthropic/_version.py holds one assignment; reading it costs a file read, where
    # importlib.metadata scans every installed distribution (a tenth of a second).
    spec = importlib.util.find_spec("anthropic")
    origin = spec.origin if spec is not None else None
    if origin:
        try:
            text = (Path(origin).parent / "_version.py").read_text(encoding="utf-8")
        except OSError:
            text = ""
        found = re.search(r"__version__\s*=\s*[\"']([^\"']+)", text)
        if found:
            return found.group(1)
    try:
        return metadata.version("anthropic")
    except metadata.PackageNotFoundError:
        raise ImportError(
            "vcr_kit needs the anthropic SDK: pip install 'anthropic>=0.93'"
        ) from None


def sdk_library() -> ModuleType:
    """The module (``httpx2`` or ``httpx``) that the installed SDK sends requests with."""
    return importlib.import_module(sdk_library_name())


def loaded_libraries() -> list[ModuleType]:
    """The SDK's library, plus any other of them that something already imported
    (a framework may build its own client on it): those are the ones to intercept."""
    found = [sdk_library()]
    for name in SDK_LIBRARY_NAMES:
        module = sys.modules.get(name)
        if module is not None and module not in found:
            found.append(module)
    return found


def library_of(obj: Any) -> ModuleType:
    """The library an ``httpx2``/``httpx`` request or response object belongs to."""
    top = type(obj).__module__.split(".", 1)[0]
    module = sys.modules.get(top)
    if module is None or top not in SDK_LIBRARY_NAMES:
        return sdk_library()
    return module
