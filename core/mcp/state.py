"""What state each MCP server is in, as a pure step function over what happened to its connection.

    stopped --Starting--> starting --Listed(n)--> ready(n) --Listed(m)--> ready(m)
                              |                     |
                              +------Failed(why)----+--> failed(why) --Starting--> starting
    any --Stopped--> stopped

A Listed or Failed that arrives when the server is stopped or failed is
stale (from a connection already given up) and changes nothing; the first
reason a server failed is the one kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models.mcp import ServerState, ServerStatus


@dataclass(frozen=True)
class Starting:
    """The connection is being (re)started."""


@dataclass(frozen=True)
class Listed:
    """The server answered and offers `tools` tools (first listing, or after a change)."""

    tools: int


@dataclass(frozen=True)
class Failed:
    """The server could not be started, or its connection was lost."""

    reason: str


@dataclass(frozen=True)
class Stopped:
    """Belay stopped the server (restart or close)."""


Happening = Starting | Listed | Failed | Stopped


def advance(status: ServerStatus, what: Happening) -> ServerStatus:
    """The status after `what`; `status` itself when `what` changes nothing."""
    state = status.state
    if isinstance(what, Starting):
        new = status.model_copy(update={"state": ServerState.STARTING, "reason": ""})
    elif isinstance(what, Stopped):
        new = status.model_copy(update={"state": ServerState.STOPPED, "tools": 0, "reason": ""})
    elif state in (ServerState.STOPPED, ServerState.FAILED):
        return status  # stale news from a connection already given up
    elif isinstance(what, Listed):
        new = status.model_copy(update={"state": ServerState.READY, "tools": what.tools})
    else:
        new = status.model_copy(update={"state": ServerState.FAILED, "reason": what.reason})
    return status if new == status else new
