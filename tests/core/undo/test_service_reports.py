"""What an undo says it did: a file a call created is removed, not restored; an Agent call points to the
calls of the sub-agent it started."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run
from tests.core.undo.test_service import allowing


def test_undo_says_a_file_the_call_created_was_removed_and_one_it_changed_restored(workspace: Path) -> None:
    async def scenario() -> str:
        async with allowing(workspace, "Write") as console:
            agent = await console.start_agent("agent", "scripted")
            await console.call(agent, "Write", {"file_path": str(workspace / "new.txt"), "content": "new\n"})
            await console.call(agent, "Write", {"file_path": str(workspace / "README.md"), "content": "changed\n"})
            [made, changed] = await console.history()
            first = (await console.undo(made.call_id)).message
            second = (await console.undo(changed.call_id)).message
            return f"{first}\n{second}"

    said = run(scenario())
    assert "Removed 1 file the call had created: new.txt" in said and "Restored 1 file: README.md" in said, said
    assert "file(s)" not in said


def test_undoing_an_agent_call_that_changed_nothing_itself_names_its_sub_agents_calls(workspace: Path) -> None:
    async def scenario() -> tuple[bool, str, str]:
        async with allowing(workspace, "Write") as console:
            lead = await console.start_agent("lead", "scripted")
            spawn = await console.call(lead, "TodoWrite", {"todos": []})  # stands for the Agent call that spawns
            helper = await console.start_agent("docs-writer", "scripted", parent=lead, spawned_by=spawn.call_id)
            wrote = await console.call(helper, "Write", {"file_path": str(workspace / "doc.md"), "content": "d\n"})
            report = await console.undo(spawn.call_id)
            return report.ok, report.message, wrote.call_id

    ok, message, wrote = run(scenario())
    assert not ok and "changed no files itself" in message and wrote in message, message
    assert "Rewind to here" in message
