"""The SQLite journal: what a restarted console reads back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.errors import ErrorInfo, ErrorKind
from core.journal import Journal
from core.models import AgentStatus, ChangeKind, FileChange, RunStatus


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


def test_a_rollback_marks_the_call_undone(tmp_path: Path) -> None:
    j = _journal_with_one_call(tmp_path / "j.sqlite3")
    j.add_rollback("u1", "c1", False, [])
    assert j.calls()[0].undone_by == "u1" and j.rollback_of("c1") == "u1"


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
