"""Scripts that tests run as child processes (``python tests/support/children/<name>.py``).

Run as scripts, their own folder is first on ``sys.path`` and ``tests`` is not importable:
a script that needs the repository's modules puts the root on ``sys.path`` itself. Some
are also imported by tests (``sdk_scenarios``' names, ``helpers_fixture_worker``'s spawn
target); nothing is imported here."""
