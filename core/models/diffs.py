"""Line diffs as data: a file's hunks and lines, as the approval panel, the undo dialog and the terminal show them.

Computed by `core.changes.diffs` (off the loop); carried by events.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

LineKind = Literal[" ", "+", "-"]
"""A diff line's mark: context, added, removed."""
LineEnding = Literal["\n", "\r\n", ""]
"""How a line ends: LF, CRLF, or nothing (the file's last line, with no newline at the end)."""
DiffStatus = Literal["create", "modify", "delete", "unchanged"]
"""What happened to a file between two versions."""


class DiffLine(BaseModel):
    """One line of a hunk."""

    model_config = ConfigDict(frozen=True)

    kind: LineKind
    """Context (in both versions), added (new only) or removed (old only)."""
    old_no: int | None
    """1-based line number in the old version; None for an added line."""
    new_no: int | None
    """1-based line number in the new version; None for a removed line."""
    text: str
    """The line without its line ending (neither the LF nor the CR of a CRLF)."""
    ending: LineEnding = "\n"
    """The line's ending: "" only for a last line with no newline at the end of the file."""


class Hunk(BaseModel):
    """A run of changed lines with the context around them, as in `@@ -a,b +c,d @@`."""

    model_config = ConfigDict(frozen=True)

    old_start: int
    """First old line of the hunk (1-based); the line before it when `old_len` is 0."""
    old_len: int
    """Number of old lines the hunk covers (context and removed)."""
    new_start: int
    """First new line of the hunk (1-based); the line before it when `new_len` is 0."""
    new_len: int
    """Number of new lines the hunk covers (context and added)."""
    lines: tuple[DiffLine, ...]
    """The lines in display order: removed lines of a change come before added ones."""


class FileDiff(BaseModel):
    """What changed in one file, ready to show or to print."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Display path, relative to the workspace."""
    status: DiffStatus
    """Whether the file was created, changed, removed, or is byte-for-byte the same."""
    binary: bool = False
    """Either side holds a NUL byte or is not UTF-8; there are no hunks then."""
    old_size: int | None
    """Size of the old version in bytes; None when the file did not exist."""
    new_size: int | None
    """Size of the new version in bytes; None when the file no longer exists."""
    added: int = 0
    """Lines added in the whole file (also counted past a truncation)."""
    removed: int = 0
    """Lines removed in the whole file (also counted past a truncation)."""
    hunks: tuple[Hunk, ...] = ()
    """The hunks, at most `max_lines` lines in all."""
    truncated: bool = False
    """Hunks were cut (or left out) to keep the diff bounded."""
    note: str = ""
    """A remark for the reader, e.g. "binary file, 1,204 -> 1,310 bytes"."""
