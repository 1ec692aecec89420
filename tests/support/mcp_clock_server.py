"""A stdio MCP server whose answers change on every call: the time and a random number.

Written against the MCP wire format itself (JSON-RPC 2.0, one message per line), so
it needs nothing installed. ``tools/call`` of ``now`` answers the current time in
nanoseconds, of ``dice`` a random number, of ``roots`` the count of the client's
roots (it asks the client, as a server may, and waits for the answer); each call is
also appended to the file named by ``MCP_CLOCK_LOG`` (if set), so a test sees whether
the server ran at all.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from typing import Any

TOOLS = [
    {"name": "now", "description": "The current time.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "dice", "description": "A random number.",
     "inputSchema": {"type": "object", "properties": {"sides": {"type": "integer"}}}},
]  # fmt: skip


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {"result": {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                           "capabilities": {"tools": {}},
                           "serverInfo": {"name": "clock", "version": "1.0.0"}}}  # fmt: skip
    if method == "tools/list":
        return {"result": {"tools": TOOLS}}
    if method == "tools/call":
        name = params.get("name")
        log = os.environ.get("MCP_CLOCK_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as file:
                file.write(f"{name}\n")
        if name == "roots":  # asks the client first, and waits for its answer
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": "ask-roots",
                                         "method": "roots/list"}) + "\n")  # fmt: skip
            sys.stdout.flush()
            for line in sys.stdin:
                reply = json.loads(line)
                if reply.get("id") == "ask-roots":
                    roots = reply["result"]["roots"]
                    text = f"{len(roots)} roots"
                    break
            else:
                text = "no answer"
        elif name == "now":
            text = f"time {time.time_ns()}"
        elif name == "dice":
            sides = int((params.get("arguments") or {}).get("sides", 6))
            text = f"rolled {random.SystemRandom().randint(1, sides)} of {sides}"
        else:
            return {"error": {"code": -32602, "message": f"no tool {name}"}}
        return {"result": {"content": [{"type": "text", "text": text}], "isError": False}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": f"no method {method}"}}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # notifications and answers: nothing to say
        reply = {"jsonrpc": "2.0", "id": message["id"],
                 **answer(message["method"], message.get("params") or {})}  # fmt: skip
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
