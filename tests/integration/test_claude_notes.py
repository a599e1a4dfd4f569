"""A note the person writes to a hooked Claude Code agent: the real CLI carries it to the model once.

As in test_claude_code.py: the CLI talks to a scripted Anthropic-Messages server on 127.0.0.1 and Belay's hooks
are installed into a settings file.  The person writes a note while the agent's first Write waits for approval,
then approves it; the model must read the note in its next request (after that call's result), and only there.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core import Console
from core.outside.notes import NOTE_HEADER
from tests.conftest import run
from tests.integration.fake_anthropic import ModelRequest, ScriptedModel, ToolCall, Turn, answers
from tests.integration.test_claude_code import _claude, _hooks_settings

NOTE = "Please keep the greeting in lower case from now on."


def _notes_in(request: ModelRequest) -> int:
    return json.dumps(request.messages).count(NOTE)


@pytest.mark.timeout(180)
def test_a_note_written_while_a_call_waits_reaches_the_model_with_that_call_once(workspace: Path,
                                                                                   tmp_path: Path) -> None:
    first = {"file_path": str(workspace / "hello.txt"), "content": "Hello\n"}
    second = {"file_path": str(workspace / "bye.txt"), "content": "bye\n"}
    turns = [Turn(tools=[ToolCall("Write", first, id="t_first")]),
             Turn(tools=[ToolCall("Write", second, id="t_second")], when=answers("t_first")),
             Turn(text="Done.", when=answers("t_second"))]
    settings = _hooks_settings(tmp_path)
    noted: list[bool] = []

    async def person(console: Console) -> None:
        seen: set[str] = set()
        while True:
            for request in console.pending_approvals():
                if request.call_id in seen:
                    continue
                seen.add(request.call_id)
                if not noted:
                    noted.append(await console.note(request.agent_id, NOTE))
                    noted.append(await console.note("no-such-agent", "lost"))
                console.approve(request.call_id)
            await asyncio.sleep(0.02)

    async def scenario() -> tuple[list[ModelRequest], list[str]]:
        async with Console(workspace) as console:
            console.register_approver("test")
            answering = asyncio.ensure_future(person(console))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    requests = model.message_requests()
            finally:
                answering.cancel()
                await asyncio.wait([answering])
        async with Console(workspace, track=False, serve=False) as reopened:  # what the journal kept
            return requests, [f"{m.kind}:{m.text}" for m in reopened.timeline.messages.values()]

    requests, kinds = run(scenario())
    assert noted == [True, False]
    told = next(r for r in requests if r.tool_result("t_first") and not r.tool_result("t_second"))
    system = [m for m in told.messages if m.get("role") == "system"]
    assert any(NOTE in json.dumps(m) and NOTE_HEADER in json.dumps(m) for m in system), told.messages[-2:]
    assert all(_notes_in(r) <= 1 for r in requests), "the note was delivered more than once"
    assert _notes_in(requests[-1]) == 1  # still in the history, never sent again
    assert f"note:{NOTE}" in kinds  # journaled and shown as the person's words in the agent's conversation
    assert (workspace / "hello.txt").read_text() == "Hello\n"
