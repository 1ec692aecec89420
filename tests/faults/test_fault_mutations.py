"""Replay validates what it serves: mutated fixtures replay exactly or fail as corrupt.

Real fixtures are recorded from the loopback server (a JSON answer, an SSE stream and a
message cassette), then hypothesis mutates them the ways files get damaged: truncated,
a field of the wrong type, a missing field, the wrong kind, a bad encoding, git
conflict markers, huge values. Each mutated file is replayed; the property is that it
either replays exactly as the original did or raises ``FixtureCorruptError``, never
any other exception (on main: ``AttributeError`` inside the seam, retried as a
connection error, or a wrong answer served as a success).

The mutations target the fields vcr_kit's own format defines (the envelope: version,
kind, request, response, status, headers, body, events and their names and data,
usage); the API's payload inside a body or an event is stored verbatim, and an edit
there cannot be told from a deliberate one. A "wrong type" is a value of another JSON
type than the one in the file.
"""

from __future__ import annotations

import json
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers import fault_report
from tests.support.helpers.env import vcr_environ
from tests.support.helpers.examples import examples

pytestmark = pytest.mark.inprocess

EXAMPLES = examples(250)
WRONG_VALUES: list[Any] = [None, 0, -1, 1.5, True, "x", "", [], {}, [1], {"a": 1}, 10**30]
HUGE_VALUES: list[Any] = [10**400, -(10**30), "h" * 1_000_000, ["h"] * 100_000]
CONFLICT = b"<<<<<<< HEAD\n=======\n>>>>>>> other-branch\n"
_tried: dict[str, int] = {}


def normalized(value: Any) -> Any:
    """A replayed value without what differs on every replay (fresh message ids)."""
    if isinstance(value, dict):
        return {
            k: normalized(v)
            for k, v in value.items()
            if not (k == "id" and isinstance(v, str) and v.startswith("msg_"))
        }
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def envelope_paths(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Paths of the fields vcr_kit's format defines."""
    paths: list[tuple[Any, ...]] = [(k,) for k in doc]
    response = doc.get("response")
    if isinstance(response, dict):
        paths += [("response", k) for k in response]
        for name in response.get("headers", {}):
            paths.append(("response", "headers", name))
        for i, event in enumerate(response.get("events", [])):
            paths += [("response", "events", i), *[("response", "events", i, k) for k in event]]
    elif isinstance(response, list):
        paths += [("response", i) for i in range(len(response))]
        paths += [("response", i, k) for i, e in enumerate(response) for k in e]
    if isinstance(response, dict) and "$sdk" in response:
        paths += [("response", "$sdk"), ("response", "data")]
    for i, entry in enumerate(doc.get("usage", [])):
        paths += [("usage", i), ("usage", i, "model"), ("usage", i, "usage")]
        paths += [("usage", i, "usage", k) for k in entry.get("usage", {})]
    return paths


def replaced(doc: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    copy = json.loads(json.dumps(doc))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copy


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")


@st.composite
def mutations(draw: st.DrawFn, original: bytes) -> tuple[str, bytes]:
    doc = json.loads(original)
    kind = draw(
        st.sampled_from(
            ["truncate", "wrong type", "missing", "kind", "encoding", "conflict", "huge"]
        )
    )
    if kind == "truncate":
        return kind, original[: draw(st.integers(0, len(original) - 1))]
    if kind == "kind":
        value = draw(
            st.sampled_from(
                ["http", "message", "stream", "token_count", "generic", "HTTP", "", None, 1]
            )
        )
        return kind, dump(dict(doc, kind=value))
    if kind == "encoding":
        how = draw(st.sampled_from(["utf-16", "latin-1", "bom", "bad byte", "nul"]))
        text = original.decode("utf-8")
        if how == "utf-16":
            return kind, text.encode("utf-16")
        if how == "latin-1":  # an é inside a string, written as one byte
            return kind, text.replace('"', '"\u00e9', 1).encode("latin-1", "replace")
        if how == "bom":
            return kind, b"\xef\xbb\xbf" + original
        at = draw(st.integers(0, len(original)))
        return kind, original[:at] + (b"\xff\xfe" if how == "bad byte" else b"\x00") + original[at:]
    if kind == "conflict":
        lines = original.splitlines(keepends=True)
        at = draw(st.integers(0, len(lines)))
        return kind, b"".join(lines[:at]) + CONFLICT + b"".join(lines[at:])
    paths = envelope_paths(doc)
    if doc.get("kind") != "http":
        # A cassette's answer may be any JSON value: the answer as a whole has no wrong
        # type, and without its "$sdk" tag a stored Message is a valid plain object.
        paths = [p for p in paths if p not in (("response",), ("response", "$sdk"))]
    path = draw(st.sampled_from(paths))
    if kind == "missing":
        return f"{kind} {path}", dump(replaced(doc, path, None, delete=True))
    current = _at(doc, path)
    if kind == "wrong type":  # a value of another JSON type than the one there
        pool = [v for v in WRONG_VALUES if _json_type(v) != _json_type(current)]
    else:
        pool = HUGE_VALUES
    value = draw(st.sampled_from(pool))
    return f"{kind} {path}", dump(replaced(doc, path, value))


class MutatedFixturesTest(unittest.TestCase):
    server: ClassVar[Any]
    folder: ClassVar[Path]
    originals: ClassVar[dict[str, tuple[Path, bytes, Any]]]

    @classmethod
    def setUpClass(cls) -> None:
        from tests.support.servers.loopback_server import LoopbackServer

        cls.env = vcr_environ(VCR_REPORT="0")
        cls.env.__enter__()
        cls.server = LoopbackServer().start()
        import tempfile

        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.tmp.name).resolve()
        key = recording_key()
        with vcr_kit.client(
            mode="record", fixtures_dir=cls.folder / "json", base_url=cls.server.url, api_key=key
        ) as client:
            cls.ask(client)
        with vcr_kit.client(
            mode="record", fixtures_dir=cls.folder / "sse", base_url=cls.server.url, api_key=key
        ) as client:
            cls.ask_stream(client)
        with anthropic.Anthropic(base_url=cls.server.url, api_key=key) as client:
            with vcr_kit.cassette(USER, mode="record", fixtures_dir=cls.folder / "cassette") as c:
                c.play(lambda: cls.ask(client))
        cls.originals = {}
        for name, replay in (
            ("json", cls.replay_json),
            ("sse", cls.replay_sse),
            ("cassette", cls.replay_cassette),
        ):
            (path,) = (cls.folder / name).glob("*.json")
            cls.originals[name] = (path, path.read_bytes(), replay())
        cls.server.reset_log()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.tmp.cleanup()
        cls.env.__exit__(None, None, None)
        total = sum(_tried.values())
        fault_report.note(
            f"mutated fixtures: {total} cases replayed ("
            + ", ".join(f"{k} {v}" for k, v in sorted(_tried.items()))
            + "), each identical to the original or FixtureCorruptError"
        )

    # -- recording and replaying ------------------------------------------------------

    @staticmethod
    def ask(client: anthropic.Anthropic) -> Any:
        return client.messages.create(model=MODEL, max_tokens=32, messages=USER)

    @staticmethod
    def ask_stream(client: anthropic.Anthropic) -> list[Any]:
        return list(client.messages.create(model=MODEL, max_tokens=32, messages=USER, stream=True))

    @classmethod
    def replaying(cls, name: str) -> anthropic.Anthropic:
        return vcr_kit.client(
            mode="replay", fixtures_dir=cls.folder / name, base_url=cls.server.url, max_retries=0
        )

    @classmethod
    def replay_json(cls) -> Any:
        with cls.replaying("json") as client:
            return normalized(cls.ask(client).to_dict())

    @classmethod
    def replay_sse(cls) -> Any:
        with cls.replaying("sse") as client:
            return normalized([event.to_dict() for event in cls.ask_stream(client)])

    @classmethod
    def replay_cassette(cls) -> Any:
        def never() -> Any:
            raise AssertionError("the cassette called the API in replay mode")

        with vcr_kit.cassette(USER, mode="replay", fixtures_dir=cls.folder / "cassette") as c:
            value = c.play(never)
        return normalized(value.to_dict() if hasattr(value, "to_dict") else value)

    def check(self, name: str, replay: Callable[[], Any], mutation: tuple[str, bytes]) -> None:
        path, original, expected = self.originals[name]
        label, data = mutation
        _tried[name] = _tried.get(name, 0) + 1
        path.write_bytes(data)
        try:
            got = replay()
        except vcr_kit.FixtureCorruptError as exc:
            self.assertEqual(exc.path, path, label)
        except Exception as exc:  # the property: nothing else, ever
            raise AssertionError(f"{label}: {type(exc).__name__}: {exc}"[:2000]) from exc
        else:
            self.assertEqual(got, expected, f"{label}: replayed, but not as the original")
        finally:
            path.write_bytes(original)
        self.assertEqual(self.server.log, [], label)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def test_json_answer(self, data: st.DataObject) -> None:
        self.check("json", self.replay_json, data.draw(mutations(self.originals["json"][1])))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def test_sse_answer(self, data: st.DataObject) -> None:
        self.check("sse", self.replay_sse, data.draw(mutations(self.originals["sse"][1])))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def test_message_cassette(self, data: st.DataObject) -> None:
        original = self.originals["cassette"][1]
        self.check("cassette", self.replay_cassette, data.draw(mutations(original)))


USER = [{"role": "user", "content": "What is the weather in Paris? [[cache]]"}]


def tearDownModule() -> None:
    fault_report.print_for_unittest("mutated")


if __name__ == "__main__":
    unittest.main()
