"""Calls waiting for a person: the inbox, the approval panel and its Bash card, and MCP servers' questions."""
