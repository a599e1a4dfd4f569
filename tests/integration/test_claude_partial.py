"""The real Claude Code CLI's edit approved in part through Belay's hooks: what is written, and what the model reads.

As in test_claude_code.py: the CLI talks to a scripted Anthropic-Messages server on 127.0.0.1 and Belay's hooks
are installed into a settings file; a "person" task approves an Edit with one of its three hunks rejected.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core import Console
from tests.conftest import run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers
from tests.integration.test_claude_code import _claude, _hooks_settings


@pytest.mark.timeout(180)
def test_an_edit_approved_in_part_writes_the_accepted_hunks_and_the_model_is_told_which_were_not(
        workspace: Path, tmp_path: Path) -> None:
    target = workspace / "src" / "app.py"
    before = "".join(f"line_{n} = {n}\n" for n in range(60))
    target.write_text(before)
    span = "".join(f"line_{n} = {n}\n" for n in range(5, 56))
    changed = span.replace("line_5 = 5\n", "line_5 = -5\n").replace("line_30 = 30\n", "line_30 = -30\n").replace(
        "line_55 = 55\n", "line_55 = -55\n")  # one Edit whose diff has three hunks
    edit = {"file_path": str(target), "old_string": span, "new_string": changed}
    turns = [Turn(tools=[ToolCall("Edit", edit, id="t_edit")]),
             Turn(text="Noted.", when=answers("t_edit"))]
    settings = _hooks_settings(tmp_path)

    async def person(console: Console) -> None:
        while not console.pending_approvals():
            await asyncio.sleep(0.02)
        [request] = console.pending_approvals()
        console.approve(request.call_id, hunks={"src/app.py": [0, 2]}, reason="30 stays positive")

    async def scenario() -> str:
        async with Console(workspace) as console:
            console.register_approver("test")
            answering = asyncio.ensure_future(person(console))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    last = [r for r in model.message_requests() if r.tool_result("t_edit")][0]
                    return json.dumps(last.messages[-1])
            finally:
                answering.cancel()
                await asyncio.wait([answering])

    told = json.loads(run(scenario()))
    assert target.read_text() == before.replace("line_5 = 5\n", "line_5 = -5\n").replace("line_55 = 55\n",
                                                                                        "line_55 = -55\n")
    # Claude Code 2.1.332 puts a PreToolUse hook's additionalContext after the tool_result, as a system message.
    assert told["role"] == "system", told
    assert told["content"][0]["text"] == (
        "PreToolUse:Edit hook additional context: The user approved this change only in part; hunk 2 of 3 in "
        "src/app.py was not applied: 30 stays positive. The rest was written; read the file to see what it holds now.")
