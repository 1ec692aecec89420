"""Every committed http fixture keeps its name: the key derivation may get faster, never
different (a changed key would orphan every fixture users have committed)."""

from __future__ import annotations

import json
import unittest
from typing import Any

import pytest

from tests.support.helpers.paths import ROOT
from vcr_kit._core import ids as _ids
from vcr_kit._core.fixture_names import http_name
from vcr_kit._core.http_request import name_and_stored
from vcr_kit._core.httplib import sdk_library
from vcr_kit.dehydrate import hydrate_json

pytestmark = pytest.mark.inprocess

HTTP_FIXTURES = sorted(
    path
    for path in (ROOT / "fixtures").rglob("*.json")
    if json.loads(path.read_text(encoding="utf-8")).get("kind") == "http"
)
http: Any = sdk_library()


def rebuilt_request(stored: dict[str, Any]) -> Any:
    """The request the SDK would send for a stored one (body as the SDK writes it)."""
    body = stored["body"]
    content = b"" if body is None else json.dumps(hydrate_json(body)).encode("utf-8")
    url = "https://api.anthropic.com" + stored["path"]
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    if "anthropic-beta" in stored:
        headers["anthropic-beta"] = stored["anthropic-beta"]
    return http.Request(
        stored["method"], url, params=stored.get("query"), headers=headers, content=content
    )


class CommittedKeysTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()  # ids given out by other tests must not turn into tokens here
        self.addCleanup(_ids.forget)

    def test_there_are_committed_http_fixtures(self) -> None:
        self.assertGreaterEqual(len(HTTP_FIXTURES), 10)

    def test_each_name_is_the_hash_of_its_stored_request(self) -> None:
        for path in HTTP_FIXTURES:
            with self.subTest(path.name):
                stored = json.loads(path.read_text(encoding="utf-8"))["request"]
                self.assertEqual(http_name(stored["method"], stored["path"], stored), path.name)

    def test_the_request_the_sdk_sends_maps_to_the_committed_name(self) -> None:
        for path in HTTP_FIXTURES:
            with self.subTest(path.name):
                stored = json.loads(path.read_text(encoding="utf-8"))["request"]
                for indent in (None, 2):  # whitespace and key order never matter
                    request = rebuilt_request(stored)
                    if indent and request.content:
                        body = json.loads(request.content)
                        text = json.dumps(dict(reversed(body.items())), indent=indent)
                        request = http.Request(
                            request.method,
                            request.url,
                            headers=request.headers,
                            content=text.encode("utf-8"),
                        )
                    name, again = name_and_stored(request)
                    self.assertEqual(name, path.name)
                    self.assertEqual(again, stored)


if __name__ == "__main__":
    unittest.main()
