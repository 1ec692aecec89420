"""The loopback record/replay proxy, for clients in other processes (Claude Code, the
TypeScript SDK, curl): its server, the live answers it forwards, its faults on the
wire, and the cloud upstreams it signs for while recording."""
