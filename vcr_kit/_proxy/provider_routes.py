"""Where the proxy answers for each provider other than Anthropic, and where it sends
their requests while recording.

Each provider answers under its own path prefix (``Provider.proxy_prefix``): a child
of ``vcr_kit run`` gets ``OPENAI_BASE_URL=<proxy>/openai/v1`` and
``GOOGLE_GEMINI_BASE_URL=<proxy>/gemini`` (the prefix, then the path of the
provider's default URL, so its SDK adds what it adds to the default one). A request
under a prefix is keyed as the SDK would have sent it to the provider's default host:
the same fixture name as in-process, and ``provider_of`` knows it by its host even for
a path several providers have (``GET /v1/models``). Recording sends it to the base
URL the user had set before ``run`` replaced it (a gateway, a test server), else to
the provider's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from .._core.config import provider_base_urls
from .._core.providers import PROVIDERS, Provider

__all__ = ["ProviderRoutes", "Route", "prefixed_provider"]


@dataclass(frozen=True)
class Route:
    """A request under a provider's prefix: its keyed URL and its upstream URL."""

    provider: Provider
    #: The URL the request is keyed on: the provider's default host.
    key_url: str
    #: The part of the key's path the upstream base URL stands for (OpenAI's "/v1").
    base_path: str
    #: The base URL recording sends to (``base_path`` replaced by it).
    upstream_base: str

    def upstream_url(self, key_raw_path: str) -> str:
        """Where to send a request whose keyed path (and query) is ``key_raw_path``."""
        if not self.base_path:  # Gemini's: the SDK adds its version to any base URL
            return self.upstream_base + key_raw_path
        if _under(key_raw_path, self.base_path):
            return self.upstream_base + key_raw_path[len(self.base_path) :]
        return _origin(self.upstream_base) + key_raw_path  # a client given the bare prefix


def _under(path: str, prefix: str) -> bool:
    return path.startswith(prefix) and path[len(prefix) : len(prefix) + 1] in ("", "/", "?")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _base_path(provider: Provider) -> str:
    return urlsplit(provider.default_url).path.rstrip("/")


def prefixed_provider(path: str) -> Provider | None:
    """The provider whose prefix ``path`` (with its query) starts with, or None."""
    for provider in PROVIDERS.values():
        if _under(path, provider.proxy_prefix):
            return provider
    return None


class ProviderRoutes:
    """The providers' prefixes and upstreams of one proxy, fixed when it starts."""

    def __init__(self, upstreams: Mapping[str, str]) -> None:
        #: Provider name -> the base URL recording sends to (its own when none is given).
        self.upstreams: Final = {
            name: (upstreams.get(name) or provider.default_url).rstrip("/")
            for name, provider in PROVIDERS.items()
        }

    def route(self, path: str) -> Route | None:
        """The route of a request for ``path`` (with its query); None: not under a
        provider's prefix (Anthropic's, or a cloud platform's)."""
        provider = prefixed_provider(path)
        if provider is None:
            return None
        rest = path[len(provider.proxy_prefix) :] or "/"
        if rest.startswith("?"):
            rest = "/" + rest
        base_path = _base_path(provider)
        key_url = _origin(provider.default_url) + rest
        upstream = self.upstreams[provider.name]
        return Route(provider, key_url, base_path, upstream)

    @staticmethod
    def environment_upstreams() -> dict[str, str]:
        """Provider name -> the base URL its SDK would use now (``OPENAI_BASE_URL``,
        ``GOOGLE_GEMINI_BASE_URL``), for each one set: read before ``run`` points them
        at the proxy, so that recording goes where the user's own calls go."""
        set_now = dict(provider_base_urls())
        return {
            provider.name: set_now[provider.base_url_variables[0]]
            for provider in PROVIDERS.values()
            if provider.base_url_variables[0] in set_now
        }

    @staticmethod
    def child_base_urls(proxy_url: str) -> dict[str, str]:
        """Each provider's base-URL variable for a child, pointing at ``proxy_url``."""
        return {
            provider.base_url_variables[0]: proxy_url + provider.proxy_prefix + _base_path(provider)
            for provider in PROVIDERS.values()
        }
