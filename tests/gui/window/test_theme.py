"""Themes: every text colour meets WCAG AA on the background it is drawn on, and a switch is seen live."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pygments.styles import get_style_by_name
from pygments.token import Whitespace
from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.window import highlight, theme
from gui.window.contrast import contrast
from gui.window.theme import CONTRAST_PAIRS, DARK, LIGHT, THEMES, ThemeSwitch

AA = 4.5
ROOT = Path(__file__).resolve().parents[3]


def test_contrast_of_known_colours() -> None:
    """The formula itself: black on white is 21:1, a colour on itself 1:1, GitHub's #767676 grey 4.54:1."""
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#cf222e", "#cf222e") == pytest.approx(1.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("name", sorted(THEMES))
def test_every_window_role_reads_at_aa(name: str) -> None:
    table = THEMES[name]
    failing = [f"{fg} {getattr(table, fg)} on {bg} {getattr(table, bg)}: "
               f"{contrast(getattr(table, fg), getattr(table, bg)):.2f}"
               for fg, bg in CONTRAST_PAIRS if contrast(getattr(table, fg), getattr(table, bg)) < AA]
    assert not failing, f"{name} theme below {AA}:1:\n" + "\n".join(failing)


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


def test_widgets_hold_no_colour_of_their_own() -> None:
    """Colours live in theme.py / highlight.py tables; a widget that writes #rrggbb would ignore the theme."""
    allowed = {"theme.py", "highlight.py", "contrast.py", "review_canvas.py",  # the tables themselves
               "attention.py"}  # the tray icon is painted for the desktop's panel, outside the window
    found = [f"{path.name}:{n}: {line.strip()}"
             for path in sorted((ROOT / "gui" / "window").glob("*.py")) if path.name not in allowed
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b(?![0-9a-fA-F])", line)]
    assert not found, "hard-coded colours:\n" + "\n".join(found)


def test_switch_applies_palette_and_style_sheet_and_remembers(qapp: QApplication, qtbot: QtBot,
                                                               tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    before_palette, before_sheet = qapp.palette(), qapp.styleSheet()
    switch = ThemeSwitch(qapp, "light", settings)
    try:
        switch.apply()
        assert theme.current() is LIGHT
        with qtbot.waitSignal(switch.changed, timeout=2000) as shown:
            switch.set_choice("dark")
        assert shown.args == ["dark"]
        assert theme.current() is DARK
        assert qapp.palette().color(QPalette.ColorRole.Base).name() == DARK.base_bg
        assert DARK.deny_bg in qapp.styleSheet() and "$" not in qapp.styleSheet()
        assert theme.saved_choice(settings) == "dark"
        with pytest.raises(ValueError):
            switch.set_choice("purple")
    finally:
        switch.set_choice("light")
        switch.deleteLater()
        qapp.setPalette(before_palette)
        qapp.setStyleSheet(before_sheet)


def test_saved_choice_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    assert theme.saved_choice(settings) == "system"
    monkeypatch.setenv(theme.THEME_ENV, "dark")
    assert theme.saved_choice(settings) == "dark"
