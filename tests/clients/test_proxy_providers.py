"""OpenAI and Gemini through the record/replay proxy (issue 31): each under its own
prefix (``/openai``, ``/gemini``), keyed as the in-process seam keys it (one fixture
name either way), recorded from the user's own base URL with the client's own key,
and a miss refused in the provider's error shape, naming the fixture file.

The loopback OpenAI and Gemini servers stand for the APIs; the real ``openai`` and
``google-genai`` SDKs are the clients.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from google import genai
from google.genai import errors, types

import vcr_kit
from tests.support.children import provider_proxy_child
from tests.support.helpers.env import environ_without_vcr, offline, run_captured, vcr_environ
from tests.support.helpers.gemini_releases import API_VERSION
from tests.support.helpers.openai_releases import status_error_texts
from tests.support.helpers.paths import ROOT
from tests.support.servers.gemini_server import GeminiServer
from tests.support.servers.openai_server import OpenAIServer
from vcr_kit._core.credentials import REPLAY_API_KEY
from vcr_kit._integrations.session import vcr_session
from vcr_kit._ledger import cost as _cost
from vcr_kit._ledger.journal import Event
from vcr_kit._proxy.server import Proxy

#: Drives the provider SDKs: see tests/tiers.py (which envs run it).
pytestmark = pytest.mark.providers

CHILD = ROOT / "tests" / "support" / "children" / "provider_proxy_child.py"
OPENAI_MODEL = "gpt-5.4-mini"
GEMINI_MODEL = "gemini-2.5-flash"
EMBEDDING_MODEL = "text-embedding-3-small"
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
        for model in (OPENAI_MODEL, GEMINI_MODEL, EMBEDDING_MODEL):
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


def _run_child_here() -> dict[str, Any]:
    """The child's calls in this process (``provider_proxy_child.main``), as it prints them."""
    out = io.StringIO()
    with redirect_stdout(out):
        provider_proxy_child.main()
    seen: dict[str, Any] = json.loads(out.getvalue())
    return seen


@dataclass
class Recorded:
    fixtures: Path
    #: What the child's calls saw while recording.
    seen: dict[str, Any]
    files: dict[str, bytes]
    #: Requests the servers got while recording.
    sent: int


@pytest.fixture(scope="module")
def recorded(
    servers: tuple[OpenAIServer, GeminiServer], tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    """The child's calls recorded through a proxy of this process, as ``vcr_kit run``
    records them: the proxy started in the user's environment (a key for each provider,
    base URLs at the loopback servers: its upstreams), then the calls made with the base
    URLs at its prefixes and the user's keys."""
    openai_server, gemini_server = servers
    fixtures = tmp_path_factory.mktemp("recorded") / "fixtures"
    user = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": openai_server.base_url,
        "GEMINI_API_KEY": GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini_server.url,
    }
    with _environ(**user), Proxy(mode="auto", fixtures_dir=fixtures, log=lambda _: None) as proxy:
        os.environ.update(proxy.provider_base_urls)
        seen = _run_child_here()
    files = {path.name: path.read_bytes() for path in fixtures.glob("*.json")}
    sent = len(openai_server.log) + len(gemini_server.log)
    return Recorded(fixtures, seen, files, sent)


@pytest.mark.inprocess
def test_recorded_through_the_proxy_the_calls_replay_in_process(
    recorded: Recorded, servers: tuple[OpenAIServer, GeminiServer]
) -> None:
    openai_server, gemini_server = servers
    names = sorted(recorded.files)
    assert Counter(re.sub(r"-[0-9a-f]{12}\.json$", "", name) for name in names) == {
        f"gemini-post-{API_VERSION}-models-gemini-2-5-flash-generatecontent": 1,
        f"gemini-post-{API_VERSION}-models-gemini-2-5-flash-streamgeneratecontent": 1,
        "openai-get-v1-models": 1,  # keyed on OpenAI's host: its provider is known
        "openai-post-v1-chat-completions": 3,
        "openai-post-v1-responses": 3,
    }
    every = b"".join(recorded.files.values())
    for secret in (OPENAI_KEY, GEMINI_KEY, "Bearer", "x-goog-api-key"):
        assert secret.encode() not in every
    seen = dict(recorded.seen)
    assert seen.pop("env")["OPENAI_BASE_URL"].endswith("/openai/v1")
    assert re.fullmatch(r"call_vcr[0-9a-f]{21}", seen["tool"]["id"])  # the fixture's own
    assert "sunny, 21 C" in seen["tool"]["answer"]
    assert seen["responses stream"] == "response.completed"

    # In process, on each provider's default host, with no key: the same fixtures, the
    # same answers (tool ids and the Responses chain keyed alike).
    with _environ(CI="true"), vcr_session(fixtures_dir=recorded.fixtures) as journal:
        again = _run_child_here()
    assert again.pop("env") == {  # the stand-ins a test gives keyless clients
        "OPENAI_BASE_URL": None,
        "GOOGLE_GEMINI_BASE_URL": None,
        "OPENAI_API_KEY": REPLAY_API_KEY,
        "GEMINI_API_KEY": REPLAY_API_KEY,
    }
    assert again == seen
    assert sorted(path.name for path in journal.paths(Event.REPLAYED)) == names
    assert len(openai_server.log) + len(gemini_server.log) == recorded.sent


@pytest.mark.inprocess
def test_recorded_in_process_the_proxy_replays_it(
    tmp_path: Path, servers: tuple[OpenAIServer, GeminiServer]
) -> None:
    openai_server, gemini_server = servers
    fixtures = tmp_path / "fixtures"
    user = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": openai_server.base_url,
        "GEMINI_API_KEY": GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini_server.url,
    }
    with _environ(**user), vcr_session(mode="auto", fixtures_dir=fixtures):
        chat, gemini = openai.OpenAI(max_retries=0), genai.Client()
        vectors = chat.embeddings.create(model=EMBEDDING_MODEL, input="and back").data
        text = gemini.models.generate_content(model=GEMINI_MODEL, contents="and back").text
        models = [model.id for model in chat.models.list()]
    sent = len(openai_server.log) + len(gemini_server.log)
    with _environ(CI="true"), _proxy(fixtures, "replay", servers) as proxy:
        chat, gemini = _clients(proxy, REPLAY_API_KEY, REPLAY_API_KEY)
        again = chat.embeddings.create(model=EMBEDDING_MODEL, input="and back").data
        assert gemini.models.generate_content(model=GEMINI_MODEL, contents="and back").text == text
        assert [model.id for model in chat.models.list()] == models
    assert again[0].embedding == vectors[0].embedding
    assert len(openai_server.log) + len(gemini_server.log) == sent


@pytest.mark.inprocess
def test_a_tests_own_proxy_serves_the_providers_too(
    tmp_path: Path, servers: tuple[OpenAIServer, GeminiServer]
) -> None:
    """``vcr_proxy = True`` / ``@pytest.mark.vcr(proxy=True)``: the test's children get
    each provider's base URL at the proxy, which records from the user's own."""
    openai_server, gemini_server = servers
    fixtures = tmp_path / "fixtures"
    user = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": openai_server.base_url,
        "GEMINI_API_KEY": GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini_server.url,
    }
    with _environ(**user):
        with vcr_session(mode="auto", fixtures_dir=fixtures, proxy=True):
            proxy_url = os.environ["ANTHROPIC_BASE_URL"]
            pointed = [os.environ["OPENAI_BASE_URL"], os.environ["GOOGLE_GEMINI_BASE_URL"]]
            chat, gemini = openai.OpenAI(max_retries=0), genai.Client()  # as a child builds them
            text = gemini.models.generate_content(model=GEMINI_MODEL, contents="own proxy").text
            vectors = chat.embeddings.create(model=EMBEDDING_MODEL, input="own proxy").data
        assert [os.environ["OPENAI_BASE_URL"], os.environ["GOOGLE_GEMINI_BASE_URL"]] == [
            openai_server.base_url,
            gemini_server.url,
        ]
    assert pointed == [f"{proxy_url}/openai/v1", f"{proxy_url}/gemini"]
    assert text
    assert vectors
    assert [path.name.split("-")[:3] for path in sorted(fixtures.glob("*.json"))] == [
        ["gemini", "post", API_VERSION],
        ["openai", "post", "v1"],
    ]
    assert [request.path for request in openai_server.log][-1] == "/v1/embeddings"


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
    gemini_name = rf"gemini-post-{API_VERSION}-models-\S+\.json"
    gemini_file = re.findall(gemini_name, str(gemini_miss.value))[0]
    assert openai_miss.value.message in status_error_texts(
        openai_miss.value, MISSING.format(fixtures / openai_file)
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
def test_run_points_each_sdk_at_its_prefix_and_replays_offline(recorded: Recorded) -> None:
    """``vcr_kit run`` in CI: no key, no base URL, no network at all; each SDK pointed at
    the proxy's prefix with the stand-in key; a miss in each provider's own shape."""
    fixtures = recorded.fixtures
    command = [sys.executable, "-m", "vcr_kit", "run", "--fixtures", str(fixtures), "--",
               sys.executable, str(CHILD)]  # fmt: skip
    env = {k: v for k, v in environ_without_vcr().items() if k not in PROVIDER_VARS}
    env.update(PYTHONPATH=str(ROOT), VCR_REPORT="0", CI="true", ASK_MISSING="1")
    done = run_captured([*offline(), *command], cwd=ROOT, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)
    proxy_url = replayed["env"]["OPENAI_BASE_URL"].removesuffix("/openai/v1")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", proxy_url)
    assert replayed.pop("env") == {
        "OPENAI_BASE_URL": f"{proxy_url}/openai/v1",
        "GOOGLE_GEMINI_BASE_URL": f"{proxy_url}/gemini",
        "OPENAI_API_KEY": REPLAY_API_KEY,
        "GEMINI_API_KEY": REPLAY_API_KEY,
    }
    openai_miss, gemini_miss = replayed.pop("openai miss"), replayed.pop("gemini miss")
    assert replayed == {k: v for k, v in recorded.seen.items() if k != "env"}
    assert {path.name: path.read_bytes() for path in fixtures.glob("*.json")} == recorded.files
    (openai_file,) = re.findall(r"openai-post-v1-embeddings-[0-9a-f]{12}\.json", openai_miss[2])
    message = MISSING.format(fixtures / openai_file)
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None,
                      "code": None}}  # fmt: skip
    assert openai_miss[:2] == ["BadRequestError", 400]
    # The newest openai says the message; the oldest we support, the whole error body.
    assert openai_miss[2] in {f"Error code: 400 - {message}", f"Error code: 400 - {body}"}
    generated = f"gemini-post-{API_VERSION}-models-gemini-2-5-flash-generatecontent-*"
    (nearest,) = fixtures.glob(generated)
    gemini_file = re.findall(rf"gemini-post-{API_VERSION}-models-\S+\.json", gemini_miss[3])[0]
    assert gemini_miss[:3] == ["ClientError", 400, "INVALID_ARGUMENT"]
    assert gemini_miss[3].splitlines()[:2] == [
        MISSING.format(fixtures / gemini_file),
        f"Nearest recorded fixture: {nearest}.",
    ]
