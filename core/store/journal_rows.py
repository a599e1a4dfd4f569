"""Journal rows read back as records: the call, change, decision and undo rows `core.store.journal` keeps.

Split from the journal (which writes and reads the database) so that how a row becomes a record, and how a
call's undo state is worked out from the rollbacks through the indexes, stand in one place that both
`Journal.calls` and the undo service's reads use.  Every function takes a connection (or rows) whose lock
the caller holds.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from core.errors import ErrorInfo
from core.ids import RollbackId
from core.models.records import (
    CallDecision,
    CallRecord,
    ChangeKind,
    Decision,
    FileChange,
    GitChange,
    RollbackRecord,
    RunStatus,
    decided_by,
)
from core.store.undo_reads import undo_state_of
from core.store.undone import Ref, undone_positions

CALLS = ("SELECT c.*, r.status, r.duration_s, r.output, r.error, r.cached, r.attempts, r.started_at, r.ended_at,"
         " a.name AS agent_name FROM calls c JOIN runs r ON r.call_id=c.id JOIN agents a ON a.id=c.agent_id")


def records(db: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[CallRecord]:
    """Calls rows (`CALLS`) made whole, their changes, decisions and undo state read through indexes."""
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    picked = json.dumps(ids)
    changes: dict[str, list[sqlite3.Row]] = {}
    for r in db.execute("SELECT c.* FROM json_each(?) AS j JOIN changes c ON c.op_id = j.value", (picked,)):
        changes.setdefault(r["op_id"], []).append(r)
    git: dict[str, list[sqlite3.Row]] = {}
    for r in db.execute("SELECT g.* FROM json_each(?) AS j JOIN git_changes g ON g.op_id = j.value", (picked,)):
        git.setdefault(r["op_id"], []).append(r)
    decisions: dict[str, CallDecision] = {}
    for r in db.execute("SELECT d.* FROM json_each(?) AS j JOIN decisions d ON d.call_id = j.value ORDER BY d.id",
                        (picked,)):
        decisions[r["call_id"]] = decision(r)
    undone: dict[str, dict[Ref, Ref]] = {}  # per call: `_call` looks through all it is given
    for ref, by in undo_state_of(db, ids).items():
        undone.setdefault(ref[0], {})[ref] = by
    return [call(r, [change(c) for c in by_seq(changes.get(r["id"], []))],
                  [git_change(g) for g in by_seq(git.get(r["id"], []))], undone.get(r["id"], {}),
                  decisions.get(r["id"])) for r in rows]


def by_seq(rows: list[sqlite3.Row]) -> list[sqlite3.Row]:
    return sorted(rows, key=lambda r: r["seq"])


def change(r: sqlite3.Row) -> FileChange:
    return FileChange(path=r["path"], kind=ChangeKind(r["kind"]), before_hash=r["before_hash"],
                      after_hash=r["after_hash"], before_mode=r["before_mode"], after_mode=r["after_mode"],
                      old_path=r["old_path"], before_link=bool(r["before_link"]), after_link=bool(r["after_link"]),
                      stored=bool(r["stored"]))


def git_change(r: sqlite3.Row) -> GitChange:
    return GitChange(ref=r["ref"], kind=r["kind"], before=r["before"], after=r["after"], what=r["what"])


def rollback(r: sqlite3.Row, changes: list[sqlite3.Row], git: list[sqlite3.Row]) -> RollbackRecord:
    legacy = r["target"] is None  # written before undos could be undone: it reverted the whole call
    return RollbackRecord(
        rollback_id=r["id"], call_id=r["call_id"], target=r["target"] or r["call_id"], forced=bool(r["forced"]),
        state=r["state"], message=r["message"], created_at=r["created_at"],
        changes=tuple(change(c) for c in changes),
        reverts=(None,) if legacy else tuple(c["reverts"] for c in changes),
        git_changes=tuple(git_change(g) for g in git), git_reverts=tuple(g["reverts"] for g in git))


def column(r: sqlite3.Row, name: str) -> Any:
    """A column a row read before it was added (an older journal, a hand-made row) does not have: None."""
    return r[name] if name in r.keys() else None  # noqa: SIM118 - a Row has keys(), not `in`


def decision(r: sqlite3.Row) -> CallDecision:
    """The journaled decision; an old journal's "user" reads as "person" (see `decided_by`)."""
    return CallDecision(decision=Decision(r["decision"]), reason=r["reason"], by=decided_by(r["decided_by"]),
                        rule=r["rule"], via=column(r, "via"))


def call(r: sqlite3.Row, changes: list[FileChange], git: list[GitChange],
          undone: dict[Ref, Ref], decision: CallDecision | None = None) -> CallRecord:
    positions = undone_positions(undone, r["id"])
    restorable = [i for i, c in enumerate(changes) if c.restorable] + [-1 - i for i in range(len(git))]
    whole = bool(restorable) and all(i in positions for i in restorable)
    return CallRecord(
        call_id=r["id"], session_id=r["session_id"], agent_id=r["agent_id"], agent_name=r["agent_name"],
        tool=r["tool"], summary=r["summary"], args=json.loads(r["args"]), status=RunStatus(r["status"]),
        created_at=r["created_at"], duration_s=r["duration_s"], output=r["output"] or "",
        error=ErrorInfo.model_validate_json(r["error"]) if r["error"] else None,
        changes=tuple(changes), git_changes=tuple(git),
        undone_paths=tuple(changes[i].path for i in sorted(positions) if i >= 0),
        git_undone=any(i < 0 for i in positions),
        undone_by=RollbackId(positions[restorable[-1]]) if whole else None,
        cached=bool(r["cached"]), attempts=r["attempts"], batch_id=r["batch_id"], batch_key=r["batch_key"],
        use_id=column(r, "use_id"), started_at=r["started_at"], ended_at=r["ended_at"], decision=decision,
    )
