"""Line diffs of one file's before- and after-bytes, in process, at native speed, bounded in size.

`compute_diff` blocks (native code, linear in the file); callers run it in a
worker thread, as they do `diff_of_change`, which diffs one recorded change
from its blobs.

The edit script comes from libgit2's xdiff on two buffers (`core.changes.xdiff`:
libgit2 as pygit2 ships it, called without holding the GIL): bytes in, hunks
out, no subprocess and no temp files.  Python adds only what runs at memory
speed: the binary check (a NUL, or not UTF-8), the line-ending check (counted
only when a CR is present at all), and trimming the common head and tail with
`memcmp`, so that a small edit in a big file hands xdiff only the region
around it (libgit2 hashes every byte it is given with collision-detecting
SHA-1 before diffing, about 40% of its time on 100k lines).  Myers with git's
indent heuristic, as `git diff` does by default: libgit2 has no histogram, and
patience is slower on repetitive files.  xdiff's Myers sets aside lines with
very many matches, so 120 distinct lines repeated to 160k lines is not
quadratic (bench/diff.py measures it against git).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import NamedTuple, TypedDict

from core.changes.xdiff import XdiffError, XLine, XPatch, diff_buffers
from core.models.diffs import DiffLine, DiffStatus, FileDiff, Hunk, LineEnding, LineKind
from core.models.records import ChangeKind, FileChange
from core.store.blobs import BlobStore

log = logging.getLogger(__name__)

TOO_LARGE_NOTE = "diff too large to show"
XDIFF_MAX_BYTES = 1023 * 1024 * 1024
"""libgit2's GIT_XDIFF_MAX_SIZE: a bigger side is refused (or silently taken for binary), so it is not asked."""
SLIDE_LINES = 100
"""Unchanged lines kept beyond the context on each side of the trimmed region: as far as xdiff's indent
heuristic slides a hunk, so trimming does not change where a hunk lands."""
_MARKS: dict[str, LineKind] = {" ": " ", "+": "+", "-": "-"}
"""The line origins kept from libgit2: it also gives "\\ No newline at end of file" lines, which the
missing ending of the line before already says."""


class _Op(NamedTuple):
    """One non-equal block of the edit script: old[i1:i2] becomes new[j1:j2]."""

    i1: int
    i2: int
    j1: int
    j2: int


class _Region(NamedTuple):
    """Where two versions differ, in whole lines: before[start:old_end] became after[start:new_end]."""

    start: int
    old_end: int
    new_end: int
    line: int
    """Number of lines before `start` (the same in both versions)."""


class _Sizes(TypedDict):
    """Both versions' sizes in bytes, as `FileDiff` takes them (None: that version does not exist)."""

    old_size: int | None
    new_size: int | None


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
    sizes = _Sizes(old_size=_size(before), new_size=_size(after))
    if not _is_text(before) or not _is_text(after):
        note = "binary file, " + _sizes_note(before, after)
        return FileDiff(path=path, status=status, binary=True, note=note, **sizes)
    if status == "unchanged":
        return FileDiff(path=path, status=status, **sizes)
    old, new = before or b"", after or b""
    if old == new:  # an empty file created or deleted: there is no line to show
        return FileDiff(path=path, status=status, **sizes)
    notes = [_ending_note(old, new)]
    region = _trim(old, new, context + SLIDE_LINES)
    old_mid, new_mid = old[region.start:region.old_end], new[region.start:region.new_end]
    patch = _xdiff(path, old_mid, new_mid, context)
    found = _from_lines(old_mid, new_mid, patch, region.line, context, max_lines)
    if found is None and patch is not None:
        found = _from_patch(patch, region.line, max_lines)
    if found is None:
        removed, added = _approximate_counts(_split(old_mid.decode()), _split(new_mid.decode()))
        notes.append(TOO_LARGE_NOTE)
        return FileDiff(path=path, status=status, added=added, removed=removed,
                        truncated=True, note=_join(notes), **sizes)
    hunks, truncated, added, removed = found
    if truncated:
        notes.append(f"diff truncated to {max_lines:,} lines")
    return FileDiff(path=path, status=status, added=added, removed=removed, hunks=hunks,
                    truncated=truncated, note=_join(notes), **sizes)


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


def _status(before: bytes | None, after: bytes | None) -> DiffStatus:
    if before is None and after is None or before == after:
        return "unchanged"
    if before is None:
        return "create"
    return "delete" if after is None else "modify"


def _size(data: bytes | None) -> int | None:
    return None if data is None else len(data)


def _sizes_note(before: bytes | None, after: bytes | None) -> str:
    if before is None or after is None or before == after:
        size = len(before or b"") if after is None else len(after)
        return f"{size:,} bytes"
    return f"{len(before):,} -> {len(after):,} bytes"


def _is_text(data: bytes | None) -> bool:
    """Absent, or UTF-8 without a NUL byte (ASCII is checked without decoding)."""
    if data is None or data.isascii() and b"\0" not in data:
        return True
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _split(text: str) -> list[str]:
    """Lines keeping their endings, so a missing final newline is a difference."""
    lines = text.split("\n")
    last = lines.pop()
    lines = [line + "\n" for line in lines]
    if last:
        lines.append(last)
    return lines


def _ending_note(old: bytes, new: bytes) -> str:
    """Say so when the line endings changed, since the text alone hides it."""
    if b"\r" not in old and b"\r" not in new:
        return ""  # LF or no line ending at all on both sides: nothing to count
    old_style, new_style = _ending_style(old), _ending_style(new)
    if old_style and new_style and old_style != new_style:
        return f"line endings changed ({old_style} -> {new_style})"
    return ""


def _ending_style(data: bytes) -> str:
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    if not crlf and not lf:
        return ""
    return "CRLF" if crlf > lf else "LF"


def _join(notes: Sequence[str]) -> str:
    return "; ".join(note for note in notes if note)


# -- the region that differs ---------------------------------------------------


def _trim(old: bytes, new: bytes, keep: int) -> _Region:
    """The differing region in whole lines, widened by `keep` unchanged lines each way (memcmp, no split)."""
    start = old.rfind(b"\n", 0, _common_prefix(old, new)) + 1
    for _ in range(keep):
        if start == 0:
            break
        start = old.rfind(b"\n", 0, start - 1) + 1
    tail = _common_suffix(old, new, min(len(old), len(new)) - start)
    # Cut after a newline inside the common tail: there it ends a line in both versions.
    end = len(old) if tail == 0 else old.find(b"\n", len(old) - tail) + 1 or len(old)
    for _ in range(keep):
        if end == len(old):
            break
        end = old.find(b"\n", end) + 1 or len(old)
    return _Region(start, end, end - len(old) + len(new), old.count(b"\n", 0, start))


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common head: a bisection that compares each byte at most once."""
    lo, hi = 0, min(len(a), len(b))
    with memoryview(b) as view:
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a.startswith(view[lo:mid], lo):
                lo = mid
            else:
                hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the common tail, at most `limit`."""
    lo, hi = 0, max(limit, 0)
    with memoryview(b) as view:
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a.endswith(view[len(b) - mid:len(b) - lo], 0, len(a) - lo):
                lo = mid
            else:
                hi = mid - 1
    return lo


# -- hunks from xdiff ------------------------------------------------------------


def _xdiff(path: str, old: bytes, new: bytes, context: int) -> XPatch | None:
    """xdiff's patch of two differing buffers; None when it cannot give one (logged)."""
    if max(len(old), len(new)) > XDIFF_MAX_BYTES:
        log.warning("%s differs in %s bytes, more than xdiff takes; using the fallback", path,
                    f"{max(len(old), len(new)):,}")
        return None
    try:
        patch = diff_buffers(old, new, context)
    except XdiffError as exc:  # out of memory, or a limit of libgit2's: a summary rather than no preview
        log.warning("xdiff could not diff %s (%s), using the fallback", path, exc)
        return None
    if not patch.added and not patch.removed:
        log.warning("xdiff found no difference in %s, whose bytes differ; using the fallback", path)
        return None
    return patch


_Found = tuple[tuple[Hunk, ...], bool, int, int]
"""The hunks, whether they were truncated, and the lines added and removed in the whole file."""


def _from_patch(patch: XPatch, shift: int, max_lines: int) -> _Found:
    """xdiff's hunks as Belay's, line numbers shifted by the trimmed head; stop at `max_lines` lines."""
    hunks: list[Hunk] = []
    budget = max_lines
    for index, native in enumerate(patch.hunks):
        lines = list(islice(_native_lines(patch.lines(index), shift), budget + 1))
        if len(lines) <= budget:
            hunks.append(Hunk(old_start=native.old_start + shift, old_len=native.old_lines,
                              new_start=native.new_start + shift, new_len=native.new_lines, lines=tuple(lines)))
            budget -= len(lines)
            continue
        if budget > 0:
            before_old = native.old_start - 1 if native.old_lines else native.old_start
            before_new = native.new_start - 1 if native.new_lines else native.new_start
            hunks.append(_hunk(lines[:budget], before_old + shift, before_new + shift))
        return tuple(hunks), True, patch.added, patch.removed
    return tuple(hunks), False, patch.added, patch.removed


def _native_lines(lines: Iterator[XLine], shift: int) -> Iterator[DiffLine]:
    for line in lines:
        kind = _MARKS.get(line.origin)
        if kind is not None:
            yield _line(kind, line.raw.decode(),
                        line.old_no + shift if line.old_no > 0 else None,
                        line.new_no + shift if line.new_no > 0 else None)


# -- hunks replaced in place -------------------------------------------------------


def _from_lines(old_mid: bytes, new_mid: bytes, patch: XPatch | None, shift: int, context: int,
                max_lines: int) -> _Found | None:
    """Hunks that replace the differing lines where they stand, when that is what the reader should see.

    In repetitive text (a file of "}" lines) xdiff may pair a change with any
    equal line far away; when both versions have as many lines, replacing the
    differing lines in place is what a reader expects, if it is no longer than
    xdiff's script.  Also the fallback when xdiff failed.  None: use xdiff's.
    """
    if patch is not None and (_in_place_already(patch) or
                              not _in_place_fits(old_mid, new_mid, patch.added + patch.removed)):
        return None
    old, new = _split(old_mid.decode()), _split(new_mid.decode())
    if len(old) != len(new):
        return None
    ops = _in_place(old, new)
    if patch is not None and _changed(ops) > patch.added + patch.removed:
        return None
    hunks, truncated = _build_hunks(old, new, ops, context, max_lines, shift)
    return hunks, truncated, sum(op.j2 - op.j1 for op in ops), sum(op.i2 - op.i1 for op in ops)


def _in_place_already(patch: XPatch) -> bool:
    """Whether xdiff's hunks sit where the lines are (each covers as many old as new lines, at the same place),
    so that nothing better can be found in place; also when the versions differ in line count."""
    return patch.added != patch.removed or all(
        hunk.old_start == hunk.new_start and hunk.old_lines == hunk.new_lines for hunk in patch.hunks)


def _in_place_fits(old: bytes, new: bytes, budget: int) -> bool:
    """Whether both have as many lines and replacing the differing ones where they stand changes at most `budget`
    lines (both sides counted, as xdiff's added + removed): decided without splitting either version, by
    skipping each run of equal bytes with memcmp and giving up at the first line past the budget."""
    if _line_count(old) != _line_count(new):
        return False
    i = j = changed = 0
    while True:
        same = _common_from(old, i, new, j)
        if i + same == len(old) and j + same == len(new):
            return True
        start = old.rfind(b"\n", i, i + same) + 1 or i  # the line they differ in starts at the same line in both
        new_start = j + start - i
        changed += 2
        if changed > budget:
            return False
        i = old.find(b"\n", start) + 1 or len(old)
        j = new.find(b"\n", new_start) + 1 or len(new)


def _line_count(data: bytes) -> int:
    """Lines as `_split` counts them: a last line without its newline is one."""
    return data.count(b"\n") + (not data.endswith(b"\n") and bool(data))


def _common_from(a: bytes, i: int, b: bytes, j: int) -> int:
    """Length of the common head of a[i:] and b[j:] (a bisection, as `_common_prefix`)."""
    lo, hi = 0, min(len(a) - i, len(b) - j)
    with memoryview(b) as view:
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a.startswith(view[j + lo:j + mid], i + lo):
                lo = mid
            else:
                hi = mid - 1
    return lo


def _in_place(a: list[str], b: list[str]) -> list[_Op]:
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
    return in_place


def _changed(ops: list[_Op]) -> int:
    return sum(op.i2 - op.i1 + op.j2 - op.j1 for op in ops)


def _approximate_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    """Removed and added line counts as multiset differences: linear, never quadratic."""
    old_counts, new_counts = Counter(old), Counter(new)
    return sum((old_counts - new_counts).values()), sum((new_counts - old_counts).values())


def _build_hunks(
    old: list[str], new: list[str], ops: list[_Op], context: int, max_lines: int, shift: int
) -> tuple[tuple[Hunk, ...], bool]:
    """Group the changes with `context` lines around them; stop at `max_lines` lines."""
    hunks: list[Hunk] = []
    budget = max_lines
    for group in _groups(ops, context):
        lines = list(islice(_group_lines(old, new, group, context, shift), budget + 1))
        if len(lines) > budget:
            if budget > 0:
                hunks.append(_hunk(lines[:budget], group[0].i1 + shift, group[0].j1 + shift))
            return tuple(hunks), True
        hunks.append(_hunk(lines, group[0].i1 + shift, group[0].j1 + shift))
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
    old: list[str], new: list[str], group: list[_Op], context: int, shift: int
) -> Iterator[DiffLine]:
    first, last = group[0], group[-1]
    i = max(first.i1 - context, 0)
    for op in group:  # in place: an old line and its new counterpart have the same index
        for k in range(i, op.i1):
            yield _line(" ", old[k], k + shift + 1, k + shift + 1)
        for k in range(op.i1, op.i2):
            yield _line("-", old[k], k + shift + 1, None)
        for k in range(op.j1, op.j2):
            yield _line("+", new[k], None, k + shift + 1)
        i = op.i2
    for k in range(i, min(last.i2 + context, len(old))):
        yield _line(" ", old[k], k + shift + 1, k + shift + 1)


def _line(kind: LineKind, raw: str, old_no: int | None, new_no: int | None) -> DiffLine:
    ending: LineEnding = "\r\n" if raw.endswith("\r\n") else "\n" if raw.endswith("\n") else ""
    return DiffLine(kind=kind, old_no=old_no, new_no=new_no, text=raw[:len(raw) - len(ending)], ending=ending)


def _hunk(lines: list[DiffLine], before_old: int, before_new: int) -> Hunk:
    """A hunk of `lines`; an empty side names the line before the change (`before_old`, `before_new`)."""
    old_len = sum(1 for line in lines if line.kind != "+")
    new_len = sum(1 for line in lines if line.kind != "-")
    old_first = next((line.old_no for line in lines if line.old_no is not None), None)
    new_first = next((line.new_no for line in lines if line.new_no is not None), None)
    return Hunk(old_start=old_first if old_first is not None else before_old, old_len=old_len,
                new_start=new_first if new_first is not None else before_new, new_len=new_len,
                lines=tuple(lines))


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
        status: DiffStatus = ("create" if change.kind is ChangeKind.CREATE else
                              "delete" if change.kind is ChangeKind.DELETE else "modify")
        notes.append("not stored (an ignored or very large file): its contents were not kept and cannot be restored")
        return FileDiff(path=change.path, status=status, old_size=None, new_size=None, note="; ".join(notes))
    before = blobs.get(change.before_hash) if change.before_hash else None
    after = blobs.get(change.after_hash) if change.after_hash else None
    diff = compute_diff(change.path, before, after)
    if notes:
        diff = diff.model_copy(update={"note": "; ".join([*notes, diff.note] if diff.note else notes)})
    return diff
