"""Network transports built while a test runs set up TLS on first use, not at birth.

Building ``anthropic.Anthropic()`` costs about 20 ms, nearly all of it the SDK's HTTP
library creating an SSL context (``create_ssl_context`` -> ``load_verify_locations``)
for its network transport, which a replayed request never touches: a suite whose
tests build their own clients spent most of its time there.

While the seam is installed, constructing the library's own ``HTTPTransport`` or
``AsyncHTTPTransport`` (not a subclass, which may rely on its pool at once) only
records its arguments, and the instance becomes a *lazy* subclass of its class. The
first use that needs the connection pool (a request that goes to the network, a
framework reading ``_pool``) runs the library's own ``__init__`` with those same
arguments, hence the same ``verify``, ``cert``, ``trust_env``, proxy and ``http2``
settings and the same TLS verification, and turns the instance back into the plain
class. Closing, entering or leaving an instance that never built its pool does
nothing, since there is nothing to close. A lazy instance stays lazy after the test
ends and builds its pool on first use like any other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

from .patches import PATCHES, Patch, patch

__all__ = ["install", "is_lazy"]

#: Set on a lazy instance: the arguments its ``__init__`` was called with.
_ARGS: Final = "_vcr_kit_lazy_args"
#: Held while a lazy instance builds its pool (the library's own ``__init__``, which may
#: import): not the patches' lock, which a test entering or an import hook waits for.
_building: Final = threading.RLock()


def is_lazy(transport: object) -> bool:
    """Whether ``transport`` has not built its connection pool (nor its SSL context) yet."""
    return _ARGS in vars(transport)


def _build(self: Any) -> Any:
    """Run the real ``__init__`` of the plain class with the recorded arguments."""
    with _building:
        state = vars(self)
        if _ARGS in state:
            plain = type(self).__mro__[1]
            args, kwargs = state.pop(_ARGS)
            try:
                _real_init(plain)(self, *args, **kwargs)
            except BaseException:
                state[_ARGS] = (args, kwargs)  # the next use raises the same error again
                raise
            self.__class__ = plain
        return state["_pool"]


def _real_init(cls: type[Any]) -> Callable[..., None]:
    own = PATCHES.saved(cls, "__init__")  # None once the patch is put back
    init: Callable[..., None] = own if own is not None else cls.__dict__["__init__"]
    return init


class _LazyPool:
    """``_pool`` of a lazy instance: builds the real one on first access (a non-data
    descriptor, so the instance attribute that ``__init__`` sets wins afterwards)."""

    def __get__(self, instance: Any, owner: type[Any] | None = None) -> Any:
        if instance is None:
            return self
        return _build(instance)


def _lazy_class(cls: type[Any], is_async: bool) -> type[Any]:
    lazy: type[Any] = PATCHES.made_once(_new_lazy_class, cls, is_async)
    return lazy


def _new_lazy_class(cls: type[Any], is_async: bool) -> type[Any]:
    namespace: dict[str, Any] = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "_pool": _LazyPool(),
    }
    if is_async:

        async def aenter(self: Any) -> Any:
            if _ARGS in vars(self):  # a pool that does not exist needs no entering
                return self
            return await cls.__aenter__(self)

        async def aexit(self: Any, *exc_info: Any) -> None:
            if _ARGS not in vars(self):
                await cls.__aexit__(self, *exc_info)

        async def aclose(self: Any) -> None:
            if _ARGS not in vars(self):
                await cls.aclose(self)

        namespace.update(__aenter__=aenter, __aexit__=aexit, aclose=aclose)
    else:

        def enter(self: Any) -> Any:
            if _ARGS in vars(self):
                return self
            return cls.__enter__(self)

        def exit_(self: Any, *exc_info: Any) -> None:
            if _ARGS not in vars(self):
                cls.__exit__(self, *exc_info)

        def close(self: Any) -> None:
            if _ARGS not in vars(self):
                cls.close(self)

        namespace.update(__enter__=enter, __exit__=exit_, close=close)
    return type(cls.__name__, (cls,), namespace)


def _deferring_init(
    original: Callable[..., None], cls: type[Any], is_async: bool
) -> Callable[..., None]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if type(self) is not cls:  # a subclass may use its pool in its own __init__
            original(self, *args, **kwargs)
            return
        vars(self)[_ARGS] = (args, kwargs)
        self.__class__ = _lazy_class(cls, is_async)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__doc__ = original.__doc__
    return __init__


def install(group: str, libraries: list[ModuleType]) -> None:
    """Make the network transports of ``libraries`` built from now on lazy, until
    ``group`` is put back (idempotent); lazy ones stay lazy after that."""
    for library in libraries:
        PATCHES.apply(group, PATCHES.made_once(_patches, library))


def _patches(library: ModuleType) -> tuple[Patch, ...]:
    pairs = ((library.HTTPTransport, False), (library.AsyncHTTPTransport, True))
    return tuple(
        patch(cls, "__init__", _deferring_init, cls, is_async)
        for cls, is_async in pairs
        if _has_pool_design(cls)
    )


def _has_pool_design(cls: type[Any]) -> bool:
    # The laziness relies on the transport keeping everything in ``self._pool``, as
    # httpx 0.x and httpx2 do; a release that changed that is left alone.
    names = ("__aenter__", "__aexit__", "aclose") if "Async" in cls.__name__ else (
        "__enter__",
        "__exit__",
        "close",
    )
    return "__init__" in cls.__dict__ and all(name in cls.__dict__ for name in names)
