"""Turn the values users hand us (dicts, SDK models, tuples) into plain JSON values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def to_jsonable(value: Any) -> Any:
    """A plain JSON value equal to ``value`` as the API sees it.

    SDK models are dumped with their API field names and without the defaults the
    API did not send (``to_dict()``), which is the wire JSON; anything else that
    is not JSON raises ``TypeError`` naming its type.
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"a dict key must be a string, not {type(key).__name__} {key!r}")
            out[key] = to_jsonable(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):  # anthropic.BaseModel
        # warnings=False: a block type this SDK does not know is kept (construct_type) in
        # a known class, and pydantic would warn on dumping what is the wire JSON.
        return to_dict(mode="json", warnings=False)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):  # any pydantic v2 model
        return model_dump(mode="json", by_alias=True, exclude_unset=True)
    raise TypeError(f"{type(value).__module__}.{type(value).__qualname__} is not JSON-able")
