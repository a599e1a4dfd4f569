"""The journal: one SQLite database per workspace, the audit trail and the memory.

Sessions, agents, calls, runs, approval decisions, file changes and
rollbacks are recorded here; a restarted console reloads its timeline from
it and can still undo what an earlier session did.  Each commit also seals
the rows it wrote (core.store.seals: `belay verify` finds a row changed behind
Belay's back).  WAL mode; commits that
record decisions, changes and rollbacks run with synchronous=FULL so they
survive a power cut, lighter bookkeeping with NORMAL (whose log a thread
syncs every few commits, so that no checkpoint stalls a commit on the
disk: core.store.wal_flush).

Every method blocks.  The console calls them from one dedicated thread,
where `run_group` also commits many writes at once (see
core.store.group_commit: the writes of one call, and of several calls under
load, share one transaction; should one fail, each is run again alone so
that it does not take the others with it).  Its reads are
core.store.journal_reads's `JournalReads`, which it extends; how rows read
back as records, and a call's undo state through the indexes, is
core.store.journal_rows.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Concatenate, NamedTuple, ParamSpec, TypeVar

from core.errors import ErrorInfo
from core.models.batches import PlanInfo
from core.models.conversation import Message, TokenUse
from core.models.records import (
    AgentStatus,
    FileChange,
    GitChange,
    RunStatus,
)
from core.store import journal_file, seals
from core.store.journal_file import APPLICATION_ID
from core.store.journal_reads import JournalReads
from core.store.journal_schema import ADDED_COLUMNS, INDEXES, SCHEMA
from core.store.wal_flush import WalFlusher

P = ParamSpec("P")
T = TypeVar("T")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


_args_json = json.JSONEncoder(default=str).encode


class RunEnd(NamedTuple):
    """How a run ended, as `finish_run` writes it, or `add_call` for a call that ended before it was written."""

    status: RunStatus
    output: str
    error: ErrorInfo | None
    duration_s: float
    cached: bool = False
    attempts: int = 1
    started: bool = False
    """The run's start is written with its end (it started; its own row update was folded in)."""

    def columns(self, now: str) -> tuple[object, ...]:
        """status, started_at (None: leave it), ended_at, duration_s, output, error, cached, attempts."""
        return (self.status.value, now if self.started else None, now, self.duration_s, self.output,
                self.error.model_dump_json() if self.error else None, int(self.cached), self.attempts)


def _writes(fn: Callable[Concatenate[Journal, P], T]) -> Callable[Concatenate[Journal, P], T]:
    """SQLite's failures while recording read as `JournalUnusable`, naming the file (see journal_file)."""
    @functools.wraps(fn)
    def recording(self: Journal, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            problem = journal_file.translated(self.path, e, "written")
            if problem is None:
                raise
            raise problem from e
    return recording


class Journal(JournalReads):
    """Typed reads and writes over the workspace's SQLite database.

    Opening raises `JournalUnusable` (a `BelayError`) for a damaged file or another program's database,
    having written nothing to it; so does any later read or write that finds damage.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        unmarked = journal_file.inspect(path)  # read-only: nothing below runs on a file that is not ours
        self._lock = threading.Lock()
        self._grouping: int | None = None
        """The thread running `run_group` (holding the lock): its writes join that transaction."""
        self._flusher = WalFlusher(Path(f"{path}-wal"))
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
            try:
                self._prepare(unmarked)
            except BaseException:
                self._db.close()
                raise
        except sqlite3.Error as e:
            problem = journal_file.translated(path, e, "opened")
            if problem is None:
                raise
            raise problem from e

    def _prepare(self, unmarked: bool) -> None:
        self._db.row_factory = sqlite3.Row
        if unmarked:  # before WAL mode, so that the mark lands in the file's own header
            self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._add_missing_columns()
        self._db.executescript(INDEXES)
        self._seals = seals.Sealer(self._db)

    def _add_missing_columns(self) -> None:
        for table, columns in ADDED_COLUMNS.items():
            have = {r["name"] for r in self._db.execute(f"PRAGMA table_info({table})")}
            for name, decl in columns:
                if name not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    def close(self) -> None:
        with self._lock:
            self._flusher.close()
            self._db.close()

    @contextmanager
    def _tx(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        if self._grouping == threading.get_ident():  # inside run_group, which begins, commits and chose durability
            yield self._db
            return
        with self._lock:
            if durable:
                self._db.execute("PRAGMA synchronous=FULL")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._seals.begin()
                try:
                    yield self._db
                    self._seals.seal()
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                if not durable:
                    self._flusher.committed()
            finally:
                if durable:
                    self._db.execute("PRAGMA synchronous=NORMAL")

    def run_group(self, writes: Sequence[Callable[[], object]], durable: bool) -> list[BaseException | None]:
        """Run `writes` (calls of this journal's write methods) in one transaction, in order, and commit it
        once: fsynced when `durable`.  Returns each write's error (None: it succeeded).

        Should one write fail, the group is rolled back and each write is run again alone, in a
        transaction of its own: what the failing one did is undone and the others still commit, as if
        each had been committed by itself (failures are rare: a full disk, damage, a bug)."""
        with self._lock:
            try:
                if durable:
                    self._db.execute("PRAGMA synchronous=FULL")
                try:
                    return self._together(writes)
                except _Failed:
                    return [self._alone(write) for write in writes]
                finally:
                    if durable:
                        self._db.execute("PRAGMA synchronous=NORMAL")
                    else:
                        self._flusher.committed()
            except sqlite3.Error as e:  # the pragma itself failed: nothing was written
                return [journal_file.translated(self.path, e, "written") or e] * len(writes)

    def _together(self, writes: Sequence[Callable[[], object]]) -> list[BaseException | None]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            return [journal_file.translated(self.path, e, "written") or e] * len(writes)
        self._seals.begin()
        self._grouping = threading.get_ident()
        try:
            for write in writes:
                if _outcome(write) is not None:
                    raise _Failed
            self._seals.seal()
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        finally:
            self._grouping = None
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise _Failed from None
        return [None] * len(writes)

    def _alone(self, write: Callable[[], object]) -> BaseException | None:
        """One write of a failed group, in a transaction of its own (the lock is held)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            return journal_file.translated(self.path, e, "written") or e
        self._seals.begin()
        self._grouping = threading.get_ident()
        try:
            error = _outcome(write)
            if error is None:
                error = _outcome(self._seals.seal)
        finally:
            self._grouping = None
        try:
            self._db.execute("ROLLBACK" if error is not None else "COMMIT")
        except sqlite3.Error as e:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            return error or journal_file.translated(self.path, e, "written") or e
        return error

    # -- writes ---------------------------------------------------------

    @_writes
    def start_session(self, session_id: str, workspace: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, NULL)", (session_id, workspace, _now()))

    @_writes
    def end_session(self, session_id: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE sessions SET ended_at=? WHERE id=?", (_now(), session_id))

    @_writes
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

    @_writes
    def link_agent(self, agent_id: str, spawned_by: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE agents SET spawned_by=? WHERE id=?", (spawned_by, agent_id))

    @_writes
    def finish_agent(self, agent_id: str, status: AgentStatus) -> None:
        with self._tx() as db:
            db.execute("UPDATE agents SET status=?, ended_at=? WHERE id=?", (status.value, _now(), agent_id))

    @_writes
    def add_call(self, call_id: str, session_id: str, agent_id: str, tool: str,
                 args: dict[str, Any], summary: str, batch: tuple[str, str] | None = None, *,
                 ended: RunEnd | None = None, use_id: str | None = None) -> None:
        """A call, queued; or already `ended`, when its end comes before its row was written (see
        core.store.group_commit's `amend`): its run's row is then written once, as `finish_run` would leave it."""
        with self._tx() as db:
            now = _now()
            db.execute("INSERT INTO calls (id, session_id, agent_id, tool, args, summary, created_at, batch_id,"
                       " batch_key, use_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (call_id, session_id, agent_id, tool, _args_json(args), summary, now,
                        batch[0] if batch else None, batch[1] if batch else None, use_id))
            if ended is None:
                db.execute("INSERT INTO runs (call_id, status) VALUES (?, ?)", (call_id, RunStatus.QUEUED.value))
            else:
                db.execute("INSERT INTO runs (call_id, status, started_at, ended_at, duration_s, output, error,"
                           " cached, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (call_id, *ended.columns(now)))

    @_writes
    def set_status(self, call_id: str, status: RunStatus) -> None:
        with self._tx() as db:
            started = _now() if status == RunStatus.RUNNING else None
            db.execute("UPDATE runs SET status=?, started_at=COALESCE(?, started_at) WHERE call_id=?",
                       (status.value, started, call_id))

    @_writes
    def add_decision(self, call_id: str, decision: str, reason: str, by: str, rule: str | None = None, *,
                     via: str | None = None, durable: bool = True) -> None:
        """Who decided about a call (`by`, see core.models.records.DecidedBy), for a rule which, and for a person
        where they answered (`via`)."""
        with self._tx(durable=durable) as db:
            db.execute("INSERT INTO decisions (call_id, decision, reason, decided_by, decided_at, rule, via)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?)", (call_id, decision, reason, by, _now(), rule, via))

    @_writes
    def add_changes(self, op_id: str, changes: Sequence[FileChange]) -> None:
        """Record what an operation changes, or is about to (replacing what was recorded for it before)."""
        with self._tx(durable=True) as db:
            _insert_changes(db, op_id, changes)

    @_writes
    def finish_run(self, call_id: str, status: RunStatus, output: str, error: ErrorInfo | None,
                   duration_s: float, cached: bool = False, attempts: int = 1, durable: bool = True, *,
                   started: bool = False) -> None:
        """How a run ended.  `durable=False` for runs that changed nothing: a power cut may then lose the
        ending (the run reads as interrupted), never a change or a decision, which have their own commits.
        `started`: its start was not written (see `amend`), and is now."""
        end = RunEnd(status, output, error, duration_s, cached, attempts, started)
        with self._tx(durable=durable) as db:
            db.execute("UPDATE runs SET status=?, started_at=COALESCE(?, started_at), ended_at=?, duration_s=?,"
                       " output=?, error=?, cached=?, attempts=? WHERE call_id=?", (*end.columns(_now()), call_id))

    @_writes
    def add_batch(self, batch_id: str, session_id: str, agent_id: str, name: str, plan: PlanInfo) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO batches (id, session_id, agent_id, name, plan, created_at)"
                       " VALUES (?, ?, ?, ?, ?, ?)",
                       (batch_id, session_id, agent_id, name, plan.model_dump_json(), _now()))

    @_writes
    def finish_batch(self, batch_id: str, summary: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute("UPDATE batches SET finished_at=?, summary=? WHERE id=?",
                       (_now(), json.dumps(summary), batch_id))

    @_writes
    def add_full_output(self, call_id: str, text: str) -> None:
        """A command's whole output (up to the tool's journal limit), beyond what the agent was shown."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO outputs VALUES (?, ?)", (call_id, text))

    @_writes
    def add_rollback(self, rollback_id: str, call_id: str, target: str, forced: bool,
                     changes: Sequence[tuple[int, FileChange]], git: Sequence[tuple[int, GitChange]] = ()) -> None:
        """Record an undo before it writes anything: `changes` pairs the position of each target change it
        reverts with the undo's own change (`git`: the same for reference moves, at negative positions).
        It stays pending until `finish_rollback`."""
        with self._tx(durable=True) as db:
            db.execute("INSERT INTO rollbacks (id, call_id, forced, created_at, target, state)"
                       " VALUES (?, ?, ?, ?, ?, 'pending')", (rollback_id, call_id, int(forced), _now(), target))
            _insert_changes(db, rollback_id, [c for _, c in changes], [seq for seq, _ in changes])
            _insert_git(db, rollback_id, git)

    @_writes
    def finish_rollback(self, rollback_id: str, state: str, message: str = "",
                        changes: Sequence[tuple[int, FileChange]] | None = None) -> None:
        """Mark an undo done (its files are written) or failed (nothing of it stands); `changes` replaces
        what it recorded when a recovery finished only part of it."""
        with self._tx(durable=True) as db:
            db.execute("UPDATE rollbacks SET state=?, message=? WHERE id=?", (state, message, rollback_id))
            if changes is not None:
                _insert_changes(db, rollback_id, [c for _, c in changes], [seq for seq, _ in changes])

    @_writes
    def add_external(self, op_id: str, session_id: str | None, changes: Sequence[FileChange], note: str) -> None:
        """Changes nobody in Belay made (an editor, a build running beside it), found on disk."""
        with self._tx(durable=True) as db:
            db.execute("INSERT INTO externals VALUES (?, ?, ?, ?)", (op_id, session_id, _now(), note))
            _insert_changes(db, op_id, changes)

    @_writes
    def add_git_changes(self, op_id: str, changes: Sequence[GitChange]) -> None:
        """Record the git reference moves of an operation (replacing what was recorded for it before)."""
        with self._tx(durable=True) as db:
            db.execute("DELETE FROM git_changes WHERE op_id=?", (op_id,))
            _insert_git(db, op_id, [(None, g) for g in changes])

    @_writes
    def add_conversation(self, session_id: str, messages: Sequence[Message], tokens: Sequence[TokenUse]) -> None:
        """What an agent said and what its responses used, read from its transcript; a record read again (the
        file was rotated and is read from its start) is kept once."""
        with self._tx() as db:
            db.executemany("INSERT OR IGNORE INTO messages (id, session_id, agent_id, kind, text, at, cut)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?)",
                           [(m.message_id, session_id, m.agent_id, m.kind, m.text, m.at.isoformat(), int(m.cut))
                            for m in messages])
            db.executemany("INSERT OR IGNORE INTO token_use (id, session_id, agent_id, response_id, at, model, input,"
                           " output, cache_read, cache_write, tool_uses) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           [(f"{t.agent_id}/{t.response_id}", session_id, t.agent_id, t.response_id, t.at.isoformat(),
                             t.model, t.usage.input, t.usage.output, t.usage.cache_read, t.usage.cache_write,
                             json.dumps(list(t.tool_uses))) for t in tokens])

    @_writes
    def mark_interrupted(self) -> list[str]:
        """Runs left unfinished by a console that died: mark them, return their ids."""
        with self._tx(durable=True) as db:
            rows = db.execute("SELECT call_id FROM runs WHERE status IN ('queued','blocked_on_user','running')")
            ids = [r["call_id"] for r in rows]
            db.execute("UPDATE runs SET status='interrupted' WHERE status IN ('queued','blocked_on_user','running')")
            db.execute("UPDATE agents SET status='failed' WHERE status='running'")
            return ids

    def __repr__(self) -> str:
        return f"<Journal {self.path}>"


class _Failed(Exception):
    """A write of a group failed, or its commit did: the group is run again one write at a time."""


def _outcome(write: Callable[[], object]) -> BaseException | None:
    """None when `write` succeeded, else what it raised (a write's own failure is its alone)."""
    try:
        write()
    except Exception as e:  # noqa: BLE001 - handed to whoever awaits that write, as if it had run alone
        return e
    return None


def _insert_changes(db: sqlite3.Connection, op_id: str, changes: Sequence[FileChange],
                    reverts: Sequence[int | None] | None = None) -> None:
    db.execute("DELETE FROM changes WHERE op_id=?", (op_id,))
    db.executemany(
        "INSERT INTO changes (op_id, seq, path, kind, before_hash, after_hash, before_mode, after_mode,"
        " old_path, before_link, after_link, stored, reverts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(op_id, i, c.path, c.kind.value, c.before_hash, c.after_hash, c.before_mode, c.after_mode, c.old_path,
          int(c.before_link), int(c.after_link), int(c.stored), reverts[i] if reverts is not None else None)
         for i, c in enumerate(changes)],
    )


def _insert_git(db: sqlite3.Connection, op_id: str, changes: Sequence[tuple[int | None, GitChange]]) -> None:
    db.executemany("INSERT INTO git_changes (op_id, seq, ref, kind, before, after, what, reverts)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(op_id, i, g.ref, g.kind, g.before, g.after, g.what, reverts)
                    for i, (reverts, g) in enumerate(changes)])


