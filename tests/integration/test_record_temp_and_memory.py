"""Recording through ``VCRTransport`` (the API an in-memory transport): the temp file
made before the call as the write's probe is the one the answer is written into, no
temp file is left when nothing is written, and a large answer is recorded and
replayed within 3x its size (the goal of issue 19), measured with ``tracemalloc``."""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
import tracemalloc
import unittest
from pathlib import Path
from typing import Any

import pytest

import vcr_kit
from vcr_kit._core import ids as _ids
from vcr_kit._core.httplib import sdk_library

pytestmark = pytest.mark.inprocess

#: The SDK's HTTP library: httpx2 from anthropic 1.0 on, httpx before.
http = sdk_library()
MODEL = "claude-opus-4-7"


def request(text: str = "hello") -> http.Request:
    body = json.dumps(
        {"max_tokens": 8, "model": MODEL, "messages": [{"role": "user", "content": text}]}
    ).encode()
    return http.Request(
        "POST",
        "https://api.anthropic.com/v1/messages",
        content=body,
        headers={"content-type": "application/json", "x-api-key": "test"},
    )


def answer(text: str) -> bytes:
    return json.dumps(
        {
            "id": "msg_01live",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 5},
        }
    ).encode()


class TestReservedTemp(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.addCleanup(_ids.forget)

    def temps(self) -> list[Path]:
        return sorted((self.folder / ".locks").glob("*.tmp"))

    def test_the_probe_made_before_the_call_becomes_the_fixture(self) -> None:
        seen: list[int] = []

        def api(_request: http.Request) -> http.Response:
            (temp,) = self.temps()  # made before the call, while it runs
            seen.append(temp.stat().st_ino)
            return http.Response(
                200, headers={"content-type": "application/json"}, content=answer("hi")
            )

        transport = vcr_kit.VCRTransport(
            mode="record", fixtures_dir=self.folder, live=http.MockTransport(api)
        )
        response = transport.handle_request(request())
        response.read()
        (fixture,) = self.folder.glob("*.json")
        self.assertEqual(fixture.stat().st_ino, seen[0])
        self.assertEqual(self.temps(), [])
        self.assertEqual(oct(fixture.stat().st_mode & 0o777), "0o644")

    def test_no_temp_file_is_left_when_nothing_is_written(self) -> None:
        def failing(_request: http.Request) -> http.Response:
            raise http.ConnectError("refused")

        def unearned(_request: http.Request) -> http.Response:
            return http.Response(
                529,
                headers={"content-type": "application/json"},
                content=b'{"type":"error","error":{"type":"overloaded_error"}}',
            )

        def same(_request: http.Request) -> http.Response:
            return http.Response(
                200, headers={"content-type": "application/json"}, content=answer("the same")
            )

        for name, api in (
            ("failing", failing),
            ("unearned", unearned),
            ("same", same),
            ("same again", same),
        ):
            with self.subTest(name):
                transport = vcr_kit.VCRTransport(
                    mode="record", fixtures_dir=self.folder, live=http.MockTransport(api)
                )
                if api is failing:
                    with self.assertRaises(http.ConnectError):  # the upstream's, as it is
                        transport.handle_request(request(name))
                else:
                    transport.handle_request(request(name.split()[0])).read()
                self.assertEqual(self.temps(), [])
        self.assertEqual(len(list(self.folder.glob("*.json"))), 1)


def peak(run: Any) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = run()
        top = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return top


class TestLargeAnswerMemory(unittest.TestCase):
    def test_record_and_replay_within_three_times_the_answer(self) -> None:
        body = answer(("lorem ipsum " * 800_000)[:9_000_000])  # a file over 4 MB
        mock = http.MockTransport(
            lambda r: http.Response(200, headers={"content-type": "application/json"}, content=body)
        )
        with tempfile.TemporaryDirectory() as folder:
            recorder = vcr_kit.VCRTransport(mode="record", fixtures_dir=folder, live=mock)
            recorded = peak(lambda: recorder.handle_request(request()).read())
            _ids.forget()
            replayer = vcr_kit.VCRTransport(mode="replay", fixtures_dir=folder)
            replayer.handle_request(request()).read()
            replayed = peak(lambda: replayer.handle_request(request()).read())
        _ids.forget()
        self.assertLess(recorded / len(body), 2.6)
        self.assertLess(replayed / len(body), 2.6)


if __name__ == "__main__":
    unittest.main()
