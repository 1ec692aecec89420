"""AWS event-stream framing (``application/vnd.amazon.eventstream``), both ways.

Amazon Bedrock streams a message as binary frames, not SSE: each frame is a prelude
(total length, headers length, CRC32 of those eight bytes), typed headers, the
payload, and a CRC32 of everything before it. vcr_kit stores a Bedrock stream
event by event (readable, stable JSON) and frames it again on replay, so the SDK's
own decoder (botocore's ``EventStreamBuffer``) parses the replayed bytes as it
would the live ones. Pure: bytes in, bytes out.
"""

from __future__ import annotations

import binascii
import struct
from collections.abc import Iterable, Mapping
from typing import Final, Union

__all__ = ["CONTENT_TYPE", "HeaderValue", "decode_frames", "encode_frame", "encode_frames"]

CONTENT_TYPE: Final = "application/vnd.amazon.eventstream"
HeaderValue = Union[str, bool, int, bytes]  # noqa: UP007 (an alias: evaluated on 3.10 too)

_PRELUDE: Final = struct.Struct(">II")
_CRC: Final = struct.Struct(">I")
# Header value types (AWS event-stream encoding).
_TRUE, _FALSE, _BYTE, _SHORT, _INT, _LONG, _BYTES, _STRING, _TIMESTAMP, _UUID = range(10)
_FIXED: Final = {_BYTE: ">b", _SHORT: ">h", _INT: ">i", _LONG: ">q", _TIMESTAMP: ">q"}


def _crc(data: bytes, start: int = 0) -> int:
    return binascii.crc32(data, start) & 0xFFFFFFFF


def _encode_headers(headers: Mapping[str, HeaderValue]) -> bytes:
    out = bytearray()
    for name, value in headers.items():
        raw_name = name.encode("utf-8")
        out += bytes([len(raw_name)]) + raw_name
        if isinstance(value, bool):
            out += bytes([_TRUE if value else _FALSE])
        elif isinstance(value, int):
            out += bytes([_INT]) + struct.pack(">i", value)
        elif isinstance(value, bytes):
            out += bytes([_BYTES]) + struct.pack(">H", len(value)) + value
        else:
            raw = value.encode("utf-8")
            out += bytes([_STRING]) + struct.pack(">H", len(raw)) + raw
    return bytes(out)


def encode_frame(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One frame: prelude, its CRC, headers, payload, the message CRC."""
    encoded = _encode_headers(headers)
    total = _PRELUDE.size + _CRC.size + len(encoded) + len(payload) + _CRC.size
    prelude = _PRELUDE.pack(total, len(encoded))
    head = prelude + _CRC.pack(_crc(prelude)) + encoded + payload
    return head + _CRC.pack(_crc(head))


def encode_frames(frames: Iterable[tuple[Mapping[str, HeaderValue], bytes]]) -> bytes:
    return b"".join(encode_frame(headers, payload) for headers, payload in frames)


def _decode_headers(data: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    at = 0
    while at < len(data):
        size = data[at]
        name = data[at + 1 : at + 1 + size].decode("utf-8")
        at += 1 + size
        kind = data[at]
        at += 1
        value: HeaderValue
        if kind in (_TRUE, _FALSE):
            value = kind == _TRUE
        elif kind in _FIXED:
            fixed = struct.Struct(_FIXED[kind])
            (value,) = fixed.unpack_from(data, at)
            at += fixed.size
        elif kind in (_BYTES, _STRING):
            (length,) = struct.unpack_from(">H", data, at)
            raw = data[at + 2 : at + 2 + length]
            if len(raw) != length:
                raise ValueError(f"header {name!r} is cut short")
            value = raw.decode("utf-8") if kind == _STRING else raw
            at += 2 + length
        elif kind == _UUID:
            value = data[at : at + 16]
            at += 16
        else:
            raise ValueError(f"header {name!r} has unknown type {kind}")
        headers[name] = value
    return headers


def decode_frames(data: bytes) -> list[tuple[dict[str, HeaderValue], bytes]]:
    """Every frame of ``data`` as (headers, payload); ValueError naming the frame if
    one is cut short or fails its CRC."""
    frames: list[tuple[dict[str, HeaderValue], bytes]] = []
    at = 0
    while at < len(data):
        number = len(frames) + 1
        if len(data) - at < _PRELUDE.size + _CRC.size:
            raise ValueError(f"event-stream frame {number} is cut short")
        total, headers_length = _PRELUDE.unpack_from(data, at)
        frame = data[at : at + total]
        minimum = _PRELUDE.size + 2 * _CRC.size + headers_length
        if len(frame) != total or total < minimum:
            raise ValueError(f"event-stream frame {number} is cut short")
        (prelude_crc,) = _CRC.unpack_from(frame, _PRELUDE.size)
        (message_crc,) = _CRC.unpack_from(frame, total - _CRC.size)
        if prelude_crc != _crc(frame[: _PRELUDE.size]) or message_crc != _crc(frame[:-4]):
            raise ValueError(f"event-stream frame {number} fails its CRC check")
        start = _PRELUDE.size + _CRC.size
        headers = _decode_headers(frame[start : start + headers_length])
        frames.append((headers, frame[start + headers_length : total - _CRC.size]))
        at += total
    return frames
