"""Journal rows read back as records: old journals' rows read as they mean now."""

from __future__ import annotations

import sqlite3

from core.models.records import Decision
from core.store.journal_rows import decision


def _row(**values: object) -> sqlite3.Row:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    names = ", ".join(f"? AS {name}" for name in values)
    row = db.execute(f"SELECT {names}", tuple(values.values())).fetchone()
    assert row is not None
    return row


def test_an_old_journals_user_decision_reads_as_a_persons() -> None:
    said = decision(_row(decision="approved", reason="looks fine", decided_by="user", rule=None))
    assert (said.decision, said.by) == (Decision.APPROVED, "person")
