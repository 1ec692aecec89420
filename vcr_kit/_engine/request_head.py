"""A request's head (its request line and header fields) as RFC 9112 reads it, for
the fronts built on ``http.server`` (the proxy, the MCP front).

``http.server`` is lenient where RFC 9112 says reject: it folds continuation lines
(obs-fold), takes a field name with a space before its colon, lets a header line
without a colon end the head, treats a bare CR as a line end, takes a request
without ``Host``, answers an HTTP/0.9 request without a status line, and closes on a
blank line before the request line. A client or a gateway reading the same bytes
another way is how requests get smuggled. ``StrictRequestHandler`` reads the head by
the RFC instead: every problem is a 4xx (or 505) answered through the handler's
``send_error``, and the connection is closed.
"""

from __future__ import annotations

import contextlib
import http.client
import re
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Final

from .request_body import BODY_TIMEOUT

__all__ = ["MAX_FIELDS", "MAX_LINE", "Head", "HeadError", "StrictRequestHandler", "parse_head"]

#: The longest request line or header line taken (``http.server``'s own limit).
MAX_LINE: Final = 65536
#: The most header fields taken (``http.client``'s own limit).
MAX_FIELDS: Final = 100
#: Blank lines before a request line that are skipped (RFC 9112 §2.2: at least one).
_BLANK_LINES: Final = 4
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Controls but HTAB: never in a field value (a bare CR or LF would end a line elsewhere).
_BAD_VALUE: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: What no request-target holds: controls, spaces, non-ASCII bytes, a fragment.
_BAD_TARGET: Final = re.compile(r"[^\x21-\x7e]|#")
_ABSOLUTE: Final = re.compile(r"(?i)https?://([^/?#@]+)")
_HOST: Final = re.compile(r"[^\s/?#@,]*")
_VERSION: Final = re.compile(r"HTTP/(\d)\.(\d)")


class HeadError(Exception):
    """The request head breaks RFC 9112: ``status`` and a message for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Head:
    """A request head that RFC 9112 accepts: ``path`` is the origin-form target (an
    absolute-form target's path and query; ``*`` for ``OPTIONS *``)."""

    method: str
    path: str
    version: str
    fields: list[tuple[str, str]]

    def values(self, name: str) -> list[str]:
        return [value for field, value in self.fields if field.lower() == name]

    @property
    def keep_alive(self) -> bool:
        """Whether the connection stays open after the answer (RFC 9112 §9.3)."""
        options = {o.strip().lower() for v in self.values("connection") for o in v.split(",")}
        if self.version == "HTTP/1.0":
            return "keep-alive" in options
        return "close" not in options


def _request_line(line: str) -> tuple[str, str, str]:
    parts = line.split(" ")
    if len(parts) != 3 or not all(parts):
        raise HeadError(400, f"the request line {line[:200]!r} is not METHOD TARGET HTTP/1.1")
    method, target, version = parts
    if not _TOKEN.fullmatch(method):
        raise HeadError(400, f"the method {method[:200]!r} is not a token (RFC 9110 §9.1)")
    matched = _VERSION.fullmatch(version)
    if matched is None:
        raise HeadError(400, f"{version[:200]!r} is not an HTTP version")
    if matched.group(1) != "1":
        raise HeadError(505, f"{version} is not served here: HTTP/1.1 and HTTP/1.0 only")
    return method, target, "HTTP/1.0" if matched.group(2) == "0" else "HTTP/1.1"


def _origin_form(method: str, target: str) -> str:
    """The path (and query) a request-target names (RFC 9112 §3.2)."""
    if _BAD_TARGET.search(target):
        raise HeadError(400, f"the request target {target[:200]!r} holds a character no "
                             "target may hold (a control, a space, non-ASCII, '#')")  # fmt: skip
    if target.startswith("/"):
        return target
    absolute = _ABSOLUTE.match(target)
    if absolute is not None:
        rest = target[absolute.end() :]
        return rest if rest.startswith("/") else "/" + rest
    if (method, target) == ("OPTIONS", "*") or method == "CONNECT":
        return target  # forms that only these methods use; neither is served (501)
    raise HeadError(400, f"the request target {target[:200]!r} is not a path nor an "
                         "http(s) URL")  # fmt: skip


def _field(line: str) -> tuple[str, str]:
    if line[:1] in (" ", "\t"):
        raise HeadError(400, "a header line starts with whitespace: a folded line (obs-fold), "
                             "which RFC 9112 §5.2 has a server refuse")  # fmt: skip
    name, colon, value = line.partition(":")
    if not colon:
        raise HeadError(400, f"the header line {line[:200]!r} has no colon")
    if not _TOKEN.fullmatch(name):
        raise HeadError(400, f"the header name {name[:200]!r} is not a token (no space may "
                             "come before the colon, RFC 9112 §5.1)")  # fmt: skip
    value = value.strip(" \t")
    if _BAD_VALUE.search(value):
        raise HeadError(400, f"the value of header {name!r} holds a control character "
                             "(a bare CR, LF or NUL)")  # fmt: skip
    return name, value


def parse_head(request_line: str, field_lines: list[str]) -> Head:
    """The head of a request from its lines (line ends removed); ``HeadError`` when
    RFC 9112 has a server refuse it."""
    method, target, version = _request_line(request_line)
    head = Head(method, _origin_form(method, target), version, [_field(f) for f in field_lines])
    hosts = head.values("host")
    if len(hosts) > 1 or (version == "HTTP/1.1" and not hosts):
        raise HeadError(400, f"an {version} request needs one Host header; it has {len(hosts)} "
                             "(RFC 9112 §3.2)")  # fmt: skip
    if hosts and not _HOST.fullmatch(hosts[0]):
        raise HeadError(400, f"Host {hosts[0][:200]!r} is not a host")
    return head


def _line(raw: bytes) -> str:
    if not raw.endswith(b"\n"):
        raise HeadError(400, "the request head ended before its blank line")
    text = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
    return text.decode("latin-1")  # obs-text is allowed in values: any byte is a char


class StrictRequestHandler(BaseHTTPRequestHandler):
    """A ``BaseHTTPRequestHandler`` that reads the head by RFC 9112 (``parse_head``); a
    head that stops arriving for ``head_timeout`` seconds is a 408."""

    head_timeout: float = BODY_TIMEOUT
    #: Set by ``handle_one_request`` before ``parse_request`` (typeshed leaves it out).
    raw_requestline: bytes

    def parse_request(self) -> bool:
        self.command = ""
        self.requestline = ""
        self.request_version = "HTTP/1.1"  # an error answer gets a status line, always
        self.close_connection = True
        try:
            head = self.read_head()
        except HeadError as bad:
            self.send_error(bad.status, bad.message)
            return False
        if head is None:  # the client closed the connection between requests
            return False
        self.command, self.path, self.request_version = head.method, head.path, head.version
        self.requestline = f"{head.method} {head.path} {head.version}"
        self.headers = http.client.HTTPMessage()
        for name, value in head.fields:
            self.headers[name] = value  # appended: a repeated field keeps every value
        self.close_connection = not head.keep_alive
        expect = self.headers.get("expect", "").strip().lower()
        if expect == "100-continue" and head.version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def read_head(self) -> Head | None:
        raw = self.raw_requestline
        for _ in range(_BLANK_LINES):
            if raw not in (b"\r\n", b"\n"):
                break
            raw = self.rfile.readline(MAX_LINE + 1)
        if not raw:
            return None
        if len(raw) > MAX_LINE:
            raise HeadError(414, f"the request line is longer than {MAX_LINE} bytes")
        request_line = _line(raw)
        if request_line.startswith("HEAD "):  # a refusal to a HEAD must have no body either
            self.command = "HEAD"
        lines: list[str] = []
        self.connection.settimeout(self.head_timeout)
        try:
            while (raw := self.rfile.readline(MAX_LINE + 1)) not in (b"\r\n", b"\n"):
                if len(raw) > MAX_LINE:
                    raise HeadError(431, f"a header line is longer than {MAX_LINE} bytes")
                if len(lines) == MAX_FIELDS:
                    raise HeadError(431, f"the request has more than {MAX_FIELDS} header lines")
                lines.append(_line(raw))
        except TimeoutError:
            raise HeadError(408, f"the request head stopped arriving (nothing for "
                                 f"{self.head_timeout:g} seconds)") from None  # fmt: skip
        finally:
            with contextlib.suppress(OSError):
                self.connection.settimeout(None)
        return parse_head(request_line, lines)
