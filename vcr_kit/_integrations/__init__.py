"""Test integrations: one session per test, the unittest mixin (the pytest plugin,
``vcr_kit.pytest_plugin``, is the public entry point above it)."""
