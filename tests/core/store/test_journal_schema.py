"""The journal's database shape: a journal of the first release, opened today, gets every column and index added
since, and keeps its rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.store.journal import Journal
from core.store.journal_schema import ADDED_COLUMNS, INDEXES, SCHEMA


def test_a_first_release_journal_gets_the_added_columns_and_indexes_and_keeps_its_calls(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO sessions VALUES ('s1', '/ws', '2026-01-01T00:00:00+00:00', NULL)")
    db.execute("INSERT INTO agents VALUES ('a1', 's1', 'agent', 'scripted', NULL, NULL, NULL, 'done',"
               " '2026-01-01T00:00:00+00:00', NULL)")
    db.execute("INSERT INTO calls VALUES ('c1', 's1', 'a1', 'Read', '{}', 'a.py', '2026-01-01T00:00:01+00:00')")
    db.execute("INSERT INTO runs (call_id, status) VALUES ('c1', 'done')")
    db.commit()
    db.close()

    journal = Journal(path)
    assert [c.call_id for c in journal.calls()] == ["c1"]
    journal.close()
    db = sqlite3.connect(path)
    for table, columns in ADDED_COLUMNS.items():
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        assert {name for name, _ in columns} <= present, table
    indexes = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {line.split()[5] for line in INDEXES.strip().splitlines()} <= indexes
    db.close()
