"""A JSON-lines file read as it grows: from where the last read stopped, never again from the start.

Agents append their transcripts a record a line.  `JsonlTail.read` returns the complete lines written
since the last read, at most `budget` bytes of them at a time (a huge file is taken in steps, its memory
bounded by one step); a line cut mid-write is kept back until its newline arrives.  A line longer than
`max_line` is skipped (counted in `overlong`) without ever being held whole.  A file replaced (another
inode: rotated, rewritten) or shorter than what was read (truncated) is read again from its start, and
`restarted` says so.  Blocking: call it off the loop (core.outside.transcripts does, on a thread).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINE_BYTES = 16 << 20
"""A record longer than this is skipped (an agent's request dump, a pasted file), never held whole."""
READ_BYTES = 4 << 20
"""The most one `read` takes in by default."""
_CHUNK = 1 << 20


@dataclass
class TailRead:
    """What one read found."""

    lines: list[bytes] = field(default_factory=list)
    """Complete lines, oldest first, without their newline (blank lines left out)."""
    overlong: int = 0
    """Lines skipped for their length."""
    restarted: bool = False
    """The file was replaced or truncated: reading began again at its start."""
    more: bool = False
    """The budget ran out before the end of the file: read again."""


class JsonlTail:
    """One file followed from `offset`; not thread-safe (one reader at a time)."""

    def __init__(self, path: Path, *, max_line: int = MAX_LINE_BYTES) -> None:
        self.path = path
        self.max_line = max_line
        self.offset = 0
        """Bytes of the file read so far (complete lines, the part of a cut line kept back, a line skipped)."""
        self._pending = bytearray()
        """The start of a line whose newline has not been written yet."""
        self._skipping = False
        """Inside an overlong line: everything up to its newline is dropped."""
        self._identity: tuple[int, int] | None = None

    def read(self, budget: int = READ_BYTES) -> TailRead:
        """The lines completed since the last read (at most about `budget` bytes); nothing when the file is
        missing (it may not be written yet)."""
        found = TailRead()
        try:
            with open(self.path, "rb") as file:
                status = os.fstat(file.fileno())
                identity = (status.st_dev, status.st_ino)
                if self._identity is not None and (identity != self._identity or status.st_size < self.offset):
                    self._restart()
                    found.restarted = True
                self._identity = identity
                file.seek(self.offset)
                taken = 0
                while taken < budget:
                    chunk = file.read(min(_CHUNK, budget - taken))
                    if not chunk:
                        return found
                    taken += len(chunk)
                    self.offset += len(chunk)
                    self._split(chunk, found)
                found.more = self.offset < os.fstat(file.fileno()).st_size
        except FileNotFoundError:
            pass
        return found

    def _split(self, chunk: bytes, found: TailRead) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk[start:], found)
                return
            if self._skipping:
                self._skipping = False
            elif self._pending:
                self._pending += chunk[start:end]
                line = bytes(self._pending)
                self._pending.clear()
                if len(line) > self.max_line:
                    found.overlong += 1
                elif line.strip():
                    found.lines.append(line)
            elif end - start > self.max_line:
                found.overlong += 1
            elif end > start:
                found.lines.append(chunk[start:end])
            start = end + 1

    def _keep(self, rest: bytes, found: TailRead) -> None:
        """The start of a line not finished yet: kept back, unless it is already too long to keep."""
        if self._skipping or not rest:
            return
        if len(self._pending) + len(rest) > self.max_line:
            self._pending.clear()
            self._skipping = True
            found.overlong += 1
            return
        self._pending += rest

    def _restart(self) -> None:
        self.offset = 0
        self._pending.clear()
        self._skipping = False

    def __repr__(self) -> str:
        return f"<JsonlTail {self.path} at {self.offset} pending={len(self._pending)}>"
