"""Diffs as highlighted HTML (gui.window.review.highlight): colours that read, code that stays code, and lines
shown as they are, whatever they hold."""

from __future__ import annotations

import pytest
from pygments.styles import get_style_by_name
from pygments.token import Whitespace

from core.changes.diffs import compute_diff
from gui.window.kit.contrast import contrast
from gui.window.review import highlight
from gui.window.review.highlight import display_text, lexer_name_for, message_html, render_diff_html
from tests.gui.window.review.test_diff_view import _python_change

AA = 4.5


def test_html_highlights_code_and_colours_added_and_removed_lines() -> None:
    light = render_diff_html([_python_change()])
    dark = render_diff_html([_python_change()], dark=True)

    assert "background-color:#dafbe1" in light and "background-color:#ffebe9" in light
    assert "<span style=\"color:#" in light  # pygments colours on the code
    assert light != dark and "background-color:#0d1117" in dark


def test_html_expands_tabs_and_makes_control_characters_visible() -> None:
    html = render_diff_html([compute_diff("t.txt", None, b"\tindented\x1b[0m\r\n")])
    assert "    indented\u241b[0m" in html
    assert "\t" not in html and "\x1b" not in html


def test_multi_line_strings_are_highlighted_across_lines() -> None:
    source = b'x = 1\ndoc = """\nnot code: def class\n"""\n'
    html = render_diff_html([compute_diff("m.py", None, source)])
    keyword_def = render_diff_html([compute_diff("m.py", None, b"def f(): pass\n")])
    string_line = next(line for line in html.splitlines() if "not code" in line)
    def_line = next(line for line in keyword_def.splitlines() if "def" in line and "pass" in line)
    assert "font-weight:bold" in def_line  # `def` as a keyword...
    assert "font-weight:bold" not in string_line  # ...but not inside a string


def test_lexer_follows_the_file_name() -> None:
    assert lexer_name_for("src/app.py") == "Python"
    assert lexer_name_for("Makefile") == "Makefile"
    assert lexer_name_for("notes.unknown-ext") == "Text only"


DIFF_PAIRS = (("text", "page_bg"), ("muted", "page_bg"), ("text", "header_bg"), ("hunk_fg", "hunk_bg"),
              ("text", "added_bg"), ("text", "removed_bg"), ("added_fg", "page_bg"), ("removed_fg", "page_bg"),
              ("added_fg", "added_bg"), ("removed_fg", "removed_bg"), ("muted", "added_bg"), ("muted", "removed_bg"))


@pytest.mark.parametrize("palette", [highlight.LIGHT, highlight.DARK], ids=["light", "dark"])
def test_diff_colours_read_at_aa(palette: highlight.Palette) -> None:
    """Diff text, line numbers, markers and every pygments token colour on the line backgrounds."""
    failing = [f"{fg} on {bg}: {contrast(getattr(palette, fg), getattr(palette, bg)):.2f}"
               for fg, bg in DIFF_PAIRS if contrast(getattr(palette, fg), getattr(palette, bg)) < AA]
    style = get_style_by_name(palette.style)
    for token, spec in style:
        shown = highlight.token_colour(palette.style, spec["color"])
        if shown and token not in Whitespace:  # whitespace is never coloured (see highlight._code_html)
            for bg in ("page_bg", "added_bg", "removed_bg"):
                ratio = contrast(shown, getattr(palette, bg))
                if ratio < AA:
                    failing.append(f"{token} {shown} on {bg}: {ratio:.2f}")
    assert not failing, f"{palette.style} below {AA}:1:\n" + "\n".join(failing)


def test_a_very_long_line_is_cut_and_says_how_much_is_hidden() -> None:
    line = "x" * (highlight.MAX_LINE_CHARS + 500)
    assert display_text(line) == "x" * highlight.MAX_LINE_CHARS + " … (500 more characters)"
    html = render_diff_html([compute_diff("data.txt", None, (line + "\n").encode())])
    assert "(500 more characters)" in html and "x" * (highlight.MAX_LINE_CHARS + 1) not in html


def test_line_and_paragraph_separators_show_as_symbols_instead_of_breaking_the_line() -> None:
    html = render_diff_html([compute_diff("t.txt", None, "one\u2028two\u2029three\n".encode())])
    assert "one\u2424two\u2424three" in html and "\u2028" not in html and "\u2029" not in html


def test_past_the_highlighting_budget_lines_are_shown_plain_across_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """A huge diff is highlighted up to a budget of lines; later lines, in later files too, are plain text."""
    monkeypatch.setattr(highlight, "HIGHLIGHT_BUDGET", 2)
    code = b"def first(): pass\ndef second(): pass\n"
    html = render_diff_html([compute_diff("a.py", None, code), compute_diff("b.py", None, code)])
    lines = [line for line in html.splitlines() if "pass" in line]
    assert len(lines) == 4
    assert all("font-weight:bold" in line for line in lines[:2])  # `def`, as a keyword
    assert not any("font-weight:bold" in line for line in lines[2:])
    assert all("def" in line for line in lines[2:])  # still there, plain


def test_a_message_shows_markup_literally() -> None:
    html = message_html("No diff for <b>notes</b> & co")
    assert "No diff for &lt;b&gt;notes&lt;/b&gt; &amp; co" in html and "<b>notes" not in html
