"""Agents Belay does not run itself: Claude Code (hooks, launched sessions) and MCP clients, on the console's socket."""
