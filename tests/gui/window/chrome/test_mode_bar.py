"""The policy mode's selector and the bypass banner (gui.window.chrome.mode_bar): a mode is chosen at once, bypass
only once confirmed, and while bypass is on it is red on the toolbar and across the window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QVBoxLayout, QWidget

from gui.window.chrome.mode_bar import BANNER, MODES, BypassBanner, ModeSelector
from gui.window.kit.theme import LIGHT

LEFT = Qt.MouseButton.LeftButton


def _selector(qtbot: Any, mode: str = "default") -> tuple[ModeSelector, list[str]]:
    selector = ModeSelector(mode)
    qtbot.addWidget(selector)
    selector.show()
    selector.setFocus()
    chosen: list[str] = []
    selector.mode_chosen.connect(chosen.append)
    return selector, chosen


def _colours(widget: QWidget) -> set[str]:
    image = widget.grab().toImage()
    return {image.pixelColor(x, y).name() for x in range(image.width()) for y in range(image.height())}


def test_every_mode_is_offered_with_what_it_lets_run(qtbot: Any) -> None:
    selector, _ = _selector(qtbot)
    assert [selector.itemText(i) for i in range(selector.count())] == [label for _, label, _ in MODES]
    tips = [selector.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(selector.count())]
    assert all(tips) and "Asks for confirmation" in tips[-1]
    assert "Ctrl+M" in selector.toolTip()


def test_a_mode_other_than_bypass_is_chosen_at_once(qtbot: Any) -> None:
    selector, chosen = _selector(qtbot)
    qtbot.keyClick(selector, Qt.Key.Key_Down)
    assert chosen == ["accept_edits"] and selector.confirmation is None
    selector.show_mode("accept_edits")  # the console's announcement: shown, not chosen again
    assert chosen == ["accept_edits"] and selector.shown_mode() == "accept_edits"


def test_bypass_is_chosen_only_once_confirmed_and_one_question_is_asked_at_a_time(qtbot: Any) -> None:
    selector, chosen = _selector(qtbot)
    qtbot.keyClick(selector, Qt.Key.Key_End)
    box = selector.confirmation
    assert box is not None and box.isVisible() and box.windowModality() == Qt.WindowModality.WindowModal
    assert "Turn bypass mode on for this session?" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)  # Enter does not turn it on
    assert selector.currentData() == "default" and chosen == []  # the mode in force, until confirmed
    qtbot.keyClick(selector, Qt.Key.Key_End)
    assert selector.confirmation is box  # not a second box
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.Cancel), LEFT)
    assert chosen == [] and selector.confirmation is None and selector.currentData() == "default"
    qtbot.keyClick(selector, Qt.Key.Key_End)
    yes = selector.confirmation.button(QMessageBox.StandardButton.Yes)
    assert yes.text() == "Turn on bypass"
    qtbot.mouseClick(yes, LEFT)
    assert chosen == ["bypass"]


def test_bypass_in_force_is_written_in_red_and_the_banner_says_so_across_the_window(qtbot: Any) -> None:
    selector, chosen = _selector(qtbot)
    window = QWidget()  # a narrow window, the banner across its top
    qtbot.addWidget(window)
    banner = BypassBanner()
    column = QVBoxLayout(window)
    column.addWidget(banner)
    column.addStretch(1)
    window.resize(420, 400)
    window.show()
    banner.show_mode("default")
    assert not banner.isVisible() and LIGHT.danger not in _colours(selector)
    for widget in (selector, banner):
        widget.show_mode("bypass")
    assert chosen == [] and selector.currentData() == "bypass"
    assert LIGHT.danger in _colours(selector)
    assert banner.isVisible() and banner.text.text() == BANNER
    image = banner.grab().toImage()
    assert image.pixelColor(2, 2).name() == LIGHT.deny_bg
    qtbot.waitUntil(lambda: banner.text.height() >= banner.text.heightForWidth(banner.text.width()))  # not cut
    assert banner.text.heightForWidth(banner.text.width()) > banner.text.fontMetrics().height()  # on lines
    selector.show_mode("default")
    assert LIGHT.danger not in _colours(selector)


def test_back_to_asking_on_the_banner_asks_to_leave_bypass(qtbot: Any) -> None:
    banner = BypassBanner()
    qtbot.addWidget(banner)
    banner.show_mode("bypass")
    with qtbot.waitSignal(banner.leave_requested, timeout=1000):
        qtbot.mouseClick(banner.leave, LEFT)
