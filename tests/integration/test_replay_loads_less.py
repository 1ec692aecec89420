"""A replaying test loads only what replaying needs: the lock library, the proxy's web
server and the secret patterns load when a test first records or asks for a proxy
(several ms of imports, and the garbage collections they set off, in every replaying
process)."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.env import environ_without_vcr, run_captured, temp_dir
from tests.support.helpers.paths import ROOT

pytestmark = [pytest.mark.child, pytest.mark.matrix]


#: Modules a replaying test must not load.
RECORDING_ONLY = (
    "filelock",
    "http.server",
    "vcr_kit._proxy.server",
    "vcr_kit._store.secrets",
    "vcr_kit._store.secret_shapes",
)

RECORD = """
import sys
import anthropic
import vcr_kit
from vcr_kit._core.httplib import sdk_library

lib = sdk_library()
message = {"id": "msg_01loads", "type": "message", "role": "assistant",
           "model": "claude-opus-4-7", "content": [{"type": "text", "text": "hi"}],
           "stop_reason": "end_turn", "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}
live = lib.MockTransport(lambda request: lib.Response(200, json=message))
recorder = vcr_kit.VCRTransport(mode="record", fixtures_dir=sys.argv[1], live=live)
client = anthropic.Anthropic(api_key="sk-ant-api03-loads",
                             http_client=anthropic.DefaultHttpxClient(transport=recorder))
client.messages.create(model="claude-opus-4-7", max_tokens=8,
                       messages=[{"role": "user", "content": "hello"}])
print("recorded:", sorted(m for m in %(modules)r if m in sys.modules))
"""

REPLAY = """
import sys
import unittest
import anthropic
import vcr_kit


class T(vcr_kit.VCRTestCase):
    vcr_mode = "replay"
    vcr_fixtures_dir = sys.argv[1]

    def test_it(self):
        message = anthropic.Anthropic().messages.create(
            model="claude-opus-4-7", max_tokens=8, messages=[{"role": "user", "content": "hello"}])
        self.assertEqual(message.content[0].text, "hi")
        self.assertEqual(self.vcr_journal.replays, 1)


result = unittest.main(argv=["replay"], exit=False).result
print("passed:", result.wasSuccessful())
print("loaded:", sorted(m for m in %(modules)r if m in sys.modules))
"""


class ReplayLoadsLessTest(unittest.TestCase):
    def run_python(self, code: str, folder: Path) -> list[str]:
        env = environ_without_vcr()
        env["VCR_REPORT"] = "0"
        done = run_captured(
            [sys.executable, "-c", code % {"modules": RECORDING_ONLY}, str(folder)],
            cwd=ROOT,
            env=env,
            timeout=120,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.splitlines()

    def test_a_replaying_test_loads_no_lock_no_proxy_and_no_secret_patterns(self) -> None:
        folder = temp_dir(self)
        # Recording loads them (so the check below can see them when they load).
        self.assertEqual(
            self.run_python(RECORD, folder),
            ["recorded: ['filelock', 'vcr_kit._store.secret_shapes', 'vcr_kit._store.secrets']"],
        )
        self.assertEqual(self.run_python(REPLAY, folder), ["passed: True", "loaded: []"])


if __name__ == "__main__":
    unittest.main()
