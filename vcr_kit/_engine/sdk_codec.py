"""SDK values in and out of fixtures, built back the way the SDK itself builds them.

An SDK object is stored as ``{"$sdk": "<class>", "data": <wire JSON>}`` and read
back with ``anthropic._models.construct_type``, the function the client uses on
live responses: unknown fields and new block types survive, where
``model_validate`` would raise. An API error is stored as ``{"$error": {...}}``
and raised again as the same class with the same status, type, message and
request id.

Ids: the file is deterministic (message ids ``msg_vcr_<n>``, tool ids derived
from the fixture name, a fixed request id), so re-recording an unchanged answer
rewrites the same bytes; on replay every message gets a fresh unique id, so code
that de-duplicates by id never drops a replayed message. Tool ids stay as
stored: the next request quotes them, and its key must not change.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable
from typing import Any, Final

from .._core.jsonable import to_jsonable
from .._core.storable import error_refusal

SDK_TAG: Final = "$sdk"
ERROR_TAG: Final = "$error"
RECORDED_REQUEST_ID: Final = "req_vcr_recorded"
def fresh_message_id() -> str:
    return "msg_vcr_" + os.urandom(12).hex()  # unique like uuid4, at a quarter of its cost


def fresh_request_id() -> str:
    return "req_vcr_" + os.urandom(12).hex()


# -- ids --------------------------------------------------------------------------


def remap_ids(value: Any, message_id: Callable[[str], str]) -> Any:
    """Copy ``value`` with message ids (``type: message``) replaced."""
    if isinstance(value, dict):
        out = {k: remap_ids(v, message_id) for k, v in value.items()}
        if out.get("type") == "message" and isinstance(out.get("id"), str):
            out["id"] = message_id(out["id"])
        return out
    if isinstance(value, list):
        return [remap_ids(v, message_id) for v in value]
    return value


def stabilize_ids(value: Any, seed: str) -> Any:
    """Deterministic ids for the file: ``msg_vcr_<n>`` and tool ids derived from ``seed``."""
    from .._core.ids import stabilizer

    walk, _ = stabilizer(seed, other_ids=False)
    return walk(value)


def refresh_message_ids(value: Any) -> Any:
    """Fresh unique message ids for a replay; one stored id maps to one fresh id."""
    fresh: dict[str, str] = {}
    return remap_ids(value, lambda old: fresh.setdefault(old, fresh_message_id()))


# -- SDK objects ----------------------------------------------------------------------


def _class_tag(cls: type) -> str:
    import anthropic.types

    if getattr(anthropic.types, cls.__name__, None) is cls:
        return str(cls.__name__)
    return f"{cls.__module__}.{cls.__qualname__}"


def _class_from_tag(tag: str) -> type:
    import anthropic.types

    if "." not in tag:
        found = getattr(anthropic.types, tag, None)
    else:
        module_name, _, name = tag.rpartition(".")
        # Fixtures are data: never import anything but the SDK's own modules.
        if module_name.split(".", 1)[0] != "anthropic":
            raise ValueError(f"refusing to load class {tag!r}: not from the anthropic package")
        try:
            found = getattr(importlib.import_module(module_name), name, None)
        except ImportError:
            found = None
    if not isinstance(found, type):
        raise ValueError(
            f"this anthropic SDK has no class {tag!r}; the fixture was recorded with another "
            "version: upgrade anthropic or re-record"
        )
    return found


def encode_value(value: Any) -> Any:
    """JSON for a result: SDK objects tagged with their class, the rest as plain JSON."""
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {k: encode_value(v) for k, v in value.items()}
    if hasattr(value, "to_dict") and hasattr(type(value), "model_fields"):
        # warnings=False: a block type this SDK does not know is kept by construct_type
        # in a known block class; pydantic would warn (under -W error: fail) on dumping
        # what is, in fact, the wire JSON as received.
        return {
            SDK_TAG: _class_tag(type(value)),
            "data": to_jsonable(value),
        }
    return to_jsonable(value)


def decode_value(value: Any, *, request_ids: bool = False) -> Any:
    """Inverse of ``encode_value``. With ``request_ids``, each SDK object gets a fresh
    ``_request_id``, as each live response had its own."""
    if isinstance(value, list):
        return [decode_value(v, request_ids=request_ids) for v in value]
    if isinstance(value, dict):
        if SDK_TAG in value:
            request_id = fresh_request_id() if request_ids else None
            return _construct(value[SDK_TAG], value.get("data"), request_id)
        if ERROR_TAG in value:
            raise decode_error(value[ERROR_TAG])
        return {k: decode_value(v, request_ids=request_ids) for k, v in value.items()}
    return value


def _construct(tag: str, data: Any, request_id: str | None) -> Any:
    from anthropic._models import construct_type

    obj = construct_type(type_=_class_from_tag(tag), value=data)
    if request_id is not None:
        # Like the SDK, which sets it on the top-level parsed object only.
        with contextlib.suppress(AttributeError, ValueError):
            obj._request_id = request_id  # type: ignore[attr-defined]
    return obj


def plain(value: Any) -> Any:
    """The wire JSON inside an encoded value (tags unwrapped), for cost tracking."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        if SDK_TAG in value:
            return value.get("data")
        return {k: plain(v) for k, v in value.items()}
    return value


# -- errors ---------------------------------------------------------------------------


def unearned_error(exc: BaseException) -> str | None:
    """Why the API's answer ``exc`` is never stored (a 401, a 529: see
    ``_core.storable``), or None: an error the request earned, or no answer from the
    API at all (a connection that failed, the played function's own error), which is
    never stored either but is no API call to journal."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return error_refusal(exc.status_code, exc.body)
    return None


def encode_error(exc: BaseException) -> dict[str, Any] | None:
    """The stored form of an API error the caller sees, or None if it must not be saved:
    not an API error, or one the request did not earn (``unearned_error``), which the
    next run asks again for real."""
    import anthropic

    if not isinstance(exc, anthropic.APIStatusError) or unearned_error(exc) is not None:
        return None
    request = exc.response.request
    return {
        ERROR_TAG: {
            "class": _class_tag(type(exc))
            if type(exc).__module__.startswith("anthropic")
            else "APIStatusError",
            "status": exc.status_code,
            "message": exc.message,
            "body": exc.body,
            "request_id": exc.request_id,
            "method": request.method,
            # The path only: the host is not part of any key, and may be a test server's.
            "path": request.url.path,
        }
    }


def decode_error(stored: dict[str, Any]) -> BaseException:
    import anthropic

    from .._core.httplib import sdk_library

    http = sdk_library()  # httpx2, or httpx under anthropic 0.x
    tag = str(stored.get("class") or "APIStatusError")
    try:
        cls = getattr(anthropic, tag, None) or _class_from_tag(tag)
    except ValueError:
        cls = anthropic.APIStatusError
    if not (isinstance(cls, type) and issubclass(cls, anthropic.APIStatusError)):
        cls = anthropic.APIStatusError
    headers = {"request-id": stored["request_id"]} if stored.get("request_id") else {}
    request = http.Request(
        stored.get("method") or "POST", "https://api.anthropic.com" + str(stored.get("path") or "/")
    )
    response = http.Response(int(stored["status"]), headers=headers, request=request)
    return cls(str(stored.get("message", "")), response=response, body=stored.get("body"))
