"""Which journaled changes are undone now, read through the journal's indexes with sqlite3 alone.

Split from core.store.journal_rows (which makes records of the rows) so that a reader without the records'
models, `belay calls` (core.store.call_list), works out a call's undo state the same way as the journal does.
Every function takes a connection whose rows read as `sqlite3.Row` and whose lock the caller holds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from core.store.undone import Ref, RollbackLink, undoing

# The done rollbacks that decide whether the changes of the operations in ?1 (a JSON list) are undone: those
# that target them (an old rollback, without a target, targets its call), those that target these, and so on.
UNDOS_OF = """
WITH RECURSIVE
  op(id) AS (SELECT value FROM json_each(?1)),
  chain(id) AS (
    SELECT r.id FROM op JOIN rollbacks r ON r.target = op.id WHERE r.state = 'done'
    UNION SELECT r.id FROM op JOIN rollbacks r ON r.call_id = op.id WHERE r.target IS NULL AND r.state = 'done'
    UNION SELECT r.id FROM chain JOIN rollbacks r ON r.target = chain.id WHERE r.state = 'done')
SELECT r.id, r.call_id, r.target FROM chain JOIN rollbacks r ON r.id = chain.id ORDER BY r.created_at, r.rowid
"""


def undo_state_of(db: sqlite3.Connection, op_ids: Sequence[str]) -> dict[Ref, Ref]:
    """As `Journal.undo_state_of`; the caller holds the lock."""
    rollbacks = db.execute(UNDOS_OF, (json.dumps(list(op_ids)),)).fetchall()
    if not rollbacks:
        return {}
    ids = json.dumps([r["id"] for r in rollbacks])
    reverts: dict[str, list[sqlite3.Row]] = {}
    for r in db.execute("SELECT c.op_id, c.seq, c.reverts FROM json_each(?) AS j JOIN changes c ON c.op_id = j.value",
                        (ids,)):
        reverts.setdefault(r["op_id"], []).append(r)
    git: dict[str, list[sqlite3.Row]] = {}
    for r in db.execute("SELECT g.op_id, g.seq, g.reverts FROM json_each(?) AS j JOIN git_changes g"
                        " ON g.op_id = j.value", (ids,)):
        git.setdefault(r["op_id"], []).append(r)
    legacy = json.dumps(sorted({r["call_id"] for r in rollbacks if r["target"] is None}))
    sizes = {r["op_id"]: r["n"] for r in db.execute(
        "SELECT c.op_id, COUNT(*) AS n FROM json_each(?) AS j JOIN changes c ON c.op_id = j.value GROUP BY c.op_id",
        (legacy,))}
    undone = undoing([link(r, reverts.get(r["id"], []), git.get(r["id"], [])) for r in rollbacks], sizes)
    asked = set(op_ids)
    return {ref: by for ref, by in undone.items() if ref[0] in asked}


def link(r: sqlite3.Row, changes: list[sqlite3.Row], git: list[sqlite3.Row]) -> RollbackLink:
    """As `rollback` reads it, for the bookkeeping only (old rollbacks reverted their whole call)."""
    def ordered(rows: list[sqlite3.Row]) -> tuple[Any, ...]:
        return tuple(row["reverts"] for row in sorted(rows, key=lambda row: row["seq"]))
    if r["target"] is None:
        return RollbackLink(r["id"], r["call_id"], (None,), ordered(git))
    return RollbackLink(r["id"], r["target"], ordered(changes), ordered(git))
