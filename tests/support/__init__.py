"""Helpers the test folders share: ``env`` (a clean environment, folders, subprocesses),
the loopback fake API, the SDK and client scenarios, the workers the parallel and
crash tests spawn, and the fault suite's report. Nothing is imported here, so that
loading one helper loads only what it needs."""
