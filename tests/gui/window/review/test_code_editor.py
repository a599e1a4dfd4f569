"""The numbered editor of "Edit & approve" (gui.window.review.code_editor): whole lines marked in colour, line
numbers that fit, and the person's own editing untouched by the marks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from gui.window.review.code_editor import CodeEditor

ADDED = "#dafbe1"
REMOVED = "#ffebe9"


def _editor(qtbot: Any, lines: int) -> CodeEditor:
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.resize(600, 400)
    editor.setPlainText("".join(f"value_{n} = {n}\n" for n in range(1, lines + 1)))
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def _colour_of_line(editor: CodeEditor, number: int, image: QImage) -> QColor:
    """The colour at the right end of line `number` (1-based) as painted: past its text, so a mark's own."""
    block = editor.document().findBlockByNumber(number - 1)
    top = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).top()
    height = editor.blockBoundingRect(block).height()
    return image.pixelColor(editor.viewport().width() - 4, int(top + height / 2))


def test_marked_lines_are_painted_across_their_whole_width_and_new_marks_replace_the_old(qtbot: Any) -> None:
    editor = _editor(qtbot, 20)
    editor.set_marks({2: ADDED, 5: REMOVED, 999: ADDED})  # a line past the end is no line: left alone
    image = editor.viewport().grab().toImage()
    assert _colour_of_line(editor, 2, image).name() == ADDED and _colour_of_line(editor, 5, image).name() == REMOVED
    plain = _colour_of_line(editor, 3, image).name()
    assert plain not in (ADDED, REMOVED)
    editor.set_marks({3: ADDED})
    image = editor.viewport().grab().toImage()
    assert _colour_of_line(editor, 3, image).name() == ADDED and _colour_of_line(editor, 2, image).name() == plain


def test_marks_leave_the_persons_cursor_and_undo_alone(qtbot: Any) -> None:
    editor = _editor(qtbot, 20)
    editor.setFocus()
    cursor = editor.textCursor()
    cursor.setPosition(3)
    editor.setTextCursor(cursor)
    qtbot.keyClicks(editor, "XY")
    editor.set_marks({1: ADDED, 4: REMOVED})
    assert editor.textCursor().position() == 5  # where the person was typing
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText().startswith("value_1 = 1\n")  # the typing undone, not the marks
    assert len(editor.extraSelections()) == 2


def test_line_numbers_get_room_as_the_file_grows_and_the_text_starts_after_them(qtbot: Any) -> None:
    editor = _editor(qtbot, 9)
    small = editor.gutter_width()
    editor.setPlainText("".join(f"{n}\n" for n in range(12_000)))
    metrics = editor.fontMetrics()
    assert editor.gutter_width() > small
    assert editor.gutter_width() >= metrics.horizontalAdvance(str(editor.blockCount()))  # the widest number fits
    assert editor.viewportMargins().left() == editor.gutter_width()  # the text is not drawn under the numbers


def test_the_gutter_draws_the_numbers(qtbot: Any) -> None:
    editor = _editor(qtbot, 40)
    gutter = editor._gutter  # noqa: SLF001  (the painted strip of numbers)
    assert gutter.isVisible() and gutter.width() == editor.gutter_width()
    image = gutter.grab().toImage()
    background = editor.palette().alternateBase().color().lightness()
    ink = [image.pixelColor(x, y).lightness() for x in range(image.width()) for y in range(image.height())]
    assert sum(abs(shade - background) > 60 for shade in ink) > 40  # digits, in the muted text colour


def test_going_to_a_line_puts_it_near_the_top(qtbot: Any) -> None:
    editor = _editor(qtbot, 500)
    editor.go_to_line(200)
    assert editor.first_visible_line() == 197  # three lines of context above it
    editor.go_to_line(1)
    assert editor.first_visible_line() == 1
