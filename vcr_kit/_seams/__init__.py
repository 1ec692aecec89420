"""The seams: where requests are caught (the transport patch, the connection guard,
the SDK patches, lazy TLS, the transparent client, the loopback proxy)."""
