"""What the test folders share, by role: ``helpers/`` (imported by tests: the clean
environment, folders and subprocesses of ``env``, the repository's ``paths``, the
loopback test case, the CLI and Node helpers, the fault suite's report), ``children/``
(scripts that tests run as child processes: the SDK, client and fault scenarios, the
workers of the parallel and crash tests, the run driver, the MCP clients and front) and
``servers/`` (the loopback fake API, the cloud platforms' and the MCP HTTP servers).
``expected/`` holds what the SDK scenarios observe on replay. Nothing is imported here,
so that loading one helper loads only what it needs."""
