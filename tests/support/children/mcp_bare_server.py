"""A stdio MCP server that answers ``tools/call`` with neither ``result`` nor
``error`` (an invalid JSON-RPC response), and every other request with a result.

``python mcp_bare_server.py``: one JSON-RPC message per line on stdin, answers on
stdout. Standard library only: it runs as a script.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    for line in sys.stdin:
        message = json.loads(line)
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue  # a notification, or an answer of the client's
        answer: dict[str, object] = {"jsonrpc": "2.0", "id": message["id"]}
        if message["method"] == "initialize":
            answer["result"] = {"protocolVersion": message["params"]["protocolVersion"],
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "bare", "version": "1"}}  # fmt: skip
        elif message["method"] != "tools/call":
            answer["result"] = {}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
