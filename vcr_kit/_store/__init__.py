"""The store: fixture files on disk (read, atomic write, locks, scan, rescue) and
the secrets gate every write passes. No mode policy: the engine decides, the store does."""
