"""Undo state read through the journal's indexes (core.store.undo_reads): old rollbacks read as they mean now."""

from __future__ import annotations

import sqlite3

from core.store.undo_reads import link


def _row(**values: object) -> sqlite3.Row:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    names = ", ".join(f"? AS {name}" for name in values)
    row = db.execute(f"SELECT {names}", tuple(values.values())).fetchone()
    assert row is not None
    return row


def test_an_old_rollback_without_a_target_undid_its_whole_call() -> None:
    old = link(_row(id="rb_1", call_id="call_a", target=None), [], [])
    assert (old.rollback_id, old.target, old.reverts) == ("rb_1", "call_a", (None,))
    new = link(_row(id="rb_2", call_id="call_a", target="call_a"),
               [_row(seq=1, reverts=4), _row(seq=0, reverts=3)], [])
    assert new.reverts == (3, 4)  # the changes it reverted, in their order
