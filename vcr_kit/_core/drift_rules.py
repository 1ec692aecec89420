"""The two rules of ``vcr_kit drift``, each decided here and nowhere else:

- **which live answers say how the answer moved** (``unusable``): an answer about the
  key, the account or the moment (401, 402, 403, 408, 409, 425, 429, any 5xx, an SSE
  ``error`` event of one of their types), a body that is not the API's (an HTML page,
  JSON cut short, an error without the API's error object, a body that is not JSON
  where the fixture holds JSON), a stream that did not complete, or no answer at all
  (the connection failed, a time-out) is ``unanswered``, whatever the fixture holds:
  it is not a change of the answer, and a run again may get one;
- **where a live answer may be written** (``destination``): only under the name of the
  request that earned it. A fixture's request sent as stored is written under the
  fixture's own name; a request drift changed (``--model``) under the changed
  request's own name, holding that request, never over the fixture it came from.

Pure: no SDK, no disk, no network.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from .schema import stored_name
from .storable import answer_refusal

__all__ = ["NOT_A_CHANGE", "Destination", "asked_request", "destination", "unusable", "with_model"]

#: What every ``unanswered`` reason ends with.
NOT_A_CHANGE: Final = "not a change of the answer, run again"
#: Statuses about the moment that ``storable`` does not list (it decides what is
#: stored; a status a recording never meets can still come back to drift).
_MOMENT_STATUSES: Final[Mapping[int, str]] = {425: "too early"}
#: The model in a Gemini path (``/v1beta/models/gemini-2.5-flash:generateContent``):
#: Gemini asks it there, not in the body.
_MODEL_IN_PATH: Final = re.compile(r"(/models/)([^/:]+)(:[A-Za-z]+)$")
#: The stored forms of a body that is not JSON.
_NOT_JSON: Final = ("text", "base64")
_FORMS: Final = ("body", "events", "jsonl", "frames", "text", "base64")


# --------------------------------------------------------------------------- #
# Which live answers are compared
# --------------------------------------------------------------------------- #


def unusable(
    live: Mapping[str, Any] | None, recorded: Any = None, failure: str = "", request: Any = None
) -> str | None:
    """Why the live answer (its stored form; None when the API was not reached, with
    ``failure`` saying why) tells nothing of how the recorded answer moved: the row is
    ``unanswered``. None when it may be compared with ``recorded`` (the fixture's
    stored answer), whatever that holds: a fixture's answer never makes a transient
    one a regression. ``request``: the stored request that was sent; a success that is
    not the documented shape of its endpoint is then never compared (nor written)."""
    if live is None:
        return f"no answer from the API ({failure or 'the connection failed'}): {NOT_A_CHANGE}"
    reason = _transient(live, recorded if isinstance(recorded, Mapping) else {}, request)
    return None if reason is None else f"{reason}: {NOT_A_CHANGE}"


def _transient(
    live: Mapping[str, Any], recorded: Mapping[str, Any], request: Any = None
) -> str | None:
    status = live.get("status")
    if type(status) is not int:
        return "an answer with no HTTP status"
    if status in _MOMENT_STATUSES:
        return f"a {status} ({_MOMENT_STATUSES[status]}) depends on the moment, not on the request"
    refusal = answer_refusal(live, request)
    if refusal is not None:
        return refusal.reason
    form = _form(live)
    if form in _NOT_JSON and _form(recorded) != form:
        # A 200 "OK" page of a proxy or a captive portal: not the API's answer. An
        # endpoint that answers other than JSON was recorded so, and is compared.
        kind = _content_type(live) or "no content type"
        return f"a {status} whose body is not the API's JSON ({kind})"
    return None


def _form(answer: Mapping[str, Any]) -> str:
    return next((form for form in _FORMS if form in answer), "nothing")


def _content_type(answer: Mapping[str, Any]) -> str:
    headers = answer.get("headers")
    value = headers.get("content-type", "") if isinstance(headers, Mapping) else ""
    return str(value).split(";")[0].strip()


# --------------------------------------------------------------------------- #
# Where a live answer is written
# --------------------------------------------------------------------------- #


def with_model(body: Any, model_for: Callable[[str], str]) -> Any:
    """``body`` asking ``model_for(its model)``: a message's ``model``, and each batch
    request's ``params.model``."""
    if not isinstance(body, dict):
        return body
    changed = dict(body)
    if isinstance(changed.get("model"), str):
        changed["model"] = model_for(changed["model"])
    if isinstance(changed.get("requests"), list):
        changed["requests"] = [
            {**item, "params": with_model(item["params"], model_for)}
            if isinstance(item, dict) and isinstance(item.get("params"), dict)
            else item
            for item in changed["requests"]
        ]
    return changed


def asked_request(stored: Any, model_for: Callable[[str], str]) -> Any:
    """The request drift asks, in its stored form: the fixture's ``stored`` request
    with the model ``model_for`` gives it (the same object when nothing changes): in
    its body (Anthropic's, OpenAI's), or in its path for another provider that names
    it there (Gemini's ``/models/MODEL:generateContent``)."""
    if not isinstance(stored, dict) or "body" not in stored:
        return stored
    asked = dict(stored, body=with_model(stored["body"], model_for))
    path = stored.get("path")
    model = _path_model(stored)
    if model is not None and isinstance(path, str):
        asked["path"] = _MODEL_IN_PATH.sub(lambda m: m[1] + model_for(model) + m[3], path)
    return stored if asked == stored else asked


def _path_model(request: Mapping[str, Any]) -> str | None:
    """The model another provider's request names in its path (Gemini's), or None."""
    path = request.get("path")
    if not request.get("provider") or not isinstance(path, str):
        return None
    found = _MODEL_IN_PATH.search(path)
    return None if found is None else found.group(2)


class Destination(NamedTuple):
    """Where the live answer to ``request`` may be written: the file ``name`` (beside
    the fixture, or at its place under ``--into``), or None with ``refusal`` saying
    why it is written nowhere. ``changed`` says how the asked request differs from
    the fixture's ("" when it does not)."""

    name: str | None
    request: Any
    changed: str = ""
    refusal: str = ""


def destination(name: str, stored: Any, asked: Any) -> Destination:
    """Where the live answer to ``asked`` may be written, for the HTTP fixture ``name``
    whose stored request is ``stored``: under the name ``asked`` itself has, holding
    ``asked``. The fixture's own name only when ``asked`` is its stored request and
    that request has this name; a changed request never goes over the fixture."""
    own = stored_name({"kind": "http", "request": asked}, name)
    if own is None:
        return Destination(None, asked, refusal="the request cannot be named (not an HTTP request)")
    if asked == stored:
        if own != name:
            return Destination(
                None, asked,
                refusal=f"its stored request is named {own}, not {name}: the file holds "
                "another request's answer (vcr_kit check reports it); record it again",
            )
        return Destination(name, asked)
    return Destination(own, asked, changed=describe_change(stored, asked))


def describe_change(stored: Any, asked: Any) -> str:
    """What differs between two stored requests, for a person: ``model
    claude-opus-4-7 -> claude-sonnet-4-6``, ``body.max_tokens``."""
    if not (isinstance(stored, Mapping) and isinstance(asked, Mapping)):
        return "another request"
    parts: list[str] = []
    old_body, new_body = stored.get("body"), asked.get("body")
    if isinstance(old_body, Mapping) and isinstance(new_body, Mapping):
        old_model, new_model = old_body.get("model"), new_body.get("model")
        if old_model != new_model and isinstance(old_model, str) and isinstance(new_model, str):
            parts.append(f"model {old_model} -> {new_model}")
        parts.extend(
            f"body.{key}" for key in sorted(old_body.keys() | new_body.keys(), key=str)
            if key != "model" and old_body.get(key) != new_body.get(key)
        )
    elif old_body != new_body:
        parts.append("body")
    old_model, new_model = _path_model(stored), _path_model(asked)
    if old_model is not None and new_model is not None and old_model != new_model:
        parts.append(f"model {old_model} -> {new_model}")
    parts.extend(
        key for key in sorted(stored.keys() | asked.keys(), key=str)
        if key != "body" and stored.get(key) != asked.get(key)
        and not (key == "path" and old_model != new_model)
    )
    return ", ".join(parts) or "another request"
