"""Whether the file at the journal's place is a journal Belay may write, decided by reading it only.

A journal is the audit trail: Belay must never make a damaged one worse,
nor write its tables into somebody else's database that happens to sit
at that path.  So before the journal is opened for writing (before WAL
mode, CREATE TABLE or a migration touch it) the file is opened read-only
and looked at: its header (`application_id`), its tables, and, up to a
size, SQLite's own quick check.  Journals since this check carry
`APPLICATION_ID`; older ones are recognised by their tables.

Every problem is a `JournalUnusable` whose message names the file and
says what to do, so the command line and the window can show it as one
line instead of a traceback.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from core.errors import BelayError, ErrorKind
from core.store.journal_schema import ADDED_COLUMNS, INDEXES

APPLICATION_ID = 0x42454C59
"""`PRAGMA application_id` of a Belay journal ("BELY"): what tells it from another program's database."""
TABLES = frozenset({"sessions", "agents", "calls", "runs", "decisions", "changes", "rollbacks", "outputs",
                    "externals", "git_changes", "batches", "seals", "seal_base", "messages", "token_use"})
"""Belay's own tables; a journal written before `APPLICATION_ID` existed has some of them and no others."""
FIRST_TABLES = frozenset({"sessions", "agents", "calls", "runs"})
"""Tables every journal has had since the first release."""
QUICK_CHECK_MAX_BYTES = 64 << 20
"""Larger journals skip `PRAGMA quick_check` at open (it reads the whole file); damage found later still
reads as `JournalUnusable`."""
_MAGIC = b"SQLite format 3\0"
_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (primary codes: extended ones carry more bits)
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED


class JournalUnusable(BelayError):
    """The journal's file cannot be used as it is; Belay did not change it."""

    def __init__(self, path: Path, message: str, suggestion: str) -> None:
        super().__init__(ErrorKind.SYSTEM, message, suggestion, code="journal-unusable")
        self.path = path


def damaged(path: Path, detail: str) -> JournalUnusable:
    return JournalUnusable(
        path, f"the journal {path} is damaged ({detail}); Belay changed nothing in it.",
        f"Move it aside, with its -wal file if there is one (for example: mv '{path}' '{path}.damaged'); "
        "Belay then starts a new journal and the old file stays with you.")


def foreign(path: Path, tables: set[str], app_id: int) -> JournalUnusable:
    what = f"{'table' if len(tables) == 1 else 'tables'} {', '.join(sorted(tables))}" if tables else "no tables"
    if app_id not in (0, APPLICATION_ID):
        what += f", application id {app_id:#x}"
    return JournalUnusable(
        path, f"{path} is not a Belay journal (an SQLite database with {what}); Belay did not change it.",
        f"Move that file elsewhere; Belay then starts a new journal at {path}.")


def translated(path: Path, error: sqlite3.Error, doing: str) -> BelayError | None:
    """What to raise for an SQLite failure on the journal: damage and refusals (a full disk, a lock held too
    long) read as `JournalUnusable`; None for a broken constraint, a bug rather than the file's fault."""
    if isinstance(error, (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError)):
        return None
    if is_damage(error):
        return damaged(path, str(error))
    busy = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF in _BUSY_CODES
    return JournalUnusable(path, f"the journal {path} could not be {doing}: {error}.",
                           "Another program holds it locked; try again once it is done." if busy else
                           "Check the disk has room and the file can be written; Belay recorded nothing more.")


def _raise(path: Path, error: sqlite3.Error, doing: str) -> NoReturn:
    problem = translated(path, error, doing)
    if problem is None:
        raise error
    raise problem from None


def is_damage(error: sqlite3.Error) -> bool:
    """SQLite found the file damaged, or a text Belay wrote as UTF-8 no longer is (Python says so, not SQLite)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return str(error).startswith("Could not decode to UTF-8")
    return code & 0xFF in _DAMAGE_CODES


def inspect(path: Path) -> bool:
    """Raises JournalUnusable unless `path` is missing, empty, or a Belay journal SQLite finds whole.

    Returns whether it lacks `APPLICATION_ID` (new, or written before the mark existed) so that the
    caller marks it.  Nothing is written: the header is read as bytes, another program's tables through
    an immutable connection (no lock, no -wal or -shm file made beside it), and only a file that is
    Belay's own is opened by SQLite read-only for its quick check.
    """
    read = _header(path)
    if read is None:
        return True
    header, short = read
    app_id = int.from_bytes(header[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        raise foreign(path, _tables(path), app_id)
    if app_id == 0:
        tables = _tables(path)
        if tables and not _belays(tables):
            raise foreign(path, tables, app_id)
    _check_whole(path, short)
    return app_id == 0


def _header(path: Path) -> tuple[bytes, str | None] | None:
    """The file's 100-byte SQLite header, and whether the file looks cut short by it; None for no file (or an
    empty one, with no WAL to replay).

    Looking short is only a hint: a console checkpointing this moment writes the header before the pages
    that make the file that long, so SQLite (which takes the locks) has the last word.
    """
    try:
        with open(path, "rb") as f:
            header, size = f.read(100), os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        return None
    except OSError as e:
        raise JournalUnusable(path, f"the journal {path} cannot be read: {e.strerror}.",
                              "Check the file's permissions.") from None
    if not header:
        return None if not os.path.exists(f"{path}-wal") else (header, None)
    if len(header) < 100 or not header.startswith(_MAGIC):
        raise damaged(path, "file is not a database")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] == header[92:96] and size < pages * page_size:  # the page count is valid, the file short
        return header, f"the file is cut short: {size} bytes of {pages * page_size}"
    return header, None


def _belays(tables: set[str]) -> bool:
    own = {t for t in tables if not t.startswith("sqlite_")}
    return FIRST_TABLES <= own <= TABLES


def _tables(path: Path) -> set[str]:
    """The tables as the file itself holds them (immutable: read without locks or side files)."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as e:
        _raise(path, e, "opened")
    try:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as e:
        _raise(path, e, "read")
    finally:
        db.close()


def _check_whole(path: Path, short: str | None) -> None:
    """SQLite's quick check of a journal that is Belay's, read-only (another console may be writing it);
    a large one only if its header made it look cut short."""
    if short is None and path.stat().st_size > QUICK_CHECK_MAX_BYTES:
        return
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            problems = [r[0] for r in db.execute("PRAGMA quick_check(3)")]
        finally:
            db.close()
    except sqlite3.Error as e:
        if short is not None and is_damage(e):
            raise damaged(path, short) from None
        _raise(path, e, "read")
    if problems != ["ok"]:
        raise damaged(path, short or "; ".join(problems))


_INDEX_NAMES = tuple(line.split()[5] for line in INDEXES.split("\n") if line.startswith("CREATE INDEX IF NOT EXISTS"))


def up_to_date(db: sqlite3.Connection) -> bool:
    """Whether the journal open in `db` has every column and index Belay adds, and its seals: what a reader that
    cannot write (`belay calls`, `belay gc`'s plan) needs, where a writing open (core.store.journal) adds them."""
    names = {(r[0], r[1]) for r in db.execute("SELECT type, name FROM sqlite_master")}
    tables = {name for kind, name in names if kind == "table"}
    if not {"seals", "seal_base"} <= tables or not all(table in tables for table in ADDED_COLUMNS):
        return False
    if not all(("index", name) in names for name in _INDEX_NAMES):
        return False
    for table, columns in ADDED_COLUMNS.items():
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if not all(name in have for name, _ in columns):
            return False
    return True


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """The journal opened read-only (SQLite's `mode=ro`: beside a console writing it, and never changed), for
    a command that reads it whole (`belay export`, `belay verify`); its SQLite failures read as
    `JournalUnusable`, as does a missing file."""
    if not path.exists():
        raise JournalUnusable(path, f"there is no journal at {path}: nothing is recorded for this workspace.",
                              "Check the workspace (and --state-dir) given.")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as error:
        raise _unreadable(path, error) from None
    db.row_factory = sqlite3.Row
    try:
        yield db
    except sqlite3.Error as error:
        raise _unreadable(path, error) from None
    finally:
        db.close()


def _unreadable(path: Path, error: sqlite3.Error) -> BelayError:
    return translated(path, error, "read") or JournalUnusable(
        path, f"the journal {path} could not be read: {error}.", "Check the file, or run `belay calls` on it.")
