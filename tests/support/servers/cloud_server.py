"""A loopback server that speaks the cloud platforms' wire formats, for the SDK's cloud
clients (``AnthropicBedrock``, ``AnthropicVertex``, ``AnthropicFoundry``, ...).

- Amazon Bedrock: ``POST /model/{model}/invoke`` (JSON) and
  ``/model/{model}/invoke-with-response-stream``: AWS event-stream frames (prelude,
  typed headers, CRC32s), each chunk's event base64 in ``bytes`` next to random
  ``p`` padding, ``message_stop`` with latency figures that differ on every call.
- Google Vertex AI: ``POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/
  {model}:rawPredict`` (JSON) and ``:streamRawPredict`` (SSE).
- Google's OAuth token endpoint, ``POST /token``: a service-account credentials file
  (``google_credentials_file``) whose ``token_uri`` is this server gets
  ``GOOGLE_TOKEN`` for its signed JWT assertion, through google-auth's own refresh.
- Every other platform (Bedrock Mantle, Claude Platform on AWS, Claude on Google Cloud,
  Foundry): the Messages API shape at ``.../v1/messages`` under its own base path.

Credentials are checked as the platforms check them: a SigV4 ``authorization``
(``AWS4-HMAC-SHA256 Credential=<key id>/...``, with ``x-amz-date``) signed with the
test key id, a Google bearer token, a Foundry ``api-key``; anything else gets 403.
Bedrock and Vertex bodies must carry ``anthropic_version`` and no ``model`` (it is in
the path). The frames are encoded here with ``zlib.crc32``, independently of
vcr_kit's own encoder.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import struct
import threading
import zlib
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.servers.loopback_server import message_for, stream_events_for

__all__ = [
    "AWS_KEY_ID",
    "AWS_SECRET",
    "FOUNDRY_KEY",
    "GOOGLE_TOKEN",
    "CloudServer",
    "frame",
    "google_credentials_file",
]

AWS_KEY_ID = "AKIAVCRKITTESTKEY001"
AWS_SECRET = "vcr-kit-test-aws-secret-" + "s" * 16
GOOGLE_TOKEN = "ya29.vcr-kit-test-google-token-0123456789"
FOUNDRY_KEY = "foundry-test-key-" + "f" * 24
GOOGLE_ACCOUNT = "vcr-kit-test@vcr-kit-test.iam.gserviceaccount.com"
_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

_BEDROCK = re.compile(r"/model/(?P<model>[^/]+)/(?P<op>invoke|invoke-with-response-stream)")
_VERTEX = re.compile(
    r"/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/"
    r"(?P<model>[^/:]+):(?P<op>rawPredict|streamRawPredict)"
)


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One AWS event-stream frame with string headers."""
    encoded = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
        for k, v in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return head + struct.pack(">I", zlib.crc32(head))


def _credential(headers: Mapping[str, str]) -> str | None:
    """Which accepted credential the request carries, or None."""
    authorization = headers.get("authorization", "")
    signed = authorization.startswith(f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/")
    if signed and "x-amz-date" in headers and "Signature=" in authorization:
        return "sigv4"
    if authorization == f"Bearer {GOOGLE_TOKEN}":
        return "google"
    if FOUNDRY_KEY in (headers.get("api-key"), headers.get("x-api-key")):
        return "foundry"
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        """Bedrock's control plane: ``GET /inference-profiles`` (Claude Code asks it first)."""
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = urlsplit(self.path).path
        with self.server.owner.lock:
            self.server.owner.log.append((path, headers, b""))
        if _credential(headers) is None:
            self._json(403, {"message": "The security token included in the request is invalid."})
        elif path == "/inference-profiles":
            profile = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
            summary = {"inferenceProfileId": profile, "status": "ACTIVE", "type": "SYSTEM_DEFINED"}
            self._json(200, {"inferenceProfileSummaries": [summary]})
        else:
            self._json(404, {"message": f"no route {path}"})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = urlsplit(self.path).path
        with self.server.owner.lock:
            self.server.owner.log.append((path, headers, raw))
        if path == "/token":
            self._token(parse_qs(raw.decode()))
            return
        credential = _credential(headers)
        if credential is None:
            self._json(403, {"message": "The security token included in the request is invalid."})
            return
        body = json.loads(raw or b"{}")
        bedrock, vertex = _BEDROCK.fullmatch(path), _VERTEX.fullmatch(path)
        if bedrock or vertex:
            found = bedrock or vertex
            assert found is not None
            if "model" in body or "anthropic_version" not in body:
                self._json(400, {"message": "anthropic_version is required; model is in the path"})
                return
            body = {**body, "model": unquote(found["model"])}
            streaming = found["op"] in ("invoke-with-response-stream", "streamRawPredict")
        elif path.endswith("/v1/messages"):
            streaming = body.get("stream") is True
        else:
            self._json(404, {"message": f"no route {path}"})
            return
        message = message_for(body)
        if bedrock and streaming:
            self._event_stream(message)
        elif streaming:
            self._sse(message)
        else:
            self._json(200, message)

    def _token(self, form: dict[str, list[str]]) -> None:
        """Google's token endpoint: a service account's signed assertion for a token."""
        assertion = (form.get("assertion") or [""])[0]
        claims = assertion.split(".")[1] if assertion.count(".") == 2 else ""
        issuer = json.loads(base64.urlsafe_b64decode(claims + "==") or b"{}").get("iss")
        if form.get("grant_type") != [_JWT_BEARER] or issuer != GOOGLE_ACCOUNT:
            self._json(400, {"error": "invalid_grant"})
            return
        self._json(200, {"access_token": GOOGLE_TOKEN, "expires_in": 3600, "token_type": "Bearer"})

    def _start(self, status: int, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        # Per-call values, as the platforms send them: never part of a fixture.
        self.send_header("x-amzn-requestid", secrets.token_hex(16))
        self.send_header("x-amzn-bedrock-invocation-latency", str(secrets.randbelow(900) + 100))

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self._start(status, "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunked(self, pieces: list[bytes]) -> None:
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for piece in pieces:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _sse(self, message: dict[str, Any]) -> None:
        self._start(200, "text/event-stream")
        self._chunked(
            [
                f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                for name, data in stream_events_for(message)
            ]
        )

    def _event_stream(self, message: dict[str, Any]) -> None:
        pieces = []
        for _, event in stream_events_for(message):
            data = event
            if data.get("type") == "message_stop":
                data = {
                    **event,
                    "amazon-bedrock-invocationMetrics": {
                        "inputTokenCount": message["usage"]["input_tokens"],
                        "outputTokenCount": message["usage"]["output_tokens"],
                        "invocationLatency": secrets.randbelow(900) + 100,
                        "firstByteLatency": secrets.randbelow(90) + 10,
                    },
                }
            chunk = {
                "bytes": base64.b64encode(json.dumps(data).encode()).decode(),
                "p": secrets.token_urlsafe(secrets.randbelow(20) + 1),
            }
            pieces.append(
                frame(
                    {
                        ":event-type": "chunk",
                        ":content-type": "application/json",
                        ":message-type": "event",
                    },
                    json.dumps(chunk).encode(),
                )
            )
        self._start(200, "application/vnd.amazon.eventstream")
        self._chunked(pieces)


def google_credentials_file(folder: Path, server_url: str) -> Path:
    """A service-account credentials file (``GOOGLE_APPLICATION_CREDENTIALS``) with a
    fresh key, whose tokens come from ``server_url``'s ``/token``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    info = {
        "type": "service_account",
        "project_id": "vcr-kit-test",
        "private_key_id": "vcr-kit-test-key",
        "private_key": pem,
        "client_email": GOOGLE_ACCOUNT,
        "client_id": "1234567890",
        "token_uri": f"{server_url}/token",
    }
    path = folder / "google-credentials.json"
    path.write_text(json.dumps(info), encoding="utf-8")
    return path


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: CloudServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class CloudServer:
    """The platforms' wire formats on 127.0.0.1 (a random port); a context manager."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: (path, lower-cased headers, body) of every request, in order.
        self.log: list[tuple[str, dict[str, str], bytes]] = []
        self._httpd = _Server(self)
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> CloudServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()

    def __enter__(self) -> CloudServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
