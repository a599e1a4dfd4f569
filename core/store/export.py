"""The journal of a workspace as JSON Lines, for the tools a team already runs (`belay export`).

One object per line, each with its `type` and the export format's version `v`:
sessions, agents, batches, calls (how each ended), decisions (who or what
decided: `decided_by`, the rule when a rule did, where a person answered), file changes (paths,
modes and content hashes), git changes, undos and redos (`rollback`), and
changes found outside any call (`external`).  Contents stay out unless asked
for: a call's arguments and output may hold a file's text or a secret the
agent read, so by default a call carries its tool and summary, and a change
its hashes.  `resources/schemas/export.schema.json` describes every line.

The journal is opened read-only (SQLite's `mode=ro`), so an export runs while
a window has the workspace open, and never changes the file.  `since` keeps
the calls made from then on, with their decisions, changes and undos, and the
agents, sessions and batches they belong to; `session` keeps one session's.
Lines come in a fixed order (sessions, agents, batches, calls, decisions,
changes, git changes, rollbacks, externals, the agents' messages and their
token use; each by time, then by id), so two exports of the same journal are
the same bytes.  A message's text is content: only with `contents`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from core.models.records import decided_by
from core.store.journal_file import read_only
from core.store.journal_rows import column

FORMAT_VERSION = 1


def export_journal(journal: Path, out: TextIO, *, since: datetime | None = None, session: str | None = None,
                   contents: bool = False) -> int:
    """Write the journal's records as JSON Lines to `out`; the number of lines written."""
    with read_only(journal) as db:
        written = 0
        for record in _records(db, since.isoformat() if since else None, session, contents):
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            written += 1
        return written


@dataclass
class _Selection:
    """What an export keeps: everything, or the calls since a moment or of a session and what they belong to."""

    since: str | None
    session: str | None
    calls: list[sqlite3.Row]
    call_ids: set[str] = field(default_factory=set)
    operations: set[str] = field(default_factory=set)
    """The ids whose changes are kept: the calls', their undos' and the kept externals'."""

    @property
    def whole(self) -> bool:
        return self.since is None and self.session is None

    def of_session(self, row: sqlite3.Row) -> bool:
        return self.session is not None and row["session_id"] == self.session


def _records(db: sqlite3.Connection, since: str | None, session: str | None,
             contents: bool) -> Iterator[dict[str, Any]]:
    where, params = ["1"], []
    if since is not None:
        where.append("c.created_at >= ?")
        params.append(since)
    if session is not None:
        where.append("c.session_id = ?")
        params.append(session)
    calls = db.execute(
        "SELECT c.*, r.status, r.started_at, r.ended_at, r.duration_s, r.output, r.error, r.cached, r.attempts"
        " FROM calls c LEFT JOIN runs r ON r.call_id = c.id"
        f" WHERE {' AND '.join(where)} ORDER BY c.created_at, c.id", params).fetchall()
    kept = _Selection(since, session, calls, {row["id"] for row in calls})
    yield from _owners(db, kept)
    for row in calls:
        yield _call(row, contents)
    for row in db.execute("SELECT * FROM decisions ORDER BY decided_at, id"):
        if kept.whole or row["call_id"] in kept.call_ids:
            record = _typed("decision", row, ("call_id", "decision", "reason", "decided_by", "rule", "via",
                                              "decided_at"))
            record["decided_by"] = decided_by(row["decided_by"])  # an older journal's "user" reads as "person"
            yield record
    yield from _operations(db, kept)
    yield from _conversation(db, kept, contents)


def _conversation(db: sqlite3.Connection, kept: _Selection, contents: bool) -> Iterator[dict[str, Any]]:
    """What the agents said and what their responses used (an older journal has neither).  A message's text is
    content, kept out as a call's arguments are unless asked for."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"messages", "token_use"} <= tables:
        return
    agents = {row["agent_id"] for row in kept.calls}

    def wanted(row: sqlite3.Row) -> bool:
        return kept.whole or kept.of_session(row) or (
            kept.session is None and kept.since is not None and (row["at"] >= kept.since or row["agent_id"] in agents))
    for row in db.execute("SELECT * FROM messages ORDER BY at, id"):
        if wanted(row):
            record = _typed("message", row, ("id", "session_id", "agent_id", "kind", "at"))
            record["cut"] = bool(row["cut"])
            if contents:
                record["text"] = row["text"]
            yield record
    for row in db.execute("SELECT * FROM token_use ORDER BY at, id"):
        if wanted(row):
            record = _typed("token_use", row, ("id", "session_id", "agent_id", "response_id", "at", "model", "input",
                                               "output", "cache_read", "cache_write"))
            record["tool_uses"] = json.loads(row["tool_uses"])
            yield record


def _owners(db: sqlite3.Connection, kept: _Selection) -> Iterator[dict[str, Any]]:
    """The sessions, agents and batches the kept calls belong to (all of them for a whole export)."""
    agent_ids = {row["agent_id"] for row in kept.calls}
    agents = [row for row in db.execute("SELECT * FROM agents ORDER BY started_at, id")
              if kept.whole or row["id"] in agent_ids or kept.of_session(row)]
    session_ids = {row["session_id"] for row in [*kept.calls, *agents]} | ({kept.session} if kept.session else set())
    for row in db.execute("SELECT * FROM sessions ORDER BY started_at, id"):
        if kept.whole or row["id"] in session_ids:
            yield _typed("session", row, ("id", "workspace", "started_at", "ended_at"))
    for row in agents:
        yield _typed("agent", row, ("id", "session_id", "name", "kind", "parent_id", "spawned_by", "status",
                                    "started_at", "ended_at"))
    batch_ids = {column(row, "batch_id") for row in kept.calls} - {None}
    for row in db.execute("SELECT * FROM batches ORDER BY created_at, id"):
        if kept.whole or row["id"] in batch_ids or kept.of_session(row):
            yield _typed("batch", row, ("id", "session_id", "agent_id", "name", "created_at", "finished_at"))


def _operations(db: sqlite3.Connection, kept: _Selection) -> Iterator[dict[str, Any]]:
    """The file and git changes of the kept calls, their undos and redos, and the changes found outside."""
    rollbacks = [row for row in db.execute("SELECT * FROM rollbacks ORDER BY created_at, id")
                 if kept.whole or row["call_id"] in kept.call_ids]
    externals = [row for row in db.execute("SELECT * FROM externals ORDER BY detected_at, id")
                 if kept.whole or kept.of_session(row)
                 or (kept.since is not None and kept.session is None and row["detected_at"] >= kept.since)]
    kept.operations = kept.call_ids | {row["id"] for row in rollbacks} | {row["id"] for row in externals}
    for row in db.execute("SELECT * FROM changes ORDER BY op_id, seq, id"):
        if kept.whole or row["op_id"] in kept.operations:
            yield _change(row)
    for row in db.execute("SELECT * FROM git_changes ORDER BY op_id, seq, id"):
        if kept.whole or row["op_id"] in kept.operations:
            yield _typed("git_change", row, ("op_id", "seq", "ref", "kind", "before", "after", "what"))
    for row in rollbacks:
        record = _typed("rollback", row, ("id", "call_id", "target", "state", "message", "created_at"))
        record["forced"] = bool(row["forced"])
        yield record
    for row in externals:
        yield _typed("external", row, ("id", "session_id", "detected_at", "note"))


def _typed(kind: str, row: sqlite3.Row, names: tuple[str, ...]) -> dict[str, Any]:
    return {"type": kind, "v": FORMAT_VERSION, **{name: column(row, name) for name in names}}


def _call(row: sqlite3.Row, contents: bool) -> dict[str, Any]:
    record = _typed("call", row, ("id", "session_id", "agent_id", "batch_id", "tool", "summary", "created_at",
                                  "status", "started_at", "ended_at", "duration_s"))
    record["cached"], record["attempts"] = bool(column(row, "cached")), column(row, "attempts") or 1
    error = json.loads(row["error"]) if row["error"] else None
    record["error"] = {"kind": error.get("kind"), "message": error.get("message")} if error else None
    if contents:
        record["args"] = json.loads(row["args"])
        record["output"] = row["output"]
    return record


def _change(row: sqlite3.Row) -> dict[str, Any]:
    record = _typed("change", row, ("op_id", "seq", "path", "old_path", "kind", "before_hash", "after_hash",
                                    "before_mode", "after_mode"))
    record["before_link"], record["after_link"] = bool(column(row, "before_link")), bool(column(row, "after_link"))
    return record
