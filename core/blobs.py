"""Content-addressed blob store: file contents kept by their SHA-256.

A blob is written to a temporary name, fsynced, renamed into place and its
directory fsynced, so it is durable before any journal row refers to it.
Identical contents are stored once.  Many blobs at once (a workspace
snapshot) go through a `batch`: written unsynced, one `syncfs` for all of
them, then renamed into place and synced again, so a crash leaves either
a whole blob under its name or only a temporary file, never a torn blob
under a name that later writes would trust.  All methods block; call them
off the loop.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Blobs under `root/ab/cdef...`, keyed by the hex SHA-256 of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a blob hash: {digest!r}")
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        """Store `data` durably and return its hash."""
        digest = content_hash(data)
        target = self._path(digest)
        if target.exists():
            return digest
        target.parent.mkdir(exist_ok=True)
        tmp = target.parent / f".{digest[:8]}.{secrets.token_hex(4)}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(target.parent)
        return digest

    @contextmanager
    def batch(self) -> Iterator[BlobBatch]:
        """Store many blobs with two filesystem syncs in all instead of two per blob."""
        batch = BlobBatch(self)
        try:
            yield batch
        except BaseException:
            batch.discard()
            raise
        batch.commit()

    def get(self, digest: str) -> bytes:
        data = self._path(digest).read_bytes()
        if content_hash(data) != digest:
            raise OSError(f"blob {digest[:12]} is corrupt")
        return data

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def __repr__(self) -> str:
        return f"<BlobStore {self.root}>"


class BlobBatch:
    """Blobs written but not yet durable: visible under their names only after `commit`."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store
        self._pending: dict[str, Path] = {}

    def put(self, data: bytes) -> str:
        digest = content_hash(data)
        target = self.store._path(digest)
        if digest in self._pending or target.exists():
            return digest
        target.parent.mkdir(exist_ok=True)
        tmp = target.parent / f".{digest[:8]}.{secrets.token_hex(4)}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._pending[digest] = tmp
        return digest

    def commit(self) -> None:
        if not self._pending:
            return
        _sync_filesystem(self.store.root)
        for digest, tmp in self._pending.items():
            os.replace(tmp, self.store._path(digest))
        _sync_filesystem(self.store.root)
        self._pending.clear()

    def discard(self) -> None:
        for tmp in self._pending.values():
            tmp.unlink(missing_ok=True)
        self._pending.clear()


def _sync_filesystem(path: Path) -> None:
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
