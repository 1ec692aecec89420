"""Where the proxy sends Claude Code's cloud requests while recording, and with which
credentials.

``vcr_kit run`` points Claude Code's cloud base URL at the proxy and tells it to skip
its own authentication (a credential made for the proxy's address is no use
upstream, and a replay must need none):

- Amazon Bedrock (``CLAUDE_CODE_USE_BEDROCK``): ``/model/<id>/invoke...`` and
  ``GET /inference-profiles``, sent to ``ANTHROPIC_BEDROCK_BASE_URL`` or the region's
  hosts, signed with botocore (``aws_signing``).
- Google Vertex AI (``CLAUDE_CODE_USE_VERTEX``): the child is given the proxy's URL
  with ``/v1``, so its paths are the ones ``AnthropicVertex`` sends to the default
  host (``/v1/projects/<p>/locations/<region>/publishers/anthropic/models/...``) and
  the fixtures have the same names; sent to ``ANTHROPIC_VERTEX_BASE_URL``, else the
  region's ``aiplatform.googleapis.com`` host, with a Google access token
  (``google_token``).
- Microsoft Foundry (``CLAUDE_CODE_USE_FOUNDRY``): the child is given the proxy's URL
  with ``/anthropic``, as ``AnthropicFoundry`` reaches a resource
  (``/anthropic/v1/messages``); sent to ``ANTHROPIC_FOUNDRY_BASE_URL`` or the
  ``ANTHROPIC_FOUNDRY_RESOURCE``'s host, with ``ANTHROPIC_FOUNDRY_API_KEY``.

The upstream and the region are read when the proxy starts (before it points the
variables at itself); credentials only when a request is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from .._core.config import bedrock_upstream, foundry_upstream, vertex_upstream
from .._core.credentials import CREDENTIAL_HEADERS, foundry_api_key
from ..errors import ConfigError
from .aws_signing import signed_headers
from .google_token import GoogleToken

__all__ = ["CHILD_PATHS", "CloudUpstreams", "without_client_credentials"]

#: The path each platform's base URL is given to the child with, after the proxy's URL.
CHILD_PATHS: Final = {"bedrock": "", "vertex": "/v1", "foundry": "/anthropic"}

_VERTEX: Final = re.compile(r"/v1(?P<rest>/projects/[^/]+/locations/(?P<region>[^/]+)/.*)")
_FOUNDRY: Final = re.compile(r"/anthropic(?P<rest>/v1/.*)")
#: What a client's own authentication may have put in a request: never sent upstream.
_CLIENT_CREDENTIALS: Final = frozenset({*CREDENTIAL_HEADERS, "x-amz-date", "connection"})


def _is_bedrock(path: str) -> bool:
    """The runtime's ``/model/<id>/invoke...`` and the control plane's
    ``/inference-profiles``, which Claude Code asks first."""
    return path.startswith("/model/") or path.rstrip("/") == "/inference-profiles"


def without_client_credentials(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` less what the client's own authentication put in them (made for the
    proxy's address, or vcr_kit's stand-in): never keyed, stored or sent upstream."""
    return [(k, v) for k, v in headers if k.lower() not in _CLIENT_CREDENTIALS]


def _vertex_host(region: str) -> str:
    """The default Vertex AI endpoint of ``region``, as the SDKs build it."""
    if region == "global":
        return "https://aiplatform.googleapis.com/v1"
    return f"https://{region}-aiplatform.googleapis.com/v1"


class CloudUpstreams:
    """The cloud platforms' upstreams as the environment gives them when the proxy starts."""

    def __init__(self) -> None:
        self.bedrock_url, self.bedrock_control_url, self.bedrock_region = bedrock_upstream()
        self.vertex_url = vertex_upstream()
        self.foundry_url = foundry_upstream()
        self.google_token = GoogleToken()

    @staticmethod
    def serves(path: str) -> bool:
        """``path`` is a cloud platform's: the proxy authenticates it upstream itself, so
        the client's own credentials (none, or a stand-in) neither decide whether it
        may be recorded nor go anywhere."""
        plain = path.split("?", 1)[0]
        return _is_bedrock(plain) or bool(_VERTEX.fullmatch(plain) or _FOUNDRY.fullmatch(plain))

    def upstream(
        self, method: str, path: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> tuple[str, list[tuple[str, str]]]:
        """The URL and headers (with this machine's credentials) of ``path``'s upstream
        request; ``path`` is one ``serves`` accepts, with its query."""
        plain = path.split("?", 1)[0]
        kept = without_client_credentials(headers)
        if _is_bedrock(plain):
            base = self.bedrock_url if plain.startswith("/model/") else self.bedrock_control_url
            url = base + path
            return url, signed_headers(method, url, kept, body, self.bedrock_region)
        vertex = _VERTEX.fullmatch(path)
        if vertex is not None:
            base = self.vertex_url or _vertex_host(vertex["region"])
            authorization = self.google_token.authorization()
            return base + vertex["rest"], [*kept, ("authorization", authorization)]
        foundry = _FOUNDRY.fullmatch(path)
        assert foundry is not None, path  # `serves` said it is one of the three
        if not self.foundry_url:
            raise ConfigError(
                "Recording a Microsoft Foundry request through the vcr_kit proxy needs its "
                "resource: set ANTHROPIC_FOUNDRY_RESOURCE (or ANTHROPIC_FOUNDRY_BASE_URL)."
            )
        key = foundry_api_key()
        if key is None:
            raise ConfigError(
                "Recording a Microsoft Foundry request through the vcr_kit proxy needs "
                "ANTHROPIC_FOUNDRY_API_KEY on this machine."
            )
        # Both, as AnthropicFoundry sends them: the endpoint reads x-api-key, older ones api-key.
        return self.foundry_url + foundry["rest"], [*kept, ("x-api-key", key), ("api-key", key)]
