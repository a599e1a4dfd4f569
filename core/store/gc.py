"""Retention: what `belay gc` removes from a workspace's state, so that it does not grow for ever.

The journal and the blob store only ever grew: every session's rows, the
first snapshot's copy of every file, every version of every changed file.
Garbage collection removes whole sessions past the horizon (older than
`Retention.keep_days`, then the oldest ones while the state is larger than
`Retention.max_bytes`), then the blobs no committed row refers to, then
compacts the journal: its seals (core.store.seals.compact: one per row
kept, when the journal verifies) and the file (VACUUM).  It never removes the newest session, nor one
that may still be open, and it runs only while it holds the workspace's
owner lock (core.store.lock): a console that has the workspace open keeps
its snapshot in memory, so gc refuses while one does.

Crash safety is in the order.  The rows go first, in one durable commit;
only then are blobs deleted, and only those that no committed row names
(read again after that commit).  A pack is shrunk by copying what it keeps
to a new durable, indexed pack before the old index and then the old pack
are removed (core.store.blobs).  A kill -9 at any moment loses nothing a
kept row refers to; what it interrupts is finished by the next gc.

`plan` says what will go (sessions, calls, the oldest call that stays
undoable) without changing anything; `collect` does it.  Both block.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from core.errors import BelayError, ErrorKind
from core.store import blob_files, journal_file, seals
from core.store.lock import LOCK, OwnerLock

GB = 1 << 30
OPEN_GRACE = timedelta(hours=1)
"""A session not ended and active this recently may belong to a console still running: it is kept."""
REPACK_DEAD_SHARE = 0.1
"""A pack is rewritten once at least this share of its bytes is no longer referenced (else left for later)."""
JOURNAL = "journal.sqlite3"
BLOBS = "blobs"


@dataclass(frozen=True)
class Retention:
    """How much undo history a workspace keeps: `[storage]` in the user's settings."""

    keep_days: float = 30.0
    """Sessions whose last activity is older than this are removed."""
    max_bytes: int = 2 * GB
    """Above this (journal and blobs), the oldest sessions go too, however recent."""


@dataclass(frozen=True)
class SessionSummary:
    """One console session of the workspace, as gc weighs it."""

    session_id: str
    started_at: datetime
    last_at: datetime
    """Its latest activity: a call, an undo of one of its calls, an outside change, its end."""
    calls: int
    ended: bool


@dataclass(frozen=True)
class OldestCall:
    call_id: str
    created_at: datetime
    tool: str
    summary: str


@dataclass(frozen=True)
class GcPlan:
    """What `collect` would remove, said before it does."""

    state_bytes: int
    """The state folder now: journal (with its WAL) and blobs."""
    removed: tuple[SessionSummary, ...]
    kept: tuple[SessionSummary, ...]
    oldest_kept: OldestCall | None
    """The oldest call that stays undoable; None when no call is kept."""
    blobs_freed: int
    bytes_freed: int
    """Blobs no kept row refers to (already unreferenced ones included), an estimate before packs are shrunk."""
    notes: tuple[str, ...] = ()

    @property
    def calls_removed(self) -> int:
        return sum(s.calls for s in self.removed)


@dataclass(frozen=True)
class GcResult:
    plan: GcPlan
    blobs_removed: int
    packs_rewritten: int
    state_bytes: int
    """The state folder afterwards."""
    notes: tuple[str, ...] = ()

    @property
    def freed(self) -> int:
        return max(0, self.plan.state_bytes - self.state_bytes)


@dataclass(frozen=True)
class StoreUsage:
    """What the window shows: the state's size and how far back undo reaches."""

    state_bytes: int
    calls: int
    oldest_call_at: datetime | None


class GcRefused(BelayError):
    """A console has the workspace open: its snapshot lives in its memory, so nothing is removed."""

    def __init__(self, state_dir: Path) -> None:
        super().__init__(ErrorKind.CONFLICT, f"a Belay console has this workspace open: "
                         f"{OwnerLock.holder(state_dir / LOCK)}; gc removed nothing",
                         "Close the window (or wait for `belay run` to finish), then run `belay gc` again.")


def state_size(state_dir: Path) -> int:
    return _journal_bytes(state_dir) + blob_files.stored_blobs(state_dir / BLOBS).bytes


def _journal_bytes(state_dir: Path) -> int:
    return sum(blob_files.file_size(state_dir / f"{JOURNAL}{suffix}") for suffix in ("", "-wal", "-shm"))


def usage(state_dir: Path) -> StoreUsage:
    """Read-only: nothing is locked or written (the window asks while its own console writes)."""
    calls, oldest = 0, None
    path = state_dir / JOURNAL
    if path.exists():
        try:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
            try:
                calls, first = db.execute("SELECT COUNT(*), MIN(created_at) FROM calls").fetchone()
            finally:
                db.close()
            oldest = _when(first) if first else None
        except (sqlite3.Error, ValueError):  # busy, or damaged: the console that owns it reports that, not this
            calls, oldest = 0, None
    return StoreUsage(state_size(state_dir), calls, oldest)


def plan(state_dir: Path, retention: Retention, now: datetime | None = None) -> GcPlan:
    """What `collect` would do now; changes nothing (a console may have the workspace open meanwhile)."""
    return _planned(state_dir, retention, now)[0]


def _planned(state_dir: Path, retention: Retention,
             now: datetime | None) -> tuple[GcPlan, blob_files.StoredBlobs | None]:
    """The plan, and the listing of the blob folder it was made from (None: no journal, so no plan)."""
    if not (state_dir / JOURNAL).exists():
        return GcPlan(state_size(state_dir), (), (), None, 0, 0, ("no journal here: nothing to remove",)), None
    _up_to_date(state_dir / JOURNAL)
    db = _connect(state_dir)
    try:
        return _plan(db, state_dir, retention, now or datetime.now(timezone.utc))
    finally:
        db.close()


def collect(state_dir: Path, retention: Retention, now: datetime | None = None, *, shown: GcPlan | None = None,
            on_step: Callable[[str], None] | None = None) -> GcResult:
    """Removes what `plan` lists, then every unreferenced blob, then compacts the journal.

    `shown`: the plan the person was shown; no session outside it is removed, even if one has passed the
    horizon since.  Raises `GcRefused` while a console holds the workspace.  `on_step` hears each step as
    it is done ("rows", "loose", "pack copied", "pack dropped", "vacuumed"): the crash tests kill there.
    """
    step = on_step or (lambda _: None)
    lock = OwnerLock.try_acquire(_lock_path(state_dir), "belay gc")
    if lock is None:
        raise GcRefused(state_dir)
    try:
        gc_plan, stored = _planned(state_dir, retention, now)
        known = {s.session_id for s in (*gc_plan.kept, *gc_plan.removed)}
        if shown is not None:
            agreed = {s.session_id for s in shown.removed}
            gc_plan = replace(gc_plan, removed=tuple(s for s in gc_plan.removed if s.session_id in agreed))
        if stored is None or not (state_dir / JOURNAL).exists():
            return GcResult(gc_plan, 0, 0, gc_plan.state_bytes, gc_plan.notes)
        db = _connect(state_dir)
        try:
            sealer = seals.Sealer(db)
            if gc_plan.removed:
                _remove_sessions(db, sealer, [s.session_id for s in gc_plan.removed])
                step("rows")
            kept_seals = seals.compact(sealer)
            removed, repacked, blob_bytes, notes = _sweep_unless_written(db, state_dir / BLOBS, stored, known,
                                                                            now, step)
            notes += (kept_seals,) if kept_seals else ()
            notes += _compact(db)
            step("vacuumed")
        finally:
            db.close()
        after = state_size(state_dir) if blob_bytes is None else _journal_bytes(state_dir) + blob_bytes
        return GcResult(gc_plan, removed, repacked, after, gc_plan.notes + notes)
    finally:
        lock.release()


# -- the plan ----------------------------------------------------------------------------------------


def _plan(db: sqlite3.Connection, state_dir: Path, retention: Retention,
          now: datetime) -> tuple[GcPlan, blob_files.StoredBlobs]:
    sessions = _sessions(db)
    refs = _references(db)
    stored = blob_files.stored_blobs(state_dir / BLOBS)
    state_bytes = _journal_bytes(state_dir) + stored.bytes  # (state_size, from the one listing)
    removed = _past_horizon(sessions, retention, now)
    removed, notes = _within_limit(sessions, removed, refs, _sizes(stored), state_bytes - stored.bytes,
                                   retention, now)
    gone = {s.session_id for s in removed}
    kept = tuple(s for s in sessions if s.session_id not in gone)
    still = set(refs.get(None, set())).union(*(refs.get(s.session_id, set()) for s in kept))
    count, freed = _freeable(stored, still)
    return GcPlan(state_bytes=state_bytes, removed=tuple(removed), kept=kept, oldest_kept=_oldest_call(db, gone),
                  blobs_freed=count, bytes_freed=freed, notes=notes), stored


def _freeable(stored: blob_files.StoredBlobs, still: set[str]) -> tuple[int, int]:
    """How many blobs, and bytes, `_sweep` would delete if `still` were what committed rows refer to."""
    dead_loose = [d for d in stored.loose if d not in still]
    count, freed = len(dead_loose), sum(stored.loose[d] for d in dead_loose)
    for entries in stored.packs.values():
        dead = [d for d in entries if d not in still]
        if _worth_rewriting(entries, dead):
            count, freed = count + len(dead), freed + sum(entries[d].length for d in dead)
    return count, freed


def _worth_rewriting(entries: dict[str, blob_files._Packed], dead: list[str]) -> bool:
    dead_bytes = sum(entries[d].length for d in dead)
    return bool(dead) and dead_bytes >= REPACK_DEAD_SHARE * sum(e.length for e in entries.values())


def _sizes(stored: blob_files.StoredBlobs) -> dict[str, int]:
    """Each stored blob's size (its first copy's, where a crash or a race stored it twice)."""
    sizes = {d: where.length for entries in stored.packs.values() for d, where in entries.items()}
    sizes.update(stored.loose)
    return sizes


def _past_horizon(sessions: list[SessionSummary], retention: Retention, now: datetime) -> list[SessionSummary]:
    horizon = now - timedelta(days=retention.keep_days)
    return [s for s in sessions if s.last_at < horizon and _removable(s, sessions, now)]


def _removable(s: SessionSummary, sessions: list[SessionSummary], now: datetime) -> bool:
    """Never the newest session, nor one that may still be open."""
    return s is not sessions[-1] and (s.ended or now - s.last_at > OPEN_GRACE)


def _within_limit(sessions: list[SessionSummary], removed: list[SessionSummary], refs: dict[str | None, set[str]],
                  sizes: dict[str, int], journal_bytes: int, retention: Retention,
                  now: datetime) -> tuple[list[SessionSummary], tuple[str, ...]]:
    """`removed`, plus the oldest other sessions for as long as what stays is over `max_bytes`."""
    gone = {s.session_id for s in removed}
    counts: dict[str, int] = {}
    for sid, digests in refs.items():
        if sid not in gone:
            for d in digests:
                counts[d] = counts.get(d, 0) + 1
    blob_bytes = sum(sizes.get(d, 0) for d in counts)
    total_calls = sum(s.calls for s in sessions) or 1
    kept_calls = sum(s.calls for s in sessions if s.session_id not in gone)
    removed = list(removed)
    for s in sorted((s for s in sessions if s.session_id not in gone), key=lambda s: s.last_at):
        if blob_bytes + journal_bytes * kept_calls / total_calls <= retention.max_bytes:
            return removed, ()
        if not _removable(s, sessions, now):
            continue
        removed.append(s)
        kept_calls -= s.calls
        for d in refs.get(s.session_id, ()):
            counts[d] -= 1
            if not counts[d]:
                blob_bytes -= sizes.get(d, 0)
    if blob_bytes + journal_bytes * kept_calls / total_calls <= retention.max_bytes:
        return removed, ()
    return removed, (f"what must stay (the newest session, and any that may still be open) takes about "
                     f"{_mb(blob_bytes)}, over the {_mb(retention.max_bytes)} limit",)


def _sessions(db: sqlite3.Connection) -> list[SessionSummary]:
    calls = {r[0]: (r[1], r[2]) for r in db.execute(
        "SELECT session_id, COUNT(*), MAX(created_at) FROM calls GROUP BY session_id")}
    undos = dict(db.execute("SELECT c.session_id, MAX(r.created_at) FROM rollbacks r JOIN calls c ON c.id=r.call_id"
                            " GROUP BY c.session_id").fetchall())
    outside = dict(db.execute("SELECT session_id, MAX(detected_at) FROM externals GROUP BY session_id").fetchall())
    out = []
    for sid, started, ended in db.execute("SELECT id, started_at, ended_at FROM sessions ORDER BY started_at, rowid"):
        n, last_call = calls.get(sid, (0, None))
        times = [t for t in (started, ended, last_call, undos.get(sid), outside.get(sid)) if t]
        out.append(SessionSummary(sid, _when(started), max(_when(t) for t in times), n, ended is not None))
    return out


def _references(db: sqlite3.Connection) -> dict[str | None, set[str]]:
    """Session -> the blobs its rows name (a call's changes, its undos', its outside changes); None for
    rows of no session (kept whatever happens)."""
    refs: dict[str | None, set[str]] = {}
    for sid, before, after in db.execute(
            "SELECT COALESCE(c.session_id, u.session_id, e.session_id), ch.before_hash, ch.after_hash"
            " FROM changes ch LEFT JOIN calls c ON c.id=ch.op_id"
            " LEFT JOIN rollbacks r ON r.id=ch.op_id LEFT JOIN calls u ON u.id=r.call_id"
            " LEFT JOIN externals e ON e.id=ch.op_id"):
        digests = refs.setdefault(sid, set())
        digests.update(d for d in (before, after) if d)
    return refs


def _oldest_call(db: sqlite3.Connection, gone: set[str]) -> OldestCall | None:
    marks = ",".join("?" * len(gone))
    row = db.execute(f"SELECT id, created_at, tool, summary FROM calls WHERE session_id NOT IN ({marks})"
                     " ORDER BY created_at, rowid LIMIT 1", tuple(gone)).fetchone()
    return OldestCall(row[0], _when(row[1]), row[2], row[3]) if row else None


# -- the removal -------------------------------------------------------------------------------------


def _remove_sessions(db: sqlite3.Connection, sealer: seals.Sealer, session_ids: list[str]) -> None:
    """Every row of these sessions, in one durable commit (children before the rows they point to), each
    removal sealed as Belay's (core.store.seals) so that `belay verify` tells it from one made by hand."""
    db.execute("PRAGMA synchronous=FULL")
    db.execute("BEGIN IMMEDIATE")
    sealer.begin()
    try:
        db.execute("CREATE TEMP TABLE gone_sessions (id TEXT PRIMARY KEY)")
        db.executemany("INSERT INTO gone_sessions VALUES (?)", [(s,) for s in session_ids])
        db.execute("CREATE TEMP TABLE gone_calls AS SELECT id FROM calls WHERE session_id IN gone_sessions")
        db.execute("CREATE TEMP TABLE gone_ops AS SELECT id FROM gone_calls"
                   " UNION SELECT id FROM rollbacks WHERE call_id IN gone_calls"
                   " UNION SELECT id FROM externals WHERE session_id IN gone_sessions")
        for statement in (
                "DELETE FROM changes WHERE op_id IN gone_ops",
                "DELETE FROM git_changes WHERE op_id IN gone_ops",
                "DELETE FROM rollbacks WHERE call_id IN gone_calls",
                "DELETE FROM externals WHERE id IN gone_ops",
                "DELETE FROM outputs WHERE call_id IN gone_calls",
                "DELETE FROM decisions WHERE call_id IN gone_calls",
                "DELETE FROM runs WHERE call_id IN gone_calls",
                "DELETE FROM calls WHERE id IN gone_calls",
                "DELETE FROM batches WHERE session_id IN gone_sessions",
                "DELETE FROM messages WHERE session_id IN gone_sessions",
                "DELETE FROM token_use WHERE session_id IN gone_sessions",
                "DELETE FROM agents WHERE session_id IN gone_sessions AND id NOT IN (SELECT agent_id FROM calls)",
                "DELETE FROM sessions WHERE id IN gone_sessions"):
            db.execute(statement)
        sealer.seal()
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.execute("DROP TABLE IF EXISTS temp.gone_ops")
        db.execute("DROP TABLE IF EXISTS temp.gone_calls")
        db.execute("DROP TABLE IF EXISTS temp.gone_sessions")
        db.execute("PRAGMA synchronous=NORMAL")


def _referenced(db: sqlite3.Connection) -> set[str]:
    """Every blob a committed row names, read after the rows' removal was committed."""
    return {r[0] for r in db.execute("SELECT before_hash FROM changes WHERE before_hash IS NOT NULL"
                                     " UNION SELECT after_hash FROM changes WHERE after_hash IS NOT NULL")}


def _compact(db: sqlite3.Connection) -> tuple[str, ...]:
    """VACUUM, then the WAL truncated: the file shrinks by what the removed rows took."""
    try:
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError as e:  # another program reads or writes it for longer than the timeout
        return (f"the journal was not compacted ({e}); the next gc will",)
    return ()


def _sweep_unless_written(db: sqlite3.Connection, root: Path, stored: blob_files.StoredBlobs, known: set[str],
                          now: datetime | None,
                          step: Callable[[str], None]) -> tuple[int, int, int | None, tuple[str, ...]]:
    """The sweep, with the journal's write lock held: a console opening now waits at its first row, before it
    can store anything, so a blob it finds stored cannot vanish under it.  Skipped when a console may have
    been writing already: one that opened during gc (without the owner lock), or a session not ended and
    active within `OPEN_GRACE`.  (blobs, packs, the blob folder's bytes after it (None: not swept), notes)"""
    db.execute("BEGIN IMMEDIATE")
    try:
        why = _maybe_writing(db, known, now or datetime.now(timezone.utc))
        swept: tuple[int, int, int | None] = (0, 0, None) if why else _sweep(root, stored, _referenced(db), step)
    finally:
        db.execute("COMMIT")  # nothing was written: this only lets writers go on
    return *swept, ((why,) if why else ())


def _maybe_writing(db: sqlite3.Connection, known: set[str], now: datetime) -> str | None:
    sessions = _sessions(db)
    if {s.session_id for s in sessions} - known:
        return "a console opened the workspace during gc: stored copies were left for the next gc"
    live = [s for s in sessions if not s.ended and now - s.last_at <= OPEN_GRACE]
    if live:
        return (f"session {live[0].session_id} has not ended and was active at {live[0].last_at:%H:%M} UTC: in "
                "case its console still runs, stored copies were left until it ends or an hour has passed")
    return None


def _sweep(root: Path, stored: blob_files.StoredBlobs, referenced: set[str],
           step: Callable[[str], None]) -> tuple[int, int, int]:
    """Deletes the blobs of `stored` (the listing the plan under the owner lock was made from) outside
    `referenced`: loose ones, and packs (shrunk when enough of them is dead).  A blob stored since that
    listing is not in it, so it stays (a later gc takes it if nothing refers to it); listing the folder again
    was a third of a gc's time.

    Returns how many blobs went, how many packs were rewritten or dropped, and what the folder takes after
    (from the listing and what was removed and written)."""
    dead_loose = [d for d in stored.loose if d not in referenced]
    after = stored.bytes - blob_files.remove_loose(root, dead_loose)
    step("loose")
    removed, repacked = len(dead_loose), 0
    for index_name, entries in stored.packs.items():
        dead = [d for d in entries if d not in referenced]
        if not _worth_rewriting(entries, dead):
            continue
        after += blob_files.copy_kept(root, index_name, referenced)
        step("pack copied")
        after -= blob_files.drop_pack(root, index_name)
        step("pack dropped")
        removed, repacked = removed + len(dead), repacked + 1
    return removed, repacked, after


# -- helpers -----------------------------------------------------------------------------------------


def _up_to_date(path: Path) -> None:
    """Refuses a damaged or foreign file (JournalUnusable); brings an older Belay's journal up to date by opening
    it as a console does.  A journal that needs nothing is not opened for writing: the journal's module and the
    records it imports are a third of a gc's time."""
    if not journal_file.inspect(path):
        with journal_file.read_only(path) as db:
            if journal_file.up_to_date(db):
                return
    from core.store.journal import Journal

    Journal(path).close()


def _connect(state_dir: Path) -> sqlite3.Connection:
    return sqlite3.connect(state_dir / JOURNAL, isolation_level=None, timeout=30)


def _lock_path(state_dir: Path) -> Path:
    state_dir.mkdir(parents=True, exist_ok=True)
    return state_dir / LOCK


def _when(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _mb(n: float) -> str:
    return f"{n / (1 << 20):,.0f} MB"




def console_open(state_dir: Path) -> bool:
    """Whether a console holds the workspace now (so `collect` would refuse); takes and drops the lock."""
    if not state_dir.exists():
        return False
    lock = OwnerLock.try_acquire(state_dir / LOCK, "belay gc")
    if lock is None:
        return True
    lock.release()
    return False
