"""Content-addressed blob store: file contents kept by their SHA-256.

A blob is written to a temporary name, fsynced, renamed into place and its
directory fsynced, so it is durable before any journal row refers to it.
Identical contents are stored once.  All methods block; call them off the loop.
"""

from __future__ import annotations

import hashlib
import os
import secrets
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

    def get(self, digest: str) -> bytes:
        data = self._path(digest).read_bytes()
        if content_hash(data) != digest:
            raise OSError(f"blob {digest[:12]} is corrupt")
        return data

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def __repr__(self) -> str:
        return f"<BlobStore {self.root}>"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
