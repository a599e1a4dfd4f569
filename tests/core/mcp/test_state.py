"""The MCP server state machine: each step as the window would show it."""

from __future__ import annotations

from core.mcp.state import Failed, Listed, Starting, Stopped, advance
from core.models.mcp import ServerState, ServerStatus


def _walk(*steps: Starting | Listed | Failed | Stopped) -> list[str]:
    status, shown = ServerStatus(name="gh"), []
    for step in steps:
        status = advance(status, step)
        shown.append(status.describe())
    return shown


def test_a_server_starts_lists_and_follows_changes() -> None:
    assert _walk(Starting(), Listed(3), Listed(1), Stopped()) == ["starting", "ready (3 tools)", "ready (1 tool)",
                                                                  "stopped"]


def test_a_failure_keeps_its_first_reason_until_a_restart() -> None:
    assert _walk(Starting(), Listed(2), Failed("its process ended"), Failed("later noise"), Listed(2),
                 Starting(), Listed(2)) == ["starting", "ready (2 tools)", "failed: its process ended",
                                            "failed: its process ended", "failed: its process ended", "starting",
                                            "ready (2 tools)"]


def test_news_after_a_stop_is_ignored() -> None:
    stopped = advance(advance(ServerStatus(name="gh"), Starting()), Stopped())
    assert advance(stopped, Listed(4)) is stopped and advance(stopped, Failed("late")) is stopped
    assert stopped.state == ServerState.STOPPED and stopped.tools == 0


def test_a_step_that_changes_nothing_returns_the_same_status() -> None:
    ready = advance(advance(ServerStatus(name="gh"), Starting()), Listed(2))
    assert advance(ready, Listed(2)) is ready
