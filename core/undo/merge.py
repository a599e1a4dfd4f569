"""Three-way merge of one file's bytes, so a tool call can be undone after later edits.

Undoing a call whose file changed again since is a one-file `git revert`:
base is what the call left, ours is the file now, theirs is what the call
found.  `merge3` blocks (it writes temp files and runs git); callers run it
in a worker thread.  The engine is `git merge-file --diff3`; when git is
missing, fails or times out, a small diff3 over lines stands in, bounded to
small changed regions because difflib is quadratic on repetitive input.
Both work on bytes, so CRLF endings and a missing final newline survive.
"""

from __future__ import annotations

import difflib
import logging
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from core.changes.gitproc import GIT, NO_PROGRAMS, git_env

log = logging.getLogger(__name__)

MAX_BYTES = 8 * 1024 * 1024
"""A side larger than this is not merged: the person gets no dialog they could read."""
GIT_TIMEOUT = 10.0
"""Seconds `git merge-file` may take before the fallback is tried instead."""
SMALL_LINES = 2000
"""The fallback diffs a side against base only when their differing middles are at most this long."""
DEFAULT_LABELS = ("now", "after the call", "before the call")


@dataclass(frozen=True)
class MergeResult:
    """The outcome of one three-way merge."""

    clean: bool
    """No region was changed differently on both sides; `content` can be written as is."""
    content: bytes
    """The merged bytes; when not clean, with diff3-style conflict markers showing the base."""
    conflicts: int
    """Number of conflicting regions (0 when clean)."""


class _Hunk(NamedTuple):
    """One changed block of a two-way diff: base[b1:b2] became side[s1:s2]."""

    b1: int
    b2: int
    s1: int
    s2: int


@dataclass
class _MergeRegion:
    """Base lines [lo, hi) that ours' and theirs' hunks (in that order) change."""

    lo: int
    hi: int
    hunks: tuple[list[_Hunk], list[_Hunk]] = field(default_factory=lambda: ([], []))


def merge3(
    base: bytes, ours: bytes, theirs: bytes, *, labels: tuple[str, str, str] = DEFAULT_LABELS
) -> MergeResult | None:
    """Merge the change base -> theirs into ours; blocks, so call it from a worker thread.

    `labels` name ours, base and theirs in the conflict markers.  None when a
    text merge is needed but does not apply: a side is binary (NUL byte), not
    UTF-8, larger than MAX_BYTES, or no engine could merge it in bounds.  When
    one side did not change, the other is taken as is, even if binary.
    """
    if ours == base or ours == theirs:
        return MergeResult(clean=True, content=theirs, conflicts=0)
    if theirs == base:
        return MergeResult(clean=True, content=ours, conflicts=0)
    if not all(_is_text(side) for side in (base, ours, theirs)):
        return None
    result = _git_merge(base, ours, theirs, labels)
    return result if result is not None else _python_merge(base, ours, theirs, labels)


def _is_text(data: bytes) -> bool:
    if len(data) > MAX_BYTES or b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- git -----------------------------------------------------------------------


def _git_executable() -> str | None:
    """The git Belay runs (see core.changes.gitproc); None when it is missing and the built-in merge must do."""
    return GIT if os.access(GIT, os.X_OK) else None


def _git_merge(base: bytes, ours: bytes, theirs: bytes, labels: Sequence[str]) -> MergeResult | None:
    """Merge with `git merge-file`, or None (and the fallback runs) when git cannot."""
    git = _git_executable()
    if git is None:
        log.info("git not found; merging with the built-in diff3")
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="belay-merge-") as tmp:
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                Path(tmp, name).write_bytes(data)
            proc = subprocess.run(
                [git, *NO_PROGRAMS, "merge-file", "-p", "--diff3", "-L", labels[0], "-L", labels[1], "-L", labels[2],
                 "ours", "base", "theirs"],
                cwd=tmp, env=git_env(), capture_output=True, timeout=GIT_TIMEOUT, check=False,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("git merge-file failed, using the built-in diff3: %s", exc)
        return None
    # The exit code is the number of conflicts, capped at 127; negative (255) is an error.
    if not 0 <= proc.returncode <= 127:
        log.warning("git merge-file exited %d, using the built-in diff3: %r",
                    proc.returncode, proc.stderr[-500:])
        return None
    conflicts = proc.returncode
    if conflicts == 127:
        opening = b"<<<<<<< " + labels[0].encode("utf-8")
        conflicts = sum(1 for line in proc.stdout.splitlines() if line == opening)
    return MergeResult(clean=conflicts == 0, content=proc.stdout, conflicts=conflicts)


# -- fallback --------------------------------------------------------------------


def _python_merge(base: bytes, ours: bytes, theirs: bytes, labels: Sequence[str]) -> MergeResult | None:
    """diff3 over lines, as git does it: changes that overlap or touch conflict unless identical."""
    b, o, t = _lines(base), _lines(ours), _lines(theirs)
    ours_hunks, theirs_hunks = _hunks(b, o), _hunks(b, t)
    if ours_hunks is None or theirs_hunks is None:
        return None
    out: list[bytes] = []
    pos = d_o = d_t = conflicts = 0  # next base line to copy; a side's index = base index + d
    for region in _regions(ours_hunks, theirs_hunks):
        in_ours, in_theirs = region.hunks
        o_lo, t_lo = region.lo + d_o, region.lo + d_t
        d_o += sum(h.s2 - h.s1 - (h.b2 - h.b1) for h in in_ours)
        d_t += sum(h.s2 - h.s1 - (h.b2 - h.b1) for h in in_theirs)
        mine, yours = o[o_lo:region.hi + d_o], t[t_lo:region.hi + d_t]
        out += b[pos:region.lo]
        if not in_ours or not in_theirs or mine == yours:
            out += yours if in_theirs else mine
        else:
            eol = _marker_eol(o, o_lo, t, t_lo, b)
            out += _conflict((mine, b[region.lo:region.hi], yours), labels, eol)
            conflicts += 1
        pos = region.hi
    out += b[pos:]
    return MergeResult(clean=conflicts == 0, content=b"".join(out), conflicts=conflicts)


def _lines(data: bytes) -> list[bytes]:
    """Lines split at LF only, as git does, keeping their endings (CRLF, or none at the end)."""
    lines = data.split(b"\n")
    last = lines.pop()
    return [line + b"\n" for line in lines] + ([last] if last else [])


def _hunks(base: list[bytes], side: list[bytes]) -> list[_Hunk] | None:
    """The changed blocks base -> side, or None when the differing middle is too long."""
    n = min(len(base), len(side))
    head = next((k for k in range(n) if base[k] != side[k]), n)
    tail = next((k for k in range(n - head) if base[-1 - k] != side[-1 - k]), n - head)
    mid_b, mid_s = base[head:len(base) - tail], side[head:len(side) - tail]
    if len(mid_b) > SMALL_LINES or len(mid_s) > SMALL_LINES:
        return None
    # Default autojunk on purpose: without it difflib is quadratic on repetitive input.
    matcher = difflib.SequenceMatcher(None, mid_b, mid_s)
    return [_Hunk(i1 + head, i2 + head, j1 + head, j2 + head)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _regions(ours: list[_Hunk], theirs: list[_Hunk]) -> list[_MergeRegion]:
    """Base ranges where hunks of either side overlap or touch, in order."""
    regions: list[_MergeRegion] = []
    for b1, b2, side, hunk in sorted([(*h[:2], 0, h) for h in ours] + [(*h[:2], 1, h) for h in theirs]):
        if not regions or b1 > regions[-1].hi:  # touching joins, as in git: adjacent edits conflict
            regions.append(_MergeRegion(b1, b2))
        regions[-1].hi = max(regions[-1].hi, b2)
        regions[-1].hunks[side].append(hunk)
    return regions


def _conflict(sections: Sequence[list[bytes]], labels: Sequence[str], eol: bytes) -> list[bytes]:
    """Ours, base and theirs between diff3 markers, each section ending in a newline as in git."""
    now, after, before = (label.encode("utf-8") for label in labels)
    out = [b"<<<<<<< " + now + eol]
    for lines, marker in zip(sections, (b"||||||| " + after, b"=======", b">>>>>>> " + before)):
        out += lines
        if lines and not lines[-1].endswith(b"\n"):
            out.append(eol)
        out.append(marker + eol)
    return out


def _marker_eol(o: list[bytes], o_lo: int, t: list[bytes], t_lo: int, b: list[bytes]) -> bytes:
    """CRLF when the lines before the conflict and base's first line use it (git's is_cr_needed)."""
    votes = (_crlf(o, o_lo - 1), _crlf(t, t_lo - 1), _crlf(b, 0))
    return b"\r\n" if False not in votes and votes[2] else b"\n"


def _crlf(lines: list[bytes], i: int) -> bool | None:
    """Whether line i ends in CRLF (for an unended last line, the one before); None if unknown."""
    i = max(i, 0)
    if i < len(lines) and not lines[i].endswith(b"\n"):
        i -= 1
    return lines[i].endswith(b"\r\n") if lines and i >= 0 else None
