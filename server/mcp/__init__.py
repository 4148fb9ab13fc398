"""The MCP server of statsapi (`statsapi-mcp`): its tools generated from the OpenAPI document a statsapi
serves, each call one GET to that statsapi. A client of the public API, run as its own process."""
