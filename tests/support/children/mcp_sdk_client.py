"""The ``mcp`` SDK's own Streamable HTTP client against a ``vcr_kit mcp --url`` front.

``python mcp_sdk_client.py -- FRONT_CMD...`` starts the front, reads its ready line,
then, as a real MCP client: initialize, list the tools, call ``now`` and ``dice``;
prints what it got as JSON and stops the front with SIGTERM. The client and the
front share one process tree, so the whole runs under ``unshare -n``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

READY = "vcr_kit mcp on "


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def session(url: str) -> dict[str, Any]:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as client:
            opened = await client.initialize()
            tools = await client.list_tools()
            now = await client.call_tool("now", {})
            dice = await client.call_tool("dice", {"sides": 1000})
            return {
                "server": opened.server_info.name,
                "tools": [tool.name for tool in tools.tools],
                "now": text_of(now),
                "dice": text_of(dice),
            }


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :]
    front = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert front.stdout is not None
    line = front.stdout.readline()
    if not line.startswith(READY):
        front.kill()
        print(json.dumps({"error": f"no ready line: {line!r}"}))
        return 1
    try:
        got = asyncio.run(session(line[len(READY) :].strip()))
    finally:
        front.send_signal(signal.SIGTERM)
        returncode = front.wait(timeout=10)
    print(json.dumps({**got, "returncode": returncode}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
