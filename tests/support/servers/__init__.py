"""Loopback servers the tests run against: the fake Anthropic API (``loopback_server``,
also a script), the cloud platforms' wire formats (``cloud_server``) and an MCP server
over streamable HTTP (``mcp_http_server``). Nothing is imported here."""
