"""The bar above an undo's merged text: which conflict the cursor is in, Previous / Next, the takes, the marks.

The undo dialog's tests (test_undo_merge_editor.py) drive it from the dialog; these drive the bar alone, on an
editor holding a merged text with two conflict regions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from core import ConflictRegion, conflict_regions
from gui.window.review.code_editor import CodeEditor
from gui.window.undo.regions import RegionBar, line_kind

MERGED = """line 1
<<<<<<< now
mine A
||||||| what the call left
left A
=======
old A
>>>>>>> before the call
line 9
line 10
<<<<<<< now
mine B
=======
old B
>>>>>>> before the call
the end
"""
"""Two regions: lines 2-8 (with what the call left) and 11-15 (without), 1-based."""
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def bar(qtbot: Any) -> Iterator[RegionBar]:
    window = QWidget()
    qtbot.addWidget(window)
    editor = CodeEditor()
    editor.setPlainText(MERGED)
    region_bar = RegionBar(editor)
    column = QVBoxLayout(window)
    column.addWidget(region_bar)
    column.addWidget(editor)
    window.resize(640, 480)
    window.show()
    region_bar.show_text(active=True)
    yield region_bar
    window.close()


def _editor(bar: RegionBar) -> CodeEditor:
    editor = bar._editor
    assert isinstance(editor, CodeEditor)
    return editor


def _line(bar: RegionBar) -> int:
    """The 1-based line the cursor is on."""
    return _editor(bar).textCursor().blockNumber() + 1


def _colours(bar: RegionBar) -> dict[int, str]:
    """1-based line: the background it is marked with."""
    return {s.cursor.blockNumber() + 1: s.format.background().color().name() for s in _editor(bar).extraSelections()}


def test_it_opens_on_the_first_conflict_and_marks_it_darker_than_the_others(bar: RegionBar) -> None:
    assert bar.isVisible() and _line(bar) == 2
    assert bar.label.text() == "Conflict 1 of 2 · lines 2–8"
    colours = _colours(bar)
    assert set(colours) == set(range(2, 9)) | set(range(11, 16))  # every line of both regions, nothing else
    assert len({colours[2], colours[3], colours[5], colours[7]}) == 4  # marker, now, what the call left, the undo
    assert colours[2] == colours[4] == colours[6] == colours[8]  # the markers alike
    assert colours[12] != colours[3] and colours[14] != colours[7]  # the other region: the same roles, dimmed
    bar.next_button.click()
    assert _line(bar) == 11 and bar.label.text() == "Conflict 2 of 2 · lines 11–15"
    after = _colours(bar)
    assert after[12] == colours[3] and after[3] != colours[3]  # the cursor's region is the dark one now


def test_next_and_previous_go_round_the_regions_and_say_where_the_cursor_is(qtbot: Any, bar: RegionBar) -> None:
    went: list[ConflictRegion] = []
    bar.went_to.connect(went.append)
    qtbot.mouseClick(bar.next_button, LEFT)
    qtbot.mouseClick(bar.next_button, LEFT)  # past the last: back to the first
    assert _line(bar) == 2 and [r.start for r in went] == [10, 1]
    qtbot.mouseClick(bar.previous_button, LEFT)  # before the first: the last
    assert _line(bar) == 11
    editor = _editor(bar)
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(8).position())  # line 9: between the regions
    editor.setTextCursor(cursor)
    assert bar.label.text() == "2 conflicts left · F8 goes to the next"
    qtbot.mouseClick(bar.next_button, LEFT)
    assert _line(bar) == 11
    qtbot.mouseClick(bar.previous_button, LEFT)
    qtbot.mouseClick(bar.previous_button, LEFT)
    assert _line(bar) == 11  # round again


def test_each_take_button_asks_for_its_take(qtbot: Any, bar: RegionBar) -> None:
    asked: list[str] = []
    bar.take_requested.connect(asked.append)
    for take in ("undo", "both", "now"):
        qtbot.mouseClick(bar.take_buttons[take], LEFT)
    assert asked == ["undo", "both", "now"]
    assert [b.toolTip()[-7:] for b in bar.take_buttons.values()] == ["(Alt+N)", "(Alt+U)", "(Alt+B)"]


def _replace_lines(editor: CodeEditor, first: int, last: int, text: str) -> None:
    """Select 1-based lines `first` to `last` and type `text` over them, as a person does."""
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(first - 1).position())
    end = editor.document().findBlockByNumber(last - 1)
    cursor.setPosition(end.position() + end.length() - 1, cursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    editor.insertPlainText(text)


def test_an_edited_text_is_parsed_again_before_moving_and_once_typing_pauses(qtbot: Any, bar: RegionBar) -> None:
    reparsed: list[int] = []
    bar.reparsed.connect(lambda: reparsed.append(len(bar.regions)))
    editor = _editor(bar)
    editor.document().contentsChanged.connect(bar.reparse.start)  # as the dialog has it
    _replace_lines(editor, 2, 8, "old A")  # the person settles the first region by hand
    assert bar.label.text() == "Conflict 1 of 2 · lines 2–8"  # stale until parsed: left as it was meanwhile
    qtbot.mouseClick(bar.next_button, LEFT)  # parsed first, then moved
    assert reparsed == [1] and _line(bar) == 5 and bar.label.text() == "Conflict 1 of 1 · lines 5–9"
    _replace_lines(editor, 5, 9, "old B")
    qtbot.waitUntil(lambda: reparsed == [1, 0])  # typing paused: parsed without anything asked of the bar
    assert bar.label.text() == "No conflicts left: Undo writes the merged text"
    assert not any(b.isEnabled() for b in (bar.next_button, bar.previous_button, *bar.take_buttons.values()))
    assert _colours(bar) == {} and "<<<<<<<" not in editor.toPlainText()


def test_a_file_not_settled_here_hides_the_bar_and_marks_nothing(bar: RegionBar) -> None:
    bar.show_text(active=False)
    assert not bar.isVisible() and bar.regions == [] and _colours(bar) == {} and _line(bar) == 1
    bar.go_to(1)
    assert _line(bar) == 1


def test_each_line_of_a_region_is_a_marker_the_file_now_what_the_call_left_or_the_undo() -> None:
    with_base, without = conflict_regions(MERGED)
    assert [line_kind(with_base, line) for line in range(with_base.start, with_base.end)] == \
        ["marker", "now", "marker", "base", "marker", "undo", "marker"]
    assert [line_kind(without, line) for line in range(without.start, without.end)] == \
        ["marker", "now", "marker", "undo", "marker"]
