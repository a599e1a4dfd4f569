"""Line diffs of one file's before- and after-bytes, bounded in time and size.

`compute_diff` blocks (it may run git); callers run it in a worker thread,
as they do `diff_of_change`, which diffs one recorded change from its blobs.
The edit script comes from difflib when the changed region is small and from
`git diff --no-index --patience` otherwise, because difflib is quadratic on
large or repetitive files (see PERFORMANCE.md).  Not `--histogram`: git
2.39's histogram diff is itself quadratic when every other line changes
(44 s for 100k lines, where patience and myers take 0.2 s).  Either way
the hunks are built here, from the decoded input, so both engines give the
same shape.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import NamedTuple

from core.changes.gitproc import GIT, git_env
from core.models.diffs import DiffLine, FileDiff, Hunk
from core.models.records import FileChange
from core.store.blobs import BlobStore

log = logging.getLogger(__name__)

GIT_TIMEOUT = 10.0
"""Seconds git may take before the fallback is used instead."""
SMALL_LINES = 2000
"""difflib runs only when the changed region of each side is at most this long."""
TOO_LARGE_NOTE = "diff too large to show"


class _Op(NamedTuple):
    """One non-equal block of the edit script: old[i1:i2] becomes new[j1:j2]."""

    i1: int
    i2: int
    j1: int
    j2: int


def compute_diff(
    path: str,
    before: bytes | None,
    after: bytes | None,
    *,
    context: int = 3,
    max_lines: int = 5000,
) -> FileDiff:
    """Diff two versions of `path` (None means the file does not exist)."""
    status = _status(before, after)
    sizes = {"old_size": _size(before), "new_size": _size(after)}
    old_text, new_text = _decode(before), _decode(after)
    if old_text is None or new_text is None:
        note = "binary file, " + _sizes_note(before, after)
        return FileDiff(path=path, status=status, binary=True, note=note, **sizes)
    if status == "unchanged":
        return FileDiff(path=path, status=status, **sizes)
    old, new = _split(old_text), _split(new_text)
    ops = _edit_script(old, new)
    notes = [_ending_note(old, new)]
    if ops is None:
        removed, added = _approximate_counts(old, new)
        notes.append(TOO_LARGE_NOTE)
        return FileDiff(path=path, status=status, added=added, removed=removed,
                        truncated=True, note=_join(notes), **sizes)
    hunks, truncated = _build_hunks(old, new, ops, context, max_lines)
    if truncated:
        notes.append(f"diff truncated to {max_lines:,} lines")
    return FileDiff(
        path=path,
        status=status,
        added=sum(op.j2 - op.j1 for op in ops),
        removed=sum(op.i2 - op.i1 for op in ops),
        hunks=hunks,
        truncated=truncated,
        note=_join(notes),
        **sizes,
    )


def unified_text(diff: FileDiff) -> str:
    """The diff as classic unified text (`--- a/x`, `+++ b/x`, `@@ ... @@`)."""
    old = "/dev/null" if diff.status == "create" else f"a/{diff.path}"
    new = "/dev/null" if diff.status == "delete" else f"b/{diff.path}"
    if diff.binary:
        return f"Binary files {old} and {new} differ ({diff.note})\n"
    if diff.status == "unchanged":
        return ""
    # A note goes before the header, where patch tools skip text, not after the hunks.
    out = [f"# {diff.note}\n"] if diff.note else []
    out += [f"--- {old}\n", f"+++ {new}\n"]
    for hunk in diff.hunks:
        out.append(_hunk_header(hunk) + "\n")
        for line in hunk.lines:
            out.append(f"{line.kind}{line.text}{line.ending or chr(10)}")
            if not line.ending:
                out.append("\\ No newline at end of file\n")
    return "".join(out)


def _hunk_header(hunk: Hunk) -> str:
    return f"@@ -{_range(hunk.old_start, hunk.old_len)} +{_range(hunk.new_start, hunk.new_len)} @@"


def _range(start: int, length: int) -> str:
    return str(start) if length == 1 else f"{start},{length}"


# -- input -------------------------------------------------------------------


def _status(before: bytes | None, after: bytes | None) -> str:
    if before is None and after is None or before == after:
        return "unchanged"
    if before is None:
        return "create"
    return "delete" if after is None else "modify"


def _size(data: bytes | None) -> int | None:
    return None if data is None else len(data)


def _sizes_note(before: bytes | None, after: bytes | None) -> str:
    if before is None or after is None or before == after:
        size = len(before if after is None else after)
        return f"{size:,} bytes"
    return f"{len(before):,} -> {len(after):,} bytes"


def _decode(data: bytes | None) -> str | None:
    """The text of one side ('' when absent), or None when it is binary."""
    if data is None:
        return ""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _split(text: str) -> list[str]:
    """Lines keeping their endings, so a missing final newline is a difference."""
    lines = text.split("\n")
    last = lines.pop()
    lines = [line + "\n" for line in lines]
    if last:
        lines.append(last)
    return lines


def _strip(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith("\n") else line


def _ending_note(old: list[str], new: list[str]) -> str:
    """Say so when the line endings changed, since the text alone hides it."""
    old_style, new_style = _ending_style(old), _ending_style(new)
    if old_style and new_style and old_style != new_style:
        return f"line endings changed ({old_style} -> {new_style})"
    return ""


def _ending_style(lines: list[str]) -> str:
    crlf = sum(1 for line in lines if line.endswith("\r\n"))
    lf = sum(1 for line in lines if line.endswith("\n")) - crlf
    if not crlf and not lf:
        return ""
    return "CRLF" if crlf > lf else "LF"


def _join(notes: Sequence[str]) -> str:
    return "; ".join(note for note in notes if note)


# -- edit script ---------------------------------------------------------------


def _edit_script(old: list[str], new: list[str]) -> list[_Op] | None:
    """The changed blocks in order, or None when no bounded method could find them."""
    head = _common_prefix(old, new)
    tail = _common_suffix(old[head:], new[head:])
    mid_old, mid_new = old[head:len(old) - tail], new[head:len(new) - tail]
    if not mid_old or not mid_new:
        ops = [_Op(0, len(mid_old), 0, len(mid_new))] if mid_old or mid_new else []
    elif len(mid_old) <= SMALL_LINES and len(mid_new) <= SMALL_LINES:
        ops = _difflib_ops(mid_old, mid_new)
    else:
        ops = _git_ops(mid_old, mid_new)
    if len(mid_old) == len(mid_new):
        ops = _prefer_in_place(mid_old, mid_new, ops)
    return None if ops is None else [_Op(o.i1 + head, o.i2 + head, o.j1 + head, o.j2 + head)
                                     for o in ops]


def _prefer_in_place(a: list[str], b: list[str], ops: list[_Op] | None) -> list[_Op] | None:
    """Lines replaced in place, when that is no longer than the engine's script.

    In repetitive text (a file of "}" lines) every engine may pair a change
    with any equal line far away; replacing the differing lines where they
    stand is what a reader expects, and costs one linear pass.
    """
    in_place: list[_Op] = []
    k, n = 0, len(a)
    while k < n:
        if a[k] == b[k]:
            k += 1
            continue
        start = k
        while k < n and a[k] != b[k]:
            k += 1
        in_place.append(_Op(start, k, start, k))
    if ops is None or _changed(in_place) <= _changed(ops):
        return in_place
    return ops


def _changed(ops: list[_Op]) -> int:
    return sum(op.i2 - op.i1 + op.j2 - op.j1 for op in ops)


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: list[str], b: list[str]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _difflib_ops(a: list[str], b: list[str]) -> list[_Op]:
    # Default autojunk on purpose: without it difflib is quadratic on repetitive input.
    matcher = difflib.SequenceMatcher(None, a, b)
    return [_Op(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _git_ops(old: list[str], new: list[str]) -> list[_Op] | None:
    """Run git's patience diff with no context and read only its hunk headers."""
    if not os.access(GIT, os.X_OK):
        return None
    with tempfile.TemporaryDirectory(prefix="belay-diff-") as tmp:
        a, b = Path(tmp, "a"), Path(tmp, "b")
        a.write_bytes("".join(old).encode("utf-8"))
        b.write_bytes("".join(new).encode("utf-8"))
        try:
            proc = subprocess.run(
                [GIT, "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv",
                 "--text", "--patience", "-U0", "--", "a", "b"],
                cwd=tmp, env=git_env(), capture_output=True, timeout=GIT_TIMEOUT, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("git diff failed, using the fallback: %s", exc)
            return None
    ops = _ops_from_headers(proc.stdout)
    # Exit status 1 means "differences found"; anything else, or no hunks with it, is a failure.
    if proc.returncode != 1 or not ops:
        log.warning("git diff exited %d without a usable diff: %r", proc.returncode, proc.stderr[-500:])
        return None
    return ops




def _ops_from_headers(output: bytes) -> list[_Op]:
    ops = []
    for line in output.splitlines():
        match = _HUNK_HEADER.match(line)
        if match is None:
            continue
        old_start, old_len, new_start, new_len = (
            int(g) if g is not None else 1 for g in match.groups()
        )
        i1 = old_start - 1 if old_len else old_start
        j1 = new_start - 1 if new_len else new_start
        ops.append(_Op(i1, i1 + old_len, j1, j1 + new_len))
    return ops


def _approximate_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    """Removed and added line counts as multiset differences: linear, never quadratic."""
    old_counts, new_counts = Counter(old), Counter(new)
    return sum((old_counts - new_counts).values()), sum((new_counts - old_counts).values())


# -- hunks ---------------------------------------------------------------------


def _build_hunks(
    old: list[str], new: list[str], ops: list[_Op], context: int, max_lines: int
) -> tuple[tuple[Hunk, ...], bool]:
    """Group the changes with `context` lines around them; stop at `max_lines` lines."""
    hunks: list[Hunk] = []
    budget = max_lines
    for group in _groups(ops, context):
        lines = list(islice(_group_lines(old, new, group, context), budget + 1))
        if len(lines) > budget:
            if budget > 0:
                hunks.append(_hunk(group[0], lines[:budget]))
            return tuple(hunks), True
        hunks.append(_hunk(group[0], lines))
        budget -= len(lines)
    return tuple(hunks), False


def _groups(ops: list[_Op], context: int) -> Iterator[list[_Op]]:
    """Split the changes where more than 2 * context equal lines lie between them."""
    group: list[_Op] = []
    for op in ops:
        if group and op.i1 - group[-1].i2 > 2 * context:
            yield group
            group = []
        group.append(op)
    if group:
        yield group


def _group_lines(
    old: list[str], new: list[str], group: list[_Op], context: int
) -> Iterator[DiffLine]:
    first, last = group[0], group[-1]
    i = max(first.i1 - context, 0)
    shift = first.j1 - first.i1  # new index = old index + shift, in equal regions
    for op in group:
        yield from _context(old, i, op.i1, shift)
        for k in range(op.i1, op.i2):
            yield _line("-", old[k], k + 1, None)
        for k in range(op.j1, op.j2):
            yield _line("+", new[k], None, k + 1)
        i, shift = op.i2, op.j2 - op.i2
    yield from _context(old, i, min(last.i2 + context, len(old)), shift)


def _context(old: list[str], start: int, stop: int, shift: int) -> Iterator[DiffLine]:
    for k in range(start, stop):
        yield _line(" ", old[k], k + 1, k + shift + 1)


def _line(kind: str, raw: str, old_no: int | None, new_no: int | None) -> DiffLine:
    text = _strip(raw)
    return DiffLine(kind=kind, old_no=old_no, new_no=new_no, text=text, ending=raw[len(text):])


def _hunk(first: _Op, lines: list[DiffLine]) -> Hunk:
    old_len = sum(1 for line in lines if line.kind != "+")
    new_len = sum(1 for line in lines if line.kind != "-")
    old_first = next((line.old_no for line in lines if line.old_no is not None), None)
    new_first = next((line.new_no for line in lines if line.new_no is not None), None)
    # Unified convention: an empty side names the line before the change.
    old_start = old_first if old_first is not None else first.i1
    new_start = new_first if new_first is not None else first.j1
    return Hunk(old_start=old_start, old_len=old_len, new_start=new_start,
                new_len=new_len, lines=tuple(lines))


def diff_of_change(change: FileChange, blobs: BlobStore) -> FileDiff:
    """One recorded change as a diff, with what a line diff cannot show said in its note."""
    notes = []
    if change.old_path:
        notes.append(f"renamed from {change.old_path}")
    if change.before_link or change.after_link:
        notes.append("symbolic link: its target is shown")
    if change.before_mode is not None and change.after_mode is not None and change.before_mode != change.after_mode:
        notes.append(f"mode {change.before_mode:o} -> {change.after_mode:o}")
    if not change.stored:
        status = {"create": "create", "delete": "delete"}.get(change.kind.value, "modify")
        notes.append("not stored (an ignored or very large file): its contents were not kept and cannot be restored")
        return FileDiff(path=change.path, status=status, old_size=None, new_size=None,  # type: ignore[arg-type]
                        note="; ".join(notes))
    before = blobs.get(change.before_hash) if change.before_hash else None
    after = blobs.get(change.after_hash) if change.after_hash else None
    diff = compute_diff(change.path, before, after)
    if notes:
        diff = diff.model_copy(update={"note": "; ".join([*notes, diff.note] if diff.note else notes)})
    return diff
