"""Content-addressed blob store: file contents kept by their SHA-256.

Every blob is durable before `put` or a batch's commit returns, so no journal
row can refer to a blob that a crash may lose.  Two layouts share one
namespace:

- loose files `root/ab/cdef...`, for single blobs and small batches: each
  written to a temporary name, fsynced, renamed into place, its folder
  fsynced;
- packs `root/packs/<name>.pack`, for large batches (a workspace's first
  snapshot: thousands of small files, which as loose files would cost a
  file creation and a rename each): the blobs concatenated and fsynced, then
  the pack's index `<name>.idx` (digest -> offset, length, and a checksum)
  written to a temporary name, fsynced, renamed into place, the folder
  fsynced.  A pack counts only once its index exists.  One that a crash
  left without an index is never read, and is removed by the next store
  that opens the folder an hour later.

A crash leaves whole blobs under their names and nothing else that a reader
trusts; `get` checks every blob against its hash anyway.  Identical contents
are stored once.  All methods block: call them off the loop.  A store may be
shared between threads; a batch belongs to the thread that opened it.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import logging
import os
import secrets
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

PACK_MIN_BLOBS = 32
"""A batch holding this many new blobs writes them to a pack; fewer are written as loose files."""
PACK_MIN_BYTES = 4 << 20
"""...or this many bytes of them: until a batch knows which way it goes, it keeps its blobs in memory."""
ABANDONED_AFTER_S = 3600
"""A pack without an index, or a temporary index, untouched this long, is a crashed batch's."""

_INDEX_MAGIC = b"BLBIDX01"
_INDEX_ENTRY = struct.Struct("<32sQQ")  # raw SHA-256, offset, length
_HEX_DIGITS = frozenset("0123456789abcdef")


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DamagedBlob(OSError):
    """A blob whose stored bytes no longer hash to its name: changed or cut short outside Belay."""

    def __init__(self, digest: str, where: str) -> None:
        super().__init__(f"blob {digest[:12]} at {where} is damaged: its content does not match its hash")
        self.digest, self.where = digest, where


class MissingBlob(FileNotFoundError):
    """A blob that is neither a loose file nor in an indexed pack (removed outside Belay)."""

    def __init__(self, digest: str, where: str) -> None:
        super().__init__(f"blob {digest[:12]} is missing: there is no {where}")
        self.digest, self.where = digest, where


class BlobStore:
    """Blobs keyed by the hex SHA-256 of their bytes, loose under `root/ab/cdef...` or in `root/packs`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.packs = root / "packs"
        root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # guards the two below
        self._packed: dict[str, _Packed] | None = None  # every blob of an indexed pack; read on first use
        self._indexes: set[str] = set()  # the index files read into `_packed`

    def put(self, data: bytes) -> str:
        """Store `data` durably and return its hash."""
        digest = content_hash(data)
        if not self.has(digest):
            target = self.root / digest[:2] / digest[2:]
            _make_dir(target.parent)
            _write_durably(target, data)
            _fsync_dir(target.parent)
        return digest

    @contextmanager
    def batch(self) -> Iterator[BlobBatch]:
        """Store many blobs with a few filesystem syncs in all instead of two per blob."""
        batch = BlobBatch(self)
        try:
            yield batch
            batch.commit()
        except BaseException:
            batch.discard()
            raise

    def get(self, digest: str) -> bytes:
        """The blob's bytes: MissingBlob (a FileNotFoundError) if it is not stored, DamagedBlob (an OSError)
        if what is stored does not match its hash; both name the file, for a message a person can act on."""
        try:
            data = self._read(digest)
        except FileNotFoundError:
            raise MissingBlob(digest, str(self._path(digest))) from None
        if content_hash(data) != digest:
            packed = self._find_packed(digest)
            raise DamagedBlob(digest, packed.pack if packed is not None else str(self._path(digest)))
        return data

    def has(self, digest: str) -> bool:
        loose = self._path(digest)
        return (self._find_packed(digest) is not None or loose.exists()
                or self._find_packed(digest, rescan=True) is not None)

    def _path(self, digest: str) -> Path:
        if len(digest) != 64 or not _HEX_DIGITS.issuperset(digest):
            raise ValueError(f"not a blob hash: {digest!r}")
        return self.root / digest[:2] / digest[2:]

    def _read(self, digest: str) -> bytes:
        loose = self._path(digest)
        where = self._find_packed(digest)
        if where is not None:
            return where.read()
        try:
            return loose.read_bytes()
        except FileNotFoundError:
            where = self._find_packed(digest, rescan=True)
            if where is None:
                raise
            return where.read()

    def _stored(self, digest: str) -> bool:
        """Whether a batch can skip `digest`: no rescan of the packs, as a miss costs only space."""
        return (self._find_packed(digest) is not None
                or os.path.exists(os.path.join(self.root, digest[:2], digest[2:])))

    def _find_packed(self, digest: str, rescan: bool = False) -> _Packed | None:
        """Where `digest` is packed; `rescan` first reads the indexes another store on this root committed since."""
        with self._lock:
            if self._packed is None:
                self._packed = {}
                self._read_new_indexes(sweep=True)
            elif rescan:
                self._read_new_indexes()
            return self._packed.get(digest)

    def _read_new_indexes(self, sweep: bool = False) -> None:
        """Adds the packs whose index is not read yet (the lock held); `sweep` also removes abandoned ones."""
        assert self._packed is not None
        try:
            names = set(os.listdir(self.packs))
        except FileNotFoundError:
            return
        for name in sorted(n for n in names - self._indexes if n.endswith(".idx")):
            index = self.packs / name
            entries = _decode_index(index.read_bytes(), str(index.with_suffix(".pack")))
            if entries is None:
                log.warning("blob pack index %s is corrupt: the blobs of its pack are ignored", index)
            self._indexes.add(name)
            self._packed.update(entries or {})
        if sweep:
            _sweep(self.packs, names)

    def _committed(self, index_name: str, entries: dict[str, _Packed]) -> None:
        """A batch's pack is durable: its blobs become visible."""
        with self._lock:
            if self._packed is not None and index_name not in self._indexes:
                self._indexes.add(index_name)
                self._packed.update(entries)

    def __repr__(self) -> str:
        packed = self._packed  # no lock: a repr must not wait, nor deadlock in a debugger
        where = "packs not read yet" if packed is None else f"{len(self._indexes)} packs of {len(packed)} blobs"
        return f"<BlobStore {self.root} {where}>"


class BlobBatch:
    """Blobs written but not yet durable: visible only after `commit`.

    The first ones wait in memory; once there are `PACK_MIN_BLOBS` of them, or
    `PACK_MIN_BYTES`, they and all later ones go to a pack.  Fewer are written
    as loose files on commit.
    """

    def __init__(self, store: BlobStore) -> None:
        self.store = store
        self._digests: set[str] = set()  # every blob of this batch
        self._waiting: list[tuple[str, bytes]] = []
        self._waiting_bytes = 0
        self._pack: _PackWriter | None = None

    def put(self, data: bytes) -> str:
        digest = content_hash(data)
        if digest in self._digests or self.store._stored(digest):
            return digest
        self._digests.add(digest)
        if self._pack is not None:
            self._pack.append(digest, data)
            return digest
        self._waiting.append((digest, data))
        self._waiting_bytes += len(data)
        if len(self._waiting) >= PACK_MIN_BLOBS or self._waiting_bytes >= PACK_MIN_BYTES:
            self._pack = _PackWriter(self.store.packs)
            for waiting in self._waiting:
                self._pack.append(*waiting)
            self._waiting, self._waiting_bytes = [], 0
        return digest

    def commit(self) -> None:
        pack, waiting = self._pack, self._waiting
        self._forget()
        if pack is not None:
            self.store._committed(*pack.commit())
        elif waiting:
            _write_loose(self.store.root, waiting)

    def discard(self) -> None:
        pack = self._pack
        self._forget()
        if pack is not None:
            pack.abandon()

    def _forget(self) -> None:
        self._digests, self._waiting, self._waiting_bytes, self._pack = set(), [], 0, None

    def __repr__(self) -> str:
        where = f"in {self._pack.path.name}" if self._pack is not None else "waiting"
        return f"<BlobBatch {len(self._digests)} blobs {where}>"


class _Packed(NamedTuple):
    """Where a blob lies in a pack."""

    pack: str
    offset: int
    length: int

    def read(self) -> bytes:
        fd = os.open(self.pack, os.O_RDONLY | os.O_CLOEXEC)
        try:
            return os.pread(fd, self.length, self.offset)
        finally:
            os.close(fd)


class _PackWriter:
    """One pack being written: blobs appended unsynced; `commit` makes them durable, then indexes them.

    The pack is flock'ed until its index is in place, so that no store sweeps it away meanwhile.
    """

    def __init__(self, folder: Path) -> None:
        _make_dir(folder)
        self.path = folder / f"{secrets.token_hex(16)}.pack"
        self._file = open(self.path, "xb", buffering=1 << 20)
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)  # a sweep may hold it for a moment
        except BaseException:
            self.abandon()
            raise
        self._entries: dict[str, _Packed] = {}
        self._size = 0

    def append(self, digest: str, data: bytes) -> None:
        self._file.write(data)
        self._entries[digest] = _Packed(str(self.path), self._size, len(data))
        self._size += len(data)

    def commit(self) -> tuple[str, dict[str, _Packed]]:
        """Pack durable, then its index: the name of the index and what it holds."""
        index = self.path.with_suffix(".idx")
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            _fsync_dir(self.path.parent)  # the pack's name is durable before an index names it
            _write_durably(index, _encode_index(self._entries))
        except BaseException:
            self.abandon()
            raise
        self._file.close()
        _fsync_dir(self.path.parent)
        return index.name, self._entries

    def abandon(self) -> None:
        self.path.unlink(missing_ok=True)
        self._file.close()


def _encode_index(entries: dict[str, _Packed]) -> bytes:
    body = _INDEX_MAGIC + b"".join(_INDEX_ENTRY.pack(bytes.fromhex(digest), where.offset, where.length)
                                   for digest, where in entries.items())
    return body + hashlib.sha256(body).digest()


def _decode_index(raw: bytes, pack: str) -> dict[str, _Packed] | None:
    """The blobs an index file lists, None if it is not a whole index."""
    body, checksum = raw[:-32], raw[-32:]
    entries = body[len(_INDEX_MAGIC):]
    if (not body.startswith(_INDEX_MAGIC) or len(entries) % _INDEX_ENTRY.size
            or hashlib.sha256(body).digest() != checksum):
        return None
    return {digest.hex(): _Packed(pack, offset, length)
            for digest, offset, length in _INDEX_ENTRY.iter_unpack(entries)}


def _sweep(folder: Path, names: set[str]) -> None:
    """Removes what crashed batches left: packs never given an index, and temporary index files.

    Only after `ABANDONED_AFTER_S` untouched, which covers the moment between a
    pack's creation and its flock, and only if no batch holds it locked.
    """
    old = time.time() - ABANDONED_AFTER_S
    for name in names:
        unindexed = name.endswith(".pack") and name.removesuffix(".pack") + ".idx" not in names
        if unindexed or name.endswith(".tmp"):
            _remove_if_abandoned(folder / name, old)


def _remove_if_abandoned(path: Path, old: float) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if os.fstat(fd).st_mtime >= old:
            return
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if not path.with_suffix(".idx").exists():  # its batch may have committed since the folder was listed
            path.unlink(missing_ok=True)
    except BlockingIOError:
        return  # a batch is writing it
    finally:
        os.close(fd)


def _write_loose(root: Path, blobs: list[tuple[str, bytes]]) -> None:
    """Each blob to a temporary name; a filesystem sync; all renamed into place; a sync again.

    Two syncs whatever the number of blobs: fewer device flushes than an fsync
    per file and per folder (2 ms for ten blobs here, against 4).
    """
    moves: list[tuple[Path, Path]] = []
    try:
        for digest, data in blobs:
            target = root / digest[:2] / digest[2:]
            target.parent.mkdir(exist_ok=True)
            moves.append((target.parent / f".{digest[:8]}.{secrets.token_hex(4)}.tmp", target))
            with open(moves[-1][0], "xb") as f:
                f.write(data)
        sync_filesystem(root)
        for tmp, target in moves:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in moves:
            tmp.unlink(missing_ok=True)
        raise
    sync_filesystem(root)


def _write_durably(path: Path, data: bytes) -> None:
    """`path` holds `data` whole or is untouched; its folder still needs an fsync."""
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        _write_synced(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _make_dir(folder: Path) -> None:
    """Creates `folder` if missing, its name durable."""
    try:
        folder.mkdir()
    except FileExistsError:
        return
    _fsync_dir(folder.parent)


def sync_filesystem(path: Path) -> None:
    """syncfs(2) on the store's filesystem (Linux); a global sync elsewhere."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        syncfs = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
        if syncfs is None or syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except FileNotFoundError:
        return []
