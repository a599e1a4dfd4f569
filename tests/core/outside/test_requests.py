"""The request models the console's socket validates what other processes send into, before any handler runs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from core.outside.requests import ByeRequest, CallRequest, HookEvent, HookRequest, PingRequest, ToolsRequest


def _hook(event: dict[str, Any]) -> dict[str, Any]:
    """A hook request as the endpoint has it once the framed event is read: token and length included."""
    return {"token": "t" * 64, "kind": "hook", "length": 100, "event": event}


def test_hook_fields_belay_does_not_read_are_kept_so_a_newer_claude_code_is_not_refused() -> None:
    event = {"hook_event_name": "PreToolUse", "session_id": "s-1", "tool_name": "Edit", "tool_use_id": "toolu_1",
             "tool_input": {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"},
             "cwd": "/w", "permission_mode": "acceptEdits", "transcript_path": "/t.jsonl",
             "a_field_of_a_later_release": {"nested": [1, 2]}}
    request = HookRequest.model_validate(_hook(event))
    assert request.event.model_extra == {"cwd": "/w", "permission_mode": "acceptEdits",
                                         "transcript_path": "/t.jsonl", "a_field_of_a_later_release": {"nested": [1, 2]}}
    assert request.event.model_dump() == {**HookEvent().model_dump(), **event}


@pytest.mark.parametrize("session", [{}, {"session_id": None}, {"session_id": ""}])
def test_an_event_without_a_session_id_belongs_to_the_unknown_session(session: dict[str, Any]) -> None:
    event = HookEvent.model_validate({"hook_event_name": None, "tool_name": None, "tool_use_id": None, **session})
    assert event.session_id == "unknown"
    assert (event.hook_event_name, event.tool_name, event.tool_use_id) == ("", "", "")  # null reads as absent


@pytest.mark.parametrize("tool_input", ["write everything", ["a", "b"], 42])
def test_a_tool_input_that_is_not_an_object_is_refused_saying_where(tool_input: object) -> None:
    with pytest.raises(ValidationError) as refused:
        HookRequest.model_validate(_hook({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Write",
                                          "tool_input": tool_input}))
    assert [e["loc"] for e in refused.value.errors()] == [("event", "tool_input")]


def test_a_field_belay_reads_with_the_wrong_type_is_refused_rather_than_coerced() -> None:
    with pytest.raises(ValidationError) as refused:
        HookEvent.model_validate({"hook_event_name": "PreToolUse", "session_id": 1234, "tool_use_id": ["t"]})
    assert sorted(e["loc"] for e in refused.value.errors()) == [("session_id",), ("tool_use_id",)]


def test_a_call_or_bye_without_client_names_is_the_default_mcp_client_session() -> None:
    call = CallRequest.model_validate({"token": "t", "kind": "call", "tool": "Read"})
    assert (call.client, call.client_session, call.args) == ("mcp client", "default", {})
    assert ByeRequest.model_validate({"token": "t", "kind": "bye"}).client_session == "default"
    named = CallRequest.model_validate({"kind": "call", "tool": "LS", "client": "zed", "client_session": "w2",
                                        "args": {"path": "/w"}})
    assert (named.client, named.client_session, named.args) == ("zed", "w2", {"path": "/w"})


def test_a_handler_never_sees_the_token_and_a_request_of_another_kind_does_not_fit() -> None:
    for model, request in ((CallRequest, {"kind": "call", "tool": "Read"}), (ToolsRequest, {"kind": "tools"}),
                           (PingRequest, {"kind": "ping"}), (ByeRequest, {"kind": "bye"})):
        valid = model.model_validate({"token": "secret", "length": 3, **request})
        assert "secret" not in str(valid.model_dump()) and "token" not in valid.model_dump()
        with pytest.raises(ValidationError):
            model.model_validate({**request, "kind": "hook"})
