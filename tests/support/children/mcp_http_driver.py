"""Drive a ``vcr_kit mcp --url`` front as an MCP client would, in one process tree.

``python mcp_http_driver.py -- FRONT_CMD...`` reads a script from stdin (a JSON list of
``{"verb": "POST"|"GET"|"DELETE", "body": <JSON>}`` or ``{"verb": "POST", "raw":
<text>}``, either with ``"headers"`` to add or replace), starts the front, waits for
its ``vcr_kit mcp on URL`` line, sends each step (with the session id the front last
gave out), stops the front with SIGTERM and prints
``{"replies": [{"status", "session", "type", "body"}...], "returncode": N}``.

It exists so that replay can run under ``unshare -n``: the client and the front must
share the network namespace, which the test process does not enter. Standard library
only: it runs as a script.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from typing import Any
from urllib.parse import urlsplit

READY = "vcr_kit mcp on "


def exchange(url: str, step: dict[str, Any], session: str | None) -> dict[str, Any]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
    }
    if session is not None:
        headers["Mcp-Session-Id"] = session
    headers.update(step.get("headers", {}))
    body = step["raw"].encode() if "raw" in step else json.dumps(step.get("body")).encode()
    try:
        connection.request(step["verb"], parts.path, body=body if step["verb"] == "POST" else None,
                           headers=headers)  # fmt: skip
        response = connection.getresponse()
        data = response.read()
        return {"status": response.status, "session": response.getheader("mcp-session-id"),
                "type": response.getheader("content-type"), "allow": response.getheader("allow"),
                "body": json.loads(data) if data else None}  # fmt: skip
    finally:
        connection.close()


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :]
    script = json.load(sys.stdin)
    front = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert front.stdout is not None
    line = front.stdout.readline()
    if not line.startswith(READY):
        front.kill()
        print(json.dumps({"error": f"no ready line: {line!r}"}))
        return 1
    url = line[len(READY) :].strip()
    replies, session = [], None
    for step in script:
        reply = exchange(url, step, session)
        session = reply["session"] or session
        replies.append(reply)
    front.send_signal(signal.SIGTERM)
    print(json.dumps({"replies": replies, "returncode": front.wait(timeout=10)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
