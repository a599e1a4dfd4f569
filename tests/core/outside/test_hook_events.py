"""The agent CLIs' hook events, typed by their names into the models the hook adapters dispatch on."""

from __future__ import annotations

import pytest

from core.outside import codex_settings, gemini, install
from core.outside.hook_events import (
    NAMES,
    AfterToolEvent,
    BeforeToolEvent,
    PreToolUseEvent,
    SessionEndEvent,
    StopEvent,
    ToolAsked,
    typed,
)
from core.outside.requests import HookEvent


def test_every_event_belay_installs_a_hook_for_has_a_model() -> None:
    installed = {*install.HOOK_EVENTS, *codex_settings.EVENTS, *gemini.EVENTS}
    assert installed <= NAMES
    assert {e: type(typed(HookEvent(hook_event_name=e))).__name__ for e in ("PreToolUse", "BeforeTool", "Stop")} == {
        "PreToolUse": "PreToolUseEvent", "BeforeTool": "BeforeToolEvent", "Stop": "StopEvent"}


def test_a_tool_event_keeps_its_typed_fields_and_what_belay_does_not_type() -> None:
    door = HookEvent.model_validate({"hook_event_name": "PreToolUse", "session_id": "s-1", "tool_name": "Edit",
                                     "tool_use_id": "toolu_1", "tool_input": {"file_path": "/w/a.py"},
                                     "agent_id": "sub-1", "cwd": "/w", "turn_id": "t-9"})
    event = typed(door)
    assert isinstance(event, PreToolUseEvent) and isinstance(event, ToolAsked)
    assert (event.session_id, event.tool_name, event.tool_use_id, event.agent_id) == ("s-1", "Edit", "toolu_1",
                                                                                      "sub-1")
    assert event.tool_input == {"file_path": "/w/a.py"} and event.model_extra == {"cwd": "/w", "turn_id": "t-9"}


def test_gemini_clis_events_are_its_own_models_and_a_sessions_end_says_why() -> None:
    before = typed(HookEvent.model_validate({"hook_event_name": "BeforeTool", "tool_name": "write_file",
                                             "timestamp": "2026-01-01T00:00:00Z"}))
    assert isinstance(before, BeforeToolEvent) and before.model_extra == {"timestamp": "2026-01-01T00:00:00Z"}
    after = typed(HookEvent(hook_event_name="AfterTool", tool_response={"llmContent": "ok"}))
    assert isinstance(after, AfterToolEvent) and after.tool_response == {"llmContent": "ok"}
    ended = typed(HookEvent(hook_event_name="SessionEnd", session_id="s-2", reason="exit"))
    assert isinstance(ended, SessionEndEvent) and (ended.session_id, ended.reason) == ("s-2", "exit")
    assert isinstance(typed(HookEvent(hook_event_name="Stop")), StopEvent)


@pytest.mark.parametrize("name", ["", "UserPromptSubmit", "Notification", "PreCompact"])
def test_an_event_no_adapter_acts_on_has_no_model(name: str) -> None:
    assert typed(HookEvent(hook_event_name=name)) is None


def test_an_event_without_a_session_belongs_to_the_unknown_session_as_at_the_door() -> None:
    event = typed(HookEvent(hook_event_name="SessionStart"))
    assert event is not None and event.session_id == "unknown"
