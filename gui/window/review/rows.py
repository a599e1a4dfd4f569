"""The rows of the review diff: side-by-side and unified, with word highlights; pure functions, no Qt.

`build_layout` turns `FileDiff`s into the rows `gui.window.review.view`
paints, both ways at once so that switching views costs nothing: file
headers, hunk headers naming the enclosing function or class, a fold row
counting the unchanged lines between hunks, and line rows whose cells carry
their syntax colours (pygments, via `gui.window.review.highlight`) and the changed
words of a changed line.  It runs in a worker thread; the GUI thread only
paints the rows on screen.

Word highlights pair the i-th removed line of a change with its i-th added
line and diff them by words with difflib, bounded: long lines and lines
with little in common are left whole (a paint of the line's background).
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Literal

from core import DiffLine, FileDiff, Hunk
from gui.window.review.highlight import DARK, LIGHT, Tokens, diff_tokens, display_text, token_look

MAX_WORD_DIFF_CHARS = 400
"""Longer lines are not diffed by words (difflib is quadratic in the tokens)."""
MAX_WORD_PAIRS = 2_000
"""Line pairs diffed by words per file; past that, changed lines are shown whole (a rewrite of a big file)."""
MIN_WORD_RATIO = 0.3
"""Lines with less in common than this are shown changed whole, not word by word."""
ENCLOSING_SCAN = 5_000
"""How many lines above a hunk are searched for the function or class it is in."""
MAX_ENCLOSING_CHARS = 60

Span = tuple[int, int]
"""[start, end) character offsets in a cell's display text."""
TokensOf = Callable[[DiffLine], Tokens]
"""A diff line's pygments tokens (of its display text)."""


@dataclass(frozen=True, slots=True)
class Run:
    """A stretch of a line in one syntax colour."""

    start: int
    end: int
    color: str | None
    bold: bool = False
    italic: bool = False


@dataclass(frozen=True, slots=True)
class Cell:
    """One line of one side (or, unified, of both)."""

    kind: Literal[" ", "+", "-"]
    old_no: int | None
    new_no: int | None
    text: str
    """As displayed: tabs expanded, controls made visible, very long lines cut."""
    runs: tuple[Run, ...] = ()
    words: tuple[Span, ...] = ()
    """The changed words, when the line was paired with its counterpart."""
    no_newline: bool = False


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One painted row."""

    kind: Literal["file", "hunk", "fold", "line", "note"]
    file: int
    hunk: int = -1
    """Index of the hunk in its file (hunk headers and lines); -1 elsewhere."""
    text: str = ""
    left: Cell | None = None
    """Split: the old side; unified: the line."""
    right: Cell | None = None
    """Split: the new side; unified: None."""
    span: tuple[int, int, int] | None = None
    """A fold that can be opened (the new text is known): its first old and new line numbers and its length."""


@dataclass
class Layout:
    """Both views' rows, and where each reviewable hunk's header is in them."""

    split: list[ReviewRow] = field(default_factory=list)
    unified: list[ReviewRow] = field(default_factory=list)
    hunks: list[tuple[int, int]] = field(default_factory=list)
    """(file index, hunk index) of every hunk in order: the review's "change n of m"."""
    split_at: list[int] = field(default_factory=list)
    unified_at: list[int] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    """Per file, the digits of its largest line number."""
    longest: int = 0
    """The longest display text, in characters (for horizontal scrolling)."""


def build_layout(diffs: Sequence[FileDiff], *, dark: bool = False,
                 contents: Mapping[str, str] | None = None) -> Layout:
    """Every row of `diffs`; `contents` (path: the new text) names enclosing functions and counts the tail."""
    style = (DARK if dark else LIGHT).style
    layout = Layout()
    budget = 10_000
    for index, diff in enumerate(diffs):
        new_text = (contents or {}).get(diff.path)
        _add_file(layout, index, diff, style, budget, new_text)
        budget -= sum(len(h.lines) for h in diff.hunks)
    return layout


def _add_file(layout: Layout, index: int, diff: FileDiff, style: str, budget: int, new_text: str | None) -> None:
    header = ReviewRow("file", index, text=_file_title(diff))
    layout.split.append(header)
    layout.unified.append(header)
    if diff.note:
        note = ReviewRow("note", index, text=diff.note)
        layout.split.append(note)
        layout.unified.append(note)
    tokens = diff_tokens(diff, budget)
    words = [MAX_WORD_PAIRS]  # line pairs left to diff by words, in this file
    new_lines = new_text.split("\n") if new_text is not None else None
    layout.widths.append(_number_width(diff))
    end = shift = 0  # old-side index after the previous hunk; new index minus old index in unchanged lines
    for h, hunk in enumerate(diff.hunks):
        time.sleep(0)  # in a worker: hand the GIL to the GUI thread between hunks (see highlight.YIELD_EVERY_TOKENS)
        hidden = _first_index(hunk) - end
        if hidden > 0:
            fold = _fold(index, end, shift, hidden, new_lines is not None)
            layout.split.append(fold)
            layout.unified.append(fold)
        end = _first_index(hunk) + hunk.old_len
        shift = (hunk.new_start - 1 if hunk.new_len else hunk.new_start) + hunk.new_len - end
        head = ReviewRow("hunk", index, h, _hunk_title(hunk, diff, new_lines))
        layout.hunks.append((index, h))
        layout.split_at.append(len(layout.split))
        layout.unified_at.append(len(layout.unified))
        layout.split.append(head)
        layout.unified.append(head)
        pairs = list(_pairs(hunk, tokens.get, style, words))
        for left, right in pairs:
            layout.split.append(ReviewRow("line", index, h, left=left, right=right))
            for cell in (left, right):
                if cell is not None:
                    layout.longest = max(layout.longest, len(cell.text))
        for cell in _unified(hunk, pairs, tokens.get, style):
            layout.unified.append(ReviewRow("line", index, h, left=cell))
    tail = _tail(diff, new_lines)
    if tail > 0:
        fold = _fold(index, end, shift, tail, True)
        layout.split.append(fold)
        layout.unified.append(fold)
    if diff.truncated and diff.hunks:
        more = ReviewRow("note", index, text="… more changes not shown")
        layout.split.append(more)
        layout.unified.append(more)


def _file_title(diff: FileDiff) -> str:
    return f"{display_text(diff.path)}  ({diff.status})  +{diff.added} -{diff.removed}"


def _fold_text(count: int) -> str:
    return f"⋯ {count:,} unchanged line{'s' if count != 1 else ''}"


def _fold(file: int, old_index: int, shift: int, count: int, openable: bool) -> ReviewRow:
    if not openable:
        return ReviewRow("fold", file, text=_fold_text(count))
    return ReviewRow("fold", file, text=f"{_fold_text(count)}  (click to show)",
               span=(old_index + 1, old_index + shift + 1, count))


def open_fold(layout: Layout, fold: ReviewRow, new_text: str) -> bool:
    """Replace `fold` in both views with its unchanged lines, from the new text; False if it cannot be."""
    if fold.span is None or fold not in layout.split:
        return False
    old_no, new_no, count = fold.span
    lines = new_text.split("\n")
    if new_no - 1 + count > len(lines):
        return False
    rows = []
    for k in range(count):
        text = display_text(lines[new_no - 1 + k].removesuffix("\r"))
        cell = Cell(" ", old_no + k, new_no + k, text)
        rows.append(ReviewRow("line", fold.file, left=cell, right=cell))
        layout.longest = max(layout.longest, len(text))
    unified = [ReviewRow("line", fold.file, left=row.left) for row in rows]
    layout.split_at[:] = _splice(layout.split, fold, rows, layout.split_at)
    layout.unified_at[:] = _splice(layout.unified, fold, unified, layout.unified_at)
    return True


def _splice(rows: list[ReviewRow], fold: ReviewRow, new: list[ReviewRow], at: list[int]) -> list[int]:
    """Put `new` where `fold` is in `rows`; the hunk header positions after it move down."""
    where = next(k for k, row in enumerate(rows) if row is fold)
    rows[where:where + 1] = new
    return [k + len(new) - 1 if k > where else k for k in at]


def _first_index(hunk: Hunk) -> int:
    """0-based index of the first old line the hunk covers."""
    return hunk.old_start - 1 if hunk.old_len else hunk.old_start


def _tail(diff: FileDiff, new_lines: list[str] | None) -> int:
    if new_lines is None or not diff.hunks or diff.truncated:
        return 0
    total = len(new_lines) - (1 if new_lines and new_lines[-1] == "" else 0)
    last = diff.hunks[-1]
    return total - ((last.new_start - 1 if last.new_len else last.new_start) + last.new_len)


def _number_width(diff: FileDiff) -> int:
    last = max((max(h.old_start + h.old_len, h.new_start + h.new_len) for h in diff.hunks), default=1)
    return len(str(last))


# -- hunk headers ----------------------------------------------------------------

_DEFINITION = re.compile(
    r"^\s*(?:(?:export|default|public|private|protected|internal|static|async|abstract|final|override|sealed|"
    r"pub(?:\([^)]*\))?|inline|virtual|unsafe|extern|const)\s+)*"
    r"(?:def|class|function|func|fn|struct|enum|interface|impl|trait|module|namespace|object|record|fun|sub|"
    r"proc|macro|union|type)\b[\s(]")
_C_FUNCTION = re.compile(r"^[A-Za-z_][\w\s\*&:<>,~]*\([^;]*$")
"""A C-like definition: at the margin, a name then "(" and no ";" (not a call statement)."""


def _hunk_title(hunk: Hunk, diff: FileDiff, new_lines: list[str] | None) -> str:
    ranges = f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
    where = enclosing(_lines_above(hunk, diff, new_lines))
    return f"{ranges} {where}" if where else ranges


def _lines_above(hunk: Hunk, diff: FileDiff, new_lines: list[str] | None) -> Iterator[str]:
    """The lines above the hunk's first change, nearest first (the new text's, or what the diff holds)."""
    first = next((line for line in hunk.lines if line.kind != " "), hunk.lines[0] if hunk.lines else None)
    if first is None:
        return
    if new_lines is not None:
        start = (first.new_no or _new_no_before(hunk, first)) - 1
        yield from (new_lines[k] for k in range(start - 1, max(start - 1 - ENCLOSING_SCAN, -1), -1))
        return
    known = {line.old_no: line.text for h in diff.hunks for line in h.lines if line.old_no is not None}
    start = first.old_no if first.old_no is not None else _old_no_before(hunk, first) + 1
    yield from (known[k] for k in range(start - 1, max(start - 1 - ENCLOSING_SCAN, 0), -1) if k in known)


def _new_no_before(hunk: Hunk, line: DiffLine) -> int:
    """The new-side number a removed line sits at: the next new line's."""
    seen = None
    for other in hunk.lines:
        if other is line:
            break
        if other.new_no is not None:
            seen = other.new_no
    if seen is not None:
        return seen + 1
    return hunk.new_start if hunk.new_len else hunk.new_start + 1


def _old_no_before(hunk: Hunk, line: DiffLine) -> int:
    """The last old line above an added line."""
    seen = hunk.old_start if not hunk.old_len else hunk.old_start - 1
    for other in hunk.lines:
        if other is line:
            break
        if other.old_no is not None:
            seen = other.old_no
    return seen


def enclosing(lines_above: Iterable[str]) -> str:
    """The nearest definition line above (a function, class, struct...), trimmed; "" when none."""
    for text in lines_above:
        if _DEFINITION.match(text) or _C_FUNCTION.match(text):
            title = display_text(text.strip())
            return title if len(title) <= MAX_ENCLOSING_CHARS else title[:MAX_ENCLOSING_CHARS - 1] + "…"
    return ""


# -- cells -----------------------------------------------------------------------


def _pairs(hunk: Hunk, tokens_of: TokensOf, style: str, words: list[int]
           ) -> Iterator[tuple[Cell | None, Cell | None]]:
    """Split rows: context on both sides; a change's removed lines beside its added ones."""
    removed: list[DiffLine] = []
    added: list[DiffLine] = []
    for line in (*hunk.lines, None):
        if line is not None and line.kind != " ":
            (removed if line.kind == "-" else added).append(line)
            if line.kind == "-" and added:  # a removal after additions starts a new change
                yield from _change(removed[:-1], added, tokens_of, style, words)
                removed, added = [line], []
            continue
        yield from _change(removed, added, tokens_of, style, words)
        removed, added = [], []
        if line is not None:
            cell = _cell(line, tokens_of(line), style)
            yield cell, cell


def _change(removed: list[DiffLine], added: list[DiffLine], tokens_of: TokensOf, style: str, words: list[int]
            ) -> Iterator[tuple[Cell | None, Cell | None]]:
    for old, new in zip_longest(removed, added):
        if old is not None and new is not None:
            words[0] -= 1
            old_words, new_words = word_changes(display_text(old.text), display_text(new.text)) \
                if words[0] >= 0 else ((), ())
            yield (_cell(old, tokens_of(old), style, old_words), _cell(new, tokens_of(new), style, new_words))
        else:
            yield (_cell(old, tokens_of(old), style) if old is not None else None,
                   _cell(new, tokens_of(new), style) if new is not None else None)


def _unified(hunk: Hunk, pairs: list[tuple[Cell | None, Cell | None]], tokens_of: TokensOf,
             style: str) -> Iterator[Cell]:
    """Unified rows in the diff's order, reusing the split view's cells (and so its changed words)."""
    paired: dict[tuple[str, int | None], Cell] = {}
    for left, right in pairs:
        if left is right:
            continue
        if left is not None:
            paired[("-", left.old_no)] = left
        if right is not None:
            paired[("+", right.new_no)] = right
    for line in hunk.lines:
        key = (line.kind, line.old_no if line.kind == "-" else line.new_no)
        yield paired.get(key) or _cell(line, tokens_of(line), style)


def _cell(line: DiffLine, tokens: Tokens, style: str, words: tuple[Span, ...] = ()) -> Cell:
    text = display_text(line.text)
    return Cell(line.kind, line.old_no, line.new_no, text, _runs(tokens, style), words, not line.ending)


def _runs(tokens: Tokens, style: str) -> tuple[Run, ...]:
    runs: list[Run] = []
    at = 0
    for ttype, value in tokens:
        color, bold, italic = token_look(style, ttype)
        end = at + len(value)
        if runs and runs[-1].end == at and (runs[-1].color, runs[-1].bold, runs[-1].italic) == (color, bold, italic):
            runs[-1] = Run(runs[-1].start, end, color, bold, italic)
        elif color or bold or italic:
            runs.append(Run(at, end, color, bold, italic))
        at = end
    return tuple(runs)


_WORD = re.compile(r"\w+|\s+|[^\w\s]")


def word_changes(old: str, new: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """The changed words of a pair of lines, as spans on each; ((), ()) when they are better shown whole."""
    if len(old) > MAX_WORD_DIFF_CHARS or len(new) > MAX_WORD_DIFF_CHARS or old == new:
        return (), ()
    a, b = _WORD.findall(old), _WORD.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < MIN_WORD_RATIO:
        return (), ()
    a_at, b_at = _offsets(a), _offsets(b)
    old_spans: list[Span] = []
    new_spans: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((a_at[i1], a_at[i2]))
        if j2 > j1:
            new_spans.append((b_at[j1], b_at[j2]))
    return tuple(old_spans), tuple(new_spans)


def _offsets(tokens: list[str]) -> list[int]:
    out = [0]
    for token in tokens:
        out.append(out[-1] + len(token))
    return out
