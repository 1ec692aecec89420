"""The MCP relay: a stdio or Streamable HTTP MCP server's JSON-RPC recorded and
replayed as fixtures, the server asked only while recording."""
