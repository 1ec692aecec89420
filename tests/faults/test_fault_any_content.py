"""Any fixture content, any link: replay and every command answer with a vcr_kit error
or a report, never a traceback, and never read a file out of the fixtures folder
(issue 29, point 8, b and c).

Hypothesis takes real fixtures (an HTTP answer, a stream, a token count, a generic
fixture) and puts anything in them: any JSON value (huge numbers, NaN, wrong types,
deep lists) at any place of the document, or bytes that are not JSON or not UTF-8.
Then it replays each one (the HTTP client and the generic fixture) and runs
``check``, ``status``, ``show`` (and ``--json``), ``diff``, ``unused``, ``prune
--dry-run``, ``rekey --dry-run`` and ``drift --dry-run`` over the folder in this
process. The properties: replay gives the answer, a vcr_kit error, or the API error
the fixture holds; a command returns 0, 1 or 2, and nothing else escapes it.

Links: a fixture (or a folder of fixtures) that is a link to a file outside the folder
is reported by ``check``, refused by replay and by ``show``, never read or printed.
On main ``show`` printed the file a link led to, and replay served it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import anthropic
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import vcr_environ
from tests.support.helpers.examples import examples
from tests.support.helpers.loopback_case import create

pytestmark = pytest.mark.inprocess

PROMPT = "Anything at all"
SECRET_TEXT = "the content of a file outside the fixtures folder"

KEYS = st.sampled_from(["type", "status", "body", "events", "data", "content", "text", "usage",
                        "headers", "event", "model", "input_tokens", "$sdk", "$error",
                        "request", "response", "kind", "x"])  # fmt: skip
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["message", "message_start", "message_stop", "text", "$sdk",
                     "anthropic.types.Message"]),
)  # fmt: skip
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def paths_of(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(paths_of(child, (*here, key)))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found.extend(paths_of(child, (*here, i)))
    return found


def replaced(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[path[0]] = replaced(copy[path[0]], path[1:], new)  # type: ignore[index,call-overload]
    return copy


def dumps(value: Any) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


class AnyContentTest(unittest.TestCase):
    #: name -> (bytes of a real fixture, how to replay it)
    good: ClassVar[dict[str, tuple[bytes, str]]]

    @classmethod
    def setUpClass(cls) -> None:
        cls.env = vcr_environ(VCR_REPORT="0")
        cls.env.__enter__()
        from tests.support.servers.loopback_server import LoopbackServer

        server = LoopbackServer().start()
        cls.good = {}
        try:
            with tempfile.TemporaryDirectory() as scratch:
                folder = Path(scratch)
                with vcr_kit.client(
                    mode="record",
                    fixtures_dir=folder,
                    base_url=server.url,
                    api_key="sk-ant-test-" + "k" * 32,
                    max_retries=0,
                ) as client:
                    create(client, PROMPT)
                    client.messages.count_tokens(
                        model="claude-opus-4-7", messages=[{"role": "user", "content": PROMPT}]
                    )
                    with client.messages.stream(
                        model="claude-opus-4-7",
                        max_tokens=64,
                        messages=[{"role": "user", "content": PROMPT + " streamed"}],
                    ) as stream:
                        stream.get_final_message()
                with vcr_kit.fixture({"q": 1}, "answer", mode="record", fixtures_dir=folder) as f:
                    f.play(lambda: {"a": [1, 2.5, "x"]})
                for path in sorted(folder.glob("*.json")):
                    how = "generic" if path.name.startswith("answer-") else "http"
                    cls.good[path.name] = (path.read_bytes(), how)
        finally:
            server.stop()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.env.__exit__(None, None, None)

    def setUp(self) -> None:
        scratch = Path(tempfile.mkdtemp()).resolve()
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        self.root = scratch / "fixtures"
        self.outside = scratch / "outside"
        self.root.mkdir()
        self.outside.mkdir()

    # -- what is run over a folder ----------------------------------------------------

    def replay(self, name: str) -> None:
        """Replay ``name``: its answer, a vcr_kit error, or the API error it holds."""
        try:
            self.replay_raising(name)
        except vcr_kit.VCRError as exc:
            self.assertNotIn(SECRET_TEXT, str(exc))
        except anthropic.APIStatusError:
            pass  # an error answer the fixture holds, as the API gave it
        except Exception as exc:  # the property: nothing else, ever
            raise AssertionError(f"replay of {name}: {type(exc).__name__}: {exc}"[:3000]) from exc

    def replay_raising(self, name: str) -> None:
        how = self.good[name][1]
        if how == "generic":
            with vcr_kit.fixture({"q": 1}, "answer", mode="replay",
                                 fixtures_dir=self.root) as f:  # fmt: skip
                f.play(lambda: self.fail("replay called the function"))
            return
        with vcr_kit.client(
            mode="replay", fixtures_dir=self.root, base_url="http://127.0.0.1:9", max_retries=0
        ) as client:
            if name.startswith("post-v1-messages-count"):
                client.messages.count_tokens(
                    model="claude-opus-4-7", messages=[{"role": "user", "content": PROMPT}]
                )
            elif b'"stream": true' in self.good[name][0]:
                with client.messages.stream(
                    model="claude-opus-4-7",
                    max_tokens=64,
                    messages=[{"role": "user", "content": PROMPT + " streamed"}],
                ) as stream:
                    stream.get_final_message()
            else:
                create(client, PROMPT)

    def command(self, *argv: str) -> tuple[int, str]:
        try:
            status, out, err = cli(*argv)
        except Exception as exc:  # the property: nothing escapes a command
            raise AssertionError(f"{argv}: {type(exc).__name__}: {exc}"[:3000]) from exc
        self.assertIn(status, (0, 1, 2), (argv, out, err))
        self.assertNotIn("Traceback", out + err, argv)
        self.assertNotIn(SECRET_TEXT, out + err, argv)
        return status, out + err

    def every_command(self) -> str:
        root = str(self.root)
        files = sorted(str(p) for p in self.root.rglob("*.json"))
        _, checked = self.command("check", root)
        self.command("status", root)
        self.command("unused", root)
        self.command("prune", "--dry-run", root)
        self.command("rekey", "--dry-run", root)
        self.command("drift", "--dry-run", root)
        if files:
            self.command("show", *files)
            self.command("show", "--json", *files)
            for a, b in zip(files, files[1:] + files[:1], strict=True):
                self.command("diff", a, b)
        return checked

    # -- b: any content ---------------------------------------------------------------

    @settings(max_examples=examples(40), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
    @given(data=st.data(), which=st.integers(0, 3), raw=st.sampled_from(
        ["json", "json", "json", "bad utf-8", "not json", "cut", "utf-16"]))  # fmt: skip
    @example(data=None, which=1, raw="request list")
    def test_any_content_anywhere(self, data: Any, which: int, raw: str) -> None:
        names = sorted(self.good)
        name = names[which % len(names)]
        good = self.good[name][0]
        doc = json.loads(good)
        if raw == "request list":  # drift's plan read ``request.get``: AttributeError
            content = dumps(dict(doc, request=[1, 2]))
        elif raw == "json":
            path = data.draw(st.sampled_from(paths_of(doc)))
            content = dumps(replaced(doc, path, data.draw(json_values)))
        elif raw == "bad utf-8":
            at = data.draw(st.integers(0, len(good)))
            content = good[:at] + b"\xff\xc0" + good[at:]
        elif raw == "not json":
            content = data.draw(st.binary(max_size=40))
        elif raw == "cut":
            content = good[: data.draw(st.integers(0, len(good)))]
        else:
            content = good.decode().encode("utf-16")
        shutil.rmtree(self.root)  # one file per example: what it holds decides
        self.root.mkdir()
        (self.root / name).write_bytes(content)
        self.replay(name)
        self.every_command()

    # -- c: links out of the folder ---------------------------------------------------

    def link_out(self, name: str) -> Path:
        """``name`` in the folder: a link to a good fixture's copy outside, which also
        holds text that must never be printed."""
        doc = json.loads(self.good[name][0])
        if isinstance(doc.get("response"), dict) and isinstance(doc["response"].get("body"),
                                                                 dict):  # fmt: skip
            doc["response"]["body"]["note"] = SECRET_TEXT
        else:
            doc["note"] = SECRET_TEXT
        target = self.outside / name
        target.write_bytes(dumps(doc))
        link = self.root / name
        link.symlink_to(target)
        return link

    def test_a_link_out_is_never_read(self) -> None:
        for name in self.good:
            with self.subTest(name=name):
                link = self.link_out(name)
                self.replay_refused(name, link)
                _, checked = self.command("check", str(self.root))
                self.assertIn(
                    f"{link}: a link to {self.outside / name}, outside the fixtures folder; a "
                    "fixture must be a file in it",
                    checked,
                )
                status, shown = self.command("show", str(link))
                self.assertEqual(status, 1, shown)
                self.assertEqual(
                    shown,
                    f"vcr_kit: {link}: a link to {self.outside / name}, outside the fixtures "
                    "folder; a fixture must be a file in it\n",
                )
                self.every_command()
                link.unlink()

    def replay_refused(self, name: str, link: Path) -> None:
        with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
            self.replay_raising(name)
        self.assertEqual(
            str(caught.exception).split(" Replace")[0],
            f"Fixture {link} is a link to {self.outside / name}, outside the fixtures folder: "
            "vcr_kit never reads it.",
        )

    def test_a_folder_that_is_a_link_out_is_reported(self) -> None:
        (self.outside / "sub").mkdir()
        name = sorted(self.good)[0]
        (self.outside / "sub" / name).write_bytes(self.good[name][0])
        (self.root / "sub").symlink_to(self.outside / "sub")
        status, checked = self.command("check", str(self.root))
        self.assertEqual(status, 1, checked)
        self.assertIn(
            f"{self.root / 'sub'}: a link to {self.outside / 'sub'}, outside the fixtures "
            "folder; its fixtures are not read (move them into the folder)",
            checked,
        )
        self.every_command()
        # Named through the link, a file in it is outside the fixtures folder too.
        through = self.root / "sub" / name
        with mock.patch.dict(os.environ, {"VCR_FIXTURES_DIR": str(self.root)}):
            status, shown = self.command("show", str(through))
            self.assertEqual(status, 1, shown)
            self.assertEqual(
                shown,
                f"vcr_kit: {through}: a link to {self.outside / 'sub' / name}, outside the "
                "fixtures folder; a fixture must be a file in it\n",
            )
            status, _ = self.command("diff", str(through), str(through))
            self.assertEqual(status, 2)

    def test_a_link_inside_the_folder_is_read_as_its_file(self) -> None:
        name = sorted(self.good)[0]
        (self.root / "real.json").write_bytes(self.good[name][0])
        (self.root / name).symlink_to(self.root / "real.json")
        self.replay(name)  # no error: the same fixture
        status, shown = self.command("show", str(self.root / name))
        self.assertEqual(status, 0, shown)


if __name__ == "__main__":
    unittest.main()
