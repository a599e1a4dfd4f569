"""JournalReads: what the journal reads back, and damage found while reading named as such."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.models.records import RunStatus
from core.store.journal import Journal
from core.store.journal_file import JournalUnusable
from tests.core.store.test_journal import _journal_with_one_call


def test_the_latest_done_calls_of_a_tool_come_back_with_how_long_they_took(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    for n, (status, took) in enumerate([(RunStatus.DONE, 1.5), (RunStatus.FAILED, 9.0), (RunStatus.DONE, 2.5)]):
        j.add_call(f"b{n}", "s1", "a1", "Bash", {"command": f"make {n}"}, "make")
        j.finish_run(f"b{n}", status, "", None, took)
    assert j.recent_durations("Bash", 10) == [({"command": "make 2"}, 2.5), ({"command": "make 0"}, 1.5)]
    assert j.recent_durations("Bash", 1) == [({"command": "make 2"}, 2.5)]  # the newest first
    assert j.recent_durations("Edit", 10) == [({"file_path": "/ws/x"}, 0.25)] and j.recent_durations("Read", 5) == []
    j.close()


def test_a_record_edited_into_nonsense_reads_as_a_damaged_journal_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    _journal_with_one_call(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET status='exploded'")
    db.commit()
    db.close()
    j = Journal(path)
    with pytest.raises(JournalUnusable) as caught:
        j.calls()
    assert f"the journal {path} is damaged" in caught.value.info.message and "exploded" in caught.value.info.message
    j.close()


def test_damage_found_after_opening_is_reported_as_such_not_as_an_sqlite_error(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    j = _journal_with_one_call(path)
    j._db.execute("DROP TABLE outputs")  # the file changed under an open journal
    with pytest.raises(JournalUnusable) as caught:
        j.full_output("c1")
    assert f"the journal {path} could not be read: no such table: outputs" in caught.value.info.message
    j.close()


def test_text_that_is_no_longer_utf8_reads_as_a_damaged_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    _journal_with_one_call(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE calls SET summary=CAST(x'ff41' AS TEXT)")
    db.commit()
    db.close()
    j = Journal(path)
    with pytest.raises(JournalUnusable, match="is damaged .*Could not decode to UTF-8"):
        j.calls()
    j.close()
