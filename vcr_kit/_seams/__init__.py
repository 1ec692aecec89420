"""The in-process seams: where a test's own requests are caught (the transport patch,
the aiohttp seam, the connection guard, the SDK patches, lazy TLS, the transparent
client)."""
