"""What ``vcr_kit check`` says about another provider's fixture, and how ``vcr_kit
rekey`` brings its stored request to today's key.

A provider's fixture names the provider twice: its stored request holds
``"provider": "openai"`` and its file name starts with it
(``openai-post-v1-chat-completions-<hash>.json``). A fixture recorded at a gateway
(``VCR_HOSTS``) before vcr_kit knew the provider has neither: the seams now key such
a request with its provider (told by the path, as they tell it at a gateway), so the
fixture would miss. ``provider_request`` gives its stored request the provider its
path says, and drops a credential a query may hold (Gemini's ``key=``, never
stored); rekey then renames the file. Anthropic's requests are left as they are.
Pure: no disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .providers import provider_named, provider_of_path

__all__ = ["provider_findings", "provider_request"]


def provider_request(request: Any) -> Any:
    """``request`` (a stored ``http`` request) as today's seams would store it: with
    the provider its path names when it has none, without a credential in its query.
    The same object when nothing changes."""
    if not isinstance(request, Mapping) or not isinstance(request.get("path"), str):
        return request
    provider = provider_named(request.get("provider"))
    changed = dict(request)
    if provider is None and "provider" not in request:
        provider = provider_of_path(request["path"])
        if provider is not None:  # where a recording puts it: after the body
            changed = {}
            for key, value in request.items():
                changed[key] = value
                if key == "body":
                    changed["provider"] = provider.name
            changed.setdefault("provider", provider.name)
    query = request.get("query")
    if provider is not None and isinstance(query, list):
        kept = [p for p in query if not (_is_pair(p) and p[0] in provider.credential_query)]
        if len(kept) != len(query):
            if kept:
                changed["query"] = kept
            else:
                changed.pop("query", None)
    return request if changed == request and list(changed) == list(request) else changed


def _article(word: str) -> str:
    return "an" if word[:1].upper() in "AEIOU" else "a"


def _is_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2


def provider_findings(doc: Mapping[str, Any], name: str, stored_name: str | None) -> list[str]:
    """What is wrong with another provider's fixture (the file ``name``, whose stored
    request is named ``stored_name``) that ``vcr_kit rekey`` or a new recording fixes:
    no provider in its request or its name, another provider's name, a credential in
    its stored query."""
    request = doc.get("request")
    if doc.get("kind") != "http" or not isinstance(request, Mapping):
        return []
    found: list[str] = []
    provider = provider_named(request.get("provider"))
    path = request.get("path")
    if provider is None and "provider" not in request and isinstance(path, str):
        by_path = provider_of_path(path)
        if by_path is not None:
            found.append(
                f'request: no "provider", but {path} is {by_path.title}\'s (recorded before '
                f"vcr_kit knew {by_path.title}): it would miss; vcr_kit rekey adds it and "
                "renames the file"
            )
        return found
    if provider is None:
        return found
    if not name.startswith(f"{provider.name}-"):
        target = f" to {stored_name}" if stored_name else ""
        found.append(
            f"name: {_article(provider.title)} {provider.title} fixture's name starts with "
            f"{provider.name}- (the provider is part of the key): it would miss; vcr_kit "
            f"rekey renames it{target}"
        )
    query = request.get("query")
    for pair in query if isinstance(query, list) else []:
        if _is_pair(pair) and pair[0] in provider.credential_query:
            found.append(
                f"request.query: a {pair[0]}= parameter holds a credential, which is never "
                "stored nor keyed: vcr_kit rekey drops it and renames the file (revoke the "
                "key if the file was ever shared)"
            )
    return found
