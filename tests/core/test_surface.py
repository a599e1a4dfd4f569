"""The console surface the window is typed against: Belay's own Console and a console on another host both have it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from core import Console, ConsoleSurface, RemoteConsole
from core.remote.reach import Reach
from core.surface import FormDesk, WorkspaceRoot

MEMBERS = sorted(name for name in dir(ConsoleSurface) if not name.startswith("_"))


def _parameters(cls: type, name: str) -> list[str]:
    function = inspect.getattr_static(cls, name)
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind is not p.VAR_KEYWORD]


def test_both_consoles_have_every_member_of_the_surface(tmp_path: Path) -> None:
    local: ConsoleSurface = Console(tmp_path, serve=False, track=False)  # mypy checks these two assignments
    remote: ConsoleSurface = RemoteConsole(Reach.of(str(tmp_path)))
    for console in (local, remote):
        assert isinstance(console, ConsoleSurface)
        assert isinstance(console.workspace, WorkspaceRoot) and console.workspace.root == tmp_path.resolve()
        assert isinstance(console.elicitations, FormDesk)
    assert "approve" in MEMBERS and "undo" in MEMBERS and "where" in MEMBERS


@pytest.mark.parametrize("cls", [Console, RemoteConsole])
@pytest.mark.parametrize("name", [m for m in MEMBERS if callable(inspect.getattr_static(ConsoleSurface, m))])
def test_each_command_takes_what_the_surface_says(cls: type, name: str) -> None:
    """A method of the surface: each console's takes the same parameters, by name (a console may take a
    catch-all `**options` where it refuses the command, as a console on another host does to launching)."""
    said = _parameters(ConsoleSurface, name)
    taken = _parameters(cls, name)
    assert taken[:len(said)] == said or (cls is RemoteConsole and taken == ["self", "prompt"] == said[:2])
    assert inspect.iscoroutinefunction(inspect.getattr_static(cls, name)) == \
        inspect.iscoroutinefunction(inspect.getattr_static(ConsoleSurface, name))


def test_a_console_that_lacks_a_member_is_not_a_surface() -> None:
    class Partial:
        def approve(self, call_id: str) -> bool:
            return True

    assert not isinstance(Partial(), ConsoleSurface)


def test_a_consoles_reads_answer_from_its_journal_timeline_and_policy(workspace: Path) -> None:
    """ConsoleReads, the part of Console that front ends read: a call made, then read back every way."""
    from core import RunStatus
    from core.surface import ConsoleReads
    from tests.conftest import run

    async def scenario() -> None:
        async with Console(workspace, serve=False) as console:
            assert isinstance(console, ConsoleReads) and console.where == str(workspace.resolve())
            timeline, subscription = console.attach()
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
            assert outcome.status == RunStatus.DONE and timeline is console.timeline
            [record] = await console.history()
            assert await console.call_record(record.call_id) == record
            assert await console.full_output(record.call_id) is None and await console.diffs_for(record.call_id) == []
            assert (console.mode, console.held_back(), console.mcp_servers()) == ("default", [], [])
            assert console.rules() == [] and console.pending_approvals() == []
            assert console.workspace_held() is None and console.cache_stats() is not None
            assert (await console.verify()).ok
            subscription.close()

    run(scenario())
