"""A recorded request sent to the live API again (``vcr_kit drift``), its answer in
the stored form a recording would give it, to compare with the recorded one.

The stored request (its model already the one a migration asks:
``_core.drift_rules.asked_request``) is hydrated (the dehydrate placeholders back to
this machine's values) and sent with this environment's credentials; the answer goes
through the HTTP codec exactly as a recorded one does (ids stabilized, pieces joined,
request ids masked), so two answers that say the same thing are equal. Nothing is
written here: writing is the caller's choice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .._core.httplib import sdk_library
from .._core.providers import provider_named
from ..dehydrate import hydrate_json
from .http_codec import store_response_with_ids, usage_of
from .live import live_call

__all__ = ["API_VERSION", "LiveAnswer", "Resender", "sendable"]

#: The ``anthropic-version`` the SDK sends.
API_VERSION: Final = "2023-06-01"
#: An id vcr_kit gave out (``msgbatch_vcr...``): the live API has no such object.
_GIVEN_ID: Final = re.compile(r"[a-z]+_vcr[_0-9a-f]")


@dataclass(frozen=True)
class LiveAnswer:
    """The live answer in its stored form and its usage entries, or why there is none."""

    response: dict[str, Any] | None = None
    usage: tuple[dict[str, Any], ...] = ()
    failure: str = ""


def sendable(request: Any) -> str | None:
    """Why the stored ``request`` (an ``http`` fixture's) cannot be sent again, or None."""
    if not isinstance(request, Mapping) or not isinstance(request.get("path"), str):
        return "its stored request has no path"
    if _GIVEN_ID.search(request["path"]):
        return "it names an object (a batch, a file) the recording created: the live API has none"
    body = request.get("body")
    if isinstance(body, Mapping) and set(body) == {"sha1"}:
        return "an upload: only its hash is stored"
    return None


class Resender:
    """Sends stored requests to ``base_url`` with ``credentials`` (headers); one
    connection pool shared by the threads that call ``send``."""

    def __init__(self, base_url: str, credentials: Mapping[str, str], timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {
            **credentials,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
        }
        library = sdk_library()
        self._client = library.Client(timeout=timeout)

    def close(self) -> None:
        self._client.close()

    def send(self, request: Mapping[str, Any], seed: str) -> LiveAnswer:
        """The live answer to the stored ``request`` (``seed``: the name of the fixture
        it is written under, for its ids: a recording of it names them so), the model
        already the one to ask (``drift_rules.asked_request``)."""
        headers = dict(self._headers)
        if isinstance(request.get("anthropic-beta"), str):
            headers["anthropic-beta"] = request["anthropic-beta"]
        body = hydrate_json(request.get("body"))
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        query = request.get("query")
        params = [tuple(pair) for pair in query] if isinstance(query, list) else None
        try:
            with live_call():
                response = self._client.request(
                    str(request.get("method", "POST")),
                    self.base_url + str(request["path"]),
                    headers=headers,
                    content=content,
                    params=params,
                )
        except Exception as exc:  # the network's error, whatever the library calls it
            return LiveAnswer(failure=f"{type(exc).__name__}: {exc}")
        provider = provider_named(request.get("provider"))
        vocabulary = None if provider is None else provider.ids
        stored = store_response_with_ids(response, seed, vocabulary)[0]
        return LiveAnswer(stored, tuple(usage_of(stored, request)))
