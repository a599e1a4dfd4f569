"""The SQLite journal: what a restarted console reads back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.errors import ErrorInfo, ErrorKind
from core.models.records import AgentStatus, CallDecision, ChangeKind, Decision, FileChange, RunStatus
from core.store.journal import Journal


def _journal_with_one_call(path: Path) -> Journal:
    j = Journal(path)
    j.start_session("s1", "/ws")
    j.add_agent("a1", "s1", "agent", "scripted", None, None, None)
    j.add_call("c1", "s1", "a1", "Edit", {"file_path": "/ws/x"}, "x")
    j.add_changes("c1", [FileChange(path="x", kind=ChangeKind.MODIFY, before_hash="b" * 64, after_hash="a" * 64)])
    j.finish_run("c1", RunStatus.DONE, "ok", None, 0.25)
    return j


def test_calls_come_back_with_agent_status_and_changes(tmp_path: Path) -> None:
    _journal_with_one_call(tmp_path / "j.sqlite3").close()
    again = Journal(tmp_path / "j.sqlite3")
    [call] = again.calls()
    assert (call.call_id, call.agent_name, call.tool, call.status) == ("c1", "agent", "Edit", RunStatus.DONE)
    assert call.args == {"file_path": "/ws/x"}
    assert [c.path for c in call.changes] == ["x"] and call.duration_s == 0.25
    assert call.undone_by is None


def test_the_database_is_in_wal_mode(tmp_path: Path) -> None:
    _journal_with_one_call(tmp_path / "j.sqlite3").close()
    db = sqlite3.connect(tmp_path / "j.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def _inverse(change: FileChange) -> FileChange:
    return FileChange(path=change.path, kind=change.kind, before_hash=change.after_hash,
                      after_hash=change.before_hash)


def test_a_rollback_marks_the_call_undone_once_it_is_done(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    [change] = j.changes_of("c1")
    j.add_rollback("u1", "c1", "c1", False, [(0, _inverse(change))])
    assert j.calls()[0].undone_by is None  # pending: its files may not be written yet
    j.finish_rollback("u1", "done")
    [call] = j.calls()
    assert call.undone_by == "u1" and call.undone_paths == ("x",)
    assert j.operation_kind("u1") == "rollback" and j.root_call("u1") == "c1"


def test_undoing_an_undo_redoes_the_call_and_a_third_undo_undoes_it_again(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    [change] = j.changes_of("c1")
    j.add_rollback("u1", "c1", "c1", False, [(0, _inverse(change))])
    j.finish_rollback("u1", "done")
    j.add_rollback("u2", "c1", "u1", False, [(0, change)])
    j.finish_rollback("u2", "done")
    assert j.calls()[0].undone_by is None and j.calls()[0].undone_paths == ()
    j.add_rollback("u3", "c1", "c1", False, [(0, _inverse(change))])
    j.finish_rollback("u3", "done")
    assert j.calls()[0].undone_by == "u3"


def test_a_failed_rollback_undoes_nothing(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    [change] = j.changes_of("c1")
    j.add_rollback("u1", "c1", "c1", False, [(0, _inverse(change))])
    j.finish_rollback("u1", "failed", "no space left on the device")
    assert j.calls()[0].undone_by is None
    assert j.latest_contents() == {"x": "a" * 64}  # what it recorded was never written


def test_undoing_one_file_of_a_call_leaves_the_call_partly_undone(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    j.add_changes("c1", [FileChange(path="x", kind=ChangeKind.MODIFY, before_hash="b" * 64, after_hash="a" * 64),
                         FileChange(path="y", kind=ChangeKind.CREATE, before_hash=None, after_hash="c" * 64)])
    y = j.changes_of("c1")[1]
    j.add_rollback("u1", "c1", "c1", False, [(1, _inverse(y))])
    j.finish_rollback("u1", "done")
    [call] = j.calls()
    assert call.undone_paths == ("y",) and call.undone_by is None


def test_a_journal_from_before_redo_still_reads_its_rollbacks(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _journal_with_one_call(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO rollbacks (id, call_id, forced, created_at, target) VALUES ('u0', 'c1', 0, '2026-01-01T00:00:00+00:00', NULL)")
    db.commit()
    db.close()
    [call] = Journal(path).calls()
    assert call.undone_by == "u0"


def test_a_calls_last_decision_comes_back_with_who_made_it_and_the_rule(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    j.add_decision("c1", "approved", "allowed by the rule", "rule", "Edit(./x) [workspace]", durable=False)
    [call] = j.calls()
    assert call.decision == CallDecision(decision=Decision.APPROVED, reason="allowed by the rule", by="rule",
                                         rule="Edit(./x) [workspace]")
    j.add_decision("c1", "denied", "nobody answered", "timeout")
    [call] = j.calls("c1")
    assert call.decision is not None and (call.decision.decision, call.decision.by) == (Decision.DENIED, "timeout")


def test_a_journal_from_before_the_deciders_were_told_apart_reads_user_as_a_person(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _journal_with_one_call(path).close()
    db = sqlite3.connect(path)  # the decisions table as it was: no rule column, "user" for every answer
    db.executescript("DROP TABLE decisions; CREATE TABLE decisions (id INTEGER PRIMARY KEY, call_id TEXT NOT NULL,"
                     " decision TEXT NOT NULL, reason TEXT NOT NULL, decided_by TEXT NOT NULL, decided_at TEXT NOT NULL);"
                     " INSERT INTO decisions (call_id, decision, reason, decided_by, decided_at)"
                     " VALUES ('c1', 'approved', '', 'user', '2026-01-01T00:00:00+00:00');")
    db.close()
    [call] = Journal(path).calls()
    assert call.decision == CallDecision(decision=Decision.APPROVED, by="person")


def test_renames_and_external_changes_come_back(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    j.add_changes("c1", [FileChange(path="new", old_path="old", kind=ChangeKind.RENAME, before_hash="a" * 64,
                                    after_hash="a" * 64, after_link=True)])
    j.add_external("e1", "s1", [FileChange(path="z", kind=ChangeKind.MODIFY, before_hash="1" * 64,
                                           after_hash="2" * 64, stored=False)], "before call c2")
    [renamed] = j.calls()[0].changes
    assert (renamed.old_path, renamed.after_link) == ("old", True)
    [external] = j.externals()
    assert external.note == "before call c2" and not external.changes[0].stored
    assert j.latest_contents() == {"old": None, "new": "a" * 64}  # an unstored path has nothing to compare


def test_runs_left_running_by_a_dead_console_are_marked_interrupted(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.sqlite3")
    j.start_session("s1", "/ws")
    j.add_agent("a1", "s1", "agent", "scripted", None, None, None)
    j.add_call("c1", "s1", "a1", "Write", {}, "")
    j.set_status("c1", RunStatus.RUNNING)
    assert j.mark_interrupted() == ["c1"]
    assert j.calls()[0].status == RunStatus.INTERRUPTED
    assert j.agents()[0].status == AgentStatus.FAILED


def test_errors_are_kept_as_data(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.sqlite3")
    j.start_session("s1", "/ws")
    j.add_agent("a1", "s1", "agent", "scripted", None, None, None)
    j.add_call("c1", "s1", "a1", "Read", {}, "")
    error = ErrorInfo(kind=ErrorKind.NOT_FOUND, message="no such file: a.py", suggestion="check the name")
    j.finish_run("c1", RunStatus.FAILED, "Error", error, 0.0)
    assert j.calls()[0].error == error
