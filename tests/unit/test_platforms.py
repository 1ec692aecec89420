"""The cloud platforms: their hosts, their base-URL variables, their model ids priced."""

from __future__ import annotations

import unittest

import pytest

from tests.support.helpers.env import patch_env
from vcr_kit._core.platforms import platform_of, platform_of_host
from vcr_kit._ledger.prices import base_model_id
from vcr_kit._seams.hosts import anthropic_hosts, cloud_platform

pytestmark = pytest.mark.inprocess


class PlatformHostsTest(unittest.TestCase):
    def test_each_platforms_default_hosts(self) -> None:
        cases = {
            "bedrock-runtime.us-east-1.amazonaws.com": "Amazon Bedrock",
            "bedrock-runtime-fips.us-gov-west-1.amazonaws.com": "Amazon Bedrock",
            "bedrock-mantle.eu-west-1.api.aws": "Amazon Bedrock (Mantle)",
            "aws-external-anthropic.us-west-2.api.aws": "Claude Platform on AWS",
            "us-east5-aiplatform.googleapis.com": "Google Vertex AI",
            "aiplatform.googleapis.com": "Google Vertex AI",
            "aiplatform.eu.rep.googleapis.com": "Google Vertex AI",
            "claude.googleapis.com": "Claude on Google Cloud",
            "my-resource.services.ai.azure.com": "Microsoft Foundry",
        }
        for host, name in cases.items():
            with self.subTest(host=host):
                found = platform_of_host(host)
                self.assertEqual(found.name if found else None, name)
        for host in ("api.anthropic.com", "s3.us-east-1.amazonaws.com", "googleapis.com.evil"):
            with self.subTest(host=host):
                self.assertIsNone(platform_of_host(host))

    def test_base_url_variables(self) -> None:
        urls = [("ANTHROPIC_VERTEX_BASE_URL", "http://127.0.0.1:9100/v1")]
        found = platform_of("127.0.0.1", 9100, urls)
        self.assertEqual(found.name if found else None, "Google Vertex AI")
        self.assertIsNone(platform_of("127.0.0.1", 9101, urls))

    def test_the_seams_know_them_without_configuration(self) -> None:
        patch_env(self, ANTHROPIC_BEDROCK_BASE_URL="http://10.0.0.5:8443")
        hosts = anthropic_hosts()
        self.assertTrue(hosts.matches("bedrock-runtime.us-east-1.amazonaws.com", 443))
        self.assertTrue(hosts.matches("10.0.0.5", 8443))
        self.assertFalse(hosts.matches("10.0.0.5", 8444))
        found = cloud_platform("10.0.0.5", 8443)
        self.assertEqual(found.name if found else None, "Amazon Bedrock")


class PlatformModelIdsTest(unittest.TestCase):
    def test_priced_as_the_first_party_model(self) -> None:
        cases = {
            "anthropic.claude-opus-4-7-v1:0": "claude-opus-4-7",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0": "claude-sonnet-4-5",
            "global.anthropic.claude-haiku-4-5-20251001-v1:0": "claude-haiku-4-5",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
            "eu.anthropic.claude-opus-4-7-v1:0": "claude-opus-4-7",
            "claude-opus-4-7@20260101": "claude-opus-4-7",
        }
        for model, expected in cases.items():
            with self.subTest(model=model):
                self.assertEqual(base_model_id(model), expected)


class PlatformSecretsTest(unittest.TestCase):
    def test_signature_token_and_key_headers_are_credentials(self) -> None:
        from vcr_kit._core.credentials import credentials_in, has_real_key

        headers = {
            "authorization": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261201/us-east-1/"
            "bedrock/aws4_request, SignedHeaders=host, Signature=abc",
            "x-amz-security-token": "session-token-" + "t" * 20,
            "api-key": "foundry-" + "k" * 20,
        }
        labels = [label for label, _ in credentials_in(headers)]
        self.assertCountEqual(
            labels,
            ["the authorization header", "the api-key header", "the x-amz-security-token header"],
        )
        self.assertTrue(has_real_key(headers))
