"""Run a patch the moment a module is first imported, without importing it.

A seam for a library the test may not have loaded yet (aiohttp, the SDK itself)
patches it at once if it is loaded, and otherwise the seams' registry
(``patches.PATCHES.when_imported``) puts this finder on ``sys.meta_path``, which runs
the patch right after the module's own code has run. vcr_kit never imports the
library: a process that never uses it never pays for it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ["PatchOnImport"]


class PatchOnImport(importlib.abc.MetaPathFinder):
    """Calls ``patch(module)`` once ``name`` has been executed; ``remove()`` takes the
    finder off ``sys.meta_path`` (a patch already made is the caller's to undo)."""

    def __init__(self, name: str, patch: Callable[[ModuleType], None]) -> None:
        self.name = name
        self.patch = patch
        sys.meta_path.insert(0, self)

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, self)
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, finder: PatchOnImport) -> None:
        self.loader = loader
        self.finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self.loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        if self.finder in sys.meta_path:  # still wanted: the test has not ended
            self.finder.patch(module)
