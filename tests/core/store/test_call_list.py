"""`belay calls`'s reader (core.store.call_list): the calls, their status, files, undo state and agents read with
sqlite3 alone, as the console's own history and timeline have them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core import AgentNode, CallRecord, Console, RunStatus, workspace_state_dir
from core.store import call_list
from core.store.journal_file import APPLICATION_ID
from core.store.journal_schema import SCHEMA
from tests.conftest import run


def _journal(ws: Path, state_dir: Path) -> dict[str, str]:
    """Calls of a lead agent and of a sub-agent it started: one undone whole, one undone for one of its two
    files, one undone then redone, one read; their ids."""
    for name in ("a.txt", "b.txt"):
        (ws / name).write_text(f"{name}\n")

    async def make() -> dict[str, str]:
        async with Console(ws, state_dir=state_dir) as console:
            for rule in ("Write", "Read"):
                await console.add_rule(rule, "allow", "session")
            lead = await console.start_agent("lead", "scripted")
            gone = await console.call(lead, "Write", {"file_path": str(ws / "c.txt"), "content": "c\n"})
            console.set_mode("bypass")  # a command that writes is asked, and nobody is here to answer
            both = await console.call(lead, "Bash", {"command": "echo 1 > a.txt; echo 2 > b.txt"})
            console.set_mode("default")
            back = await console.call(lead, "Write", {"file_path": str(ws / "d.txt"), "content": "d\n"})
            helper = await console.start_agent("helper", "scripted", parent=lead, spawned_by=both.call_id)
            read = await console.call(helper, "Read", {"file_path": str(ws / "a.txt")})
            assert [o.status for o in (gone, both, back, read)] == [RunStatus.DONE] * 4
            assert (await console.undo(gone.call_id)).ok
            assert (await console.undo(both.call_id, paths=["b.txt"])).ok
            assert (await console.undo(back.call_id)).ok and (await console.redo(back.call_id)).ok
            return {"gone": gone.call_id, "both": both.call_id, "back": back.call_id, "read": read.call_id}

    return run(make())


def _history(ws: Path, state_dir: Path) -> tuple[list[CallRecord], dict[str, AgentNode]]:
    async def load() -> tuple[list[CallRecord], dict[str, AgentNode]]:
        async with Console(ws, state_dir=state_dir, track=False) as console:
            return await console.history(), dict(console.timeline.agents)

    return run(load())


def test_the_listing_is_what_the_console_reads_from_the_same_journal(workspace: Path, state_dir: Path) -> None:
    ids = _journal(workspace, state_dir)
    listed = call_list.listed(workspace_state_dir(workspace, state_dir) / "journal.sqlite3")
    calls, agents = _history(workspace, state_dir)
    assert listed is not None and [c.call_id for c in listed] == [c.call_id for c in calls]
    for mine, theirs in zip(listed, calls):
        agent = agents[theirs.agent_id]
        decision = theirs.decision
        assert decision is not None
        assert mine == call_list.ListedCall(
            theirs.call_id, theirs.agent_name, theirs.agent_id, agent.agent_kind, agent.parent_id, agent.spawned_by,
            theirs.tool, theirs.summary, theirs.status.value, tuple(c.path for c in theirs.changes),
            tuple(theirs.undone_paths), theirs.undone_by is not None, tuple(g.what for g in theirs.git_changes),
            theirs.created_at.isoformat(),
            {"decision": decision.decision.value, "decided_by": decision.by, "rule": decision.rule,
             "reason": decision.reason})
    by_id = {c.call_id: c for c in listed}
    assert by_id[ids["gone"]].undone and not by_id[ids["back"]].undone
    assert (by_id[ids["both"]].undone, by_id[ids["both"]].undone_files) == (False, ("b.txt",))
    assert by_id[ids["read"]].parent_agent_id == by_id[ids["both"]].agent_id
    assert by_id[ids["read"]].spawned_by == ids["both"]


def test_a_journal_only_a_writing_open_can_bring_up_to_date_is_left_to_one(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    assert call_list.listed(path) is None  # none yet: the console that makes it makes its folder too
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)  # the first release's tables, without the columns added since or the seals
    db.close()
    assert call_list.listed(path) is None  # not marked as Belay's yet
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
    db.close()
    assert call_list.listed(path) is None  # marked, but without the newer columns
