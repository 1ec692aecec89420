"""Credentials: the one place that knows which keys exist, where they come from, and
vcr_kit's stand-in for a client that has none.

Every question about a key goes through here: whether a real one is set (in the
environment, ``.env`` included, or in a request's headers), which values must
never reach a fixture, and the stand-in a replaying client is given.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Final
from urllib.parse import parse_qsl

from .providers import PROVIDERS, Provider

__all__ = [
    "CHILD_CREDENTIAL_VARS",
    "CREDENTIAL_HEADERS",
    "CREDENTIAL_VARS",
    "PLATFORM_KEY_VARS",
    "PLATFORM_SECRET_VARS",
    "PROCESS_CREDENTIALS",
    "REPLAY_API_KEY",
    "SECRET_ENV_VARS",
    "ProcessCredentials",
    "credentials_in",
    "environment_key",
    "foundry_api_key",
    "has_child_credentials",
    "has_real_credentials",
    "has_real_key",
    "live_credential_headers",
    "live_secrets",
    "platform_stand_ins",
    "provider_credential_headers",
    "provider_stand_ins",
    "query_credentials",
    "remember_credential",
    "stand_in_key_while",
    "uses_stand_in_key",
    "with_provider_stand_ins",
    "with_stand_in_key",
]

#: Given to a client that has no credentials, so the SDK builds requests; a replay
#: never sends it anywhere, and a miss explains that recording needs a real key.
REPLAY_API_KEY: Final = "vcr-kit-replay-no-key"
#: The variables the SDK reads a key from.
CREDENTIAL_VARS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
#: The key variable of each cloud client that reads its key when it is built (Foundry):
#: without one it cannot even be built, so a test without one gets the stand-in.
PLATFORM_KEY_VARS: Final = ("ANTHROPIC_FOUNDRY_API_KEY",)
#: The cloud platforms' own secrets (AWS, the platforms' API keys).
PLATFORM_SECRET_VARS: Final = (
    *PLATFORM_KEY_VARS,
    "ANTHROPIC_AWS_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)
#: The variables a child process (Claude Code, claude-agent-sdk) logs in with.
CHILD_CREDENTIAL_VARS: Final = (*CREDENTIAL_VARS, "CLAUDE_CODE_OAUTH_TOKEN")
#: Environment variables whose values must never appear in a fixture, in any encoding
#: (``_store.secret_shapes``): no ``VCR_ALLOW_SECRETS`` entry admits one. The AWS access
#: key id is not secret alone, but it names the account: a live one is not written either.
SECRET_ENV_VARS: Final = (
    *CREDENTIAL_VARS,
    "ANTHROPIC_ADMIN_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    *PLATFORM_SECRET_VARS,
    "AWS_ACCESS_KEY_ID",
    *(name for provider in PROVIDERS.values() for name in provider.secret_variables),
)
#: Request headers that carry a credential: never stored, and their values never written
#: (SigV4's signature is in ``authorization``; its session token in its own header).
CREDENTIAL_HEADERS: Final = tuple(
    dict.fromkeys(
        (
            "x-api-key",
            "authorization",
            "api-key",
            "cookie",
            "x-amz-security-token",
            *(h for provider in PROVIDERS.values() for h in provider.credential_headers),
        )
    )
)
#: Each provider's key variables, by client: a group none of whose variables is set
#: gets the stand-in in its first (``provider_stand_ins``).
_PROVIDER_KEY_GROUPS: Final = tuple(
    group for provider in PROVIDERS.values() for group in provider.key_variables
)
#: The scheme before a credential in an ``authorization`` header, in any case
#: (``Bearer``, ``bearer``, ``BEARER``): the value that must never be written is after it.
_AUTH_SCHEME: Final = re.compile(r"\A(?:bearer|basic|token)\s+", re.IGNORECASE)
#: Shorter values would match ordinary text ("test", "dummy"): only real keys count.
_MIN_SECRET_LENGTH: Final = 16


def environment_key() -> str:
    """The key a client without one gets during a test: the environment's, else the
    stand-in (``.env`` was loaded when the test started)."""
    return os.environ.get(CREDENTIAL_VARS[0]) or REPLAY_API_KEY


def has_real_credentials() -> bool:
    """A key in the environment that is not vcr_kit's own stand-in (set during tests)."""
    values = (os.environ.get(name) for name in CREDENTIAL_VARS)
    return any(value and value != REPLAY_API_KEY for value in values)


@contextmanager
def stand_in_key_while(needed: bool) -> Iterator[None]:
    """With ``needed``, set the stand-in key for the block, so that
    ``anthropic.Anthropic()`` in the code under test can be built and replayed."""
    if not needed:
        yield
        return
    os.environ[CREDENTIAL_VARS[0]] = REPLAY_API_KEY
    try:
        yield
    finally:
        if os.environ.get(CREDENTIAL_VARS[0]) == REPLAY_API_KEY:
            del os.environ[CREDENTIAL_VARS[0]]


@contextmanager
def platform_stand_ins() -> Iterator[None]:
    """While the block runs, each cloud client that needs its key to be built and has
    none (``ANTHROPIC_FOUNDRY_API_KEY``) gets the stand-in, never sent anywhere."""
    missing = [name for name in PLATFORM_KEY_VARS if not os.environ.get(name)]
    for name in missing:
        os.environ[name] = REPLAY_API_KEY
    try:
        yield
    finally:
        for name in missing:
            if os.environ.get(name) == REPLAY_API_KEY:
                del os.environ[name]


@contextmanager
def provider_stand_ins() -> Iterator[None]:
    """While the block runs, each provider's client that has no key (none of
    ``OPENAI_API_KEY``; none of ``GEMINI_API_KEY`` and ``GOOGLE_API_KEY``) gets the
    stand-in, so that ``openai.OpenAI()`` and ``genai.Client()`` can be built and
    replayed. A group with a key set is left alone: google-genai prefers
    ``GOOGLE_API_KEY``, and a stand-in there would hide the user's ``GEMINI_API_KEY``."""
    missing = _missing_provider_keys(os.environ)
    for name in missing:
        os.environ[name] = REPLAY_API_KEY
    try:
        yield
    finally:
        for name in missing:
            if os.environ.get(name) == REPLAY_API_KEY:
                del os.environ[name]


def _missing_provider_keys(environ: Mapping[str, str]) -> list[str]:
    return [group[0] for group in _PROVIDER_KEY_GROUPS if not any(environ.get(n) for n in group)]


def with_stand_in_key(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for a child process that replays: unchanged when it holds a key or
    token of its own, else with the stand-in key, so that a client which refuses to
    start without credentials (Claude Code: "Not logged in") sends its requests; each
    provider's client with no key of its own gets the stand-in too."""
    found = with_provider_stand_ins(environ)
    if not has_child_credentials(environ):
        found[CREDENTIAL_VARS[0]] = REPLAY_API_KEY
    return found


def with_provider_stand_ins(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for a child process of the proxy, each provider's client with no key
    of its own given the stand-in (so it can be built; a request carrying it replays,
    and a miss says which key recording needs)."""
    found = dict(environ)
    found.update((name, REPLAY_API_KEY) for name in _missing_provider_keys(environ))
    return found


def has_child_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """``environ`` (default: this process's) holds a key or login token that a child
    process would use."""
    found = os.environ if environ is None else environ
    return any(found.get(name) for name in CHILD_CREDENTIAL_VARS)


def credentials_in(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """(label, value) of each credential a request's headers carry, so a write can be
    refused if one leaks."""
    found = []
    for name, value in headers.items():
        header = name.lower()  # a plain mapping may hold "Authorization" or "AUTHORIZATION"
        if header in CREDENTIAL_HEADERS and value:
            found.append((f"the {header} header", _AUTH_SCHEME.sub("", value.strip(), 1)))
    return found


def query_credentials(query: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """(label, value) of each credential a URL's ``query`` carries under one of ``names``
    (a provider's ``credential_query``: Gemini's ``?key=``), as ``credentials_in`` gives
    a header's: a key there may record, and must never be written."""
    wanted = set(names)
    if not wanted or not query:
        return []
    return [
        (f"the {name}= query parameter", value)
        for name, value in parse_qsl(query, keep_blank_values=False)
        if name in wanted
    ]


def uses_stand_in_key(headers: Mapping[str, str], more: Iterable[tuple[str, str]] = ()) -> bool:
    """The request carries vcr_kit's stand-in key (in its headers, or in ``more``: its
    ``query_credentials``): nothing may be sent with it."""
    return any(value == REPLAY_API_KEY for _, value in [*credentials_in(headers), *more])


def has_real_key(headers: Mapping[str, str], more: Iterable[tuple[str, str]] = ()) -> bool:
    """The request carries a credential that is not vcr_kit's stand-in (in its headers,
    or in ``more``: its ``query_credentials``)."""
    return any(value != REPLAY_API_KEY for _, value in [*credentials_in(headers), *more])


class ProcessCredentials:
    """The credentials this process got from elsewhere than its environment (the
    proxy's Google access token, the AWS keys botocore read from its files), each with
    its label: never written, as the environment's are not. Added by the code that got
    one (``remember_credential``); ``reset()`` is for tests."""

    __slots__ = ("lock", "values")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: value -> label (a token refreshed is another value, kept too: an old one may
        #: still be echoed in an answer).
        self.values: dict[str, str] = {}

    def reset(self) -> None:
        with self.lock:
            self.values.clear()


PROCESS_CREDENTIALS: Final = ProcessCredentials()


def remember_credential(label: str, value: str | None) -> None:
    """``value`` (a credential this process got, named by ``label``) is never written."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        with PROCESS_CREDENTIALS.lock:
            PROCESS_CREDENTIALS.values[value] = label


def live_secrets(extra: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(label, value) pairs: the key variables of the environment, the credentials this
    process got elsewhere (``remember_credential``), plus ``extra``."""
    found = [(name, os.environ.get(name, "")) for name in SECRET_ENV_VARS]
    if PROCESS_CREDENTIALS.values:  # read without the lock: the common case, none
        with PROCESS_CREDENTIALS.lock:
            found.extend((label, value) for value, label in PROCESS_CREDENTIALS.values.items())
    found.extend(extra)
    return [(label, value) for label, value in found if len(value) >= _MIN_SECRET_LENGTH]


def foundry_api_key() -> str | None:
    """This machine's ``ANTHROPIC_FOUNDRY_API_KEY``, or None (unset, or the stand-in a
    replaying test is given)."""
    key = os.environ.get(PLATFORM_KEY_VARS[0], "").strip()
    return key if key and key != REPLAY_API_KEY else None


def provider_credential_headers(provider: Provider) -> dict[str, str] | None:
    """The headers that carry this environment's key for another provider's API, as
    its SDK sends it (the n-th group of its key variables in its n-th credential
    header: ``OPENAI_API_KEY`` as a bearer token, ``AZURE_OPENAI_API_KEY`` as
    ``api-key``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` as ``x-goog-api-key``), or
    None when none is set (or only vcr_kit's stand-in)."""
    for group, header in zip(provider.key_variables, provider.credential_headers, strict=False):
        for name in group:
            key = os.environ.get(name, "").strip()
            if key and key != REPLAY_API_KEY:
                return {header: f"Bearer {key}" if header == "authorization" else key}
    return None


def live_credential_headers() -> dict[str, str] | None:
    """The headers that carry this environment's real credentials to the API
    (``ANTHROPIC_API_KEY`` as ``x-api-key``, else ``ANTHROPIC_AUTH_TOKEN`` as a bearer
    token), or None when there is none (unset, or vcr_kit's stand-in key)."""
    key = os.environ.get(CREDENTIAL_VARS[0])
    if key and key != REPLAY_API_KEY:
        return {"x-api-key": key}
    token = os.environ.get(CREDENTIAL_VARS[1])
    if token and token != REPLAY_API_KEY:
        return {"authorization": f"Bearer {token}"}
    return None
