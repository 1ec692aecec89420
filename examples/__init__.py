"""A small Claude-backed program and its vcr_kit tests (see README.md)."""
