"""Undo, redo and rewind do as much journal work after many calls as after a few (issue 16, point 5).

The work is counted, not timed: SQLite calls a progress handler every few virtual-machine instructions on the
journal's connection, so a query that reads every earlier call's changes (as the undo state was read before)
shows as work growing with the journal, whatever the machine's load.  The journals are written through the
`Journal` methods the recorder uses (calls with many changes each, so that a long journal costs few commits),
then opened by a real console, which undoes on the real workspace.  Timings are bench/undo.py's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from core import Console, RunStatus
from core.ids import new_agent_id, new_call_id, new_session_id
from core.models.records import ChangeKind, FileChange
from core.store.blobs import BlobBatch, BlobStore
from core.store.journal import SCHEMA, Journal
from core.store.undo_reads import UNDOS_OF
from tests.conftest import run

FILES = 20
"""Files each earlier call rewrites: a long journal has many changes touching the undone call's files."""
SHORT, LONG = 2, 60
"""Earlier calls in the short and in the long journal (40 and 1,200 changes)."""
STEP = 1
"""VM instructions per tick of the progress handler (SQLite counts them per statement: 1 misses none)."""


def _journal(workspace: Path, earlier: int, last: int = 3) -> list[str]:
    """`earlier` calls rewriting every file, then `last` calls rewriting one each; the ids, the files on disk."""
    state = Console(workspace).state_dir
    journal, blobs = Journal(state / "journal.sqlite3"), BlobStore(state / "blobs")
    session, agent = new_session_id(), new_agent_id()
    journal.start_session(session, str(workspace))
    journal.add_agent(agent, session, "agent", "scripted", None, None, None)
    names = [f"file_{k}.txt" for k in range(FILES)]
    now = {name: f"{name} as the project had it\n".encode() for name in names}
    ids = []
    with blobs.batch() as batch:  # one pack for all contents: a few syncs instead of two per blob
        for i in range(earlier + last):
            touched = names if i < earlier else [names[i % FILES]]
            ids.append(_call(journal, batch, session, agent, now, touched, i))
    journal.end_session(session)
    journal.close()
    for name, data in now.items():
        (workspace / name).write_bytes(data)
        (workspace / name).chmod(0o644)
    return ids


def _call(journal: Journal, blobs: BlobBatch, session: str, agent: str, now: dict[str, bytes],
          touched: list[str], i: int) -> str:
    """What the recorder journals for an allowed call that rewrote `touched`."""
    call_id = new_call_id()
    journal.add_call(call_id, session, agent, "Bash", {"command": f"step {i}"}, f"step {i}")
    journal.add_decision(call_id, "approved", "allowed by Bash [session]", "rule", "Bash [session]", durable=False)
    changes = []
    for name in touched:
        after = f"{name} after step {i}\n".encode()
        changes.append(FileChange(path=name, kind=ChangeKind.MODIFY, before_hash=blobs.put(now[name]),
                                  after_hash=blobs.put(after), before_mode=0o644, after_mode=0o644))
        now[name] = after
    journal.add_changes(call_id, changes)
    journal.finish_run(call_id, RunStatus.DONE, "", None, 0.01)
    return call_id


@asynccontextmanager
async def _counting(workspace: Path) -> AsyncIterator[tuple[Console, Callable[[], int]]]:
    """The console on `workspace`, and a counter of the journal's SQLite work since it was last read."""
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0  # go on

    def taken() -> int:
        done, ticks[0] = ticks[0], 0
        return done

    async with Console(workspace, serve=False) as console:
        db: sqlite3.Connection = console.recorder._journal._db  # the journal's own connection, on its thread
        db.set_progress_handler(tick, STEP)
        yield console, taken


def _work(tmp_path: Path, name: str, earlier: int, action: Callable[[Console, list[str]], object]) -> int:
    """The journal work `action` does on a journal with `earlier` many-file calls before the last three."""
    workspace = tmp_path / name
    workspace.mkdir()
    ids = _journal(workspace, earlier)

    async def scenario() -> int:
        async with _counting(workspace) as (console, taken):
            taken()
            await action(console, ids)  # type: ignore[misc]
            return taken()

    return run(scenario())


async def _undo_last(console: Console, ids: list[str]) -> None:
    report = await console.undo(ids[-1])
    assert report.ok and report.paths == (f"file_{(len(ids) - 1) % FILES}.txt",), report.message


async def _redo_last(console: Console, ids: list[str]) -> None:
    await _undo_last(console, ids)
    report = await console.redo(ids[-1])
    assert report.ok and report.redo, report.message


async def _rewind_last_two(console: Console, ids: list[str]) -> None:
    reports = await console.rewind(ids[-3])
    assert [r.call_id for r in reports] == [ids[-1], ids[-2]] and all(r.ok for r in reports)


def test_one_undo_does_no_more_journal_work_after_many_calls_than_after_a_few(tmp_path: Path) -> None:
    short = _work(tmp_path, "short", SHORT, _undo_last)
    long = _work(tmp_path, "long", LONG, _undo_last)
    assert short > 0
    assert long <= short * 1.1, f"{long} ticks after {LONG} calls, {short} after {SHORT}"


def test_a_redo_does_no_more_journal_work_after_many_calls(tmp_path: Path) -> None:
    short = _work(tmp_path, "short", SHORT, _redo_last)
    long = _work(tmp_path, "long", LONG, _redo_last)
    assert long <= short * 1.1, f"{long} ticks after {LONG} calls, {short} after {SHORT}"


def test_a_rewind_reads_only_the_calls_it_undoes(tmp_path: Path) -> None:
    short = _work(tmp_path, "short", SHORT, _rewind_last_two)
    long = _work(tmp_path, "long", LONG, _rewind_last_two)
    assert long <= short * 1.1, f"{long} ticks after {LONG} calls, {short} after {SHORT}"


def test_the_indexed_reads_agree_with_the_whole_journal_after_undos_redos_and_an_old_rollback(tmp_path: Path) -> None:
    """What an undo now reads of a few operations is what reading the whole journal says about them."""
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name} before\n")

    async def scenario() -> None:
        async with Console(tmp_path, serve=False) as console:
            console.register_approver("test")
            console.set_mode("bypass")  # the policy is tested elsewhere
            agent = await console.start_agent("agent", "scripted")
            ids = []
            for command in ("echo 1 > a.txt; echo 1 > b.txt", "echo 2 > b.txt; echo 2 > c.txt", "echo 3 > a.txt"):
                outcome = await console.call(agent, "Bash", {"command": command})
                assert outcome.status == RunStatus.DONE, outcome.text
                ids.append(outcome.call_id)
            partial = await console.undo(ids[1], paths=["c.txt"])
            undone = await console.undo(ids[2])
            assert partial.ok and undone.ok and (await console.redo(ids[2])).ok
            assert (await console.undo(ids[1])).ok  # the rest of it: b.txt
            assert (tmp_path / "a.txt").read_text() == "3\n" and not (tmp_path / "c.txt").exists()
            assert partial.rollback_id is not None
        with sqlite3.connect(console.state_dir / "journal.sqlite3") as db:  # as a journal from before redo had it
            db.execute("UPDATE rollbacks SET target=NULL WHERE id=?", (partial.rollback_id,))
        journal = Journal(console.state_dir / "journal.sqlite3")
        whole, calls = journal.undo_state(), journal.calls()
        operations = ids + [r.rollback_id for r in journal.rollbacks(state=None)]
        assert any(op != ids[1] and op in {ref[0] for ref in whole} for op in operations)  # a redo is in there
        for op in operations:
            assert journal.undo_state_of([op]) == {ref: by for ref, by in whole.items() if ref[0] == op}, op
        assert journal.undo_state_of(ids) == {ref: by for ref, by in whole.items() if ref[0] in ids}
        for i, call in enumerate(calls):
            assert journal.call_record(call.call_id) == call
            assert journal.calls_after(call.call_id) == calls[i + 1:]
        assert journal.call_record("call_nonesuch") is None and journal.calls_after("call_nonesuch") is None
        journal.close()

    run(scenario())


def test_a_journal_from_before_the_indexes_gets_them_when_opened(tmp_path: Path) -> None:
    """A journal of the first release (no undo targets, no indexes for them) is indexed when Belay opens it."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)  # the first release's tables, without the columns added since
    db.close()
    with sqlite3.connect(path) as db:
        assert "target" not in {row[1] for row in db.execute("PRAGMA table_info(rollbacks)")}
    Journal(path).close()
    with sqlite3.connect(path) as db:
        indexes = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        plan = " ".join(str(row) for row in db.execute(f"EXPLAIN QUERY PLAN {UNDOS_OF}", ('["call_x"]',)))
    assert {"rollbacks_target", "decisions_call", "calls_created"} <= indexes
    assert "SCAN r" not in plan and "rollbacks_target" in plan  # the undos of an operation are looked up
