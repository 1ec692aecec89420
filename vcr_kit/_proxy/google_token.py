"""A Google access token for the proxy's upstream calls to Vertex AI, with the
machine's own Google credentials.

Claude Code on Vertex (``CLAUDE_CODE_USE_VERTEX``) is pointed at the proxy with
``CLAUDE_CODE_SKIP_VERTEX_AUTH``, so it sends no token. While recording, the proxy
gets one the way ``AnthropicVertex`` does: application-default credentials
(``google.auth.default`` with the ``cloud-platform`` scope: ``gcloud auth
application-default login``, ``GOOGLE_APPLICATION_CREDENTIALS``, a metadata server),
refreshed when expired. A replay asks for none. google-auth is imported only here,
only when a request is recorded; the token is sent upstream, never stored.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any, Final

from .._core.credentials import remember_credential
from ..errors import ConfigError

__all__ = ["GoogleToken"]

_SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"
_ADVICE: Final = (
    "Recording a Vertex AI request through the vcr_kit proxy needs Google credentials on "
    "this machine (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS)"
)


class GoogleToken:
    """Application-default credentials, loaded on first use and shared by the proxy's
    threads (one refresh at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._credentials: Any = None

    def authorization(self) -> str:
        """``Bearer <token>``, a fresh one when the last has expired."""
        with self._lock:
            if self._credentials is None:
                self._credentials = _load()
            credentials = self._credentials
            if not credentials.valid:
                _refresh(credentials)
            remember_credential("the proxy's Google access token", credentials.token)
            return f"Bearer {credentials.token}"


def _google(name: str) -> Any:
    try:  # untyped, and optional: found at run time
        return importlib.import_module(name)
    except ImportError:
        raise ConfigError(
            _ADVICE + " and google-auth: pip install 'anthropic[vertex]'."
        ) from None


def _load() -> Any:
    auth = _google("google.auth")
    exceptions = _google("google.auth.exceptions")
    try:
        credentials, _ = auth.default(scopes=[_SCOPE])
    except exceptions.DefaultCredentialsError as exc:
        raise ConfigError(f"{_ADVICE}, and none were found: {exc}") from None
    return credentials


def _refresh(credentials: Any) -> None:
    transport = _google("google.auth.transport.requests")
    exceptions = _google("google.auth.exceptions")
    try:
        credentials.refresh(transport.Request())
    except exceptions.GoogleAuthError as exc:
        raise ConfigError(f"{_ADVICE}; getting a token from them failed: {exc}") from None
