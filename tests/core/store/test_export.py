"""`belay export`'s records: every line valid against the shipped schema, contents only when asked, selections."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from core.errors import ErrorInfo, ErrorKind
from core.models.records import ChangeKind, FileChange, RunStatus
from core.store.export import export_journal
from core.store.journal import Journal
from core.store.journal_file import JournalUnusable

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "resources" / "schemas" /
                     "export.schema.json").read_text())


def _journal(path: Path) -> Journal:
    """Two sessions: the first with a lead, its sub-agent, an edit (decided by a rule), a failed command and an
    undo; the second with one write a person approved."""
    j = Journal(path)
    j.start_session("s1", "/ws")
    j.add_agent("lead", "s1", "lead", "scripted", None, None, None)
    j.add_agent("sub", "s1", "docs", "subagent", "lead", "c0", None)
    j.add_call("c1", "s1", "sub", "Edit", {"file_path": "/ws/x.py", "new_string": "SECRET TEXT"}, "x.py")
    j.add_decision("c1", "allow", "an allow rule", "rule", "Edit(./**)")
    j.add_changes("c1", [FileChange(path="x.py", kind=ChangeKind.MODIFY, before_hash="b" * 64, after_hash="a" * 64,
                                    before_mode=0o644, after_mode=0o644)])
    j.finish_run("c1", RunStatus.DONE, "edited", None, 0.25)
    j.add_call("c2", "s1", "lead", "Bash", {"command": "make"}, "make")
    j.add_decision("c2", "approved", "", "person", via="terminal")
    j.finish_run("c2", RunStatus.FAILED, "", ErrorInfo(kind=ErrorKind.TIMEOUT, message="make ran past 1 s"), 1.5)
    j.add_rollback("u1", "c1", "c1", False, [(0, FileChange(path="x.py", kind=ChangeKind.MODIFY,
                                                            before_hash="a" * 64, after_hash="b" * 64))])
    j.finish_rollback("u1", "done")
    j.end_session("s1")
    j.start_session("s2", "/ws")
    j.add_agent("lead2", "s2", "lead", "scripted", None, None, None)
    j.add_call("c3", "s2", "lead2", "Write", {"file_path": "/ws/y.py", "content": "print(1)"}, "y.py")
    j.add_decision("c3", "allow", "approved", "user")  # as journals before the deciders were told apart say
    j.add_changes("c3", [FileChange(path="y.py", kind=ChangeKind.CREATE, before_hash=None, after_hash="c" * 64,
                                    after_mode=0o644)])
    j.finish_run("c3", RunStatus.DONE, "wrote", None, 0.1)
    return j


def _export(path: Path, **selection: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    written = export_journal(path, out, **selection)
    lines = out.getvalue().splitlines()
    assert written == len(lines)
    records = [json.loads(line) for line in lines]
    for record in records:
        jsonschema.validate(record, SCHEMA, format_checker=jsonschema.FormatChecker())
    return records


def _of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == kind]


def test_every_record_is_exported_valid_with_paths_and_hashes_but_no_contents(tmp_path: Path) -> None:
    _journal(tmp_path / "j.sqlite3").close()
    records = _export(tmp_path / "j.sqlite3")
    assert [r["id"] for r in _of(records, "session")] == ["s1", "s2"]
    assert {r["id"]: r["parent_id"] for r in _of(records, "agent")} == {"lead": None, "sub": "lead", "lead2": None}
    calls = {r["id"]: r for r in _of(records, "call")}
    assert calls["c2"]["status"] == "failed" and calls["c2"]["error"] == {"kind": "timeout", "message": "make ran past 1 s"}
    assert calls["c1"]["summary"] == "x.py" and "args" not in calls["c1"] and "output" not in calls["c1"]
    decisions = {r["call_id"]: r for r in _of(records, "decision")}
    assert (decisions["c1"]["decided_by"], decisions["c1"]["rule"]) == ("rule", "Edit(./**)")
    assert decisions["c3"]["decided_by"] == "person" and decisions["c3"]["via"] is None  # not kept then
    assert (decisions["c2"]["decided_by"], decisions["c2"]["via"]) == ("person", "terminal")
    changes = _of(records, "change")
    assert {(c["op_id"], c["path"], c["after_hash"]) for c in changes} == {
        ("c1", "x.py", "a" * 64), ("u1", "x.py", "b" * 64), ("c3", "y.py", "c" * 64)}
    [undo] = _of(records, "rollback")
    assert (undo["call_id"], undo["state"], undo["forced"]) == ("c1", "done", False)
    assert "SECRET TEXT" not in json.dumps(records) and "edited" not in json.dumps(records)


def test_contents_come_only_when_asked(tmp_path: Path) -> None:
    _journal(tmp_path / "j.sqlite3").close()
    calls = {r["id"]: r for r in _of(_export(tmp_path / "j.sqlite3", contents=True), "call")}
    assert calls["c1"]["args"]["new_string"] == "SECRET TEXT" and calls["c1"]["output"] == "edited"


def test_a_session_or_a_moment_keeps_the_calls_and_what_they_belong_to(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    _journal(path).close()
    second = _export(path, session="s2")
    assert [r["id"] for r in _of(second, "session")] == ["s2"] and [r["id"] for r in _of(second, "call")] == ["c3"]
    assert [r["op_id"] for r in _of(second, "change")] == ["c3"] and not _of(second, "rollback")
    with sqlite3.connect(path) as db:  # c1 and c2 a day old
        db.execute("UPDATE calls SET created_at = ? WHERE id IN ('c1', 'c2')",
                   ((datetime.now(timezone.utc) - timedelta(days=1)).isoformat(),))
    recent = _export(path, since=datetime.now(timezone.utc) - timedelta(hours=1))
    assert [r["id"] for r in _of(recent, "call")] == ["c3"]
    assert [r["id"] for r in _of(recent, "agent")] == ["lead2"]
    everything = _export(path, since=datetime.now(timezone.utc) - timedelta(days=2))
    assert {r["id"] for r in _of(everything, "call")} == {"c1", "c2", "c3"}
    assert [r["id"] for r in _of(everything, "rollback")] == ["u1"]  # an undo of a kept call comes with it


def test_the_export_reads_without_changing_the_journal_even_while_it_is_being_written(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    journal = _journal(path)  # still open, as a window's console keeps it
    before = path.read_bytes()
    first, second = io.StringIO(), io.StringIO()
    export_journal(path, first)
    export_journal(path, second)
    assert first.getvalue() == second.getvalue()  # the same journal, the same bytes
    assert path.read_bytes() == before
    journal.add_call("c4", "s2", "lead2", "Read", {"file_path": "/ws/y.py"}, "y.py")
    assert '"id":"c4"' in (lambda out: (export_journal(path, out), out.getvalue())[1])(io.StringIO())
    journal.close()


def test_a_missing_or_foreign_journal_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(JournalUnusable, match="no journal at"):
        export_journal(tmp_path / "nope.sqlite3", io.StringIO())
    (tmp_path / "junk.sqlite3").write_bytes(b"this is not a database, just some bytes " * 100)
    with pytest.raises(JournalUnusable, match="junk.sqlite3"):
        export_journal(tmp_path / "junk.sqlite3", io.StringIO())


def test_what_agents_said_and_used_is_exported_its_text_only_with_contents(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from core.models.conversation import Message, TokenUse, Usage
    journal = _journal(tmp_path / "j.sqlite3")
    at = datetime(2026, 12, 8, tzinfo=timezone.utc)
    journal.add_conversation("s2", [Message(message_id="m1", agent_id="lead2", kind="prompt", text="fix y", at=at)],
                             [TokenUse(response_id="r1", agent_id="lead2", at=at, model="opus",
                                       usage=Usage(input=3, output=4, cache_read=5), tool_uses=("toolu_1",))])
    journal.close()
    records = _export(tmp_path / "j.sqlite3")
    assert [r["type"] for r in records][-2:] == ["message", "token_use"]
    (message,) = _of(records, "message")
    assert message["kind"] == "prompt" and "text" not in message
    (used,) = _of(records, "token_use")
    assert (used["input"], used["output"], used["cache_read"], used["tool_uses"]) == (3, 4, 5, ["toolu_1"])
    assert _of(_export(tmp_path / "j.sqlite3", contents=True), "message")[0]["text"] == "fix y"
    assert _of(_export(tmp_path / "j.sqlite3", session="s1"), "message") == []
