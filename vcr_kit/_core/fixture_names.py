"""Fixture names: content hashes of the dehydrated request, never of time or place.

Pure functions on JSON values and strings. Every name is checked by
``validate_name`` so that no input, however odd, can make vcr_kit write outside
the fixtures folder.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final

from ..dehydrate import dehydrate, dehydrate_json, map_strings, normalize_for_token_count
from ..errors import ConfigError
from .canonical_json import canonical

#: File names (with ".json") never exceed this, whatever the conversation length;
#: well under the 255 bytes that common file systems allow.
MAX_NAME_LENGTH: Final = 200
_JSON_SUFFIX: Final = ".json"
_MESSAGE_HASH_LENGTH: Final = 6
_FIXTURE_HASH_LENGTH: Final = 12
#: A conversation longer than this keeps its first hashes readable and folds the
#: rest into one hash, so the name shows where two conversations part.
_MAX_MESSAGE_HASHES: Final = 24
_NAME_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def canonical_json(value: Any, *, finite: bool = False, floats: bool = True) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8: the same bytes on every machine.

    ``finite``: ``value`` is known to hold no NaN or infinity; ``floats=False``: no
    float at all (see ``canonical_json``)."""
    fast = canonical(value, finite=finite, floats=floats)
    if fast is not None:
        return fast
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(f"not JSON-able: {exc}") from exc
    return text.encode("utf-8")


def sha1_hex(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def validate_name(name: str) -> str:
    """Refuse a fixture name that could leave the folder or that a file system refuses."""
    bare = name.removesuffix(_JSON_SUFFIX)
    if not _NAME_RE.fullmatch(bare) or ".." in bare:
        raise ConfigError(
            f"Invalid fixture name {name!r}: use letters, digits, '.', '_' and '-' only "
            "(no path separators, no '..', not starting with '.' or '-')."
        )
    if len(bare) + len(_JSON_SUFFIX) > MAX_NAME_LENGTH:
        raise ConfigError(
            f"Invalid fixture name {name[:40]!r}...: {len(bare) + len(_JSON_SUFFIX)} characters, "
            f"at most {MAX_NAME_LENGTH} are allowed."
        )
    return bare + _JSON_SUFFIX


def message_content(message: Any) -> Any:
    """The content of a message given as a dict or as an SDK object."""
    if isinstance(message, dict):
        return message.get("content")
    content = getattr(message, "content", None)
    if content is None and hasattr(message, "to_dict"):
        return message.to_dict(mode="json", warnings=False).get("content")
    return content


def content_hash(content: Any) -> str:
    """First 6 hex of the SHA1 of one message's dehydrated content (the original scheme)."""
    from .jsonable import to_jsonable  # late: _jsonable imports the SDK lazily

    if isinstance(content, str):
        data = dehydrate(content).encode("utf-8")
    else:
        data = canonical_json(dehydrate_json(to_jsonable(content)))
    return sha1_hex(data)[:_MESSAGE_HASH_LENGTH]


def fold_hashes(hashes: list[str]) -> str:
    """Join per-message hashes; a long tail is folded into one 12-hex hash."""
    if len(hashes) <= _MAX_MESSAGE_HASHES:
        return "-".join(hashes) or "empty"
    head, tail = hashes[: _MAX_MESSAGE_HASHES - 1], hashes[_MAX_MESSAGE_HASHES - 1 :]
    folded = "n" + str(len(hashes)) + "x" + sha1_hex("-".join(tail).encode())[:_FIXTURE_HASH_LENGTH]
    return "-".join([*head, folded])


def cassette_name(messages: Iterable[Any], suffix: str = "") -> str:
    """``<h1>-<h2>-...-<hN>.json``: one 6-hex hash per message content; role not included.

    ``suffix`` tells kinds apart that share the scheme (``-stream`` for streams), so the
    same conversation can be both a message and a stream fixture.
    """
    hashes = [content_hash(message_content(m)) for m in messages]
    return validate_name(fold_hashes(hashes) + suffix)


def fixture_name(value: Any, name: str) -> str:
    """``<name>-<12 hex>.json`` for the generic ``fixture(input, name)``."""
    from .jsonable import to_jsonable

    digest = sha1_hex(canonical_json(dehydrate_json(to_jsonable(value))))[:_FIXTURE_HASH_LENGTH]
    return validate_name(f"{name}-{digest}")


def token_count_name(messages: Any, tools: Any) -> str:
    """``token-count-<12 hex>.json``, keyed with the deeper token-count normalisation."""
    from .jsonable import to_jsonable

    # Each string is normalised on its own, as dehydrate_json does: run over the whole
    # JSON text, "Available commands:.+" would eat every later message and tool, and
    # "Files modified by user:" would replace the whole request.
    request = map_strings(
        to_jsonable({"messages": messages, "tools": tools}), normalize_for_token_count
    )
    digest = sha1_hex(canonical_json(request))[:_FIXTURE_HASH_LENGTH]
    return validate_name(f"token-count-{digest}")


def http_name(
    method: str, path: str, key: Any, *, finite: bool = False, floats: bool = True
) -> str:
    """``<method>-<path slug>-<12 hex>.json`` for a request seen by the transparent client
    (``<provider>-<method>-...`` for another provider's: the key names it)."""
    provider = key.get("provider") if isinstance(key, dict) else None
    canonical = canonical_json(key, finite=finite, floats=floats)
    return http_name_and_digest(method, path, canonical, provider)[0]


def http_name_of(method: str, path: str, canonical: bytes, provider: str | None = None) -> str:
    """``http_name`` of a key whose canonical JSON is ``canonical``."""
    return http_name_and_digest(method, path, canonical, provider)[0]


def http_name_and_digest(
    method: str, path: str, canonical: bytes, provider: str | None = None
) -> tuple[str, str]:
    """``http_name_of``, and the whole SHA1 of ``canonical`` (the name holds 12 of its 40
    hex digits): what stands for those bytes where two keys are compared."""
    digest = sha1_hex(canonical)
    slug = _http_slug(method, path, provider if isinstance(provider, str) else None)
    return f"{slug}-{digest[:_FIXTURE_HASH_LENGTH]}{_JSON_SUFFIX}", digest


@lru_cache(maxsize=256)
def _http_slug(method: str, path: str, provider: str | None = None) -> str:
    # Validated once per endpoint: the digest appended to it is hex, so the name stays valid.
    # Another provider's name comes first: paths such as /v1/models exist at several.
    words = f"{method}-{path}" if provider is None else f"{provider}-{method}-{path}"
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:80]
    return validate_name(slug).removesuffix(_JSON_SUFFIX)
