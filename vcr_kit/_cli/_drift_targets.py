"""Where ``vcr_kit drift`` sends each recorded request, and with which credential.

An Anthropic fixture goes to ANTHROPIC_BASE_URL (else https://api.anthropic.com) with
ANTHROPIC_API_KEY; another provider's fixture (its stored request names it) goes to
that provider: the host of its base-URL variable when one is set (OPENAI_BASE_URL,
GOOGLE_GEMINI_BASE_URL: a gateway, a test server), else its default host, with its
own key (``Authorization: Bearer $OPENAI_API_KEY``, ``x-goog-api-key:
$GEMINI_API_KEY`` or ``$GOOGLE_API_KEY``). A stored path is the whole path the SDK
sent, so only the base URL's scheme and host are used. A provider whose key is not
set is said in one line; the others are still sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from .._core.config import base_url, provider_base_urls
from .._core.credentials import live_credential_headers, provider_credential_headers
from .._core.providers import Provider, provider_named

__all__ = ["REAL_API", "Target", "provider_of_doc", "target_for", "targets_text"]

REAL_API: Final = "https://api.anthropic.com"


@dataclass(frozen=True)
class Target:
    """Where one provider's requests go (``provider`` None: Anthropic), with which
    credential headers (None when no key is set: ``missing`` says which to set)."""

    provider: Provider | None
    url: str
    credentials: dict[str, str] | None
    missing: str

    @property
    def title(self) -> str:
        return "Anthropic" if self.provider is None else self.provider.title


def provider_of_doc(doc: Mapping[str, Any]) -> Provider | None:
    """The provider a fixture's stored request names (None: Anthropic)."""
    request = doc.get("request")
    return provider_named(request.get("provider")) if isinstance(request, Mapping) else None


def target_for(provider: Provider | None) -> Target:
    """Where ``provider``'s requests go and with which credential, from this
    environment."""
    if provider is None:
        url = base_url() or REAL_API
        return Target(None, url, live_credential_headers(), "set ANTHROPIC_API_KEY")
    set_urls = dict(provider_base_urls())
    url = next(
        (_origin(set_urls[v]) for v in provider.base_url_variables if v in set_urls),
        _origin(provider.default_url),
    )
    credentials = provider_credential_headers(provider)
    names = " or ".join(v for group in provider.key_variables for v in group)
    return Target(provider, url, credentials, "" if credentials else f"set {names}")


def _origin(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"https://{url}")
    return f"{parts.scheme}://{parts.netloc}"


def targets_text(targets: Iterable[Target]) -> str:
    """Where the requests go, for a person: the URL alone when all are Anthropic's."""
    found = list({(t.url, t.title): t for t in targets}.values())
    if all(t.provider is None for t in found):
        return ", ".join(t.url for t in found) or base_url() or REAL_API
    return ", ".join(f"{t.url} ({t.title})" for t in found)
