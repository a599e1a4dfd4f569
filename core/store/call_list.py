"""The journaled calls as `belay calls` lists them, read with sqlite3 alone.

`belay calls` is a look at the journal from a shell: it should answer in about the time Python takes to
start, so it reads the rows it prints without the records' pydantic models, the console or its timeline.
What it reads is what `Journal.calls` and the timeline's agents give the window (the same rows, the same
undo state through core.store.undo_reads), as plain data.  Read-only, beside a console writing the journal.

A journal only a writing open can bring up to date (written before its mark or its newer columns, or
never sealed) is not read here: `listed` returns None and the caller opens a console on it, which does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from core.store import journal_file
from core.store.undo_reads import undo_state_of
from core.store.undone import undone_positions

CALLS = ("SELECT c.id, c.agent_id, c.tool, c.summary, c.created_at, r.status, a.name, a.kind, a.parent_id,"
         " a.spawned_by FROM calls c JOIN runs r ON r.call_id=c.id JOIN agents a ON a.id=c.agent_id"
         " ORDER BY c.created_at, c.rowid")
"""As core.store.journal_rows.CALLS, in its order, with only what a listing shows."""
CHANGES = ("SELECT c.op_id, c.path, c.stored AND (c.before_hash IS NOT NULL OR c.kind = 'create')"
           " FROM json_each(?) AS j JOIN changes c ON c.op_id = j.value ORDER BY c.op_id, c.seq")
"""Each change of the calls in ?1 (a JSON list): its path and whether an undo can put back what was there
(core.models.records.FileChange.restorable)."""
GIT = "SELECT g.op_id, g.what FROM json_each(?) AS j JOIN git_changes g ON g.op_id = j.value ORDER BY g.op_id, g.seq"
DECISIONS = ("SELECT d.call_id, d.decision, d.decided_by, d.rule, d.reason FROM json_each(?) AS j"
             " JOIN decisions d ON d.call_id = j.value ORDER BY d.id")
EARLY = ("SELECT c.agent_id FROM calls c JOIN agents a ON a.id = c.agent_id WHERE c.created_at < a.started_at"
         " UNION SELECT b.agent_id FROM batches b JOIN agents a ON a.id = b.agent_id WHERE b.created_at < a.started_at")
"""Agents with a call or a batch journaled before the agent started (clocks that disagree): the timeline,
which takes the journal in time order, met the call first and knows its agent as "unknown" (Timeline.load)."""


class ListedCall(NamedTuple):
    """One journaled call as a listing shows it (a NamedTuple: dataclasses costs `belay calls` 10 ms to import)."""

    call_id: str
    agent_name: str
    agent_id: str
    agent_kind: str | None
    """The agent's kind (scripted, claude-code...), "unknown" as the timeline has it (see EARLY); None when
    the timeline has no such agent."""
    parent_agent_id: str | None
    spawned_by: str | None
    """The call that started this call's agent (a sub-agent's Task call)."""
    tool: str
    summary: str
    status: str
    """The run's status (done, failed, ...), as journaled."""
    files_changed: tuple[str, ...]
    undone_files: tuple[str, ...]
    """The files whose change is undone now, in the order of the call's changes."""
    undone: bool
    """Every change the call made that can be undone is undone."""
    git: tuple[str, ...]
    """What each git reference move of the call was, as journaled."""
    created_at: str
    """When it was made, ISO 8601 as a datetime reads it back."""
    decision: dict[str, object] | None
    """The last decision journaled about it: decision, decided_by, rule, reason (None: none journaled)."""


def listed(path: Path) -> list[ListedCall] | None:
    """Every call journaled at `path`, oldest first; None when there is no journal yet or it needs bringing up
    to date first (see above).  Raises JournalUnusable for a damaged or foreign file."""
    if not path.exists() or journal_file.inspect(path):
        return None  # none yet (a console makes it, and the state folder), or one to mark and bring up to date
    with journal_file.read_only(path) as db:
        if not journal_file.up_to_date(db):
            return None
        db.execute("BEGIN")  # one snapshot: a console may be writing
        try:
            return _calls(db)
        finally:
            db.execute("COMMIT")


def _calls(db: sqlite3.Connection) -> list[ListedCall]:
    rows = _tuples(db, CALLS)
    if not rows:
        return []
    ids = [r[0] for r in rows]
    picked = json.dumps(ids)
    changes: dict[str, list[tuple[str, bool]]] = {}
    for op_id, path, restorable in _tuples(db, CHANGES, picked):
        changes.setdefault(op_id, []).append((path, bool(restorable)))
    git: dict[str, list[str]] = {}
    for op_id, what in _tuples(db, GIT, picked):
        git.setdefault(op_id, []).append(what)
    decisions: dict[str, dict[str, object]] = {}
    for call_id, decision, by, rule, reason in _tuples(db, DECISIONS, picked):
        decisions[call_id] = {"decision": decision, "decided_by": _decided_by(by), "rule": rule, "reason": reason}
    undone: dict[str, dict[tuple[str, int], tuple[str, int]]] = {}
    for ref, by in undo_state_of(db, ids).items():
        undone.setdefault(ref[0], {})[ref] = by
    unknown = {r[0] for r in _tuples(db, EARLY)}
    return [_listed(r, changes.get(r[0], ()), git.get(r[0], ()), undone.get(r[0]), decisions.get(r[0]),
                    r[1] in unknown) for r in rows]


def _tuples(db: sqlite3.Connection, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """Plain tuples, not `sqlite3.Row`s (whose lookups by name are a third of a listing's time)."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params).fetchall()


def _listed(r: tuple[Any, ...], changes: Sequence[tuple[str, bool]], git: Sequence[str],
            undone: dict[tuple[str, int], tuple[str, int]] | None, decision: dict[str, object] | None,
            unknown: bool) -> ListedCall:
    """As core.store.journal_rows.call works out the undo state (CallRecord.undone_by, undone_paths)."""
    call_id, agent_id, tool, summary, created_at, status, name, kind, parent, spawner = r
    paths = tuple(path for path, _ in changes)
    undone_files: tuple[str, ...] = ()
    whole = False
    if undone:
        positions = undone_positions(undone, call_id)
        restorable = [i for i, (_, can) in enumerate(changes) if can] + [-1 - i for i in range(len(git))]
        undone_files = tuple(paths[i] for i in sorted(positions) if i >= 0)
        whole = bool(restorable) and all(i in positions for i in restorable)
    if unknown:
        kind, parent, spawner = "unknown", None, None
    return ListedCall(call_id, name, agent_id, kind, parent, spawner, tool, summary, status, paths, undone_files,
                      whole, tuple(git), datetime.fromisoformat(created_at).isoformat(), decision)


def _decided_by(value: str) -> str:
    """As core.models.records.decided_by: an old journal's "user" reads as "person"."""
    return "person" if value == "user" else value
