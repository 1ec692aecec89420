"""AWS event-stream framing: vcr_kit's encoder and decoder, against each other, against
botocore's own decoder (the one the SDK uses), and against damaged bytes."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import unittest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.servers.cloud_server import frame as independent_frame
from vcr_kit._core.aws_eventstream import decode_frames, encode_frame, encode_frames
from vcr_kit._engine.http_codec import parse_frames, render_frames

names = st.text(min_size=1, max_size=20).filter(lambda n: len(n.encode()) < 256)
values = st.one_of(
    st.text(max_size=50),
    st.booleans(),
    st.integers(min_value=-(2**31), max_value=2**31 - 1),
    st.binary(max_size=50),
)
frames = st.lists(
    st.tuples(st.dictionaries(names, values, max_size=4), st.binary(max_size=200)), max_size=5
)

CHUNK = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}


def bedrock_chunk(event: dict[str, object], padding: str = "abc") -> bytes:
    payload = {"bytes": base64.b64encode(json.dumps(event).encode()).decode(), "p": padding}
    return independent_frame(CHUNK, json.dumps(payload).encode())


@pytest.mark.inprocess
class FramingTest(unittest.TestCase):
    @given(frames)
    def test_decode_undoes_encode(
        self, given_frames: list[tuple[dict[str, object], bytes]]
    ) -> None:
        self.assertEqual(decode_frames(encode_frames(given_frames)), given_frames)  # type: ignore[arg-type]

    def test_the_same_bytes_as_an_independent_encoder(self) -> None:
        headers = {":event-type": "chunk", ":message-type": "event"}
        self.assertEqual(encode_frame(headers, b'{"x":1}'), independent_frame(headers, b'{"x":1}'))

    def test_a_damaged_stream_is_refused_by_frame(self) -> None:
        data = encode_frames([(CHUNK, b"one"), (CHUNK, b"two")])
        flipped = data[:-1] + bytes([data[-1] ^ 1])
        cases = {
            flipped: "event-stream frame 2 fails its CRC check",
            data[:-3]: "event-stream frame 2 is cut short",
            data[:5]: "event-stream frame 1 is cut short",
        }
        for damaged, message in cases.items():
            with self.subTest(message=message), self.assertRaises(ValueError) as caught:
                decode_frames(damaged)
            self.assertEqual(str(caught.exception), message)


@pytest.mark.clouds
class BotocoreReadsTest(unittest.TestCase):
    """Bedrock's own decoder (botocore, which ``anthropic[bedrock]`` brings: the clients
    env) reads the frames vcr_kit writes. Skips elsewhere; fails there if it is missing."""

    def test_botocore_reads_what_vcr_kit_writes(self) -> None:
        if importlib.util.find_spec("botocore") is None:
            if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":
                raise AssertionError("the clients env installs botocore: anthropic[bedrock]")
            self.skipTest("botocore is not installed here: tox -e clients")
        from botocore.eventstream import EventStreamBuffer

        data = encode_frames([(CHUNK, b'{"bytes":"e30="}'), ({"n": 7, "ok": True}, b"")])
        buffer = EventStreamBuffer()
        buffer.add_data(data)
        read = [(message.headers, message.payload) for message in buffer]
        self.assertEqual(read, [(CHUNK, b'{"bytes":"e30="}'), ({"n": 7, "ok": True}, b"")])


@pytest.mark.inprocess
class BedrockStreamTest(unittest.TestCase):
    def test_padding_and_latency_are_dropped_and_the_event_kept(self) -> None:
        stop = {
            "type": "message_stop",
            "amazon-bedrock-invocationMetrics": {
                "inputTokenCount": 5,
                "outputTokenCount": 2,
                "invocationLatency": 812,
                "firstByteLatency": 77,
            },
        }
        stored = parse_frames(bedrock_chunk({"type": "ping"}, "xyz") + bedrock_chunk(stop, "q"))
        self.assertEqual(
            stored,
            [
                {"headers": CHUNK, "chunk": {"type": "ping"}},
                {
                    "headers": CHUNK,
                    "chunk": {
                        "type": "message_stop",
                        "amazon-bedrock-invocationMetrics": {
                            "inputTokenCount": 5,
                            "outputTokenCount": 2,
                        },
                    },
                },
            ],
        )
        # Recorded twice with other padding and latency: the same stored form.
        metrics = {"inputTokenCount": 5, "outputTokenCount": 2}
        again = {
            **stop,
            "amazon-bedrock-invocationMetrics": {
                **metrics,
                "invocationLatency": 1,
                "firstByteLatency": 2,
            },
        }
        self.assertEqual(
            parse_frames(bedrock_chunk({"type": "ping"}, "other") + bedrock_chunk(again, "")),
            stored,
        )

    def test_rendered_frames_parse_back_to_the_same_events(self) -> None:
        exception = independent_frame(
            {":message-type": "exception", ":exception-type": "validationException"},
            b'{"message":"bad"}',
        )
        stored = parse_frames(bedrock_chunk({"type": "ping"}) + exception)
        self.assertEqual(stored[1]["body"], {"message": "bad"})
        self.assertEqual(parse_frames(render_frames(stored)), stored)


@pytest.mark.inprocess
class StoredFramesTest(unittest.TestCase):
    def test_a_throttled_stream_is_never_stored(self) -> None:
        from vcr_kit._core.httplib import sdk_library
        from vcr_kit._engine.http_codec import store_response

        throttled = independent_frame(
            {":message-type": "exception", ":exception-type": "throttlingException"},
            b'{"message":"Too many requests"}',
        )
        http = sdk_library()
        response = http.Response(
            200,
            headers={"content-type": "application/vnd.amazon.eventstream"},
            content=bedrock_chunk({"type": "ping"}) + throttled,
        )
        self.assertIsNone(store_response(response, seed="post-model-x-invoke-0"))

    def test_a_stream_without_its_final_event_or_cut_short_is_never_stored(self) -> None:
        from vcr_kit._core.httplib import sdk_library
        from vcr_kit._core.storable import answer_refusal
        from vcr_kit._engine.http_codec import store_response, store_response_with_ids

        http = sdk_library()
        whole = bedrock_chunk({"type": "ping"}) + bedrock_chunk({"type": "message_stop"})
        headers = {"content-type": "application/vnd.amazon.eventstream"}
        complete = http.Response(200, headers=headers, content=whole)
        self.assertIsNotNone(store_response(complete, seed="s"))
        for content, reason in [
            (
                bedrock_chunk({"type": "ping"}),
                "the stream ended after 1 events, before its final event (message_stop)",
            ),
            (whole[:-7], "an AWS event stream cut short or failing its CRC check"),
        ]:
            with self.subTest(reason=reason):
                response = http.Response(200, headers=headers, content=content)
                self.assertIsNone(store_response(response, seed="s"))
                refusal = answer_refusal(store_response_with_ids(response, seed="s")[0])
                self.assertEqual(refusal and refusal.reason, reason)

    def test_fixture_check_reads_frames(self) -> None:
        from vcr_kit._core.kinds import KINDS

        request = {"method": "POST", "path": "/model/m/invoke-with-response-stream", "body": {}}
        good = {
            "status": 200,
            "frames": [
                {"headers": CHUNK, "chunk": {"type": "ping"}},
                {"headers": CHUNK, "chunk": {"type": "message_stop"}},
            ],
        }
        bad = {"status": 200, "frames": [{"headers": CHUNK}, "x"]}
        found: list[str] = []
        KINDS["http"].check(request, good, "", True, found)
        self.assertEqual(found, [])
        KINDS["http"].check(request, bad, "", True, found)
        self.assertEqual(
            found,
            [
                "response.frames[0]: exactly one of chunk, body, text is needed",
                "response.frames[1]: not an object with headers",
            ],
        )


@pytest.mark.inprocess
class ForwardedFramesTest(unittest.TestCase):
    def test_forwarded_frames_carry_the_tool_ids_the_fixture_stores(self) -> None:
        from vcr_kit._core.httplib import sdk_library
        from vcr_kit._engine.http_codec import store_response
        from vcr_kit._proxy.forwarding import EventStreamForwarder

        start = {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_01LiveAbc", "name": "Bash"},
        }
        live = b"".join(
            bedrock_chunk(event)
            for event in ({"type": "ping"}, start, {"a": 1}, {"type": "message_stop"})
        )
        seed = "post-model-m-invoke-with-response-stream-0123456789ab"
        forwarder = EventStreamForwarder(seed)
        pieces = [live[i : i + 7] for i in range(0, len(live), 7)]
        forwarded = b"".join(forwarder.feed(piece) for piece in pieces) + forwarder.flush()
        seen = [frame.get("chunk") for frame in parse_frames(forwarded)]
        http = sdk_library()
        answer = http.Response(
            200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=live
        )
        stored = store_response(answer, seed=seed)
        assert stored is not None
        self.assertEqual(seen, [frame.get("chunk") for frame in stored["frames"]])
        self.assertNotEqual(seen[1]["content_block"]["id"], "toolu_01LiveAbc")
