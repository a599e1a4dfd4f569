"""The real Claude Code CLI in a project Belay has not seen, with Belay's hooks installed for the user and the
console for every workspace running: it asks once, then supervises the project like any workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import Hub, RunStatus
from core.hub import Answer
from tests.conftest import run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, result_text
from tests.integration.test_claude_code import _claude, _hooks_settings


@pytest.mark.timeout(180)
def test_claude_code_in_an_unseen_project_is_asked_about_once_then_supervised_and_undoable(tmp_path: Path) -> None:
    project = tmp_path / "side-project"
    project.mkdir()
    (project / "app.py").write_text("print('v1')\n")
    turns = [
        Turn(tools=[ToolCall("Read", {"file_path": str(project / "app.py")}, id="t_read")]),
        Turn(tools=[ToolCall("Write", {"file_path": str(project / "app.py"), "content": "print('v2')\n"},
                             id="t_write")], when=answers("t_read")),
        Turn(text="Updated.", when=answers("t_write")),
    ]
    asked: list[tuple[Path, str]] = []

    async def ask(directory: Path, agent: str) -> Answer:
        asked.append((directory, agent))
        return "supervise"

    async def person(hub: Hub) -> None:
        while True:
            for console in list(hub.consoles.values()):
                for request in console.pending_approvals():
                    console.approve(request.call_id)
            await asyncio.sleep(0.02)

    async def scenario() -> None:
        hub = Hub(ask=ask)
        hub.on_opened(lambda console: console.register_approver("test"))  # as the window's page does
        assert await hub.start()
        approving = asyncio.ensure_future(person(hub))
        try:
            with ScriptedModel(turns) as model:
                code, output = await _claude(model, project, _hooks_settings(tmp_path))
                assert code == 0 and model.unscripted == [], output
                read = next(r.tool_result("t_read") for r in model.message_requests() if r.tool_result("t_read"))
                assert read is not None and "v1" in result_text(read)
                wrote = next(r.tool_result("t_write") for r in model.message_requests() if r.tool_result("t_write"))
                assert wrote is not None and not wrote.get("is_error"), result_text(wrote)
            assert asked == [(project.resolve(), "Claude Code")]  # once, though every call and event went there
            assert (project / "app.py").read_text() == "print('v2')\n"
            console = hub.consoles[project.resolve()]
            write = next(r for r in await console.history() if r.tool == "Write")
            assert write.status is RunStatus.DONE
            report = await console.undo(write.call_id)
            assert report.ok, report.message
            assert (project / "app.py").read_text() == "print('v1')\n"
        finally:
            approving.cancel()
            await asyncio.wait([approving])
            await hub.close()

    run(scenario())
