"""``loaded_response``: a replayed answer built as the HTTP library leaves it after
reading it, without the read; the library's own constructor whenever that is not
certain to give the same object."""

from __future__ import annotations

import asyncio
import types
import unittest
from typing import Any

import pytest

from vcr_kit._core.httplib import sdk_library
from vcr_kit._engine import loaded_response as module
from vcr_kit._engine.http_codec import head_of, response_of
from vcr_kit._engine.loaded_response import loaded_response

pytestmark = pytest.mark.inprocess

http: Any = sdk_library()  # httpx2, or httpx under anthropic 0.x

BODY = b'{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}]}'


def head(body: bytes, *extra: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), *extra, (b"Content-Length", b"%d" % len(body))]


def request() -> Any:
    return http.Request("POST", "https://api.anthropic.com/v1/messages", content=b"{}")


def state(response: Any) -> dict[str, Any]:
    """Everything of a response the SDK or its caller can read."""
    return {
        "status": response.status_code,
        "headers": response.headers.raw,
        "content": response.content,
        "closed": response.is_closed,
        "consumed": response.is_stream_consumed,
        "downloaded": response.num_bytes_downloaded,
        "request": response.request,
        "extensions": response.extensions,
        "http_version": response.http_version,
        "chunks": list(response.iter_bytes(5)),
        "text": response.text,
        "json": response.json(),
        "fields": sorted(vars(response).keys() - {"_decoder"}),
    }


class LoadedResponseTest(unittest.TestCase):
    def setUp(self) -> None:
        module.LAYOUT_CHECKS.reset()
        self.addCleanup(module.LAYOUT_CHECKS.reset)

    def test_the_installed_library_takes_the_direct_build_and_it_equals_the_constructors(
        self,
    ) -> None:
        sent = request()
        direct = loaded_response(http, 200, head(BODY), BODY, sent)
        self.assertIs(module.LAYOUT_CHECKS.agrees[http.__name__], True)
        built = http.Response(200, headers=head(BODY), content=BODY, request=sent)
        self.assertEqual(state(direct), state(built))
        self.assertNotIn("_decoder", vars(direct))  # it was not read through a decoder

    def test_an_async_client_reads_it_as_it_reads_the_constructors(self) -> None:
        sent = request()
        direct = loaded_response(http, 200, head(BODY), BODY, sent)

        async def read() -> tuple[bytes, list[bytes]]:
            return await direct.aread(), [part async for part in direct.aiter_bytes()]

        self.assertEqual(asyncio.run(read()), (BODY, [BODY]))

    def test_a_library_that_keeps_its_body_elsewhere_gets_its_own_constructor(self) -> None:
        class ElsewhereResponse(http.Response):  # type: ignore[misc, name-defined]
            """A future release: reading keeps the body under another name."""

            def read(self) -> bytes:
                if not hasattr(self, "_body"):
                    self._body = b"".join(self.iter_raw())
                return self._body

            @property
            def content(self) -> bytes:
                return self.read()

        future = types.ModuleType("futurehttp")
        future.Response = ElsewhereResponse  # type: ignore[attr-defined]
        future.ByteStream = http.ByteStream  # type: ignore[attr-defined]
        sent = request()
        answer = loaded_response(future, 200, head(BODY), BODY, sent)
        self.assertIs(module.LAYOUT_CHECKS.agrees["futurehttp"], False)
        self.assertIsInstance(answer, ElsewhereResponse)
        self.assertEqual(
            (answer.content, answer.is_closed, answer.json()["id"]), (BODY, True, "msg_1")
        )
        self.assertIn("_body", vars(answer))  # built and read by the constructor

    def test_an_encoded_stored_answer_goes_through_the_constructor_and_its_decoder(
        self,
    ) -> None:
        # A stored answer never has one; a hand-edited fixture fails as it always did.
        stored = {
            "status": 200,
            "headers": {"content-type": "application/json", "content-encoding": "gzip"},
        }
        self.assertFalse(head_of(stored).plain)
        self.assertTrue(head_of({"status": 200, "headers": {}}).plain)
        with self.assertRaises(http.DecodingError):
            response_of(stored, BODY, request())


if __name__ == "__main__":
    unittest.main()
