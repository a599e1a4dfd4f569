"""A row of controls that folds onto two lines when narrow: every control whole either way."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QLineEdit, QPushButton, QWidget

from gui.window.kit.fold_row import FoldingRow, Note


def _whole(widget: QWidget, top: QWidget) -> bool:
    return (widget.isVisible() and widget.width() >= widget.minimumSizeHint().width()
            and top.rect().contains(QRect(widget.mapTo(top, QPoint(0, 0)), widget.size())))


def test_the_row_keeps_one_line_where_it_fits_and_folds_where_it_does_not(qtbot: Any) -> None:
    text = QLineEdit()
    text.setMinimumWidth(90)
    buttons = [QPushButton(label) for label in ("Accept all", "Reject all", "Unified", "Focus")]
    row = FoldingRow([(text, 1), (buttons[0], 0), (buttons[1], 0), (None, 1), (buttons[2], 0), (buttons[3], 0)],
                     fold_at=3)
    qtbot.addWidget(row)
    one_line = row.one_line_width()
    row.resize(one_line + 40, 60)
    row.show()
    qtbot.waitUntil(lambda: all(_whole(w, row) for w in (text, *buttons)))
    assert not row.folded
    tops = [w.mapTo(row, QPoint(0, 0)).y() for w in (text, *buttons)]
    assert max(tops) < min(top + w.height() for top, w in zip(tops, (text, *buttons), strict=True))  # one line

    assert row.minimumSizeHint().width() < one_line  # narrower than one line can be
    row.resize(row.minimumSizeHint().width(), 80)
    qtbot.waitUntil(lambda: row.folded)
    qtbot.waitUntil(lambda: all(_whole(w, row) for w in (text, *buttons)))
    first_end = max(w.mapTo(row, QPoint(0, 0)).y() + w.height() for w in (text, *buttons[:2]))
    assert all(w.mapTo(row, QPoint(0, 0)).y() >= first_end for w in buttons[2:])  # after fold_at: the second line

    row.resize(one_line + 40, 80)
    qtbot.waitUntil(lambda: not row.folded)


def test_a_note_that_gives_way_is_shortened_with_an_ellipsis_never_cut_and_reads_whole_with_room(
        qtbot: Any) -> None:
    note = Note("unified: too narrow to split")
    note.hide()
    buttons = [QPushButton(label) for label in ("Accept all", "Reject all", "Split", "Focus")]
    row = FoldingRow([(buttons[0], 0), (buttons[1], 0), (None, 1), (note, 100), (buttons[2], 0), (buttons[3], 0)],
                     fold_at=2)
    qtbot.addWidget(row)
    row.resize(row.one_line_width() + 30, 60)
    row.show()
    qtbot.waitUntil(lambda: all(_whole(w, row) for w in buttons))
    note.show()  # too long for what is left of the line: shortened, the row stays one line
    qtbot.waitUntil(lambda: note.isVisible() and note.width() > 0)
    assert not row.folded and all(_whole(w, row) for w in buttons)
    assert note.shown_text().endswith("…") and note.toolTip() == note.text()
    row.resize(row.one_line_width() + note.sizeHint().width() + 40, 60)
    qtbot.waitUntil(lambda: note.shown_text() == note.text())  # with room, whole
