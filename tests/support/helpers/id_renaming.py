"""One consistent renaming of ids between two runs of a conversation.

vcr_kit's caller gets stand-ins for some of the ids the API made (a tool call's id, a
container's; message ids afresh in replay). What it gets must still be the API's
answer with each id renamed the same way wherever it appears, in every answer of the
conversation: a bijection, so two values the API made equal stay equal, and two it
made different stay different.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ID", "Renaming"]

#: A value that may differ between the plain answer and vcr_kit's: an id the API made.
ID = re.compile(r"(?:msg|toolu|srvtoolu|mcptoolu|msgbatch|file|container|cntr)_[\w-]+")


class Renaming:
    """One consistent renaming of ids (plain id -> the id vcr_kit's caller got)."""

    def __init__(self) -> None:
        self.forward: dict[str, str] = {}
        self.backward: dict[str, str] = {}

    def request(self, value: Any) -> Any:
        """``value`` (a recorded request) quoting the ids this caller was given."""
        if isinstance(value, dict):
            return {k: self.request(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.request(v) for v in value]
        if isinstance(value, str):
            return self.forward.get(value, value)
        return value

    def differences(self, plain: Any, got: Any, where: str = "") -> list[str]:
        """Where ``got`` is not ``plain`` renamed consistently with what came before."""
        if isinstance(plain, dict) and isinstance(got, dict):
            if plain.keys() != got.keys():
                return [f"{where}: keys {sorted(plain)} != {sorted(got)}"]
            return [d for k in plain for d in self.differences(plain[k], got[k], f"{where}.{k}")]
        if isinstance(plain, list) and isinstance(got, list):
            if len(plain) != len(got):
                return [f"{where}: {len(plain)} items != {len(got)}"]
            return [
                d
                for n, (p, g) in enumerate(zip(plain, got, strict=True))
                for d in self.differences(p, g, f"{where}[{n}]")
            ]
        if (
            isinstance(plain, str)
            and isinstance(got, str)
            and ID.fullmatch(plain)
            and ID.fullmatch(got)
        ):
            had, back = self.forward.setdefault(plain, got), self.backward.setdefault(got, plain)
            if had != got:
                return [f"{where}: {plain} became {got}, earlier {had}"]
            if back != plain:
                return [f"{where}: {got} stands for {plain}, earlier for {back}"]
            return []
        return (
            [] if plain == got and type(plain) is type(got) else [f"{where}: {plain!r} != {got!r}"]
        )
