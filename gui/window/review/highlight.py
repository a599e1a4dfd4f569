"""Diffs as syntax-highlighted HTML for a QTextBrowser; pure functions, no Qt.

`render_diff_html` is slow on big input (pygments does about 20k lines/s), so
callers run it in a worker thread.  It highlights only the lines the diff
holds, at most `HIGHLIGHT_BUDGET` of them; any further lines are shown plain.
Qt's rich text understands a subset of HTML/CSS, so everything is inline
style on paragraphs and spans; every piece of file content is escaped.
"""

from __future__ import annotations

import html
import logging
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import Text
from pygments.util import ClassNotFound

from core import DiffLine, FileDiff, Hunk
from gui.window.kit.contrast import readable

log = logging.getLogger(__name__)

HIGHLIGHT_BUDGET = 10_000
"""Most lines highlighted per document; later lines are shown as plain text."""
MAX_LINE_CHARS = 2_000
"""Longer lines are cut for display (and a count of the hidden characters shown)."""
TAB_SIZE = 4
YIELD_EVERY_TOKENS = 200
"""Tokens lexed between two offers of the GIL to the GUI thread (about a millisecond of pygments)."""

Tokens = list[tuple[Any, str]]
"""(pygments token type, text) pairs of one line."""


@dataclass(frozen=True)
class Palette:
    """Colours of one theme; `style` names the pygments style used for code."""

    style: str
    page_bg: str
    text: str
    muted: str
    header_bg: str
    hunk_bg: str
    hunk_fg: str
    added_bg: str
    removed_bg: str
    added_fg: str
    removed_fg: str


LIGHT = Palette(
    style="default", page_bg="#ffffff", text="#1f2328", muted="#59636e",
    header_bg="#eaeef2", hunk_bg="#ddf4ff", hunk_fg="#57606a",
    added_bg="#dafbe1", removed_bg="#ffebe9", added_fg="#1a7f37", removed_fg="#cf222e",
)
DARK = Palette(
    style="github-dark", page_bg="#0d1117", text="#e6edf3", muted="#9198a1",
    header_bg="#161b22", hunk_bg="#121d2f", hunk_fg="#8d96a0",
    added_bg="#12261e", removed_bg="#25171c", added_fg="#3fb950", removed_fg="#f85149",
)


def render_diff_html(diffs: Sequence[FileDiff], *, dark: bool = False) -> str:
    """One HTML document showing every file's header, hunks and highlighted lines."""
    return wrap_document(render_diff_blocks(diffs, dark=dark), dark=dark)


def render_diff_blocks(diffs: Sequence[FileDiff], *, dark: bool = False) -> list[str]:
    """The document's paragraphs, one per visual line, for callers that insert in slices."""
    palette = DARK if dark else LIGHT
    budget = HIGHLIGHT_BUDGET
    blocks: list[str] = []
    for diff in diffs:
        blocks.append(_file_header(diff, palette))
        blocks.extend(_file_body(diff, palette, budget))
        budget -= sum(len(hunk.lines) for hunk in diff.hunks)
    return blocks


def wrap_document(blocks: Iterable[str], *, dark: bool = False) -> str:
    """A complete HTML document (page colours set) around `blocks`."""
    palette = DARK if dark else LIGHT
    body = "\n".join(blocks)
    return (f'<html><body style="background-color:{palette.page_bg}; color:{palette.text};">'
            f"\n{body}\n</body></html>")


def message_html(text: str, *, dark: bool = False) -> str:
    """A document holding only `text`, e.g. the empty state or an error."""
    palette = DARK if dark else LIGHT
    return wrap_document([_paragraph(_escape(_display_text(text)), f"color:{palette.muted};")], dark=dark)


def lexer_name_for(path: str) -> str:
    """The pygments lexer name used for `path` ("Text only" when none fits)."""
    return _lexer_class(PurePosixPath(path).name).name


# -- structure -------------------------------------------------------------------


def _paragraph(content: str, style: str) -> str:
    return f'<p style="margin:0; white-space:pre; {style}">{content}</p>'


def _file_header(diff: FileDiff, palette: Palette) -> str:
    counts = (f'<span style="color:{palette.added_fg};">+{diff.added}</span> '
              f'<span style="color:{palette.removed_fg};">-{diff.removed}</span>')
    note = f"  <i>{_escape(_display_text(diff.note))}</i>" if diff.note else ""
    content = f"<b>{_escape(_display_text(diff.path))}</b>  ({diff.status})  {counts}{note}"
    return _paragraph(content, f"margin-top:8px; background-color:{palette.header_bg};")


def _hunk_header(hunk: Hunk, palette: Palette) -> str:
    text = f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
    return _paragraph(_escape(text), f"background-color:{palette.hunk_bg}; color:{palette.hunk_fg};")


def _file_body(diff: FileDiff, palette: Palette, budget: int) -> Iterator[str]:
    width = _number_width(diff)
    tokens = _tokenize_file(diff, budget)
    for hunk in diff.hunks:
        yield _hunk_header(hunk, palette)
        for line in hunk.lines:
            yield _line_html(line, tokens, palette, width)
    if diff.truncated and diff.hunks:
        yield _paragraph("<i>… more changes not shown</i>", f"color:{palette.muted};")


def _number_width(diff: FileDiff) -> int:
    last = max((max(h.old_start + h.old_len, h.new_start + h.new_len) for h in diff.hunks), default=1)
    return len(str(last))


def _line_html(line: DiffLine, tokens: _LineTokens, palette: Palette, width: int) -> str:
    old_no = "" if line.old_no is None else str(line.old_no)
    new_no = "" if line.new_no is None else str(line.new_no)
    numbers = f'<span style="color:{palette.muted};">{old_no:>{width}} {new_no:>{width}} </span>'
    marker, background = {
        "+": (f'<span style="color:{palette.added_fg};">+</span>', f"background-color:{palette.added_bg};"),
        "-": (f'<span style="color:{palette.removed_fg};">-</span>', f"background-color:{palette.removed_bg};"),
        " ": (" ", ""),
    }[line.kind]
    code = _code_html(tokens.get(line), palette.style)
    eol = "" if line.ending else f'<span style="color:{palette.muted};">  (no newline at end of file)</span>'
    return _paragraph(f"{numbers}{marker} {code}{eol}", background)


# -- highlighting ------------------------------------------------------------------


def diff_tokens(diff: FileDiff, budget: int = HIGHLIGHT_BUDGET) -> _LineTokens:
    """Pygments tokens per diff line (`.get(line)`), at most `budget` lines highlighted (blocking)."""
    return _tokenize_file(diff, budget)


def token_look(style_name: str, ttype: Any) -> tuple[str | None, bool, bool]:
    """The colour ("#rrggbb" or None), boldness and slant of a token type in a pygments style."""
    return _token_look(style_name, ttype)


@lru_cache(maxsize=4096)
def _token_look(style_name: str, ttype: Any) -> tuple[str | None, bool, bool]:
    spec = _style(style_name).style_for_token(ttype)
    return token_colour(style_name, spec["color"]), bool(spec["bold"]), bool(spec["italic"])


def token_colour(style_name: str, colour: str | None) -> str | None:
    """A pygments colour ("rrggbb") made to read at WCAG AA on the style's page and added/removed lines."""
    if not colour:
        return None
    palette = DARK if style_name == DARK.style else LIGHT
    return readable(f"#{colour}", (palette.page_bg, palette.added_bg, palette.removed_bg), dark=palette is DARK)


def display_text(text: str) -> str:
    """A line as shown: tabs expanded, controls made visible, very long lines cut."""
    return _display_text(text)



class _LineTokens:
    """Tokens per diff line, from tokenizing each side's lines in order."""

    def __init__(self, old: dict[int, Tokens], new: dict[int, Tokens]) -> None:
        self._old, self._new = old, new

    def get(self, line: DiffLine) -> Tokens:
        if line.kind != "-" and line.new_no in self._new:
            return self._new[line.new_no]
        if line.kind != "+" and line.old_no in self._old:
            return self._old[line.old_no]
        return [(Text, _display_text(line.text))]


def _tokenize_file(diff: FileDiff, budget: int) -> _LineTokens:
    lines = [line for hunk in diff.hunks for line in hunk.lines][:max(budget, 0)]
    if not lines:
        return _LineTokens({}, {})
    lexer_class = _lexer_class(PurePosixPath(diff.path).name)
    old = [(line.old_no, line.text) for line in lines if line.kind != "+"]
    new = [(line.new_no, line.text) for line in lines if line.kind != "-"]
    return _LineTokens(_tokenize_side(lexer_class, old), _tokenize_side(lexer_class, new))


def _tokenize_side(lexer_class: type[Lexer], numbered: list[tuple[int | None, str]]) -> dict[int, Tokens]:
    """Tokenize one side's lines as one text, then split the tokens back per line."""
    if not numbered:
        return {}
    text = "".join(_display_text(line) + "\n" for _, line in numbered)
    lexer = lexer_class(stripnl=False, stripall=False, ensurenl=True)
    try:
        per_line = _split_tokens(lexer.get_tokens(text), len(numbered))
    except Exception:  # a lexer bug must not lose the diff: fall back to plain text
        log.exception("pygments %s failed; showing plain text", lexer_class.name)
        per_line = [[(Text, _display_text(line))] for _, line in numbered]
    return {no: tokens for (no, _), tokens in zip(numbered, per_line) if no is not None}


def _split_tokens(stream: Iterable[tuple[Any, str]], count: int) -> list[Tokens]:
    lines: list[Tokens] = [[]]
    for n, (ttype, value) in enumerate(stream):
        if n % YIELD_EVERY_TOKENS == 0:
            time.sleep(0)  # in a worker: hand the GIL to the GUI thread now, not after the 5 ms switch interval
        pieces = value.split("\n")
        for k, piece in enumerate(pieces):
            if k:
                if len(lines) == count:
                    return lines
                lines.append([])
            if piece:
                lines[-1].append((ttype, piece))
    return lines + [[] for _ in range(count - len(lines))]


@lru_cache(maxsize=256)
def _lexer_class(filename: str) -> type[Lexer]:
    try:
        return type(get_lexer_for_filename(filename))
    except ClassNotFound:
        return TextLexer


def _code_html(tokens: Tokens, style_name: str) -> str:
    """Escaped spans, adjacent tokens of the same look merged to keep the HTML small."""
    runs: list[tuple[str, list[str]]] = []
    for ttype, value in tokens:
        css = _token_css(style_name, ttype) if value.strip() else ""
        if runs and (runs[-1][0] == css or not value.strip()):
            runs[-1][1].append(value)
        else:
            runs.append((css, [value]))
    return "".join(_span(css, "".join(values)) for css, values in runs)


def _span(css: str, text: str) -> str:
    escaped = _escape(text)
    return f'<span style="{css}">{escaped}</span>' if css else escaped


@lru_cache(maxsize=4096)
def _token_css(style_name: str, ttype: Any) -> str:
    spec = _style(style_name).style_for_token(ttype)
    css = []
    if spec["color"]:
        css.append(f"color:{token_colour(style_name, spec['color'])};")
    if spec["bold"]:
        css.append("font-weight:bold;")
    if spec["italic"]:
        css.append("font-style:italic;")
    return " ".join(css)


@lru_cache(maxsize=8)
def _style(name: str) -> type[Style]:
    try:
        return get_style_by_name(name)
    except ClassNotFound:
        return get_style_by_name("default")


# -- text --------------------------------------------------------------------------

# C0 controls (but tab), DEL, and the Unicode line/paragraph separators that
# Qt would turn into line breaks: shown as visible symbols instead.
_INVISIBLE = re.compile("[\x00-\x08\x0a-\x1f\x7f\u2028\u2029\u0085]")


def _display_text(text: str) -> str:
    """The line as shown: tabs expanded, controls made visible, very long lines cut."""
    if len(text) > MAX_LINE_CHARS:
        hidden = len(text) - MAX_LINE_CHARS
        text = f"{text[:MAX_LINE_CHARS]} … ({hidden:,} more characters)"
    return _INVISIBLE.sub(_visible, text.expandtabs(TAB_SIZE))


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\x7f":
        return "\u2421"
    return chr(0x2400 + ord(char)) if char < " " else "\u2424"


def _escape(text: str) -> str:
    return html.escape(text, quote=False)
