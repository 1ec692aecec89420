"""``show``, ``check``, ``rekey``, ``unused``, ``prune``, ``drift`` and the summary on
OpenAI and Gemini fixtures (issue 31), each verb's ``main(...)`` run in this process.

The fixtures are real recordings: the real ``openai`` and ``google-genai`` SDKs,
built as in production from ``OPENAI_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL`` and
their keys, under a ``VCRTestCase``, against the loopback server of
``provider_loopback.py``; once for the module. Drift re-sends them to the same
server after it "moved" (its ``[[drift:...]]`` markers), to meet each verdict.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any, Final

import pytest

import vcr_kit
from tests.cli.provider_loopback import ProviderServer
from tests.support.helpers.cli_support import KEY, cli, record
from tests.support.helpers.env import patch_env, start_server, temp_dir, working_dir
from vcr_kit._ledger import journal
from vcr_kit._ledger.cost import COST, price_for
from vcr_kit._ledger.prices import Price
from vcr_kit._ledger.summary import summary_line

pytestmark = [pytest.mark.inprocess, pytest.mark.providers]

OPENAI_KEY: Final = "sk-proj-" + "T" * 48
GEMINI_KEY: Final = "AIza" + "G" * 35
GPT: Final = "gpt-4o-mini"
GEMINI: Final = "gemini-2.5-flash"
#: Prices for the test (the real rows may be in the table already).
PRICES: Final = {
    GPT: Price(0.15, None, None, 0.075, 0.60, source="test", checked="2026-12-03"),
    GEMINI: Price(0.30, None, None, 0.03, 2.50, source="test", checked="2026-12-03"),
    "text-embedding-3-small": Price(0.02, None, None, None, 0, source="test", checked="2026-12-03"),
}
PROVIDER_VARS: Final = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "VCR_HOSTS",
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
)  # fmt: skip
WEATHER: Final = {"type": "function", "function": {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}


def calls() -> None:
    """Every call shape whose fixture the verbs meet, each with the drift it will see."""
    import openai
    from google import genai
    from google.genai import types

    client = openai.OpenAI(max_retries=0)
    chat = client.chat.completions
    chat.create(model=GPT, messages=[{"role": "user", "content": "Say hi. [[drift:reword]]"}])
    chat.create(model=GPT, tools=[WEATHER],  # type: ignore[list-item]
                messages=[{"role": "user", "content": "Weather in Paris? [[drift:tool]]"}])
    with chat.stream(model=GPT, messages=[{"role": "user", "content": "Count to three."}],
                     stream_options={"include_usage": True}) as stream:
        stream.get_final_completion()
    first = client.responses.create(model=GPT, input="Tell a story. [[drift:truncate]]")
    client.responses.create(model=GPT, input="And then?", previous_response_id=first.id)
    with client.responses.stream(model=GPT, input="Stream me.") as events:
        events.get_final_response()
    client.embeddings.create(model="text-embedding-3-small", input=["one", "two words"])
    google = genai.Client()  # kept: the client closes its connections when collected
    gemini = google.models
    gemini.generate_content(model=GEMINI, contents="Hello there. [[drift:field]]")
    declared = types.FunctionDeclaration(
        name="get_weather",
        parameters_json_schema={"type": "object", "properties": {"location": {"type": "string"}}},
    )
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declared])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    gemini.generate_content(model=GEMINI, contents="Weather in Paris?", config=config)
    for _ in gemini.generate_content_stream(model=GEMINI, contents="Stream words please."):
        pass


#: The module the inner test runs' cases say they are of: one unittest does not know,
#: so that running them never runs this module's setUpModule and tearDownModule again.
OWN_RUN: Final = "vcr_kit_cli_providers_run"
#: The files ``calls`` records, by what they hold.
NAMES: dict[str, str] = {}
RECORDED_JOURNAL: dict[str, int] = {}


class Shared:
    """What the module's tests share: the server, and the folder of the recording."""

    server: ProviderServer
    folder: Path


SHARED = Shared()


def _by_content(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.glob("*.json")):
        request = json.loads(path.read_bytes())["request"]
        text = json.dumps(request["body"])
        for label, needle in (
            ("chat", "Say hi."), ("chat_tool", "Weather in Paris? [[drift:tool]]"),
            ("chat_stream", "Count to three."), ("responses", "Tell a story."),
            ("chained", "And then?"), ("responses_stream", "Stream me."),
            ("embeddings", "two words"), ("gemini", "Hello there."),
            ("gemini_tool", "Weather in Paris?\""), ("gemini_stream", "Stream words please."),
        ):  # fmt: skip
            if needle in text and label not in found:
                found[label] = path.name
                break
    return found


def setUpModule() -> None:
    SHARED.server = ProviderServer().start()
    SHARED.folder = Path(tempfile.mkdtemp(prefix="vcr-cli-providers-"))
    saved = dict(os.environ)
    for name in PROVIDER_VARS:
        os.environ.pop(name, None)
    os.environ.update(
        OPENAI_API_KEY=OPENAI_KEY, GEMINI_API_KEY=GEMINI_KEY, VCR_MODE="auto", VCR_REPORT="0",
        OPENAI_BASE_URL=SHARED.server.url + "/v1", GOOGLE_GEMINI_BASE_URL=SHARED.server.url,
    )  # fmt: skip
    for model, price in PRICES.items():
        if price_for(model) is None:
            vcr_kit.set_price(model, price)
    folder = SHARED.folder

    class Recording(vcr_kit.VCRTestCase):
        __module__ = OWN_RUN
        vcr_fixtures_dir = folder

        def test_calls(self) -> None:
            calls()
            RECORDED_JOURNAL["recorded"] = self.vcr_journal.count(journal.Event.RECORDED)

    try:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Recording)
        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if not result.wasSuccessful():
        raise AssertionError("\n".join(text for _, text in [*result.errors, *result.failures]))
    NAMES.update(_by_content(SHARED.folder))
    assert len(NAMES) == 10, NAMES


def tearDownModule() -> None:
    COST.reset()  # the prices this module set must not reach the next module's tests
    SHARED.server.stop()
    shutil.rmtree(SHARED.folder, ignore_errors=True)


class ProviderCase(unittest.TestCase):
    """A copy of the recorded fixtures in ``self.fixtures``, no provider variable set."""

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        for name in (*PROVIDER_VARS, "CI"):
            os.environ.pop(name, None)
        self.fixtures = temp_dir(self) / "fixtures"
        shutil.copytree(SHARED.folder, self.fixtures)
        SHARED.server.drifting = False
        SHARED.server.log.clear()

    def path(self, label: str) -> str:
        return str(self.fixtures / NAMES[label])

    def doc(self, label: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.fixtures / NAMES[label]).read_bytes())
        return loaded

    def bytes_of(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.fixtures.glob("*.json"))}


class ShowTest(ProviderCase):
    def show(self, label: str) -> list[str]:
        status, out, err = cli("show", self.path(label))
        self.assertEqual((status, err), (0, ""), out)
        return out.splitlines()[1:]  # the file's path first

    def test_chat_completions_plain_with_tools_and_streamed(self) -> None:
        self.assertEqual(self.show("chat")[:11], [
            "kind: http", "provider: OpenAI", "--- request", "POST /v1/chat/completions",
            f"parameters: model={GPT}", "[user] Say hi. [[drift:reword]]", "--- answer",
            "status 200", f"model: {GPT}", "[assistant] Echo: Say hi.", "finish_reason: stop",
        ])  # fmt: skip
        self.assertRegex(
            "\n".join(self.show("chat")[11:]),
            rf"^--- usage\nusage: {GPT}: input_tokens=6, output_tokens=5, "
            r"cache_read_input_tokens=0; \$0\.0000\d+$",
        )
        tool = self.show("chat_tool")
        self.assertIn("tools: get_weather", tool)
        self.assertRegex(
            "\n".join(tool),
            r'\n\[assistant calls get_weather \(call_vcr[0-9a-f]+\)\] \{"location": "Paris"\}\n'
            r"finish_reason: tool_calls\n",
        )
        stream = self.show("chat_stream")
        self.assertIn("(a stream of 8 events, joined)", stream)
        self.assertIn("[assistant] Echo: Count to three.", stream)
        self.assertIn("finish_reason: stop", stream)

    def test_responses_chained_and_streamed(self) -> None:
        first = self.doc("responses")["response"]["body"]["id"]
        chained = self.show("chained")
        self.assertIn(f"previous_response_id: {first}", chained)
        self.assertIn("[user] And then?", chained)
        self.assertIn("[assistant] Echo: And then?", chained)
        self.assertIn("finish_reason: completed", chained)
        self.assertRegex("\n".join(chained), r"\nresponse id: resp_vcr[0-9a-f]+\n")
        stream = self.show("responses_stream")
        self.assertIn("(a stream of 6 events, joined)", stream)
        self.assertIn("[assistant] Echo: Stream me.", stream)

    def test_embeddings_say_their_count_and_dimensions_never_the_numbers(self) -> None:
        lines = self.show("embeddings")
        self.assertIn("[embed] two words", lines)
        self.assertIn("embeddings: 2 of 8 dimensions (vectors not shown)", lines)
        vectors = [v["embedding"] for v in self.doc("embeddings")["response"]["body"]["data"]]
        self.assertFalse([line for line in lines if any(str(v) in line for v in vectors)])

    def test_gemini_contents_candidates_function_calls_and_chunks(self) -> None:
        self.assertEqual(self.show("gemini")[:9], [
            "kind: http", "provider: Google Gemini", "--- request",
            f"POST /v1beta/models/{GEMINI}:generateContent".replace("v1beta", self.version()),
            "[user] Hello there. [[drift:field]]", "--- answer", "status 200",
            f"model: {GEMINI}", "[assistant] Echo: Hello there.",
        ])  # fmt: skip
        tool = self.show("gemini_tool")
        self.assertIn("tools: get_weather", tool)
        self.assertIn('[assistant calls get_weather] {"location": "Paris"}', tool)
        self.assertIn("finish_reason: STOP", tool)
        stream = self.show("gemini_stream")
        self.assertIn("query: alt=sse", stream)
        self.assertIn("(a stream of 4 events, joined)", stream)
        self.assertIn("[assistant] Echo: Stream words please.", stream)
        self.assertRegex(stream[-1], rf"^usage: {GEMINI}: input_tokens=6, .*; \$0\.0000\d+$")

    def version(self) -> str:
        return str(self.doc("gemini")["request"]["path"]).split("/")[1]


class CheckRekeyTest(ProviderCase):
    def test_recorded_fixtures_are_clean_and_rekey_leaves_them_byte_for_byte(self) -> None:
        before = self.bytes_of()
        status, out, _ = cli("check", str(self.fixtures))
        self.assertEqual((status, out.splitlines()[-1]),
                         (0, "vcr_kit: 10 fixtures checked, 0 problems"), out)
        status, out, _ = cli("rekey", str(self.fixtures))
        self.assertEqual(
            (status, out),
            (0, "vcr_kit: 10 fixtures; 0 renamed, 0 merged, 0 rewritten; 0 problems\n"),
        )
        self.assertEqual(self.bytes_of(), before)

    def test_check_reports_keys_and_provider_names_and_rekey_fixes_the_names(self) -> None:
        before = self.bytes_of()
        folder = self.fixtures
        # A fixture recorded at a gateway before vcr_kit knew OpenAI: no provider anywhere.
        doc = self.doc("chat")
        del doc["request"]["provider"]
        old = "post-v1-chat-completions-0123456789ab.json"
        (folder / NAMES["chat"]).unlink()
        (folder / old).write_text(json.dumps(doc, indent=2), encoding="utf-8")
        # Another provider's prefix, and none.
        misnamed = NAMES["responses"].replace("openai", "gemini")
        (folder / NAMES["responses"]).rename(folder / misnamed)
        (folder / NAMES["embeddings"]).rename(folder / NAMES["embeddings"].removeprefix("openai-"))
        # A key= a hand edit left in a stored query.
        doc = self.doc("gemini")
        doc["request"]["query"] = [["key", GEMINI_KEY]]
        (folder / NAMES["gemini"]).write_text(json.dumps(doc, indent=2), encoding="utf-8")

        status, out, _ = cli("check", str(folder))
        self.assertEqual(status, 1)
        lines = sorted(line.replace(f"{folder}/", "") for line in out.splitlines()[:-1])
        self.assertEqual(lines, sorted([
            f"{NAMES['embeddings'].removeprefix('openai-')}: name: an OpenAI fixture's name "
            "starts with openai- (the provider is part of the key): it would miss; vcr_kit "
            f"rekey renames it to {NAMES['embeddings']}",
            f"{NAMES['gemini']}: contains a Google API key (AIza...) at request.query[0][1]; "
            "remove it and record again",
            f"{NAMES['gemini']}: request.query: a key= parameter holds a credential, which is "
            "never stored nor keyed: vcr_kit rekey drops it and renames the file (revoke the "
            "key if the file was ever shared)",
            f"{NAMES['responses'].replace('openai', 'gemini')}: name: an OpenAI fixture's name "
            "starts with openai- (the provider is part of the key): it would miss; vcr_kit "
            f"rekey renames it to {NAMES['responses']}",
            f'{old}: request: no "provider", but /v1/chat/completions is OpenAI\'s (recorded '
            "before vcr_kit knew OpenAI): it would miss; vcr_kit rekey adds it and renames "
            "the file",
        ]))  # fmt: skip
        self.assertEqual(out.splitlines()[-1], "vcr_kit: 10 fixtures checked, 5 problems")

        status, out, _ = cli("rekey", str(folder))
        self.assertEqual(status, 0, out)
        self.assertEqual(
            out.splitlines()[-1],
            "vcr_kit: 10 fixtures; 3 renamed, 0 merged, 1 rewritten; 0 problems",
        )
        self.assertEqual(self.bytes_of(), before)  # each as it was recorded, byte for byte
        status, out, _ = cli("check", str(folder))
        self.assertEqual((status, out), (0, "vcr_kit: 10 fixtures checked, 0 problems\n"))

    def test_check_finds_a_provider_key_in_an_answer(self) -> None:
        doc = self.doc("chat")
        doc["response"]["body"]["choices"][0]["message"]["content"] = f"Here: {OPENAI_KEY}"
        (self.fixtures / NAMES["chat"]).write_text(json.dumps(doc), encoding="utf-8")
        status, out, _ = cli("check", str(self.fixtures))
        self.assertEqual(status, 1)
        self.assertIn(
            f"{NAMES['chat']}: contains an OpenAI key (sk-proj-...) at "
            "response.body.choices[0].message.content; remove it and record again",
            out,
        )


class UnusedPruneTest(ProviderCase):
    def test_unused_lists_and_prune_moves_provider_fixtures_the_last_run_did_not_use(
        self,
    ) -> None:
        used = [NAMES[label] for label in ("chat", "gemini_stream", "responses")]
        past = 1000.0
        for path in self.fixtures.glob("*.json"):
            os.utime(path, (past, past))
        record = {
            "run": "run-01", "pid": 1, "started": 2000.0, "finished": 2005.0,
            "runner": "pytest", "command": "pytest", "complete": True,
            "why": "every one of the 3 collected tests passed", "hard": False, "used": used,
            "tests": {}, "test_files": {},
        }  # fmt: skip
        runs = self.fixtures / ".runs" / "run-01"
        runs.mkdir(parents=True)
        (runs / "1.json").write_text(json.dumps(record), encoding="utf-8")
        unused = sorted(set(NAMES.values()) - set(used))
        with working_dir(self.fixtures.parent):
            status, out, err = cli("unused")
            self.assertEqual((status, err), (0, ""), out)
            self.assertEqual(out.splitlines()[:7], [f"fixtures/{name}" for name in unused])
            self.assertEqual(out.splitlines()[7],
                             "vcr_kit: 7 of 10 fixtures unused by the last complete run")
            status, out, _ = cli("prune", "--yes")
        self.assertEqual(status, 0, out)
        self.assertEqual(sorted(p.name for p in self.fixtures.glob("*.json")), sorted(used))
        trash = sorted(p.name for p in (self.fixtures / ".trash").rglob("*.json"))
        self.assertEqual([name for name in trash if name in unused], unused)


class DriftTest(ProviderCase):
    def live_env(self, **more: str) -> None:
        os.environ.update(
            OPENAI_API_KEY=OPENAI_KEY, GEMINI_API_KEY=GEMINI_KEY,
            OPENAI_BASE_URL=SHARED.server.url + "/v1",
            GOOGLE_GEMINI_BASE_URL=SHARED.server.url, **more,
        )  # fmt: skip

    def drift(self, *args: str) -> tuple[int, dict[str, Any], str, str]:
        report = temp_dir(self) / "report.json"
        status, out, err = cli("drift", str(self.fixtures), "--allow-ci", "--json",
                               str(report), *args)  # fmt: skip
        verdicts = {}
        if report.exists():
            for row in json.loads(report.read_text())["fixtures"]:
                label = next(k for k, v in NAMES.items() if v == row["fixture"])
                verdicts[label] = (row["verdict"], row["reasons"])
        return status, verdicts, out, err

    maxDiff = None

    def test_each_verdict_over_each_provider_with_its_own_key(self) -> None:
        url = SHARED.server.url
        self.live_env()
        SHARED.server.drifting = True
        status, verdicts, out, err = self.drift()
        self.assertEqual((status, err), (1, ""), out)
        self.assertEqual(verdicts, {
            "chat": ("benign", ["benign: other wording in block 0 (text)"]),
            "chat_tool": ("regression", [
                "regression: tool get_weather input {location: string} -> {place: object}"]),
            "chat_stream": ("identical", []),
            "responses": ("regression", [
                "regression: truncated by the token limit (finish reason completed -> "
                "incomplete: max_output_tokens)"]),
            "chained": ("skipped", [
                "it continues a response the recording created (previous_response_id "
                f"{self.doc('responses')['response']['body']['id']}): the live API has none"]),
            "responses_stream": ("identical", []),
            "embeddings": ("identical", []),
            "gemini": ("api drift", ["api drift: new field modelStatus (object)"]),
            "gemini_tool": ("identical", []),
            "gemini_stream": ("identical", []),
        })  # fmt: skip
        self.assertIn(
            f"1 api drift; sent to {url} (Google Gemini), {url} (OpenAI)\n", out
        )
        self.assertEqual(len(SHARED.server.log), 9)
        for _method, path, headers, _body in SHARED.server.log:
            self.assertNotIn("anthropic-version", headers)
            self.assertNotIn("x-api-key", headers)
            if "/models/" in path:
                self.assertEqual(headers["x-goog-api-key"], GEMINI_KEY)
                self.assertNotIn("authorization", headers)
            else:
                self.assertEqual(headers["authorization"], f"Bearer {OPENAI_KEY}")
        streamed = [p for _, p, _, _ in SHARED.server.log if "streamGenerateContent" in p]
        self.assertEqual(streamed, [f"/{self.version()}/models/{GEMINI}:streamGenerateContent"
                                    "?alt=sse"])

    def version(self) -> str:
        return str(self.doc("gemini")["request"]["path"]).split("/")[1]

    def test_a_provider_without_its_key_is_said_and_the_others_still_run(self) -> None:
        url = SHARED.server.url
        self.live_env()
        del os.environ["OPENAI_API_KEY"]
        status, verdicts, out, err = self.drift()
        self.assertEqual(status, 0, out + err)
        self.assertEqual(
            err,
            "vcr_kit: no OpenAI key: set OPENAI_API_KEY or AZURE_OPENAI_API_KEY to send its 6 "
            f"recorded requests to {SHARED.server.url}; skipped\n",
        )
        self.assertEqual({k: v[0] for k, v in verdicts.items() if k.startswith("gemini")},
                         dict.fromkeys(("gemini", "gemini_tool", "gemini_stream"), "identical"))
        self.assertEqual(verdicts["chat"], (
            "skipped", ["no OpenAI key: set OPENAI_API_KEY or AZURE_OPENAI_API_KEY"]))
        self.assertEqual([p for _, p, _, _ in SHARED.server.log if "/models/" not in p], [])

        os.environ.pop("GEMINI_API_KEY")
        status, verdicts, out, err = self.drift()
        self.assertEqual(status, 2)
        self.assertEqual(
            err,
            "vcr_kit: drift: no API key for any selected request: no Google Gemini key: set "
            f"GEMINI_API_KEY or GOOGLE_API_KEY to send its 3 recorded requests to {url}; "
            "skipped; no OpenAI key: set OPENAI_API_KEY or AZURE_OPENAI_API_KEY to send its 6 "
            f"recorded requests to {SHARED.server.url}; skipped\n",
        )

    def test_anthropic_and_the_providers_in_one_folder_each_with_its_own_key(self) -> None:
        anthropic = start_server(self)
        record(anthropic.url, self.fixtures, ["Hello from Claude."])
        anthropic.log.clear()
        claude = [p.name for p in self.fixtures.glob("post-v1-messages-*.json")]
        self.assertEqual(len(claude), 1)
        self.live_env(ANTHROPIC_BASE_URL=anthropic.url)
        args = ("--select", claude[0], "--select", NAMES["chat"], "--select", NAMES["gemini"])

        status, out, err = cli("drift", str(self.fixtures), "--allow-ci", *args)
        self.assertEqual(status, 0, out + err)
        self.assertEqual(err, "vcr_kit: no Anthropic key: set ANTHROPIC_API_KEY to send its 1 "
                              f"recorded request to {anthropic.url}; skipped\n")  # fmt: skip
        self.assertIn("2 identical; sent to ", out)
        self.assertEqual(anthropic.log, [])

        os.environ["ANTHROPIC_API_KEY"] = KEY
        status, out, err = cli("drift", str(self.fixtures), "--allow-ci", *args)
        self.assertEqual((status, err), (0, ""), out)
        url = SHARED.server.url
        self.assertIn(f"3 identical; sent to {url} (Google Gemini), {url} (OpenAI), "
                      f"{anthropic.url} (Anthropic)\n", out)
        (sent,) = anthropic.log
        self.assertEqual((sent.headers["x-api-key"], sent.headers["anthropic-version"]),
                         (KEY, "2023-06-01"))
        self.assertNotIn("authorization", sent.headers)

    def test_update_re_records_a_changed_provider_answer_in_place(self) -> None:
        self.live_env()
        SHARED.server.drifting = True
        before = self.bytes_of()
        status, verdicts, out, err = self.drift(
            "--select", NAMES["chat"], "--select", NAMES["gemini_stream"], "--update"
        )
        self.assertEqual((status, err), (0, ""), out)
        self.assertEqual({k: v[0] for k, v in verdicts.items()},
                         {"chat": "benign", "gemini_stream": "identical"})
        self.assertIn("vcr_kit: wrote 1 fixture\n", out)
        message = self.doc("chat")["response"]["body"]["choices"][0]["message"]
        self.assertEqual(message["content"], "You said it other ways: Say hi.")
        after = self.bytes_of()
        self.assertEqual({n for n in after if after[n] != before[n]}, {NAMES["chat"]})
        self.assertNotIn(OPENAI_KEY, after[NAMES["chat"]].decode())
        status, out, _ = cli("check", str(self.fixtures))
        self.assertEqual((status, out), (0, "vcr_kit: 10 fixtures checked, 0 problems\n"))

    def test_kind_picks_provider_requests_by_what_they_ask(self) -> None:
        url = SHARED.server.url
        self.live_env()
        status, out, err = cli("drift", str(self.fixtures), "--dry-run", "--kind", "stream")
        self.assertEqual((status, err), (0, ""), out)
        streams = sorted(NAMES[k] for k in ("chat_stream", "responses_stream", "gemini_stream"))
        self.assertEqual([line.split()[:2] for line in out.splitlines()[1:4]],
                         [["stream", name] for name in streams])
        self.assertRegex(out.splitlines()[-1], rf"^dry run: would send 3 requests to {url} "
                         rf"\(Google Gemini\), {url} \(OpenAI\), estimated \$0\.\d{{4}}; "
                         "nothing was sent$")
        self.assertEqual(SHARED.server.log, [])

    def test_model_asks_another_model_in_the_body_or_the_path(self) -> None:
        self.live_env()
        into = temp_dir(self) / "into"
        status, _, out, err = self.drift(
            "--select", NAMES["gemini_tool"], "--select", NAMES["chat_tool"],
            "--model", f"{GEMINI}=gemini-2.5-pro", "--model", f"{GPT}=gpt-4.1", "--into",
            str(into),
        )  # fmt: skip
        self.assertEqual((status, err), (0, ""), out)
        paths = [p for _, p, _, _ in SHARED.server.log]
        self.assertIn(f"/{self.version()}/models/gemini-2.5-pro:generateContent", paths)
        models = [b.get("model") for _, p, _, b in SHARED.server.log if "chat" in p]
        self.assertEqual(models, ["gpt-4.1"])
        self.assertIn(
            f"{NAMES['gemini_tool']}: its request with model {GEMINI} -> gemini-2.5-pro "
            "written to ", out,
        )
        written = sorted(p.name for p in into.glob("*.json"))
        self.assertEqual(len(written), 2, written)
        self.assertTrue(any(n.startswith("gemini-post-") and "gemini-2-5-pro" in n
                            for n in written), written)  # fmt: skip
        status, out, _ = cli("check", str(into))
        self.assertEqual((status, out.splitlines()[-1]),
                         (0, "vcr_kit: 2 fixtures checked, 0 problems"), out)


class SummaryTest(ProviderCase):
    def test_the_journal_and_the_summary_count_provider_calls_with_their_cost(self) -> None:
        self.assertEqual(RECORDED_JOURNAL["recorded"], 10)
        journal.JOURNAL.reset()
        self.addCleanup(journal.JOURNAL.reset)
        os.environ["CI"] = "true"  # replay: no key, no base URL
        folder = self.fixtures
        seen: dict[str, Any] = {}

        class Replaying(vcr_kit.VCRTestCase):
            __module__ = OWN_RUN
            vcr_fixtures_dir = folder

            def test_calls(self) -> None:
                calls()
                self.assertReplayed(10)
                self.assertNoLiveCalls()
                seen["cost"] = sum(e.cost_usd for e in self.vcr_journal.entries)

        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Replaying)
        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
        self.assertTrue(result.wasSuccessful(), [*result.errors, *result.failures])
        self.assertEqual(SHARED.server.log, [])
        self.assertGreater(seen["cost"], 0)
        line = summary_line()
        assert line is not None
        self.assertRegex(line, r"^vcr_kit: 10 replayed, 0 recorded, 0 missing; "
                               rf"\${seen['cost']:.4f} of API calls replayed")
