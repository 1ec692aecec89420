"""Faults on demand for OpenAI and Gemini (issue 31): the real ``openai`` and
``google-genai`` SDKs meet each injected fault in their provider's own shape, in
process and through the proxy, over the loopback OpenAI and Gemini servers.

An API error is the provider's error object and status (``overloaded``, Anthropic's
529, is their 503), so each SDK raises its own error class with the provider's code;
a stream is broken in its own format (a ``data:`` error chunk for Chat Completions and
Gemini, an ``error`` event for Responses, a dropped connection for a cut); each SDK's
own retries walk through the schedule (``openai``'s ``max_retries``, google-genai's
``HttpRetryOptions``: none by default).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest
from google import genai
from google.genai import errors, types

import vcr_kit
from tests.support.helpers.env import vcr_environ
from tests.support.helpers.gemini_releases import http_library
from tests.support.helpers.openai_releases import status_error_texts
from tests.support.servers.gemini_server import GeminiServer
from tests.support.servers.openai_server import OpenAIServer
from vcr_kit._integrations.session import vcr_session
from vcr_kit._ledger import cost as _cost
from vcr_kit._proxy.server import Proxy

pytestmark = [pytest.mark.inprocess, pytest.mark.providers]

OPENAI_MODEL = "gpt-5-mini"
GEMINI_MODEL = "gemini-2.5-flash"
#: Long enough for several stream events from either server.
STORY = "tell a short story about retries, in a few sentences please"
OPENAI_KEY = "sk-proj-" + "f" * 48
GEMINI_KEY = "AIza" + "F" * 35
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
)
#: (fault, provider) -> (SDK error class, status, the provider's code in the body).
API_ERRORS: dict[tuple[str, str], tuple[type[Exception], int, str | None]] = {
    ("rate_limit", "openai"): (openai.RateLimitError, 429, "rate_limit_exceeded"),
    ("overloaded", "openai"): (openai.InternalServerError, 503, "service_unavailable"),
    ("server_error", "openai"): (openai.InternalServerError, 500, None),
    ("rate_limit", "gemini"): (errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
    ("overloaded", "gemini"): (errors.ServerError, 503, "UNAVAILABLE"),
    ("server_error", "gemini"): (errors.ServerError, 500, "INTERNAL"),
}
#: What the SDKs raise: their own errors, or the HTTP library's (google-genai lets a
#: broken connection through as it is).
SDK_ERRORS = (openai.APIError, errors.APIError, http_library.HTTPError)
MESSAGES = {
    "rate_limit": "Number of request tokens has exceeded your per-minute rate limit",
    "overloaded": "Overloaded",
    "server_error": "Internal server error",
}


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[OpenAIServer, GeminiServer]]:
    """The loopback servers, and a developer's environment for the module: keys, base
    URLs at the servers, prices for the models (a model with none warns: an error here)."""
    with ExitStack() as stack:
        openai_server = stack.enter_context(OpenAIServer())
        gemini_server = stack.enter_context(GeminiServer())
        stack.enter_context(vcr_environ(VCR_REPORT="0"))
        for name in PROVIDER_VARS:
            os.environ.pop(name, None)
        os.environ.update(
            OPENAI_API_KEY=OPENAI_KEY,
            OPENAI_BASE_URL=openai_server.base_url,
            GEMINI_API_KEY=GEMINI_KEY,
            GOOGLE_GEMINI_BASE_URL=gemini_server.url,
        )
        for model in (OPENAI_MODEL, GEMINI_MODEL):
            if _cost.price_for(model) is None:
                vcr_kit.set_price(model, vcr_kit.Price(1.0, None, None, 0.1, 2.0))
                stack.callback(_forget_price, model)
        yield openai_server, gemini_server


@pytest.fixture(scope="module")
def clients(servers: tuple[OpenAIServer, GeminiServer]) -> Iterator[dict[str, Any]]:
    """One client of each kind for the module, built from the environment as code under
    test builds them (a google-genai client costs half a second to build)."""
    del servers  # the environment they set is what the clients read
    built = {
        "openai": openai_client(),
        "gemini": gemini_client(),
        "openai retrying": openai_client(max_retries=2),
        "gemini retrying": gemini_client(attempts=3),
    }
    yield built
    for client in built.values():
        client.close()


@pytest.fixture
def fixtures(tmp_path: Path, servers: tuple[OpenAIServer, GeminiServer]) -> Path:
    """An empty fixtures folder."""
    del servers  # the environment
    return tmp_path / "fixtures"


def _forget_price(model: str) -> None:
    with _cost.COST.lock:
        _cost.COST.overrides.pop(model, None)
        _cost.COST.prices_version += 1


# -- the calls, as code under test makes them ------------------------------------------


def openai_client(base_url: str | None = None, max_retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, max_retries=max_retries)


def gemini_client(base_url: str | None = None, attempts: int | None = None) -> genai.Client:
    retry = (
        None
        if attempts is None
        else types.HttpRetryOptions(attempts=attempts, initial_delay=0, jitter=0)
    )
    return genai.Client(http_options=types.HttpOptions(base_url=base_url, retry_options=retry))


def ask(provider: str, client: Any, text: str = STORY) -> str:
    if provider == "openai":
        reply = client.chat.completions.create(
            model=OPENAI_MODEL, messages=[{"role": "user", "content": text}]
        )
        return str(reply.choices[0].message.content)
    return str(client.models.generate_content(model=GEMINI_MODEL, contents=text).text)


def chat_stream(client: openai.OpenAI) -> list[str]:
    stream = client.chat.completions.create(
        model=OPENAI_MODEL, messages=[{"role": "user", "content": STORY}], stream=True
    )
    return [c.choices[0].delta.content or "" for c in stream if c.choices]


def responses_stream(client: openai.OpenAI) -> list[Any]:
    return list(client.responses.create(model=OPENAI_MODEL, input=STORY, stream=True))


def gemini_stream(client: genai.Client) -> list[str]:
    chunks = client.models.generate_content_stream(model=GEMINI_MODEL, contents=STORY)
    return [chunk.text or "" for chunk in chunks]


def build(provider: str, base_url: str | None = None) -> Any:
    return openai_client(base_url) if provider == "openai" else gemini_client(base_url)


def assert_api_error(error: Exception, fault: str, provider: str) -> None:
    kind, status, code = API_ERRORS[(fault, provider)]
    assert type(error) is kind, repr(error)
    if provider == "openai":
        assert isinstance(error, openai.APIStatusError)
        assert (error.status_code, error.code) == (status, code)
        assert isinstance(error.body, dict)
        assert error.body["message"] == MESSAGES[fault]
        assert error.message in status_error_texts(error, MESSAGES[fault])
        assert error.request_id is not None
        assert error.request_id.startswith("req_vcrfault_")
    else:
        assert isinstance(error, errors.APIError)
        assert (error.code, error.status, error.message) == (status, code, MESSAGES[fault])


@contextmanager
def recording(fixtures: Path) -> Iterator[None]:
    """vcr_kit on, as in a test that records what it misses."""
    with vcr_session(mode="auto", fixtures_dir=fixtures, faults=""):
        yield


# -- in process ---------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "gemini"])
@pytest.mark.parametrize("fault", ["rate_limit", "overloaded", "server_error"])
def test_an_api_error_is_the_providers_own(
    fixtures: Path, clients: dict[str, Any], provider: str, fault: str
) -> None:
    with recording(fixtures), vcr_kit.faults(fault) as plan:
        with pytest.raises(SDK_ERRORS) as raised:
            ask(provider, clients[provider])
    assert_api_error(raised.value, fault, provider)
    assert plan.names() == [fault]
    assert not list(fixtures.glob("*.json"))  # answered in front of the recorder


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_the_sdks_own_retries_walk_through_the_schedule(
    fixtures: Path, clients: dict[str, Any], provider: str
) -> None:
    with recording(fixtures):
        expected = ask(provider, clients[provider])
        # openai honours retry-after-ms (10 ms); google-genai retries only when told to.
        with vcr_kit.faults("rate_limit:0.01*2") as plan:
            assert ask(provider, clients[f"{provider} retrying"]) == expected
    assert plan.names() == ["rate_limit", "rate_limit"]


def _stream_error(provider: str, client: Any) -> Any:
    """What the caller meets reading a stream broken by ``error_after:1``."""
    if provider == "responses":
        return [event.type for event in responses_stream(client)]
    with pytest.raises(SDK_ERRORS) as raised:
        chat_stream(client) if provider == "openai" else gemini_stream(client)
    return raised.value


STREAMS: dict[str, Callable[[Any], Any]] = {
    "openai": chat_stream,
    "responses": responses_stream,
    "gemini": gemini_stream,
}


@pytest.mark.parametrize("api", ["openai", "responses", "gemini"])
def test_a_stream_breaks_in_its_own_format(
    fixtures: Path, clients: dict[str, Any], api: str
) -> None:
    provider = "gemini" if api == "gemini" else "openai"
    with recording(fixtures):
        client = clients[provider]
        with vcr_kit.faults("error_after:1") as plan:
            met = _stream_error(api, client)
        whole = STREAMS[api](client)  # the recording holds the whole stream
    assert plan.names() == ["error_after"]
    (recorded,) = fixtures.glob("*.json")
    assert "vcrfault" not in recorded.read_text(encoding="utf-8")
    if api == "openai":
        assert type(met) is openai.APIError
        assert str(met) == "Overloaded"
        assert met.body == {
            "message": "Overloaded",
            "type": "server_error",
            "param": None,
            "code": "service_unavailable",
        }
        assert len(whole) > 2
    elif api == "responses":
        assert met == ["response.created", "error"]
        assert [e.type for e in whole][-1] == "response.completed"
    else:
        assert type(met) is errors.ServerError
        assert (met.code, met.status, met.message) == (503, "UNAVAILABLE", "Overloaded")
        assert len(whole) > 1


def test_a_responses_error_event_is_the_apis(fixtures: Path, clients: dict[str, Any]) -> None:
    with recording(fixtures), vcr_kit.faults("error_after:2"):
        events = responses_stream(clients["openai"])
    error = events[-1]
    assert [error.type, error.code, error.message, error.param, error.sequence_number] == [
        "error",
        "service_unavailable",
        "Overloaded",
        None,
        2,
    ]


@pytest.mark.parametrize("api", ["openai", "gemini"])
def test_a_cut_stream_drops_before_its_end(
    fixtures: Path, clients: dict[str, Any], api: str
) -> None:
    with recording(fixtures):
        client = clients[api]
        stream = chat_stream if api == "openai" else gemini_stream
        with vcr_kit.faults("cut_after:1") as plan, pytest.raises(SDK_ERRORS) as raised:
            stream(client)
    assert plan.names() == ["cut_after"]
    if api == "openai":  # the SDK's own word for a connection that broke off (openai 1.x
        # lets the HTTP library's error through, as google-genai does)
        assert type(raised.value) in (openai.APIConnectionError, http_library.RemoteProtocolError)
    else:  # google-genai lets the HTTP library's error through, and never retries it
        assert type(raised.value) is http_library.RemoteProtocolError


# -- through the proxy --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "fault"), [("openai", "rate_limit"), ("gemini", "overloaded")]
)
def test_the_proxy_answers_a_fault_in_the_providers_shape(
    fixtures: Path, servers: tuple[OpenAIServer, GeminiServer], provider: str, fault: str
) -> None:
    openai_server, gemini_server = servers
    upstreams = {"openai": openai_server.base_url, "gemini": gemini_server.url}
    with Proxy(
        mode="auto", fixtures_dir=fixtures, faults=fault, provider_upstreams=upstreams,
        log=lambda line: None,
    ) as proxy:  # fmt: skip
        variable = "OPENAI_BASE_URL" if provider == "openai" else "GOOGLE_GEMINI_BASE_URL"
        client = build(provider, proxy.provider_base_urls[variable])
        with pytest.raises(SDK_ERRORS) as raised:
            ask(provider, client)
        assert ask(provider, client)  # once per request: the next attempt is recorded
    assert_api_error(raised.value, fault, provider)
    assert proxy.fault_plan is not None
    assert proxy.fault_plan.names() == [fault]


@pytest.mark.parametrize("api", ["openai", "gemini"])
def test_the_proxy_breaks_a_stream_in_its_own_format(
    fixtures: Path, servers: tuple[OpenAIServer, GeminiServer], api: str
) -> None:
    openai_server, gemini_server = servers
    upstreams = {"openai": openai_server.base_url, "gemini": gemini_server.url}
    with Proxy(
        mode="auto", fixtures_dir=fixtures, faults="error_after:1", provider_upstreams=upstreams,
        log=lambda line: None,
    ) as proxy:  # fmt: skip
        variable = "OPENAI_BASE_URL" if api == "openai" else "GOOGLE_GEMINI_BASE_URL"
        met = _stream_error(api, build(api, proxy.provider_base_urls[variable]))
    if api == "openai":
        assert type(met) is openai.APIError
        assert str(met) == "Overloaded"
    else:
        assert type(met) is errors.ServerError
        assert (met.code, met.status) == (503, "UNAVAILABLE")
    (recorded,) = fixtures.glob("*.json")  # recorded whole, the fault on the wire only
    assert "vcrfault" not in recorded.read_text(encoding="utf-8")
    assert json.loads(recorded.read_text(encoding="utf-8"))["request"]["provider"] == api
