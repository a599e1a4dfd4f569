"""Notes to a hooked agent: held per agent, journaled as the person's, carried once by the next hook answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from core import Console
from core.outside.notes import NOTE_HEADER, Notes, joined
from core.outside.requests import HookEvent
from tests.conftest import run


def test_notes_are_taken_once_oldest_first_with_who_wrote_them() -> None:
    notes = Notes()
    notes.hold("a1", "first")
    notes.hold("a1", "second")
    assert notes.waiting("a1") == 2 and notes.waiting("a2") == 0
    assert notes.take("a1") == f"{NOTE_HEADER}\nfirst\n\n{NOTE_HEADER}\nsecond"
    assert notes.take("a1") == "" and "waiting=0" in repr(notes)
    assert joined("", "a", "", "b") == "a\n\nb"


def _event(name: str, workspace: Path, **fields: Any) -> HookEvent:
    return HookEvent.model_validate({"session_id": "sess-notes", "cwd": str(workspace), "hook_event_name": name,
                                     "permission_mode": "default", **fields})


def test_a_note_goes_with_the_next_answer_once_and_is_journaled_as_the_persons(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            assert console.outside is not None
            hooks = console.outside.hooks
            assert not await console.note("nobody", "lost")  # no such agent: nothing kept
            await hooks.handle(_event("SessionStart", workspace))
            agent = hooks.session_agent("sess-notes")
            assert agent is not None
            assert not await console.note(agent.agent_id, "   ")
            assert await console.note(agent.agent_id, "use the staging database")
            [note] = [m for m in console.timeline.messages.values() if m.kind == "note"]
            assert (note.agent_id, note.text) == (agent.agent_id, "use the staging database")
            read = {"file_path": str(workspace / "README.md")}
            await hooks.handle(_event("PreToolUse", workspace, tool_name="Read", tool_use_id="t1", tool_input=read))
            pre = await hooks.handle(_event("PreToolUse", workspace, tool_name="Read", tool_use_id="t2",
                                            tool_input=read))
            assert "additionalContext" not in (pre.output or {})["hookSpecificOutput"]  # taken by t1's already
            post = await hooks.handle(_event("PostToolUse", workspace, tool_name="Read", tool_use_id="t2",
                                             tool_input=read, tool_response={}))
            assert post.output is None
            assert await console.note(agent.agent_id, "and say when you are done")
            post = await hooks.handle(_event("PostToolUse", workspace, tool_name="Read", tool_use_id="t1",
                                             tool_input=read, tool_response={}))
            assert post.output == {"hookSpecificOutput": {
                "hookEventName": "PostToolUse", "additionalContext": f"{NOTE_HEADER}\nand say when you are done"}}
            await hooks.handle(_event("SessionEnd", workspace, reason="exit"))
            assert not await console.note(agent.agent_id, "too late")

    run(scenario())


def test_a_call_refused_carries_the_note_after_its_reason(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            assert console.outside is not None
            console.register_approver("test")
            hooks = console.outside.hooks
            await hooks.handle(_event("SessionStart", workspace))
            agent = hooks.session_agent("sess-notes")
            assert agent is not None and await console.note(agent.agent_id, "leave src alone")
            pre = asyncio.ensure_future(hooks.handle(_event(
                "PreToolUse", workspace, tool_name="Bash", tool_use_id="t1",
                tool_input={"command": "rm -rf src", "description": "clean"})))
            while not console.pending_approvals():
                await asyncio.sleep(0.01)
            console.deny(console.pending_approvals()[0].call_id, "no")
            output = (await pre).output or {}
            answer = output["hookSpecificOutput"]
            assert answer["permissionDecision"] == "deny" and "additionalContext" not in answer
            assert answer["permissionDecisionReason"].endswith(f"no\n\n{NOTE_HEADER}\nleave src alone")

    run(scenario())
