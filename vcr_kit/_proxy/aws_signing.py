"""SigV4 for the proxy's upstream calls to Amazon Bedrock, with the machine's own AWS
credentials.

Claude Code on Bedrock (``CLAUDE_CODE_USE_BEDROCK``) is pointed at the proxy with
``CLAUDE_CODE_SKIP_BEDROCK_AUTH``: a signature made for the proxy's address would not
be valid upstream anyway. While recording, the proxy signs each request for the real
host with botocore's signer, as the AWS SDKs do; a replay signs nothing and needs no
credentials. botocore is imported only here, only when a request is signed.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from .._core.credentials import remember_credential
from ..errors import ConfigError

__all__ = ["signed_headers"]

#: The client's own credential headers: never forwarded to Bedrock (they were made for
#: the proxy's address, or are vcr_kit's stand-in).
_UNSIGNED = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-api-key"})


def signed_headers(
    method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes, region: str
) -> list[tuple[str, str]]:
    """``headers`` with a fresh SigV4 signature for ``url`` (service ``bedrock``)."""
    advice = (
        "Recording a Bedrock request through the vcr_kit proxy needs AWS credentials on "
        "this machine (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) "
    )
    try:  # untyped, and optional: found at run time
        session: Any = importlib.import_module("botocore.session")
        auth: Any = importlib.import_module("botocore.auth")
        aws_request: Any = importlib.import_module("botocore.awsrequest")
    except ImportError:
        raise ConfigError(advice + "and botocore: pip install 'anthropic[bedrock]'.") from None
    credentials = session.get_session().get_credentials()
    if credentials is None:
        raise ConfigError(advice + "and none were found.")
    frozen = credentials.get_frozen_credentials()  # never written, from files too
    remember_credential("the AWS access key id botocore found", frozen.access_key)
    remember_credential("the AWS secret access key botocore found", frozen.secret_key)
    remember_credential("the AWS session token botocore found", frozen.token)
    kept = {k: v for k, v in headers if k.lower() not in _UNSIGNED and k.lower() != "connection"}
    request = aws_request.AWSRequest(method=method, url=url, headers=kept, data=body)
    auth.SigV4Auth(credentials, "bedrock", region).add_auth(request)
    return [(k, v) for k, v in request.headers.items() if v is not None]
