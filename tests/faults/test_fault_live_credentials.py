"""No allowlist entry admits a live credential, in any encoding (issue 29, point 3), at
any provider (issue 31, point 5).

On main, with ``VCR_ALLOW_SECRETS='re:[A-Za-z0-9+/=]{20,}'`` a base64 copy of the live
key was written to a fixture (the raw key was still refused), and a URL-encoded copy
was written with no allowlist at all. The property: any credential vcr_kit knows (each
variable of ``SECRET_ENV_VARS``, a request header's value, a credential the process got
elsewhere, such as the proxy's Google access token) x any encoding (as it is,
base64 standard or URL-safe, padded or not, at any alignment inside a longer text,
base64 wrapped in lines as ``base64`` writes it, URL-encoded in either case of hex,
base64 then URL-encoded, base64 twice) x any
allowlist entry (match-everything patterns included, the encoded text itself) x any
place (a request's prompt, a JSON body, a response header, a streamed text split at any
point) x any provider's fixture (Anthropic; OpenAI Chat Completions and Responses, whose
streams are chunks and typed events; Gemini, whose stream is chunks of parts) is never
written; the error names the fixture and says what to do, and never holds the value.
``check`` reports such a file written by an earlier version.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import textwrap
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.cli_support import cli
from tests.support.helpers.examples import examples
from vcr_kit._core import credentials
from vcr_kit._core.credentials import SECRET_ENV_VARS
from vcr_kit._core.providers import PROVIDERS
from vcr_kit._store.files import write_document

pytestmark = pytest.mark.inprocess

#: The letters real credentials are made of (AWS secrets and session tokens hold + / =).
KEY_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=."
ANY_KEY = "sk-ant-api03-" + "Zq9" * 16
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
OPENAI_KEY = "sk-proj-" + "Zq9_x-" * 8
GOOGLE_KEY = "AIza" + "Sy0_a-b" * 5


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def urlsafe(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


def percent_lower(text: str) -> str:
    return "".join(f"%{ord(c):02x}" if not c.isalnum() else c for c in text)


#: How a text may carry the value: each takes (what stands before it in the encoded
#: text, the value, what follows) and gives the text written.
ENCODINGS: dict[str, Callable[[str, str, str], str]] = {
    "raw": lambda a, v, b: a + v + b,
    "base64": lambda a, v, b: b64(a + v + b),
    "base64 unpadded": lambda a, v, b: b64(a + v + b).rstrip("="),
    "base64 url-safe": lambda a, v, b: urlsafe(a + v + b),
    # As `base64` and MIME write it: lines of 76 letters.
    "base64 wrapped": lambda a, v, b: "\n".join(textwrap.wrap(b64(a + v + b), 76)),
    "base64 wrapped crlf": lambda a, v, b: "\r\n".join(textwrap.wrap(b64(a + v + b), 76)),
    "url-encoded": lambda a, v, b: quote(a + v + b, safe=""),
    "url-encoded lower hex": lambda a, v, b: percent_lower(a + v + b),
    "base64 then url-encoded": lambda a, v, b: quote(b64(a + v + b), safe=""),
    "base64 twice": lambda a, v, b: b64(b64(a + v + b)),
    "url-encoded then base64": lambda a, v, b: b64(quote(a + v + b, safe="")),
}
ALLOW_ENTRIES = [
    "",
    "re:[A-Za-z0-9+/=]{20,}",
    "re:.*",
    r"re:[\s\S]*",
    "re:[A-Za-z0-9_\\-]{20,}=*",
    "re:[A-Za-z0-9%._~+/=\\-]+",
    "ENCODED",  # the encoded text itself, as a literal entry
    "VALUE",  # the value itself
]
PLACES = ("request", "body", "header", "stream")
#: Every provider vcr_kit records: a fixture of each holds the value in its own shapes
#: (OpenAI's two: Chat Completions, and Responses with its typed stream events).
PROVIDER_NAMES = ("anthropic", *PROVIDERS, "openai-responses")
#: Each variable vcr_kit keeps out of fixtures (every provider's keys among them), and
#: a credential a request's headers carry (each provider's header).
LABELS = [
    *SECRET_ENV_VARS,
    "the x-api-key header",
    "the authorization header",  # OpenAI's bearer key
    "the api-key header",  # Azure OpenAI's
    "the x-goog-api-key header",  # Gemini's
    "the proxy's Google access token",
]
#: Each provider's key variables: the property must meet every one of them.
PROVIDER_KEYS = ["OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY",
                 "GOOGLE_API_KEY"]  # fmt: skip
#: Fixture names as each provider's are named.
NAMES = {
    "anthropic": "post-v1-messages-0123456789ab.json",
    "openai": "openai-post-v1-chat-completions-0123456789ab.json",
    "openai-responses": "openai-post-v1-responses-0123456789ab.json",
    "gemini": "gemini-post-v1beta-models-gemini-2-5-flash-generatecontent-0123456789ab.json",
}
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash"


def request_of(provider: str, text: str, stream: bool) -> dict[str, Any]:
    """The stored request of ``provider`` whose prompt holds ``text``."""
    if provider == "openai-responses":
        body = {"model": "gpt-4.1", "input": text, **({"stream": True} if stream else {})}
        return {"method": "POST", "path": "/v1/responses", "provider": "openai", "body": body}
    if provider == "openai":
        body: dict[str, Any] = {"model": "gpt-4.1", "messages": [{"role": "user", "content": text}]}
        if stream:
            body["stream"] = True
        return {"method": "POST", "path": "/v1/chat/completions", "provider": "openai",
                "body": body}  # fmt: skip
    if provider == "gemini":
        method = "streamGenerateContent" if stream else "generateContent"
        request = {"method": "POST", "path": f"{GEMINI_PATH}:{method}", "provider": "gemini",
                   "body": {"contents": [{"role": "user", "parts": [{"text": text}]}]}}  # fmt: skip
        if stream:
            request["query"] = [["alt", "sse"]]
        return request
    body = {"model": "claude-opus-4-7", "messages": [{"role": "user", "content": text}]}
    if stream:
        body["stream"] = True
    return {"method": "POST", "path": "/v1/messages", "body": body}


def answer_of(provider: str, text: str) -> dict[str, Any]:
    """A plain answer of ``provider`` whose text is ``text``."""
    if provider == "openai-responses":
        return {"id": "resp_vcr0", "object": "response", "status": "completed",
                "output": [{"type": "message", "id": "msg_vcr0", "role": "assistant",
                            "content": [{"type": "output_text", "text": text}]}]}  # fmt: skip
    if provider == "openai":
        return {"id": "chatcmpl-vcr0", "object": "chat.completion", "created": 0,
                "model": "gpt-4.1", "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text}}]}  # fmt: skip
    if provider == "gemini":
        content = {"role": "model", "parts": [{"text": text}]}
        return {"candidates": [{"index": 0, "finishReason": "STOP", "content": content}]}
    return {"type": "message", "content": [{"type": "text", "text": text}]}


def events_of(provider: str, pieces: tuple[str, ...]) -> list[dict[str, Any]]:
    """A whole stream of ``provider`` that streams ``pieces`` of text, in its events."""
    if provider == "openai-responses":
        done = {"type": "response.completed", "response": answer_of(provider, "")}
        return [{"event": "response.created", "data": {"type": "response.created"}},
                *({"event": "response.output_text.delta", "data": {
                   "type": "response.output_text.delta", "item_id": "msg_vcr0",
                   "output_index": 0, "content_index": 0, "delta": piece}} for piece in pieces),
                {"event": "response.completed", "data": done}]  # fmt: skip
    if provider == "openai":
        chunk = {"id": "chatcmpl-vcr0", "object": "chat.completion.chunk", "created": 0}
        return [*({"data": {**chunk, "choices": [{"index": 0, "delta": {"content": piece}}]}}
                  for piece in pieces), {"data_text": "[DONE]"}]  # fmt: skip
    if provider == "gemini":
        chunks = [answer_of(provider, piece) for piece in pieces]
        for chunk in chunks[:-1]:  # only the last chunk gives its finishReason
            del chunk["candidates"][0]["finishReason"]
        return [{"data": chunk} for chunk in chunks]
    return [
        {"event": "content_block_delta", "data": {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": piece}}}
        for piece in pieces
    ]  # fmt: skip


def document(place: str, text: str, cut: int, provider: str = "anthropic") -> dict[str, Any]:
    """An HTTP fixture of ``provider`` holding ``text`` in ``place``: its request's
    prompt, its answer's text, a response header, or a stream that holds it in two
    pieces cut at ``cut``."""
    response: dict[str, Any] = {"status": 200, "headers": {"content-type": "application/json"}}
    request = request_of(provider, "Say hi.", place == "stream")
    if place == "request":
        request = request_of(provider, text, False)
        response["body"] = answer_of(provider, "Hi.")
    elif place == "body":
        response["body"] = answer_of(provider, text)
    elif place == "header":
        response["headers"]["x-echo"] = text
        response["body"] = answer_of(provider, "")
    else:
        at = cut % (len(text) + 1)
        response["headers"]["content-type"] = "text/event-stream"
        response["events"] = events_of(provider, (text[:at], text[at:]))
    return {"kind": "http", "request": request, "response": response, "usage": []}


class LiveCredentialTest(unittest.TestCase):
    def setUp(self) -> None:
        saved = {name: os.environ.get(name) for name in [*SECRET_ENV_VARS, "VCR_ALLOW_SECRETS"]}
        for name in saved:
            os.environ.pop(name, None)
        self.addCleanup(self.restore, saved)
        self.folder = Path(tempfile.mkdtemp()).resolve()
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)

    @staticmethod
    def restore(saved: dict[str, str | None]) -> None:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    @settings(max_examples=examples(300), deadline=None)
    @given(
        label=st.sampled_from(LABELS),
        value=st.text(KEY_LETTERS, min_size=16, max_size=80),
        encoding=st.sampled_from(sorted(ENCODINGS)),
        entry=st.sampled_from(ALLOW_ENTRIES),
        place=st.sampled_from(PLACES),
        before=st.text("abc xyz:=", max_size=5),
        after=st.text("abc xyz:=", max_size=5),
        cut=st.integers(0, 400),
        provider=st.sampled_from(PROVIDER_NAMES),
    )
    @example(label="ANTHROPIC_API_KEY", value=ANY_KEY, encoding="base64",
             entry="re:[A-Za-z0-9+/=]{20,}", place="body", before="", after="", cut=0,
             provider="anthropic")
    @example(label="AWS_SECRET_ACCESS_KEY", value=AWS_SECRET,
             encoding="url-encoded", entry="", place="header", before="k=", after="", cut=0,
             provider="anthropic")
    @example(label="ANTHROPIC_API_KEY", value=ANY_KEY, encoding="base64 wrapped",
             entry="", place="body", before="key=", after="\n", cut=0, provider="anthropic")
    @example(label="ANTHROPIC_AUTH_TOKEN", value=ANY_KEY, encoding="base64 url-safe",
             entry="re:.*", place="stream", before="", after="", cut=21, provider="anthropic")
    # Each provider's key, in its own fixture, through an entry that matches everything.
    @example(label="OPENAI_API_KEY", value=OPENAI_KEY, encoding="base64",
             entry="re:[A-Za-z0-9+/=]{20,}", place="body", before="", after="", cut=0,
             provider="openai")
    @example(label="OPENAI_ADMIN_KEY", value="sk-admin-" + "Q8" * 24, encoding="url-encoded",
             entry="re:.*", place="request", before="k=", after="", cut=0, provider="openai")
    @example(label="AZURE_OPENAI_API_KEY", value="0f" * 16, encoding="raw", entry="VALUE",
             place="header", before="", after="", cut=0, provider="openai")
    @example(label="GEMINI_API_KEY", value=GOOGLE_KEY, encoding="base64 wrapped", entry="",
             place="stream", before="key=", after="", cut=30, provider="gemini")
    @example(label="GOOGLE_API_KEY", value=GOOGLE_KEY, encoding="raw", entry="ENCODED",
             place="request", before="?key=", after="", cut=0, provider="gemini")
    @example(label="the x-goog-api-key header", value=GOOGLE_KEY, encoding="base64 twice",
             entry="re:.*", place="body", before="", after="", cut=0, provider="gemini")
    @example(label="the authorization header", value=OPENAI_KEY, encoding="raw",
             entry="re:sk-proj-.*", place="stream", before="", after="", cut=9,
             provider="openai")
    @example(label="the api-key header", value="0f" * 16, encoding="base64", entry="re:.*",
             place="stream", before="", after="", cut=7, provider="openai-responses")  # fmt: skip
    def test_no_entry_admits_a_live_credential(
        self, *, label: str, value: str, encoding: str, entry: str, place: str,
        before: str, after: str, cut: int, provider: str,
    ) -> None:  # fmt: skip
        text = ENCODINGS[encoding](before, value, after)
        allow = entry.replace("ENCODED", text).replace("VALUE", value)
        if allow:
            os.environ["VCR_ALLOW_SECRETS"] = allow
        else:
            os.environ.pop("VCR_ALLOW_SECRETS", None)
        extra: list[tuple[str, str]] = []
        if label in SECRET_ENV_VARS:
            os.environ[label] = value
            self.addCleanup(os.environ.pop, label, None)
        elif label.startswith("the proxy's"):  # one the process got, in no variable
            credentials.remember_credential(label, value)
        else:
            extra = [(label, value)]
        path = self.folder / NAMES[provider]
        path.unlink(missing_ok=True)  # an example that failed may have left one
        try:
            with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                write_document(path, document(place, text, cut, provider), extra)
        finally:
            os.environ.pop(label, None)
            if label.startswith("the proxy's"):
                credentials.PROCESS_CREDENTIALS.reset()
        message = str(caught.exception)
        self.assertTrue(
            message.startswith(
                f"Refusing to write fixture {path}: it contains the value of {label}"
            ),
            message,
        )
        self.assertIn(
            "Nothing was written. Keep secrets out of prompts and tool results, or add a "
            "dehydrate rule that replaces them, then record again.",
            message,
        )
        if allow:
            self.assertTrue(message.endswith(
                " VCR_ALLOW_SECRETS never admits a credential of this process, in any encoding."
            ), message)  # fmt: skip
        # Never the value (a value may spell part of the file's name or the label).
        self.assertNotIn(value, message.replace(str(path), "").replace(label, ""))
        self.assertNotIn("list it (or a re: pattern)", message)
        self.assertFalse(path.exists())

    def test_the_reviewers_case_through_a_recording(self) -> None:
        """The issue's example, end to end: the base64 copy of the live key in an
        answer is refused before the write, as the raw key is."""
        os.environ["ANTHROPIC_API_KEY"] = ANY_KEY
        os.environ["VCR_ALLOW_SECRETS"] = "re:[A-Za-z0-9+/=]{20,}"
        for copy in (ANY_KEY, b64(ANY_KEY)):
            with self.subTest(copy=copy[:10]):
                recording = vcr_kit.fixture({"q": "env?"}, "env", mode="record",
                                            fixtures_dir=self.folder)  # fmt: skip
                with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                    recording.play(lambda copy=copy: {"output": [copy]})  # type: ignore[misc]
                encoded = "" if copy == ANY_KEY else ", base64-encoded"
                self.assertEqual(
                    str(caught.exception),
                    f"Refusing to write fixture {caught.exception.path}: it contains the value "
                    f"of ANTHROPIC_API_KEY{encoded} at response.output[0]. Nothing was "
                    "written. Keep secrets out of prompts and tool results, or add a dehydrate "
                    "rule that replaces them, then record again. VCR_ALLOW_SECRETS never "
                    "admits a credential of this process, in any encoding.",
                )
        self.assertEqual(list(self.folder.glob("*.json")), [])

    def test_an_entry_still_admits_a_look_alike_shape(self) -> None:
        """The rule is about live values only: a shape that is not one still passes."""
        os.environ["ANTHROPIC_API_KEY"] = ANY_KEY
        os.environ["VCR_ALLOW_SECRETS"] = "re:[A-Za-z0-9+/=]{20,}"
        look_alike = "sk-ant-api03-" + "Docs0" * 8
        path = self.folder / "post-v1-messages-0123456789ab.json"
        write_document(path, document("body", b64(look_alike), 0))
        self.assertTrue(path.exists())

    def test_check_reports_a_file_an_earlier_version_wrote(self) -> None:
        os.environ["ANTHROPIC_API_KEY"] = ANY_KEY
        os.environ["AWS_SECRET_ACCESS_KEY"] = AWS_SECRET
        for name, text in (("a", b64("key=" + ANY_KEY)), ("b", quote(AWS_SECRET, safe=""))):
            doc = document("body", text, 0)
            # Written as an earlier version did: past the gate of this one.
            (self.folder / f"post-v1-messages-{name * 12}.json").write_text(
                json.dumps({"vcr_kit_format": 1, **doc}), encoding="utf-8"
            )
        os.environ["VCR_ALLOW_SECRETS"] = "re:.*"
        status, out, err = cli("check", str(self.folder))
        self.assertEqual(status, 1, out + err)
        for name, label, how in (("a", "ANTHROPIC_API_KEY", "base64-encoded"),
                                 ("b", "AWS_SECRET_ACCESS_KEY", "URL-encoded")):  # fmt: skip
            self.assertIn(
                f"{self.folder}/post-v1-messages-{name * 12}.json: contains the value of "
                f"{label}, {how} at response.body.content[0].text; remove it and "
                "record again",
                out,
            )
        self.assertNotIn(ANY_KEY, out + err)
        self.assertNotIn(AWS_SECRET, out + err)


if __name__ == "__main__":
    unittest.main()
