"""Which hosts are "the API": the only ones the seam ever touches.

``api.anthropic.com``, the host of ``ANTHROPIC_BASE_URL`` (a gateway, a proxy, a test
server), the cloud platforms' hosts (Bedrock, Vertex, Foundry, ...: see
``_core.platforms``) and the hosts of their base-URL variables
(``ANTHROPIC_BEDROCK_BASE_URL``, ...), the other providers' hosts and base-URL
variables (``api.openai.com``, ``OPENAI_BASE_URL``, ...: see ``_core.providers``),
every host listed in ``VCR_HOSTS``
(comma-separated, ``host``, ``host:port`` or a URL), and the hosts a test class or
pytest marker adds. An entry with a port matches that port only; without one, any
port of that host.
Read on every request (tests change the environment between cases), parsed once
per distinct value.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Final
from urllib.parse import urlsplit

from .._core.config import cloud_base_urls, host_variables, provider_base_urls
from .._core.platforms import Platform, platform_of, platform_of_host
from .._core.providers import provider_of_host
from ..errors import ConfigError

__all__ = ["DEFAULT_HOST", "HostSet", "anthropic_hosts", "cloud_platform", "parse_host"]

DEFAULT_HOST: Final = "api.anthropic.com"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}

#: (host, port or None for any port)
HostEntry = tuple[str, int | None]


def parse_host(text: str, source: str) -> HostEntry:
    """``host``, ``host:port`` or a URL, as a (host, port) entry; ConfigError if neither."""
    value = text.strip()
    parts = urlsplit(value if "://" in value else f"//{value}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    host = (parts.hostname or "").lower()
    if not host or port == -1 or " " in value:
        raise ConfigError(
            f"{source}={text!r} is not a host vcr_kit can match; use a host name, "
            "host:port or a URL, e.g. VCR_HOSTS=llm-gateway.internal:8443."
        )
    if port is None and "://" in value:
        port = _DEFAULT_PORTS.get(parts.scheme.lower())
    return host, port


class HostSet:
    """A set of host entries, matched against a request's host and port."""

    def __init__(self, entries: Iterable[HostEntry]) -> None:
        self.entries = frozenset(entries)
        self._any_port = frozenset(host for host, port in self.entries if port is None)

    def matches(self, host: str, port: int | None, scheme: str = "https") -> bool:
        host = host.lower()
        if host in self._any_port:
            return True
        effective = port if port is not None else _DEFAULT_PORTS.get(scheme)
        return (
            (host, effective) in self.entries
            or platform_of_host(host) is not None
            or provider_of_host(host) is not None
        )

    def names(self) -> list[str]:
        return sorted(host if port is None else f"{host}:{port}" for host, port in self.entries)

    def __repr__(self) -> str:
        return f"HostSet({', '.join(self.names())})"


@lru_cache(maxsize=64)
def _host_set(
    base_url: str,
    listed: str,
    extra: tuple[str, ...],
    clouds: tuple[tuple[str, str], ...],
    providers: tuple[tuple[str, str], ...] = (),
) -> HostSet:
    entries: list[HostEntry] = [(DEFAULT_HOST, None)]
    for variable, url in (("ANTHROPIC_BASE_URL", base_url), *clouds, *providers):
        if url:
            with contextlib.suppress(ConfigError):  # the SDK refuses it with its own message
                entries.append(parse_host(url, variable))
    entries.extend(parse_host(item, "VCR_HOSTS") for item in listed.split(",") if item.strip())
    entries.extend(parse_host(item, "vcr_hosts") for item in extra)
    return HostSet(entries)


def anthropic_hosts(extra: Iterable[str] = ()) -> HostSet:
    """The hosts to record and replay, as the environment says now, plus ``extra``."""
    base_url, listed = host_variables()
    return _host_set(base_url, listed, tuple(extra), cloud_base_urls(), provider_base_urls())


def cloud_platform(host: str, port: int | None) -> Platform | None:
    """The cloud platform a request to ``host:port`` goes to, or None (first party)."""
    return platform_of(host, port, cloud_base_urls())
