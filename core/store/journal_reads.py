"""What the journal reads back: records, undo states, the outputs and contents it keeps.

`Journal` (core.store.journal) writes the rows and owns the connection; this part of it only reads them,
each read under the journal's lock, through `journal_rows` where rows become records.  Reads that find
damage (a row edited by hand into something Belay cannot read, a file changed under an open journal) raise
`JournalUnusable` naming the file, as its writes do.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from core.models.batches import PlanInfo
from core.models.conversation import Message, TokenUse, Usage
from core.models.records import (
    AgentRecord,
    AgentStatus,
    BatchRecord,
    CallRecord,
    ExternalRecord,
    FileChange,
    GitChange,
    RollbackRecord,
    RunStatus,
)
from core.store import journal_file, journal_rows
from core.store.undone import Ref, RollbackLink, undoing

P = ParamSpec("P")
T = TypeVar("T")


def _reads(fn: Callable[Concatenate[JournalReads, P], T]) -> Callable[Concatenate[JournalReads, P], T]:
    """As `_writes`; a row Belay cannot make sense of (edited by hand, say) reads as damage too."""
    @functools.wraps(fn)
    def reading(self: JournalReads, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            problem = journal_file.translated(self.path, e, "read")
            if problem is None:
                raise
            raise problem from e
        except UnicodeEncodeError:  # a value asked about (a call id from a command line), not the file
            raise
        except (ValueError, KeyError, TypeError) as e:
            detail = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise journal_file.damaged(self.path, f"a record Belay cannot read: {detail}") from e
    return reading

class JournalReads:
    """The reads of a `Journal` (which extends this): its connection, its lock and its file's path are the
    journal's."""

    path: Path
    _db: sqlite3.Connection
    _lock: threading.Lock

    @_reads
    def batches(self) -> list[BatchRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM batches ORDER BY created_at, rowid").fetchall()
        return [BatchRecord(batch_id=r["id"], agent_id=r["agent_id"], name=r["name"],
                            plan=PlanInfo.model_validate_json(r["plan"]), created_at=r["created_at"],
                            finished_at=r["finished_at"], summary=json.loads(r["summary"]) if r["summary"] else None)
                for r in rows]

    @_reads
    def conversation(self) -> tuple[list[Message], list[TokenUse]]:
        """Every agent's messages and token use, oldest first (what the timeline reloads)."""
        with self._lock:
            said = self._db.execute("SELECT * FROM messages ORDER BY at, rowid").fetchall()
            used = self._db.execute("SELECT * FROM token_use ORDER BY at, rowid").fetchall()
        return ([Message(message_id=r["id"], agent_id=r["agent_id"], kind=r["kind"], text=r["text"], at=r["at"],
                         cut=bool(r["cut"])) for r in said],
                [TokenUse(response_id=r["response_id"], agent_id=r["agent_id"], at=r["at"], model=r["model"],
                          usage=Usage(input=r["input"], output=r["output"], cache_read=r["cache_read"],
                                      cache_write=r["cache_write"]),
                          tool_uses=tuple(json.loads(r["tool_uses"]))) for r in used])

    @_reads
    def usage_since(self, since: str, session_id: str | None = None) -> dict[str, Usage]:
        """Tokens by model recorded at or after `since` (ISO time), of one session only when it is given."""
        query = ("SELECT model, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write) FROM token_use"
                 " WHERE at >= ?" + (" AND session_id = ?" if session_id else "") + " GROUP BY model")
        with self._lock:
            rows = self._db.execute(query, (since, session_id) if session_id else (since,)).fetchall()
        return {r[0]: Usage(input=r[1], output=r[2], cache_read=r[3], cache_write=r[4]) for r in rows}

    @_reads
    def full_output(self, call_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT text FROM outputs WHERE call_id=?", (call_id,)).fetchone()
        return row["text"] if row else None

    @_reads
    def latest_contents(self) -> dict[str, str | None]:
        """Each stored path the journal knows, with the content hash its latest recorded change left
        (None: deleted, or moved away by a rename).  Failed undos wrote nothing and do not count."""
        latest: dict[str, str | None] = {}
        with self._lock:
            rows = self._db.execute(
                "SELECT path, old_path, after_hash FROM changes WHERE stored=1 AND op_id NOT IN "
                "(SELECT id FROM rollbacks WHERE state='failed') ORDER BY id").fetchall()
        for r in rows:
            if r["old_path"] is not None:
                latest[r["old_path"]] = None
            latest[r["path"]] = r["after_hash"]
        return latest

    @_reads
    def call_tool(self, call_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT tool FROM calls WHERE id=?", (call_id,)).fetchone()
        return row["tool"] if row else None

    @_reads
    def git_changes_of(self, op_id: str) -> list[GitChange]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM git_changes WHERE op_id=? ORDER BY seq", (op_id,)).fetchall()
        return [journal_rows.git_change(r) for r in rows]

    @_reads
    def changes_of(self, op_id: str) -> list[FileChange]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM changes WHERE op_id=? ORDER BY seq", (op_id,)).fetchall()
        return [journal_rows.change(r) for r in rows]

    @_reads
    def operation_kind(self, op_id: str) -> str | None:
        """"call", "rollback" or "external"; None when the journal has no such operation."""
        with self._lock:
            for kind, table in (("call", "calls"), ("rollback", "rollbacks"), ("external", "externals")):
                if self._db.execute(f"SELECT 1 FROM {table} WHERE id=?", (op_id,)).fetchone():
                    return kind
        return None

    @_reads
    def root_call(self, op_id: str) -> str | None:
        """The call an operation belongs to: itself for a call, the undone call for an undo (or a redo)."""
        with self._lock:
            if self._db.execute("SELECT 1 FROM calls WHERE id=?", (op_id,)).fetchone():
                return op_id
            row = self._db.execute("SELECT call_id FROM rollbacks WHERE id=?", (op_id,)).fetchone()
        return row["call_id"] if row else None

    @_reads
    def spawned_changes(self, call_id: str) -> list[str]:
        """The calls that changed files or moved git references made by the agents `call_id` spawned (an Agent
        call), and by the agents those spawned, oldest first: what undoing such a call is really about."""
        with self._lock:
            rows = self._db.execute(
                "WITH RECURSIVE sub(id) AS (SELECT id FROM agents WHERE spawned_by=? UNION "
                "SELECT a.id FROM agents a JOIN calls c ON a.spawned_by=c.id JOIN sub ON c.agent_id=sub.id) "
                "SELECT c.id FROM calls c JOIN sub ON c.agent_id=sub.id WHERE EXISTS "
                "(SELECT 1 FROM changes WHERE op_id=c.id) OR EXISTS (SELECT 1 FROM git_changes WHERE op_id=c.id) "
                "ORDER BY c.created_at, c.rowid", (call_id,)).fetchall()
        return [r["id"] for r in rows]

    @_reads
    def rollback_state(self, rollback_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT state FROM rollbacks WHERE id=?", (rollback_id,)).fetchone()
        return row["state"] if row else None

    @_reads
    def rollbacks(self, state: str | None = "done") -> list[RollbackRecord]:
        """Undos oldest first (only those in `state`; None for all), each with its own changes."""
        where, params = ("WHERE state=?", (state,)) if state else ("", ())
        with self._lock:
            rows = self._db.execute(f"SELECT * FROM rollbacks {where} ORDER BY created_at, rowid", params).fetchall()
            changes: dict[str, list[sqlite3.Row]] = {}
            for r in self._db.execute("SELECT * FROM changes WHERE op_id IN (SELECT id FROM rollbacks) "
                                      "ORDER BY op_id, seq"):
                changes.setdefault(r["op_id"], []).append(r)
            git: dict[str, list[sqlite3.Row]] = {}
            for r in self._db.execute("SELECT * FROM git_changes WHERE op_id IN (SELECT id FROM rollbacks) "
                                      "ORDER BY op_id, seq"):
                git.setdefault(r["op_id"], []).append(r)
        return [journal_rows.rollback(r, changes.get(r["id"], []), git.get(r["id"], [])) for r in rows]

    @_reads
    def externals(self) -> list[ExternalRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM externals ORDER BY detected_at, rowid").fetchall()
            changes: dict[str, list[FileChange]] = {}
            for r in self._db.execute("SELECT * FROM changes WHERE op_id IN (SELECT id FROM externals) "
                                      "ORDER BY op_id, seq"):
                changes.setdefault(r["op_id"], []).append(journal_rows.change(r))
        return [ExternalRecord(op_id=r["id"], detected_at=r["detected_at"], note=r["note"],
                               changes=tuple(changes.get(r["id"], []))) for r in rows]

    @_reads
    def agents(self) -> list[AgentRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM agents ORDER BY started_at, rowid").fetchall()
        return [AgentRecord(agent_id=r["id"], session_id=r["session_id"], name=r["name"], kind=r["kind"],
                            parent_id=r["parent_id"], spawned_by=r["spawned_by"],
                            status=AgentStatus(r["status"]), started_at=r["started_at"]) for r in rows]

    @_reads
    def calls(self, call_id: str | None = None) -> list[CallRecord]:
        """Every journaled call (or only `call_id`), oldest first, made whole (changes, decision, undo state)."""
        where, params = (" WHERE c.id=?", (call_id,)) if call_id is not None else ("", ())
        with self._lock:
            rows = self._db.execute(f"{journal_rows.CALLS}{where} ORDER BY c.created_at, c.rowid", params).fetchall()
            return journal_rows.records(self._db, rows)

    @_reads
    def undo_state(self) -> dict[Ref, Ref]:
        """Every change undone now, mapped to the rollback change undoing it (see core.store.undone)."""
        rollbacks = self.rollbacks()
        with self._lock:
            sizes = {r["op_id"]: r["n"] for r in self._db.execute(
                "SELECT op_id, COUNT(*) AS n FROM changes GROUP BY op_id")}
        return undoing([RollbackLink(r.rollback_id, r.target, r.reverts, r.git_reverts) for r in rollbacks], sizes)

    # -- reads whose cost does not grow with the journal: undo, redo, rewind -------

    @_reads
    def undo_state_of(self, op_ids: Sequence[str]) -> dict[Ref, Ref]:
        """`undo_state` for the changes of `op_ids` only, read through indexes: the undos of those
        operations, the undos of those undos (redos) and so on, never the rest of the journal."""
        with self._lock:
            return journal_rows.undo_state_of(self._db, op_ids)

    @_reads
    def recent_durations(self, tool: str, limit: int) -> list[tuple[dict[str, Any], float]]:
        """The arguments and duration of the last `limit` calls of `tool` that ended done, newest first (how
        long calls like a new one took: core.orchestration.estimates)."""
        rows = self._db.execute(
            "SELECT c.args, r.duration_s FROM calls c JOIN runs r ON r.call_id = c.id WHERE c.tool = ?"
            " AND r.status = ? AND r.duration_s IS NOT NULL ORDER BY c.created_at DESC, c.rowid DESC LIMIT ?",
            (tool, RunStatus.DONE.value, limit)).fetchall()
        found = []
        for args, took in rows:
            parsed = json.loads(args)
            found.append((parsed if isinstance(parsed, dict) else {}, float(took)))
        return found

    @_reads
    def call_record(self, call_id: str) -> CallRecord | None:
        """One call as `calls(call_id)` gives it (None when the journal has no such call)."""
        records = self.calls(call_id)
        return records[0] if records else None

    @_reads
    def calls_after(self, call_id: str) -> list[CallRecord] | None:
        """The calls journaled after `call_id`, oldest first, as `calls` gives them (what a rewind to it
        undoes); None when the journal has no such call.  Reads those calls only, through indexes."""
        with self._lock:
            if self._db.execute("SELECT 1 FROM calls WHERE id=?", (call_id,)).fetchone() is None:
                return None
            rows = self._db.execute(
                f"{journal_rows.CALLS} WHERE (c.created_at, c.rowid) > (SELECT created_at, rowid FROM calls WHERE id=?)"
                " ORDER BY c.created_at, c.rowid", (call_id,)).fetchall()
            return journal_rows.records(self._db, rows)
