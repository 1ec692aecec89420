"""The seams' one way to patch other libraries and to put them back: ``PATCHES``.

While a test runs, the in-process seams replace attributes of other libraries (the
HTTP library's transport methods, aiohttp's ``_request``, the socket's look-up and
connect, the SDK's key check and its cloud clients' signing step) and put them back
when the last test ends. All of them do it through the one registry below, under its
one lock, as vcrpy's ``CassettePatcherBuilder`` enters all its patches in one
``ExitStack``:

- ``entered(group, user, install)``: a test enters a group of patches; ``install``
  applies them (``apply``) and hooks the libraries not imported yet
  (``when_imported``); when the last user leaves, the group's patches are put back
  together, the newest first, and its hooks removed.
- ``apply(group, patches)``: each attribute not patched already is saved as it was
  and replaced; the check and the patch under the one lock.
- ``made_once(make, *args)``: the seams' wrappers (and the classes they build) made
  once per process, so a test's set-up is ``setattr``s only.
- ``reset()``: for tests; puts everything back and forgets everything.

Nothing is patched when this module is imported: only a test entering a group, or a
seam's explicit ``apply``, patches.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from .on_import import PatchOnImport

if TYPE_CHECKING:
    import asyncio

__all__ = ["PATCHES", "Patch", "Patches", "patch"]

T = TypeVar("T")

#: What a target's own ``__dict__`` held for a name it only inherited.
_INHERITED: Final = object()


#: ``(target, name, make, args)``: ``target.name`` replaced by ``make(found, *args)``,
#: made once, where ``found`` is the attribute as ``getattr`` finds it when the patch is
#: applied (read under the lock, so a wrapper never wraps another thread's wrapper). A
#: plain tuple, built by ``patch()``: every test applies some twenty of them again.
Patch = tuple[Any, str, Callable[..., Any], tuple[Any, ...]]


def patch(target: Any, name: str, make: Callable[..., Any], *args: Any) -> Patch:
    """The patch of ``target.name`` by ``make(found, *args)`` (see ``Patch``)."""
    return (target, name, make, args)


#: One applied patch: (its index key, target, name, what ``target.__dict__[name]`` held
#: before or ``_INHERITED``). A tuple: a test's set-up applies some twenty of them.
_Saved = tuple[tuple[int, str], Any, str, Any]


class _Group:
    """Patches applied and put back together, and who has entered them."""

    __slots__ = ("hooks", "saved", "users")

    def __init__(self) -> None:
        self.users: list[Any] = []
        self.saved: list[_Saved] = []
        #: module name -> the hook that runs a patch when the module is first imported.
        self.hooks: dict[str, PatchOnImport] = {}


class Patches:
    """Every patch the seams make, who entered it, and the wrappers made once."""

    def __init__(self) -> None:
        #: Reentrant: an ``install`` run by ``entered`` applies patches and makes wrappers.
        self.lock = threading.RLock()
        self._groups: dict[str, _Group] = {}
        #: (id of target, name) -> what its own attribute was: one patch per attribute,
        #: whatever the group (the target itself is held in the group's list).
        self._index: dict[tuple[int, str], Any] = {}
        self._made: dict[tuple[Any, ...], Any] = {}
        #: Tasks a seam started and nobody else holds (one not held may be collected).
        self._held: set[asyncio.Task[Any]] = set()

    # -- entering and leaving ---------------------------------------------------------

    def entered(
        self, group: str, user: Any, install: Callable[[], None], *, each_entry: bool = True
    ) -> _Entry:
        """While the block runs, ``user`` is in ``group``. ``install`` runs under the lock
        on every entry (it is idempotent: a library loaded since the last entry gets its
        patch), or only on the first one with ``each_entry=False``. The last user to
        leave puts the group's patches back and removes its hooks."""
        return _Entry(self, group, user, install, each_entry)

    def _enter(
        self, group: str, user: Any, install: Callable[[], None], each_entry: bool
    ) -> None:
        with self.lock:
            record = self._group(group)
            record.users.append(user)
            try:
                if each_entry or len(record.users) == 1:
                    install()
            except BaseException:
                self._leave(group, user)
                raise

    def _group(self, group: str) -> _Group:
        record = self._groups.get(group)
        if record is None:
            record = self._groups[group] = _Group()
        return record

    def _leave(self, group: str, user: Any) -> None:
        """(Under the lock.)"""
        record = self._groups.get(group)
        if record is None or user not in record.users:  # forgotten by reset()
            return
        record.users.remove(user)
        if not record.users:
            self._put_back(record)

    def last(self, group: str) -> Any:
        """The user who entered ``group`` last and has not left, or None."""
        record = self._groups.get(group)
        if record is None:
            return None
        try:  # no lock: asked on every request; another thread's test may leave meanwhile
            return record.users[-1]
        except IndexError:
            return None

    # -- patching ---------------------------------------------------------------------

    def apply(self, group: str, patches: Iterable[Patch], *, once: bool = False) -> None:
        """Apply each patch whose attribute no group has patched yet; with ``once``,
        nothing if ``group`` holds patches already."""
        with self.lock:
            record = self._groups.get(group) or self._group(group)
            saved = record.saved
            if once and saved:
                return
            made, index = self._made, self._index
            for target, name, make, args in patches:
                key = (id(target), name)
                if key in index:
                    continue
                found = getattr(target, name)
                made_key = (make, found, args)  # made once, inline: the lock is held
                replacement = made.get(made_key)
                if replacement is None:
                    replacement = made[made_key] = make(found, *args)
                own = vars(target).get(name, _INHERITED)
                setattr(target, name, replacement)
                index[key] = own
                saved.append((key, target, name, own))

    def when_imported(
        self, group: str, name: str, install: Callable[[ModuleType], None]
    ) -> None:
        """``install(module)`` now if module ``name`` is loaded; else once something
        imports it while ``group`` is entered (vcr_kit never imports it itself)."""
        with self.lock:
            module = sys.modules.get(name)
            if module is not None:
                install(module)
                return
            record = self._group(group)
            if name not in record.hooks:
                run = functools.partial(self._imported, group, name, install)
                record.hooks[name] = PatchOnImport(name, run)

    def _imported(
        self, group: str, name: str, install: Callable[[ModuleType], None], module: ModuleType
    ) -> None:
        with self.lock:
            record = self._groups.get(group)
            if record is not None and name in record.hooks:  # not left in the meantime
                install(module)

    def _put_back(self, record: _Group) -> None:
        for hook in record.hooks.values():
            hook.remove()
        record.hooks.clear()
        saved = record.saved
        while saved:
            key, target, name, own = saved.pop()
            if own is _INHERITED:
                delattr(target, name)
            else:
                setattr(target, name, own)
            del self._index[key]

    # -- questions --------------------------------------------------------------------

    def holds(self, group: str) -> bool:
        """Whether ``group`` has patches in place (no lock: a read of one list's length)."""
        record = self._groups.get(group)
        return record is not None and bool(record.saved)

    def is_patched(self, target: Any, name: str) -> bool:
        return (id(target), name) in self._index

    def saved(self, target: Any, name: str) -> Any:
        """What ``target``'s own ``name`` was before it was patched; None when it is not
        patched (or the target only inherited it)."""
        own = self._index.get((id(target), name), _INHERITED)
        return None if own is _INHERITED else own

    # -- made once, held --------------------------------------------------------------

    def made_once(self, make: Callable[..., T], *args: Any) -> T:
        """``make(*args)``, the same object for the same ``make`` and ``args`` (which must
        be hashable: the functions and classes wrapped, the session finder)."""
        key = (make, *args)
        made = self._made.get(key)
        if made is None:
            with self.lock:
                made = self._made.get(key)
                if made is None:
                    made = self._made[key] = make(*args)
        result: T = made
        return result

    def hold(self, task: asyncio.Task[Any]) -> None:
        """Keep ``task`` alive until it is done."""
        with self.lock:
            self._held.add(task)
        task.add_done_callback(self._release)

    def _release(self, task: asyncio.Task[Any]) -> None:
        self._held.discard(task)

    # -- for tests --------------------------------------------------------------------

    def reset(self) -> None:
        """Put every patch back, remove every hook, and forget every user, wrapper made
        once and task held."""
        with self.lock:
            for record in reversed(list(self._groups.values())):
                self._put_back(record)
            self._groups.clear()
            self._index.clear()
            self._made.clear()
            self._held.clear()


class _Entry:
    """``Patches.entered``: a class, not a generator-based context manager: every test
    enters two, and this costs a fraction as much."""

    __slots__ = ("each_entry", "group", "install", "patches", "user")

    def __init__(
        self,
        patches: Patches,
        group: str,
        user: Any,
        install: Callable[[], None],
        each_entry: bool,
    ) -> None:
        self.patches = patches
        self.group = group
        self.user = user
        self.install = install
        self.each_entry = each_entry

    def __enter__(self) -> None:
        self.patches._enter(self.group, self.user, self.install, self.each_entry)

    def __exit__(self, *exc_info: object) -> None:
        with self.patches.lock:
            self.patches._leave(self.group, self.user)


#: The one registry of the process.
PATCHES: Final = Patches()
