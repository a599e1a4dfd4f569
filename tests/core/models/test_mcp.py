"""An MCP server's status: how each state reads in the window."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.models.mcp import ServerState, ServerStatus


def test_a_ready_server_shows_how_many_tools_it_has_in_good_english() -> None:
    assert ServerStatus(name="fs", state=ServerState.READY, tools=1).describe() == "ready (1 tool)"
    assert ServerStatus(name="fs", state=ServerState.READY, tools=3).describe() == "ready (3 tools)"
    assert ServerStatus(name="fs", state=ServerState.READY).describe() == "ready (0 tools)"


def test_a_failed_server_says_why_and_the_other_states_read_as_their_name() -> None:
    failed = ServerStatus(name="fs", state=ServerState.FAILED, reason="exited with code 1")
    assert failed.describe() == "failed: exited with code 1"
    assert ServerStatus(name="fs", state="starting").describe() == "starting"  # type: ignore[arg-type]
    assert ServerStatus(name="fs").describe() == "stopped"  # a server not started yet is stopped


def test_a_status_refuses_an_unknown_state() -> None:
    with pytest.raises(ValidationError):
        ServerStatus(name="fs", state="sleeping")  # type: ignore[arg-type]
