"""An MCP server's state as data, as the window shows it (the step function is core.mcp.state)."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class ServerState(str, Enum):
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


class ServerStatus(BaseModel):
    """One MCP server's state, as the window shows it."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The server's name in the settings."""
    state: ServerState = ServerState.STOPPED
    tools: int = 0
    """How many of its tools are in the registry (as of its last listing; 0 once stopped)."""
    reason: str = ""
    """For failed: what went wrong, in words (no secrets: no env values, headers or URLs)."""

    def describe(self) -> str:
        """"starting", "ready (3 tools)", "failed: <reason>" or "stopped"."""
        if self.state == ServerState.READY:
            return f"ready ({self.tools} tool{'' if self.tools == 1 else 's'})"
        if self.state == ServerState.FAILED:
            return f"failed: {self.reason}"
        return str(self.state.value)
