"""The file at the journal's place: a damaged journal or another program's database is refused, untouched."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from core.errors import BelayError
from core.store.journal import Journal
from core.store.journal_file import APPLICATION_ID, JournalUnusable, inspect


def _journal(path: Path) -> Path:
    j = Journal(path)
    j.start_session("s1", "/ws")
    for i in range(200):  # enough rows for several pages, so that damage can land inside the file
        j.add_agent(f"a{i}", "s1", f"agent {i}", "scripted", None, None, None)
    j.close()
    return path


def _state(path: Path, beside: bool) -> tuple[bytes, int, list[str]]:
    """What must not change: the bytes, the modification time, and (`beside`) which files lie beside it."""
    return path.read_bytes(), os.stat(path).st_mtime_ns, sorted(os.listdir(path.parent)) if beside else []


def _refused(path: Path, beside: bool = True) -> JournalUnusable:
    """`beside=False` for a journal of Belay's own in WAL mode: SQLite's read-only look at it may leave the
    usual empty -wal and -shm files beside it (the file itself is still untouched)."""
    before = _state(path, beside)
    with pytest.raises(JournalUnusable) as caught:
        Journal(path)
    assert _state(path, beside) == before
    assert isinstance(caught.value, BelayError) and str(path) in caught.value.info.message
    return caught.value


def test_garbage_at_the_journals_place_is_refused_as_damaged_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    path.write_bytes(os.urandom(5000))
    error = _refused(path)
    assert "is damaged" in error.info.message and "Move it aside" in error.info.suggestion


def test_a_journal_cut_short_is_refused_as_damaged(tmp_path: Path) -> None:
    path = _journal(tmp_path / "journal.sqlite3")
    path.write_bytes(path.read_bytes()[:6000])
    assert "cut short" in _refused(path, beside=False).info.message


def test_a_damaged_page_inside_the_journal_is_found_when_it_opens(tmp_path: Path) -> None:
    path = _journal(tmp_path / "journal.sqlite3")
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[2 * page:2 * page + 64] = b"\xff" * 64  # the header of the third page: a b-tree page no more
    path.write_bytes(bytes(data))
    assert "is damaged" in _refused(path, beside=False).info.message


def test_another_programs_database_is_never_written_to(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.execute("INSERT INTO notes VALUES ('mine')")
    db.commit()
    db.close()
    error = _refused(path)
    assert "is not a Belay journal" in error.info.message and "table notes" in error.info.message


def test_a_wal_database_with_another_application_id_is_refused_without_side_files(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA application_id=7")
    db.execute("CREATE TABLE calls (x)")  # a name Belay uses does not make it Belay's
    db.commit()
    db.close()
    assert "application id 0x7" in _refused(path).info.message


def test_a_database_with_some_of_belays_table_names_and_others_is_not_belays(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE sessions (x); CREATE TABLE agents (x); CREATE TABLE calls (x);"
                     "CREATE TABLE runs (x); CREATE TABLE invoices (x);")
    db.close()
    assert "invoices" in _refused(path).info.message


def test_a_new_journal_is_marked_as_belays(tmp_path: Path) -> None:
    path = _journal(tmp_path / "journal.sqlite3")
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()
    assert inspect(path) is False  # marked: nothing more to do


def test_a_journal_from_before_the_mark_opens_and_is_marked(tmp_path: Path) -> None:
    path = _journal(tmp_path / "journal.sqlite3")
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id=0")
    db.execute("DROP TABLE batches")  # as written before batches existed
    db.commit()
    db.close()
    assert inspect(path) is True
    j = Journal(path)
    assert len(j.agents()) == 200 and j.batches() == []
    j.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()


def test_an_empty_file_is_a_new_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    path.touch()
    j = Journal(path)
    j.start_session("s1", "/ws")
    assert j.agents() == []
    j.close()
