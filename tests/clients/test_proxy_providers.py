"""OpenAI and Gemini through the record/replay proxy (issue 31): each under its own
prefix (``/openai``, ``/gemini``), keyed as the in-process seam keys it (one fixture
name either way), recorded from the user's own base URL with the client's own key,
and a miss refused in the provider's error shape, naming the fixture file.

The loopback OpenAI and Gemini servers stand for the APIs; the real ``openai`` and
``google-genai`` SDKs are the clients.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import openai
import pytest
from google import genai
from google.genai import errors, types

import vcr_kit
from tests.support.helpers.env import environ_without_vcr, offline, run_captured, vcr_environ
from tests.support.helpers.paths import ROOT
from tests.support.servers.gemini_server import GeminiServer
from tests.support.servers.openai_server import OpenAIServer
from vcr_kit._core.credentials import REPLAY_API_KEY
from vcr_kit._integrations.session import vcr_session
from vcr_kit._ledger import cost as _cost
from vcr_kit._ledger.journal import Event
from vcr_kit._proxy.server import Proxy

CHILD = ROOT / "tests" / "support" / "children" / "provider_proxy_child.py"
OPENAI_MODEL = "gpt-5-mini"
GEMINI_MODEL = "gemini-2.5-flash"
OPENAI_KEY = "sk-proj-" + "p" * 48
GEMINI_KEY = "AIza" + "P" * 35
#: Every variable either SDK reads: each test sets its own.
PROVIDER_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "VCR_FAULTS",
    "VCR_HOSTS",
)
MISSING = "Fixture missing: {}. Re-run the tests with VCR_RECORD=1, then commit the result."


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[OpenAIServer, GeminiServer]]:
    """The loopback servers, and prices for the models (a model with none warns: an
    error here)."""
    with ExitStack() as stack:
        openai_server = stack.enter_context(OpenAIServer())
        gemini_server = stack.enter_context(GeminiServer())
        for model in (OPENAI_MODEL, GEMINI_MODEL, "text-embedding-3-small"):
            if _cost.price_for(model) is None:
                vcr_kit.set_price(model, vcr_kit.Price(1.0, None, None, 0.1, 2.0))
                stack.callback(_forget_price, model)
        yield openai_server, gemini_server


def _forget_price(model: str) -> None:
    with _cost.COST.lock:
        _cost.COST.overrides.pop(model, None)
        _cost.COST.prices_version += 1


def _environ(**values: str) -> Any:
    """No vcr_kit or provider variable, then ``values``."""
    stack = ExitStack()
    stack.enter_context(vcr_environ(VCR_REPORT="0"))
    for name in PROVIDER_VARS:
        os.environ.pop(name, None)
    os.environ.update(values)
    return stack


def _calls(chat: openai.OpenAI, gemini: genai.Client) -> list[Any]:
    """A chat, the models (a path several providers have) and a Gemini answer."""
    reply = chat.chat.completions.create(
        model=OPENAI_MODEL, messages=[{"role": "user", "content": "proxy test: hello"}]
    )
    models = sorted(model.id for model in chat.models.list())
    text = gemini.models.generate_content(model=GEMINI_MODEL, contents="proxy test: hi").text
    return [reply.choices[0].message.content, models, text]


def _proxy(fixtures: Path, mode: str, servers: tuple[OpenAIServer, GeminiServer]) -> Proxy:
    openai_server, gemini_server = servers
    upstreams = {"openai": openai_server.base_url, "gemini": gemini_server.url}
    return Proxy(
        mode=mode, fixtures_dir=fixtures, provider_upstreams=upstreams, log=lambda line: None
    )


def _clients(proxy: Proxy, key: str, gemini_key: str) -> tuple[openai.OpenAI, genai.Client]:
    urls = proxy.provider_base_urls
    chat = openai.OpenAI(base_url=urls["OPENAI_BASE_URL"], api_key=key, max_retries=0)
    options = types.HttpOptions(base_url=urls["GOOGLE_GEMINI_BASE_URL"])
    return chat, genai.Client(api_key=gemini_key, http_options=options)


@pytest.mark.inprocess
def test_a_fixture_recorded_through_the_proxy_replays_in_process_and_back(
    tmp_path: Path, servers: tuple[OpenAIServer, GeminiServer]
) -> None:
    openai_server, gemini_server = servers
    fixtures = tmp_path / "fixtures"
    with _environ(), _proxy(fixtures, "auto", servers) as proxy:
        chat, gemini = _clients(proxy, OPENAI_KEY, GEMINI_KEY)
        recorded = _calls(chat, gemini)
    names = sorted(path.name for path in fixtures.glob("*.json"))
    assert [re.sub(r"[0-9a-f]{12}\.json$", "", name) for name in names] == [
        "gemini-post-v1-models-gemini-2-5-flash-generatecontent-",
        "openai-get-v1-models-",  # keyed on OpenAI's host: its provider is known
        "openai-post-v1-chat-completions-",
    ]
    sent = len(openai_server.log) + len(gemini_server.log)
    every = b"".join(path.read_bytes() for path in fixtures.glob("*.json"))
    for secret in (OPENAI_KEY, GEMINI_KEY, "Bearer", "x-goog-api-key"):
        assert secret.encode() not in every

    # In process, on each provider's default host, with no key: the same fixtures.
    with _environ(CI="true"), vcr_session(fixtures_dir=fixtures) as journal:
        chat, gemini = openai.OpenAI(max_retries=0), genai.Client()
        assert _calls(chat, gemini) == recorded
        replayed = [path.name for path in journal.paths(Event.REPLAYED)]
    assert replayed == [names[2], names[1], names[0]]

    # And back: recorded in process through the user's base URLs, replayed by the proxy.
    recording = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": openai_server.base_url,
        "GEMINI_API_KEY": GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini_server.url,
    }
    with _environ(**recording), vcr_session(mode="auto", fixtures_dir=fixtures):
        chat = openai.OpenAI(max_retries=0)
        asked = chat.embeddings.create(model="text-embedding-3-small", input="and back")
    assert len(list(fixtures.glob("openai-post-v1-embeddings-*.json"))) == 1
    with _environ(CI="true"), _proxy(fixtures, "replay", servers) as proxy:
        chat, gemini = _clients(proxy, REPLAY_API_KEY, REPLAY_API_KEY)
        assert _calls(chat, gemini) == recorded
        again = chat.embeddings.create(model="text-embedding-3-small", input="and back")
    assert again.data[0].embedding == asked.data[0].embedding
    assert len(openai_server.log) + len(gemini_server.log) == sent + 1  # the embedding only


@pytest.mark.inprocess
def test_a_miss_is_refused_in_the_providers_shape_naming_the_file(
    tmp_path: Path, servers: tuple[OpenAIServer, GeminiServer]
) -> None:
    fixtures = tmp_path / "fixtures"
    with _environ(CI="true"), _proxy(fixtures, "replay", servers) as proxy:
        chat, gemini = _clients(proxy, REPLAY_API_KEY, REPLAY_API_KEY)
        with pytest.raises(openai.BadRequestError) as openai_miss:
            chat.embeddings.create(model="text-embedding-3-small", input="never")
        with pytest.raises(errors.ClientError) as gemini_miss:
            gemini.models.generate_content(model=GEMINI_MODEL, contents="never")
    (openai_file,) = re.findall(
        r"openai-post-v1-embeddings-[0-9a-f]{12}\.json", str(openai_miss.value)
    )
    gemini_file = re.findall(r"gemini-post-v1-models-\S+\.json", str(gemini_miss.value))[0]
    assert openai_miss.value.message == "Error code: 400 - " + MISSING.format(
        fixtures / openai_file
    )
    assert openai_miss.value.body == {
        "message": MISSING.format(fixtures / openai_file),
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert (gemini_miss.value.code, gemini_miss.value.status, gemini_miss.value.message) == (
        400,
        "INVALID_ARGUMENT",
        MISSING.format(fixtures / gemini_file),
    )


@pytest.mark.child
def test_run_points_each_sdk_at_its_prefix_records_and_replays_offline(
    tmp_path: Path, servers: tuple[OpenAIServer, GeminiServer]
) -> None:
    openai_server, gemini_server = servers
    fixtures = tmp_path / "fixtures"
    command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(fixtures), "--",
               sys.executable, str(CHILD)]  # fmt: skip
    base = {k: v for k, v in environ_without_vcr().items() if k not in PROVIDER_VARS}
    base.update(PYTHONPATH=str(ROOT), VCR_REPORT="0")
    recording = dict(
        base,
        OPENAI_API_KEY=OPENAI_KEY,
        OPENAI_BASE_URL=openai_server.base_url,
        GEMINI_API_KEY=GEMINI_KEY,
        GOOGLE_GEMINI_BASE_URL=gemini_server.url,
    )
    done = run_captured(command, cwd=ROOT, env=recording, timeout=120)
    assert done.returncode == 0, done.stderr
    recorded = json.loads(done.stdout)
    proxy_url = recorded["env"]["OPENAI_BASE_URL"].removesuffix("/openai/v1")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", proxy_url)
    assert recorded.pop("env") == {
        "OPENAI_BASE_URL": f"{proxy_url}/openai/v1",
        "GOOGLE_GEMINI_BASE_URL": f"{proxy_url}/gemini",
        "OPENAI_API_KEY": OPENAI_KEY,  # the child's own key, forwarded, never stored
        "GEMINI_API_KEY": GEMINI_KEY,
    }
    assert re.fullmatch(r"call_vcr[0-9a-f]{21}", recorded["tool"]["id"])  # the fixture's
    assert "sunny, 21 C" in recorded["tool"]["answer"]
    assert recorded["responses stream"] == "response.completed"
    files = {path.name: path.read_bytes() for path in fixtures.glob("*.json")}
    assert len(files) == 9
    every = b"".join(files.values())
    for secret in (OPENAI_KEY, GEMINI_KEY, "Bearer"):
        assert secret.encode() not in every
    sent = len(openai_server.log) + len(gemini_server.log)

    # CI: no key, no base URL, no network at all; the misses in each provider's shape.
    replaying = dict(base, CI="true", ASK_MISSING="1")
    done = run_captured([*offline(), *command], cwd=ROOT, env=replaying, timeout=120)
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)
    env = replayed.pop("env")
    assert [env["OPENAI_API_KEY"], env["GEMINI_API_KEY"]] == [REPLAY_API_KEY] * 2
    openai_miss, gemini_miss = replayed.pop("openai miss"), replayed.pop("gemini miss")
    assert replayed == recorded
    assert len(openai_server.log) + len(gemini_server.log) == sent
    assert {path.name: path.read_bytes() for path in fixtures.glob("*.json")} == files
    (openai_file,) = re.findall(r"openai-post-v1-embeddings-[0-9a-f]{12}\.json", openai_miss[2])
    assert openai_miss == [
        "BadRequestError",
        400,
        "Error code: 400 - " + MISSING.format(fixtures / openai_file),
    ]
    gemini_file = re.findall(r"gemini-post-v1-models-\S+\.json", gemini_miss[3])[0]
    assert gemini_miss == [
        "ClientError",
        400,
        "INVALID_ARGUMENT",
        MISSING.format(fixtures / gemini_file),
    ]
