"""The journal: one SQLite database per workspace, the audit trail and the memory.

Sessions, agents, calls, runs, approval decisions, file changes and
rollbacks are recorded here; a restarted console reloads its timeline from
it and can still undo what an earlier session did.  WAL mode; commits that
record decisions, changes and rollbacks run with synchronous=FULL so they
survive a power cut, lighter bookkeeping with NORMAL.

Every method blocks.  The console calls them from one dedicated thread.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.errors import ErrorInfo
from core.models import AgentRecord, AgentStatus, CallRecord, ChangeKind, FileChange, RunStatus

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, workspace TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT);
CREATE TABLE IF NOT EXISTS agents (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id), name TEXT NOT NULL,
    kind TEXT NOT NULL, parent_id TEXT, spawned_by TEXT, tools TEXT, status TEXT NOT NULL,
    started_at TEXT NOT NULL, ended_at TEXT);
CREATE TABLE IF NOT EXISTS calls (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT NOT NULL REFERENCES agents(id),
    tool TEXT NOT NULL, args TEXT NOT NULL, summary TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    call_id TEXT PRIMARY KEY REFERENCES calls(id), status TEXT NOT NULL, started_at TEXT,
    ended_at TEXT, duration_s REAL, output TEXT NOT NULL DEFAULT '', error TEXT);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY, call_id TEXT NOT NULL REFERENCES calls(id), decision TEXT NOT NULL,
    reason TEXT NOT NULL, decided_by TEXT NOT NULL, decided_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY, op_id TEXT NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL,
    kind TEXT NOT NULL, before_hash TEXT, after_hash TEXT, before_mode INTEGER, after_mode INTEGER);
CREATE INDEX IF NOT EXISTS changes_op ON changes(op_id, seq);
CREATE TABLE IF NOT EXISTS rollbacks (
    id TEXT PRIMARY KEY, call_id TEXT NOT NULL REFERENCES calls(id), forced INTEGER NOT NULL,
    created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rollbacks_call ON rollbacks(call_id);
CREATE TABLE IF NOT EXISTS outputs (
    call_id TEXT PRIMARY KEY REFERENCES calls(id), text TEXT NOT NULL);
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class Journal:
    """Typed reads and writes over the workspace's SQLite database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if durable:
                self._db.execute("PRAGMA synchronous=FULL")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            finally:
                if durable:
                    self._db.execute("PRAGMA synchronous=NORMAL")

    # -- writes ---------------------------------------------------------

    def start_session(self, session_id: str, workspace: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, NULL)", (session_id, workspace, _now()))

    def end_session(self, session_id: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE sessions SET ended_at=? WHERE id=?", (_now(), session_id))

    def add_agent(self, agent_id: str, session_id: str, name: str, kind: str,
                  parent_id: str | None, spawned_by: str | None,
                  tools: Sequence[str] | None) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO agents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (agent_id, session_id, name, kind, parent_id, spawned_by,
                 json.dumps(list(tools)) if tools is not None else None,
                 AgentStatus.RUNNING.value, _now()),
            )

    def finish_agent(self, agent_id: str, status: AgentStatus) -> None:
        with self._tx() as db:
            db.execute("UPDATE agents SET status=?, ended_at=? WHERE id=?", (status.value, _now(), agent_id))

    def add_call(self, call_id: str, session_id: str, agent_id: str, tool: str,
                 args: dict[str, Any], summary: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (call_id, session_id, agent_id, tool, json.dumps(args, default=str), summary, _now()))
            db.execute("INSERT INTO runs (call_id, status) VALUES (?, ?)", (call_id, RunStatus.QUEUED.value))

    def set_status(self, call_id: str, status: RunStatus) -> None:
        with self._tx() as db:
            started = _now() if status == RunStatus.RUNNING else None
            db.execute("UPDATE runs SET status=?, started_at=COALESCE(?, started_at) WHERE call_id=?",
                       (status.value, started, call_id))

    def add_decision(self, call_id: str, decision: str, reason: str, by: str) -> None:
        with self._tx(durable=True) as db:
            db.execute("INSERT INTO decisions (call_id, decision, reason, decided_by, decided_at)"
                       " VALUES (?, ?, ?, ?, ?)", (call_id, decision, reason, by, _now()))

    def add_changes(self, op_id: str, changes: Sequence[FileChange]) -> None:
        """Record what an operation is about to change (before it changes it)."""
        with self._tx(durable=True) as db:
            _insert_changes(db, op_id, changes)

    def finish_run(self, call_id: str, status: RunStatus, output: str,
                   error: ErrorInfo | None, duration_s: float) -> None:
        with self._tx(durable=True) as db:
            db.execute(
                "UPDATE runs SET status=?, ended_at=?, duration_s=?, output=?, error=? WHERE call_id=?",
                (status.value, _now(), duration_s, output,
                 error.model_dump_json() if error else None, call_id),
            )

    def add_full_output(self, call_id: str, text: str) -> None:
        """A command's whole output (up to the tool's journal limit), beyond what the agent was shown."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO outputs VALUES (?, ?)", (call_id, text))

    def full_output(self, call_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT text FROM outputs WHERE call_id=?", (call_id,)).fetchone()
        return row["text"] if row else None

    def latest_contents(self) -> dict[str, str | None]:
        """Each path the journal knows, with the content hash its latest recorded change left (None: deleted)."""
        with self._lock:
            rows = self._db.execute("SELECT path, after_hash FROM changes WHERE id IN "
                                    "(SELECT MAX(id) FROM changes GROUP BY path)").fetchall()
        return {r["path"]: r["after_hash"] for r in rows}

    def call_tool(self, call_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT tool FROM calls WHERE id=?", (call_id,)).fetchone()
        return row["tool"] if row else None

    def add_rollback(self, rollback_id: str, call_id: str, forced: bool,
                     changes: Sequence[FileChange]) -> None:
        with self._tx(durable=True) as db:
            db.execute("INSERT INTO rollbacks VALUES (?, ?, ?, ?)", (rollback_id, call_id, int(forced), _now()))
            _insert_changes(db, rollback_id, changes)

    def mark_interrupted(self) -> list[str]:
        """Runs left unfinished by a console that died: mark them, return their ids."""
        with self._tx(durable=True) as db:
            rows = db.execute("SELECT call_id FROM runs WHERE status IN ('queued','blocked_on_user','running')")
            ids = [r["call_id"] for r in rows]
            db.execute("UPDATE runs SET status='interrupted' WHERE status IN ('queued','blocked_on_user','running')")
            db.execute("UPDATE agents SET status='failed' WHERE status='running'")
            return ids

    # -- reads ----------------------------------------------------------

    def changes_of(self, op_id: str) -> list[FileChange]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM changes WHERE op_id=? ORDER BY seq", (op_id,)).fetchall()
        return [_change(r) for r in rows]

    def rollback_of(self, call_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT id FROM rollbacks WHERE call_id=? ORDER BY created_at DESC",
                                   (call_id,)).fetchone()
        return row["id"] if row else None

    def agents(self) -> list[AgentRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM agents ORDER BY started_at, rowid").fetchall()
        return [AgentRecord(agent_id=r["id"], session_id=r["session_id"], name=r["name"], kind=r["kind"],
                            parent_id=r["parent_id"], spawned_by=r["spawned_by"],
                            status=AgentStatus(r["status"]), started_at=r["started_at"]) for r in rows]

    def calls(self, call_id: str | None = None) -> list[CallRecord]:
        query = (
            "SELECT c.*, r.status, r.duration_s, r.output, r.error, a.name AS agent_name,"
            " (SELECT id FROM rollbacks b WHERE b.call_id=c.id ORDER BY created_at DESC LIMIT 1) AS undone_by"
            " FROM calls c JOIN runs r ON r.call_id=c.id JOIN agents a ON a.id=c.agent_id"
        )
        params: tuple[str, ...] = ()
        if call_id is not None:
            query += " WHERE c.id=?"
            params = (call_id,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY c.created_at, c.rowid", params).fetchall()
            changes: dict[str, list[FileChange]] = {}
            scope = ("SELECT * FROM changes WHERE op_id=? ORDER BY seq", params) if call_id is not None \
                else ("SELECT * FROM changes ORDER BY op_id, seq", ())
            for r in self._db.execute(*scope):
                changes.setdefault(r["op_id"], []).append(_change(r))
        return [_call(r, changes.get(r["id"], [])) for r in rows]

    def __repr__(self) -> str:
        return f"<Journal {self.path}>"


def _insert_changes(db: sqlite3.Connection, op_id: str, changes: Sequence[FileChange]) -> None:
    db.execute("DELETE FROM changes WHERE op_id=?", (op_id,))
    db.executemany(
        "INSERT INTO changes (op_id, seq, path, kind, before_hash, after_hash, before_mode, after_mode)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(op_id, i, c.path, c.kind.value, c.before_hash, c.after_hash, c.before_mode, c.after_mode)
         for i, c in enumerate(changes)],
    )


def _change(r: sqlite3.Row) -> FileChange:
    return FileChange(path=r["path"], kind=ChangeKind(r["kind"]), before_hash=r["before_hash"],
                      after_hash=r["after_hash"], before_mode=r["before_mode"], after_mode=r["after_mode"])


def _call(r: sqlite3.Row, changes: list[FileChange]) -> CallRecord:
    return CallRecord(
        call_id=r["id"], session_id=r["session_id"], agent_id=r["agent_id"], agent_name=r["agent_name"],
        tool=r["tool"], summary=r["summary"], args=json.loads(r["args"]), status=RunStatus(r["status"]),
        created_at=r["created_at"], duration_s=r["duration_s"], output=r["output"] or "",
        error=ErrorInfo.model_validate_json(r["error"]) if r["error"] else None,
        changes=tuple(changes), undone_by=r["undone_by"],
    )
