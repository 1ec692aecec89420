"""Run a command with a ``vcr_kit mcp --url`` front beside it, in one process tree.

``python with_mcp_front.py CONFIG SERVER_NAME -- FRONT_ARGS... -- CMD...`` starts
``python -m vcr_kit mcp FRONT_ARGS... --port 0``, reads the URL it prints, writes
``CONFIG`` (an ``.mcp.json`` with ``{"type": "http", "url": URL}`` under SERVER_NAME),
runs CMD, then stops the front with SIGTERM and exits with CMD's status (1 if the front
did not stop cleanly). One tree, so that under ``unshare -n`` the client (Claude Code)
and the front share loopback. Standard library only: it runs as a script.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

READY = "vcr_kit mcp on "


def main(argv: list[str]) -> int:
    config, name = Path(argv[1]), argv[2]
    first = argv.index("--")
    second = argv.index("--", first + 1)
    front_args, command = argv[first + 1 : second], argv[second + 1 :]
    front = subprocess.Popen([sys.executable, "-m", "vcr_kit", "mcp", *front_args,
                              "--port", "0"], stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert front.stdout is not None
    line = front.stdout.readline()
    if not line.startswith(READY):
        front.kill()
        print(f"with_mcp_front: no ready line from the front: {line!r}", file=sys.stderr)
        return 1
    url = line[len(READY) :].strip()
    config.write_text(json.dumps({"mcpServers": {name: {"type": "http", "url": url}}}),
                      encoding="utf-8")  # fmt: skip
    try:
        status = subprocess.run(command, check=False).returncode
    finally:
        front.send_signal(signal.SIGTERM)
        stopped = front.wait(timeout=10)
    if stopped != 0:
        print(f"with_mcp_front: the front exited {stopped}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
