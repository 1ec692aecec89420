"""What a provider module says about its traffic: the ``Provider`` facts.

One frozen object per provider, built by its module (``openai.py``, ``gemini.py``);
the engine, the seams, the store and the ledger ask it and never name a provider.
Adding a provider is one module that builds one, an entry in ``PROVIDERS``, and its
tests (ARCHITECTURE.md, "Where new things go").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..id_vocabulary import IdVocabulary

__all__ = ["ErrorBody", "Provider", "StoredEvents", "Usage"]

#: A stream as stored: ``[{"event": name?, "data": json} | {"data_text": text}, ...]``.
StoredEvents = list[Any]
#: The fixture's usage entries: ``{"provider", "model", "usage": {input_tokens,
#: output_tokens, cache_read_input_tokens, reasoning_tokens?}}``, one per answer.
Usage = list[dict[str, Any]]
#: ``error_body(status, message)``: the provider's own error object for a status.
ErrorBody = Callable[[int, str], dict[str, Any]]


@dataclass(frozen=True)
class Provider:
    """One provider's traffic, as vcr_kit records and replays it."""

    #: Stored in the request of each of its fixtures (``"provider"``) and first in the
    #: fixture's file name: ``openai-post-v1-chat-completions-<hash>.json``.
    name: str
    #: As the user reads it: "OpenAI", "Google Gemini".
    title: str
    #: Its default hosts (a regular expression matched whole, any case).
    host_pattern: str
    #: Where the SDK goes by default, and where the proxy sends its requests upstream.
    default_url: str
    #: The variables its SDKs read a base URL from (a gateway, a test server).
    base_url_variables: tuple[str, ...]
    #: The variables its clients read a key from, in groups: one group per client
    #: (OpenAI's and Azure OpenAI's), any variable of a group set is enough. A test in
    #: which none of a group is set gets vcr_kit's stand-in in the group's first, so
    #: the client can be built; the stand-in is never sent anywhere.
    key_variables: tuple[tuple[str, ...], ...]
    #: Variables whose values never reach a fixture (the keys, and other secrets).
    secret_variables: tuple[str, ...]
    #: Request headers (lower case) and query parameters that carry its credential.
    credential_headers: tuple[str, ...]
    credential_query: tuple[str, ...]
    #: Request headers that change what it answers: part of the fixture's key.
    keyed_headers: tuple[str, ...]
    #: Its endpoints, found in a path at any host (a gateway in ``VCR_HOSTS``).
    path_pattern: re.Pattern[str]
    #: Under which path prefix ``vcr_kit serve``/``run`` answers for it.
    proxy_prefix: str
    #: The ids its answers give out and later requests quote, and its volatile fields.
    ids: IdVocabulary
    #: Why a stored stream of its is never stored (cut, or ended by a transient error).
    stream_refusal: Callable[[StoredEvents], str | None]
    #: Why an answer of this status and JSON body is never stored, beyond the statuses
    #: every provider shares (401, 403, 429, 5xx...): Gemini's bad key is a 400.
    error_refusal: Callable[[int, Any], str | None]
    #: Whether a JSON body is its error object (an error status without one is a
    #: gateway's page, never stored).
    is_error_object: Callable[[Any], bool]
    #: (field, reason) when a 2xx stored answer to ``method path`` is not the
    #: documented shape of that endpoint; None when it is, or the endpoint is unknown.
    shape_refusal: Callable[[str, str, Mapping[str, Any]], tuple[str, str] | None]
    #: The usage entries of a stored answer.
    usage: Callable[[Mapping[str, Any]], Usage]
    #: Its error object for a status (faults, the proxy's misses).
    error_body: ErrorBody
    #: The docs page about it.
    docs_page: str
