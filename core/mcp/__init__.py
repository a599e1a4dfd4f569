"""Belay as an MCP client: configured MCP servers' tools join the registry as `mcp__<server>__<tool>`.

`settings` reads `[mcp.servers.<name>]` (user settings only), `manager`
starts and restarts the servers and keeps the registry in step with what
they offer, `connection` owns one server's session in one task, `tool`
adapts a server's tool to Belay's `Tool`, `state` is the small state
machine the window shows.  Nothing is imported here, so that reading
settings does not load the MCP SDK.
"""
