"""The proxy's provider prefixes (``_proxy.provider_routes``): what a request under
``/openai`` or ``/gemini`` is keyed as, and where recording sends it (the user's own
base URL, a gateway's path included, else the provider's API)."""

from __future__ import annotations

import unittest

import pytest

from vcr_kit._proxy.provider_routes import ProviderRoutes, prefixed_provider

pytestmark = pytest.mark.inprocess

PROXY = "http://127.0.0.1:4000"


class Routes(unittest.TestCase):
    def test_the_base_urls_a_child_is_given(self) -> None:
        self.assertEqual(
            ProviderRoutes.child_base_urls(PROXY),
            {
                "OPENAI_BASE_URL": f"{PROXY}/openai/v1",
                "GOOGLE_GEMINI_BASE_URL": f"{PROXY}/gemini",
            },
        )

    def test_keyed_on_the_providers_host_sent_to_its_api(self) -> None:
        routes = ProviderRoutes({})
        cases = [
            ("/openai/v1/chat/completions", "https://api.openai.com/v1/chat/completions",
             "https://api.openai.com/v1/chat/completions"),
            ("/openai/v1/models", "https://api.openai.com/v1/models",
             "https://api.openai.com/v1/models"),
            ("/gemini/v1beta/models/g:streamGenerateContent?alt=sse",
             "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse",
             "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse"),
        ]  # fmt: skip
        for path, key_url, upstream in cases:
            route = routes.route(path)
            assert route is not None
            raw_path = key_url.split(".com", 1)[1]
            self.assertEqual((route.key_url, route.upstream_url(raw_path)), (key_url, upstream))

    def test_recorded_from_the_users_own_base_urls(self) -> None:
        routes = ProviderRoutes(
            {"openai": "http://gateway:8000/api/v1/", "gemini": "http://gemini-gw/google"}
        )
        openai = routes.route("/openai/v1/chat/completions")
        gemini = routes.route("/gemini/v1/models/g:generateContent")
        assert openai is not None
        assert gemini is not None
        self.assertEqual(
            openai.upstream_url("/v1/chat/completions"),
            "http://gateway:8000/api/v1/chat/completions",
        )
        self.assertEqual(
            gemini.upstream_url("/v1/models/g:generateContent"),
            "http://gemini-gw/google/v1/models/g:generateContent",
        )

    def test_only_a_whole_prefix_is_a_providers(self) -> None:
        self.assertIsNone(prefixed_provider("/v1/messages"))
        self.assertIsNone(prefixed_provider("/openaix/v1/chat/completions"))
        self.assertIsNone(prefixed_provider("/gemini-2/v1/models"))
        self.assertIsNone(ProviderRoutes({}).route("/v1/models"))
        provider = prefixed_provider("/openai?x=1")
        self.assertEqual(provider.name if provider else None, "openai")


if __name__ == "__main__":
    unittest.main()
