"""The right-hand tabs: a call's details, the rules, background shells and MCP servers."""
