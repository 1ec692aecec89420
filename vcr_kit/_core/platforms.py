"""The cloud platforms that serve Claude, as the SDK's cloud clients reach them.

Each platform has its own hosts, its own base-URL variable and its own credentials;
Bedrock and Vertex send no ``anthropic-version`` header (it is in the body), so
without these facts their requests would pass the seams unseen. Pure facts and
matching: the environment is read in ``config``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

__all__ = ["BASE_URL_VARIABLES", "PLATFORMS", "Platform", "platform_of", "platform_of_host"]


@dataclass(frozen=True)
class Platform:
    """One cloud platform: how its hosts look and what recording it needs."""

    name: str
    #: The SDK classes that reach it (sync and async).
    clients: tuple[str, ...]
    base_url_variable: str
    #: Its default hosts (the SDK builds them from a region, project or resource).
    host_pattern: str
    #: What recording needs, in the words of the platform's own tools.
    credentials: str


PLATFORMS: Final = (
    Platform(
        "Amazon Bedrock",
        ("AnthropicBedrock", "AsyncAnthropicBedrock"),
        "ANTHROPIC_BEDROCK_BASE_URL",
        r"bedrock-runtime(?:-fips)?\.[a-z0-9-]+\.amazonaws\.com",
        "AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or "
        "AWS_BEARER_TOKEN_BEDROCK)",
    ),
    Platform(
        "Amazon Bedrock (Mantle)",
        ("AnthropicBedrockMantle", "AsyncAnthropicBedrockMantle"),
        "ANTHROPIC_BEDROCK_MANTLE_BASE_URL",
        r"bedrock-mantle\.[a-z0-9-]+\.api\.aws",
        "AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) or "
        "AWS_BEARER_TOKEN_BEDROCK",
    ),
    Platform(
        "Claude Platform on AWS",
        ("AnthropicAWS", "AsyncAnthropicAWS"),
        "ANTHROPIC_AWS_BASE_URL",
        r"aws-external-anthropic\.[a-z0-9-]+\.api\.aws",
        "AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) or "
        "ANTHROPIC_AWS_API_KEY",
    ),
    Platform(
        "Google Vertex AI",
        ("AnthropicVertex", "AsyncAnthropicVertex"),
        "ANTHROPIC_VERTEX_BASE_URL",
        r"(?:[a-z0-9-]+-)?aiplatform(?:\.[a-z]+\.rep)?\.googleapis\.com",
        "Google credentials (gcloud auth application-default login, or "
        "GOOGLE_APPLICATION_CREDENTIALS)",
    ),
    Platform(
        "Claude on Google Cloud",
        ("AnthropicGoogleCloud", "AsyncAnthropicGoogleCloud"),
        "ANTHROPIC_GOOGLE_CLOUD_BASE_URL",
        r"claude\.googleapis\.com",
        "Google credentials (gcloud auth application-default login, or "
        "GOOGLE_APPLICATION_CREDENTIALS)",
    ),
    Platform(
        "Microsoft Foundry",
        ("AnthropicFoundry", "AsyncAnthropicFoundry"),
        "ANTHROPIC_FOUNDRY_BASE_URL",
        r"[a-z0-9-]+\.services\.ai\.azure\.com",
        "ANTHROPIC_FOUNDRY_API_KEY or an Azure AD token provider",
    ),
)

#: The base-URL variable of every platform, in ``PLATFORMS`` order.
BASE_URL_VARIABLES: Final = tuple(platform.base_url_variable for platform in PLATFORMS)

_HOSTS: Final = re.compile(
    "|".join(f"(?P<p{i}>{p.host_pattern})" for i, p in enumerate(PLATFORMS)), re.IGNORECASE
)


def platform_of_host(host: str) -> Platform | None:
    """The platform whose default hosts include ``host``, or None."""
    found = _HOSTS.fullmatch(host)
    if found is None or found.lastgroup is None:
        return None
    return PLATFORMS[int(found.lastgroup[1:])]


def platform_of(
    host: str, port: int | None, base_urls: Iterable[tuple[str, str]] = ()
) -> Platform | None:
    """The platform a request to ``host:port`` goes to: one of its default hosts, or the
    host of its base-URL variable (``base_urls``: (variable, URL) pairs); None else."""
    found = platform_of_host(host)
    if found is not None:
        return found
    by_variable = {platform.base_url_variable: platform for platform in PLATFORMS}
    for variable, url in base_urls:
        parts = urlsplit(url if "://" in url else f"//{url}")
        try:
            url_port = parts.port
        except ValueError:
            continue
        if (parts.hostname or "").lower() == host.lower() and url_port in (None, port):
            return by_variable.get(variable)
    return None
