"""Where a paid answer goes when its fixture cannot be written.

Everything that can refuse a write is checked before the API is called (see
``_store.files.reserve_temp`` and ``_secrets.scan_request``), but a disk can still fill
up, or a folder vanish, while the call runs. The answer was paid for: it is written,
complete and ready to move into the fixtures folder, under the user's cache folder
(``$XDG_CACHE_HOME/vcr_kit/rescued/``, else ``~/.cache/vcr_kit/rescued/``), or the
system temp folder if that fails too, and the error names the file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["rescue", "rescue_folders"]


def rescue_folders() -> list[Path]:
    """Where rescued answers go, in order of preference."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [Path(cache) / "vcr_kit" / "rescued", Path(tempfile.gettempdir()) / "vcr_kit-rescued"]


def rescue(name: str, data: bytes) -> Path | None:
    """Write ``data`` (a whole fixture file) as ``name`` in the first rescue folder that
    takes it; return where, or None if none did. Never raises."""
    for folder in rescue_folders():
        target = folder / name
        temp = folder / f".{name}.{os.getpid()}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with open(temp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)  # a rescued file is whole, or absent
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()
            continue
        return target
    return None
