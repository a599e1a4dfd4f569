"""Replacing a small file of Belay's own (settings, an endpoint's address) in one step.

Readers see the old text or the new, never a mix: the text goes to a fresh
hidden file beside the target, which is then renamed over it.  For files
outside any workspace; a workspace's files go through core.store.fsio, which
also refuses symlinks on the way.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_text_atomically(path: Path, text: str, mode: int | None = None, fsync: bool = True) -> None:
    """Replace (or create) `path` with `text`; missing parent directories are made.

    `mode` None keeps the existing file's permission bits, or makes a new
    file 0o644 less the umask; a given mode (0o600 for a private file) is
    the file's from the start.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(path.stat().st_mode)
    tmp = path.with_name(f".{path.name}.belay-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, _FLAGS, 0o644 if mode is None else 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(text)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
