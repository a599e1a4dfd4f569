"""The journal's seals: every version of every row Belay writes, hashed into one chain (`belay verify`).

A journal is an audit trail only if an edit made behind Belay's back shows.
So each transaction Belay commits also appends a seal: for each row it
inserted, updated or deleted, the row's table and key and a SHA-256 digest
of its values (none for a row Belay deleted), and a chain digest over the
previous seal's chain digest and this seal.  Which rows a transaction
touched is told by TEMP triggers, which exist only on Belay's own
connection: a row changed with `sqlite3` (or any other program) gets no
seal.

`verify` then walks the chain (a seal edited or removed breaks it from there
on) and compares each row with its latest seal: a row edited, added or
removed outside Belay does not match, and the first such row is named.  A
seal records how many of the table's columns it covers, so a column added to
the table later (see core.store.journal_schema) leaves the older seals valid.

What this does not do: someone who recomputes the whole chain after an edit
is not caught by the chain alone.  `verify` prints the chain's head (the last
chain digest and the number of seals); kept elsewhere, it can be given back
(`expect`) and a rewritten history then no longer holds it.

A journal written before seals existed has its rows sealed when first
opened ("adopted": what they held then is what is checked from then on).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from core.store.journal_file import JournalUnusable, read_only

SEALED = (("sessions", "id"), ("agents", "id"), ("calls", "id"), ("runs", "call_id"), ("decisions", "id"),
          ("changes", "id"), ("rollbacks", "id"), ("outputs", "call_id"), ("externals", "id"),
          ("git_changes", "id"), ("batches", "id"), ("messages", "id"), ("token_use", "id"))
"""Every journal table with its primary key: a row is sealed by key (not rowid, which VACUUM may change)."""

Origin = Literal["belay", "adopted", "carried"]
"""Who sealed: "belay" a transaction Belay committed; "adopted" a row found when seals began (an older journal);
"carried" a row as `compact` found it, the journal verified (`belay gc`)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS seals (
    seq INTEGER PRIMARY KEY, origin TEXT NOT NULL, rows TEXT NOT NULL, chain BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS seal_base (
    id INTEGER PRIMARY KEY CHECK (id = 1), seals INTEGER NOT NULL, head BLOB NOT NULL);
"""
"""`rows`: JSON, [[table, key, width, digest in hex or null], ...]; `width` how many of the table's columns
(in their order) the digest covers."""
_GENESIS = bytes(32)
_json = json.JSONEncoder(separators=(",", ":")).encode
ROWS_PER_SEAL = 1000
"""A transaction that touched more rows (a first seal of an older journal, a gc) has several seals."""


class Sealer:
    """The seals of one connection.  `Sealer(db)` makes the seals table (sealing every row already there when
    it is new) and the TEMP triggers that tell this object, on this connection only, each row a statement
    writes; `begin()` right after each BEGIN forgets what a transaction rolled back told it; `seal()`, before
    each COMMIT, seals the rows written since.  Made outside a transaction, after the tables have all their
    columns (how many a table has is read once here: Belay adds columns only when a journal opens)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._touched: dict[tuple[str, str], tuple[object, ...] | None] = {}
        """(table, key) -> the row's values as last written (None: deleted), in the order last written."""
        new = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='seals'").fetchone() is None
        db.executescript(SCHEMA)
        db.create_function("belay_touched", -1, self._note)  # on this connection only
        self._widths: dict[str, int] = {}
        for table, key in SEALED:  # (Belay never changes a row's key)
            columns = [r[1] for r in db.execute(f"PRAGMA main.table_info({table})")]
            self._widths[table] = len(columns)
            values = ", ".join(f"NEW.{c}" for c in columns)
            for event, told in (("INSERT", f"NEW.{key}, {values}"), ("UPDATE", f"NEW.{key}, {values}"),
                                ("DELETE", f"OLD.{key}")):
                db.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS seal_{table}_{event.lower()} AFTER {event} "
                           f"ON main.{table} BEGIN SELECT belay_touched('{table}', {told}); END")
        if new:
            db.execute("BEGIN IMMEDIATE")
            try:
                self.seal_all("adopted")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _note(self, table: str, key: object, *values: object) -> None:
        where = (table, str(key))
        self._touched.pop(where, None)
        self._touched[where] = values or None

    def seal_all(self, origin: Origin) -> None:
        """Seal every row as it stands (inside a transaction), a seal per ROWS_PER_SEAL rows: a journal's rows
        and their outputs are never all in memory at once."""
        self.begin()
        for table, key in SEALED:
            for row in self.db.execute(f"SELECT {key}, * FROM main.{table} ORDER BY rowid"):
                self._note(table, *row)
                if len(self._touched) >= ROWS_PER_SEAL:
                    self.seal(origin)
        self.seal(origin)

    def begin(self) -> None:
        self._touched.clear()

    def seal(self, origin: Origin = "belay") -> int:
        """Seal the rows written since `begin`, each as it was last written; the number of rows sealed."""
        if not self._touched:
            return 0
        entries: list[list[object]] = [
            [table, key, self._widths[table], row_digest(values) if values is not None else None]
            for (table, key), values in self._touched.items()]
        self._touched.clear()
        self._append(entries, origin)
        return len(entries)

    def _append(self, entries: list[list[object]], origin: Origin) -> None:
        """Seals holding `entries` ([table, key, width, digest]), ROWS_PER_SEAL to a seal, chained on."""
        db = self.db
        head = (db.execute("SELECT seq, chain FROM seals ORDER BY seq DESC LIMIT 1").fetchone()
                or db.execute("SELECT seals, head FROM seal_base").fetchone())
        seq, chain = (head[0], bytes(head[1])) if head else (0, _GENESIS)
        seals = []
        for start in range(0, len(entries), ROWS_PER_SEAL):
            rows = _json(entries[start:start + ROWS_PER_SEAL])
            seq, chain = seq + 1, chain_digest(chain, origin, rows)
            seals.append((seq, origin, rows, chain))
        db.executemany("INSERT INTO seals VALUES (?, ?, ?, ?)", seals)


def compact(sealer: Sealer) -> str | None:
    """Replace the seals by one per row there is now ("carried"), chained on from the last: what `belay gc` does,
    once it has removed rows, so that the seals of removed rows and of rows' earlier versions go with them.
    The head before is kept (`seal_base`): the chain goes on from it, and an `expect` older than it can no
    longer be checked.  Outside a transaction; nobody else may be writing.

    What it must never do is hide a change made outside Belay: a seal changed (the chain would no longer
    show it once the seals are rewritten) or a row changed (were it sealed again as found).  So the whole
    chain is checked first, and a carried seal holds the digest a row was *sealed* with, never one read
    off the row now: a row changed outside Belay still fails `verify` after any number of compactions.
    The rows sealed since the last compaction (all of them, the first time) are checked against their
    seals too, so that a change among them is said at once: the journal's seals are then kept as they are
    (they are what shows the change) and the note returned says so.  The rows a compaction carried and
    Belay has not written since keep their carried seal as it is, unread: a gc costs what was written since
    the last one, not the whole journal."""
    db = sealer.db
    db.execute("BEGIN IMMEDIATE")
    try:
        note = _compacted(sealer)
        db.execute("COMMIT" if note is None else "ROLLBACK")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return note


def _compacted(sealer: Sealer) -> str | None:
    """`compact` inside its transaction: the note when the seals must stay, else None with the seals rewritten."""
    db, widths = sealer.db, sealer._widths
    found: list[Mismatch] = []
    walk = _walk(db, None, found)
    carried: list[list[object]] = []
    checked = -1
    if not found and walk.carried_upto == 0:  # never compacted: every row, as `verify` checks them
        latest = dict(walk.latest)
        _check_rows(db, latest, found, (widths, carried))
        found.extend(_removed(latest))
    elif not found:
        checked = _check_since(db, walk, widths, found, carried)
    if found:
        found.sort(key=_order)
        return (f"the journal's seals were kept as they are: the journal does not verify "
                f"({found[0].describe()}); `belay verify` names what changed")
    if checked == 0:
        return None  # compact already (nothing sealed since the last compaction): rewritten, the seals would be alike
    db.execute("DELETE FROM seals")
    db.execute("INSERT OR REPLACE INTO seal_base VALUES (1, ?, ?)", (walk.seals, walk.chain))
    sealer._append(carried, "carried")
    return None


_INTEGER_KEYS = frozenset({"decisions", "changes", "git_changes"})
"""The tables keyed by an INTEGER (seals hold every key as text)."""


def _check_since(db: sqlite3.Connection, walk: _Walk, widths: dict[str, int], found: list[Mismatch],
                 carried: list[list[object]]) -> int:
    """The rows sealed since the last compaction (or carried at fewer columns than their table has now) checked
    against their latest seal and carried with the digest checked; the others carried as they are.  Returns how
    many seal entries were of the first kind."""
    since: dict[str, dict[str, tuple[int, int, str | None]]] = {}
    for (table, key), (seq, width, digest) in walk.latest.items():
        if seq > walk.carried_upto or width != widths[table]:
            since.setdefault(table, {})[key] = (seq, width, digest)
        elif digest is not None:
            carried.append([table, key, width, digest])
    count = sum(len(keys) for keys in since.values())
    cursor = db.cursor()
    cursor.row_factory = None
    for table, key in SEALED:
        sealed = since.get(table, {})
        keys = [int(k) if table in _INTEGER_KEYS else k for k in sealed]
        width = widths[table]
        for values in cursor.execute(f"SELECT {key}, * FROM main.{table} WHERE {key} IN"
                                     " (SELECT value FROM json_each(?)) ORDER BY rowid", (json.dumps(keys),)):
            name = str(values[0])
            seq, sealed_width, digest = sealed.pop(name)
            if digest is None:  # Belay deleted it
                found.append(Mismatch("added", table, name, seq))
            elif row_digest(values[1:1 + sealed_width]) != digest:
                found.append(Mismatch("edited", table, name, seq))
            else:
                whole = digest if sealed_width == width == len(values) - 1 else row_digest(values[1:1 + width])
                carried.append([table, name, width, whole])
        found.extend(Mismatch("removed", table, name, seq) for name, (seq, _, digest) in sealed.items()
                     if digest is not None)
    return count


def row_digest(values: Sequence[object]) -> str:
    """SHA-256 of a row's values, its first 128 bits in hex (finding other values with the same digest stays
    out of reach; half the digest halves what a seal weighs): of their `repr`, which tells 1, 1.0, '1', b'1'
    and NULL apart, quotes and escapes text unambiguously, and writes a float as the shortest text that reads
    back as it."""
    return hashlib.sha256(repr(tuple(values)).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def chain_digest(previous: bytes, origin: str, rows: str) -> bytes:
    return hashlib.sha256(previous + origin.encode() + b"\0" + rows.encode("utf-8", "surrogatepass")).digest()


# -- verify -----------------------------------------------------------------------------------------------

Problem = Literal["chain", "edited", "added", "removed"]


@dataclass(frozen=True)
class Mismatch:
    """One thing that does not match: `seq` the seal concerned (None for a row that never had one)."""

    problem: Problem
    table: str
    key: str
    seq: int | None

    def describe(self) -> str:
        row = f"{self.table} row {self.key!r}"
        seal = f"seal {self.seq}" if self.seq is not None else "no seal"
        return {
            "chain": f"the chain of seals breaks at seal {self.seq}: a seal was changed, removed or inserted "
                     "outside Belay",
            "edited": f"{row} does not match its {seal}: it was changed outside Belay",
            "added": f"{row} has no seal that holds it: it was added outside Belay",
            "removed": f"{row} is missing but its {seal} says Belay left it there: it was removed outside Belay",
        }[self.problem]


@dataclass(frozen=True)
class JournalCheck:
    seals: int
    rows: int
    head: str
    """The last seal's chain digest (hex): with `seals`, what `verify(expect=...)` checks a later journal holds."""
    mismatches: tuple[Mismatch, ...] = field(default=())
    adopted: int = 0
    """Rows sealed as found when sealing began (a journal older than seals): checked from then on only."""
    expected_missing: bool = False
    """An `expect`ed head the chain does not hold at that place: the history up to it was rewritten (or, for a
    head older than `compacted_at`, compacted by `belay gc` and no longer checkable)."""
    compacted_at: int | None = None
    """The number of seals `belay gc` last compacted: the chain kept starts there."""

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.expected_missing


def verify(db: sqlite3.Connection, expect: tuple[int, str] | None = None, limit: int = 100) -> JournalCheck:
    """Check the chain, then every row against its latest seal, in one read transaction of `db` (a read-only
    connection does).  Mismatches come in the order found (the chain first), at most `limit` of them."""
    found: list[Mismatch] = []
    db.execute("BEGIN")
    try:
        walk = _walk(db, expect, found)
        latest = dict(walk.latest)
        rows = _check_rows(db, latest, found, None)
        found.extend(_removed(latest))
    finally:
        db.execute("COMMIT")
    found.sort(key=_order)
    return JournalCheck(seals=walk.seals, rows=rows, head=walk.chain.hex(), mismatches=tuple(found[:limit]),
                        adopted=walk.adopted, expected_missing=walk.expected_missing, compacted_at=walk.compacted_at)


class _Walk(NamedTuple):
    """The chain of seals walked from its base: where it ends, and each row's latest seal."""

    seals: int
    chain: bytes
    latest: dict[tuple[str, str], tuple[int, int, str | None]]
    """(table, key) -> (seq, width, digest) of the row's latest seal (digest None: Belay deleted the row)."""
    adopted: int
    expected_missing: bool
    compacted_at: int | None
    carried_upto: int
    """The last seal the last compaction wrote (0: none): the seals after it are Belay's writes since."""


def _walk(db: sqlite3.Connection, expect: tuple[int, str] | None, found: list[Mismatch]) -> _Walk:
    """Every seal's chain digest checked (a broken link is named once, in `found`), in a transaction of the caller."""
    latest: dict[tuple[str, str], tuple[int, int, str | None]] = {}
    base = _base(db)
    count, chain = base if base is not None else (0, _GENESIS)
    adopted, expected_missing = 0, expect is not None and expect != (count, chain.hex())
    carried_upto, leading = 0, True
    for seq, origin, rows, stored in db.execute("SELECT seq, origin, rows, chain FROM seals ORDER BY seq"):
        chain = chain_digest(chain, origin, rows)
        try:
            entries = [(str(t), str(k), int(w), d) for t, k, w, d in json.loads(rows)]
        except (ValueError, TypeError):
            entries = []
        if (chain != bytes(stored) or not entries) and not any(m.problem == "chain" for m in found):
            found.append(Mismatch("chain", "seals", str(seq), seq))
        chain = bytes(stored)  # go on from what is there: one broken link is named once
        count += 1
        leading = leading and origin == "carried"
        carried_upto = seq if leading else carried_upto
        adopted += len(entries) if origin == "adopted" else 0
        for table, key, width, digest in entries:
            latest[(table, key)] = (seq, width, digest)
        if expect is not None and count == expect[0] and chain.hex() == expect[1]:
            expected_missing = False
    return _Walk(count, chain, latest, adopted, expected_missing, base[0] if base is not None else None,
                 carried_upto)


def _removed(latest: dict[tuple[str, str], tuple[int, int, str | None]]) -> list[Mismatch]:
    """The rows left in `latest` once every row there is was looked up: those Belay left there are missing."""
    return [Mismatch("removed", table, key, seq) for (table, key), (seq, _, digest) in latest.items()
            if digest is not None]


def _check_rows(db: sqlite3.Connection, latest: dict[tuple[str, str], tuple[int, int, str | None]],
                found: list[Mismatch], carry: tuple[dict[str, int], list[list[object]]] | None) -> int:
    """Every row against its latest seal (popped from `latest`: what is left was removed); the rows counted.
    `carry`: (each table's width now, a list) to which each matching row's entry is added as `Sealer.seal_all`
    would seal it now ([table, key, width, digest], in its order), from the digest just checked."""
    rows = 0
    cursor = db.cursor()
    cursor.row_factory = None  # tuples: a `sqlite3.Row` is sliced and hashed a third slower
    for table, key in SEALED:
        width = carry[0][table] if carry is not None else 0
        for values in cursor.execute(f"SELECT {key}, * FROM main.{table} ORDER BY rowid"):
            rows += 1
            name = str(values[0])
            sealed = latest.pop((table, name), None)
            if sealed is None or sealed[2] is None:  # never sealed, or sealed as deleted by Belay
                found.append(Mismatch("added", table, name, sealed[0] if sealed else None))
                continue
            digest = row_digest(values[1:1 + sealed[1]])
            if digest != sealed[2]:
                found.append(Mismatch("edited", table, name, sealed[0]))
            elif carry is not None:  # as seal_all seals it: over all the columns the table has now
                whole = digest if sealed[1] == width == len(values) - 1 else row_digest(values[1:1 + width])
                carry[1].append([table, name, width, whole])
    return rows


def _base(db: sqlite3.Connection) -> tuple[int, bytes] | None:
    """Where the chain starts after a `compact`: the number of seals before it and the head they had."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='seal_base'").fetchone() is None:
        return None  # a read-only look at a journal sealed before compaction existed
    row = db.execute("SELECT seals, head FROM seal_base").fetchone()
    return (int(row[0]), bytes(row[1])) if row else None


def verify_journal(path: Path, expect: tuple[int, str] | None = None) -> JournalCheck:
    """`verify` on the journal at `path`, read-only (also while a console writes it)."""
    with read_only(path) as db:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='seals'").fetchone() is None:
            raise JournalUnusable(path, f"the journal {path} has no seals: no Belay that seals its journal has "
                                        "opened it yet.", "Open the workspace once (belay watch) and verify again.")
        return verify(db, expect)


def _order(m: Mismatch) -> tuple[int, int]:
    """The chain first, then rows in the order of their seals (the earliest tampered first), unsealed last."""
    return (0 if m.problem == "chain" else 1, m.seq if m.seq is not None else 1 << 62)


def parse_head(text: str) -> tuple[int, str]:
    """`N:HEX` as `verify` prints the head."""
    count, _, digest = text.partition(":")
    if not count.isdigit() or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest.lower()):
        raise ValueError(f"{text!r} is not a head as belay verify prints it (COUNT:64 hex digits)")
    return int(count), digest.lower()
