"""The core model: pure facts every layer above shares (settings, credentials,
fixture names, canonical JSON, ids, the fixture schema). No disk I/O, no SDK import."""
