"""Replacing a small file of Belay's own (settings, an endpoint's address) in one step.

Readers see the old text or the new, never a mix: the text goes to a fresh
hidden file beside the target, which is then renamed over it.  For files
outside any workspace; a workspace's files go through core.store.fsio, which
also refuses symlinks on the way.  Both name the hidden file `staging_name`
does, with the writer's pid in it: a file a killed writer left can be told
from one being written, and removed when a console next opens (recovery).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
STAGING = re.compile(r"\..+\.belay-(?P<pid>[1-9][0-9]{0,9})-[0-9a-f]{8}\.tmp", re.DOTALL)
"""A file Belay stages a write in, beside its target: `.<name>.belay-<writer's pid>-<8 hex>.tmp`."""


def staging_name(name: str) -> str:
    """A fresh hidden name beside `name` for a file that will be renamed over it, naming this process."""
    stem = name if len(os.fsencode(name)) <= 200 else name[:40]
    return f".{stem}.belay-{os.getpid()}-{secrets.token_hex(4)}.tmp"


def left_by_a_gone_writer(name: str) -> bool:
    """Whether `name` is Belay's staging file and the process that wrote it is gone: no one will rename it.

    A live pid keeps the file, even if it was reused by another program since: a stray file stays
    rather than a write in progress losing its content.
    """
    found = STAGING.fullmatch(name)
    if found is None:
        return False
    try:
        os.kill(int(found["pid"]), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # another user's process (so alive), or no pid at all
        return False
    return False


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
    tmp = path.with_name(staging_name(path.name))
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
