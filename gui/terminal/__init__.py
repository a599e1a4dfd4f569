"""Front ends without a window: the `belay` command line, `belay run`, `calls`, `undo`, `mcp-serve`, terminal
approvals."""
