"""Modules the tests import: a clean environment, folders and subprocesses (``env``),
the repository's root (``paths``), the loopback test case, the CLI and Node helpers,
the fault suite's report. Nothing is imported here, so that loading one helper loads
only what it needs."""
