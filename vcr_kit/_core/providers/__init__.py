"""The model providers besides Anthropic whose traffic vcr_kit records and replays.

Anthropic is the default and the reference: its fixtures carry no provider, so none
of their names or bytes changed when providers came. Every other provider is one
module of this package that says what its traffic looks like (a ``Provider``: hosts,
base-URL variables, credentials, what is keyed and what is volatile, the ids its
answers give, which answers are never stored, its usage), and one entry in
``PROVIDERS``. The engine asks these facts through the stored request's
``"provider"`` field (``provider_named``), the seams through ``provider_of``. Pure:
the environment is read in ``config``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, Final
from urllib.parse import urlsplit

from . import gemini, openai
from .base import ErrorBody, Provider

__all__ = [
    "PROVIDERS",
    "ErrorBody",
    "Provider",
    "provider_named",
    "provider_of",
    "provider_of_host",
    "provider_of_path",
]

#: Every provider but Anthropic, by the name its fixtures store.
PROVIDERS: Final[Mapping[str, Provider]] = {p.name: p for p in (openai.PROVIDER, gemini.PROVIDER)}

_HOSTS: Final = re.compile(
    "|".join(f"(?P<{p.name}>{p.host_pattern})" for p in PROVIDERS.values()), re.IGNORECASE
)


def provider_named(name: Any) -> Provider | None:
    """The provider a stored request names (its ``"provider"``), None for Anthropic."""
    return PROVIDERS.get(name) if isinstance(name, str) else None


@lru_cache(maxsize=256)
def provider_of_host(host: str) -> Provider | None:
    """The provider whose default hosts include ``host``, or None."""
    found = _HOSTS.fullmatch(host)
    return None if found is None or found.lastgroup is None else PROVIDERS[found.lastgroup]


@lru_cache(maxsize=256)
def provider_of_path(path: str) -> Provider | None:
    """The provider whose endpoints ``path`` names (a gateway's host says nothing), or
    None: Anthropic's, or a path no provider owns alone (``/v1/models``)."""
    for provider in PROVIDERS.values():
        if provider.path_pattern.search(path):
            return provider
    return None


def provider_of(
    host: str,
    port: int | None,
    path: str,
    base_urls: Callable[[], Iterable[tuple[str, str]]] = tuple,
) -> Provider | None:
    """The provider a request to ``host:port`` for ``path`` goes to: by its default
    hosts, else by the path (a provider's endpoint at any host: a gateway), else for
    a path that is not Anthropic's, by the host of one of its base-URL variables
    (``base_urls()``: (variable, URL) pairs set now, asked only then); None for
    Anthropic."""
    found, settled = _by_host_and_path(host, path)  # every request: two cached look-ups
    if settled:
        return found
    for variable, url in base_urls():  # a path several APIs have (/v1/models): by the host
        provider = _BY_VARIABLE.get(variable)
        if provider is not None and _same_host(url, host, port):
            return provider
    return None


@lru_cache(maxsize=512)
def _by_host_and_path(host: str, path: str) -> tuple[Provider | None, bool]:
    """(the provider, whether that settles it) by the host and the path alone."""
    found = provider_of_host(host) or provider_of_path(path)
    return found, found is not None or _ANTHROPIC_PATH.search(path) is not None


#: Anthropic's own endpoints: never another provider's, whatever host serves them (one
#: gateway may serve Anthropic and OpenAI at one base URL).
_ANTHROPIC_PATH: Final = re.compile(r"/v1/(?:messages|complete)(?:/|$)")
_BY_VARIABLE: Final = {v: p for p in PROVIDERS.values() for v in p.base_url_variables}


def _same_host(url: str, host: str, port: int | None) -> bool:
    parts = urlsplit(url if "://" in url else f"//{url}")
    try:
        url_port = parts.port
    except ValueError:
        return False
    return (parts.hostname or "").lower() == host.lower() and url_port in (None, port)
