"""The painted diff of the review (gui.window.review.canvas): which change a click lands on, how a rejected and
the current change look, both views' columns, and the keys that scroll."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from core.changes.diffs import compute_diff
from gui.window.review.canvas import LIGHT_EXTRA, ReviewCanvas
from gui.window.review.highlight import DARK, LIGHT
from gui.window.review.rows import Layout, build_layout
from tests.gui.window.review.test_view import _diff, _view

OLD = "".join(f"line_{n} = {n}\n" for n in range(1, 41))
NEW = OLD.replace("line_5 = 5\n", "line_5 = 'five'\n").replace("line_25 = 25\n", "line_25 = 'twenty-five'\n")


def _canvas(qtbot: Any, dark: bool = False) -> tuple[ReviewCanvas, Layout]:
    """Two changes of a 40-line file, all on screen."""
    layout = build_layout([compute_diff("src/values.py", OLD.encode(), NEW.encode())], dark=dark,
                          contents={"src/values.py": NEW})
    canvas = ReviewCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(900, 700)
    canvas.set_layout(layout, dark=dark)
    canvas.show()
    qtbot.waitExposed(canvas)
    assert canvas.verticalScrollBar().maximum() == 0  # every row fits
    return canvas, layout


def _row_y(canvas: ReviewCanvas, k: int) -> int:
    line = canvas._line  # noqa: SLF001  (the painted row height)
    return (k - canvas.verticalScrollBar().value()) * line + line // 2


def _first(canvas: ReviewCanvas, kind: str, hunk: int = -1, side: str = "") -> int:
    """The index of the first row of `kind` (of hunk `hunk`; a changed line with a cell on `side`)."""
    for k, row in enumerate(canvas.rows):
        if row.kind == kind and (hunk < 0 or row.hunk == hunk):
            cell = row.left if side == "-" else row.right
            if not side or (cell is not None and cell.kind == side):
                return k
    raise AssertionError(f"no {kind} row")


def _colour(image: QImage, x: int, y: int) -> str:
    return QColor(image.pixelColor(x, y)).name()


@pytest.mark.qt_log_ignore('Mouse event "Mouse(Press|Release)" not accepted')  # the canvas acts on the press;
def test_a_click_says_which_change_it_landed_on_and_whether_on_its_header(qtbot: Any) -> None:  # the rest go on
    canvas, _ = _canvas(qtbot)
    hunks: list[tuple[int, bool]] = []
    folds: list[int] = []
    canvas.hunk_clicked.connect(lambda n, header: hunks.append((n, header)))
    canvas.fold_clicked.connect(folds.append)
    left = Qt.MouseButton.LeftButton
    for k in (_first(canvas, "hunk", 1), _first(canvas, "line", 1, "+"), _first(canvas, "line", 0, "-"),
              _first(canvas, "fold"), _first(canvas, "file")):
        qtbot.mouseClick(canvas.viewport(), left, pos=QPoint(300, _row_y(canvas, k)))
    assert hunks == [(1, True), (1, False), (0, False)]
    assert folds == [_first(canvas, "fold")]  # the file's header answers no click


def test_a_rejected_change_is_dimmed_and_the_current_one_has_a_bar_at_its_left(qtbot: Any) -> None:
    canvas, _ = _canvas(qtbot)
    canvas.set_review({0}, current=1)
    image = canvas.viewport().grab().toImage()
    half = canvas.viewport().width() // 2
    rejected, kept = _row_y(canvas, _first(canvas, "line", 0, "-")), _row_y(canvas, _first(canvas, "line", 1, "-"))
    assert _colour(image, half - 4, rejected) == LIGHT_EXTRA.rejected  # dimmed: it will not be written
    assert _colour(image, half - 4, kept) == LIGHT.removed_bg
    assert _colour(image, 1, kept) == LIGHT_EXTRA.accent and _colour(image, 1, rejected) != LIGHT_EXTRA.accent
    canvas.set_review(set(), current=0)
    image = canvas.viewport().grab().toImage()
    assert _colour(image, half - 4, rejected) == LIGHT.removed_bg and _colour(image, 1, rejected) == LIGHT_EXTRA.accent


def test_side_by_side_the_old_line_is_left_of_the_new_and_unified_they_are_one_above_the_other(qtbot: Any) -> None:
    canvas, _ = _canvas(qtbot)
    width = canvas.viewport().width()
    changed = _row_y(canvas, _first(canvas, "line", 0, "-"))
    image = canvas.viewport().grab().toImage()
    assert (_colour(image, width // 2 - 4, changed), _colour(image, width - 4, changed)) == \
        (LIGHT.removed_bg, LIGHT.added_bg)
    canvas.set_split(False)
    rows = canvas.rows
    removed = next(k for k, r in enumerate(rows) if r.kind == "line" and r.left is not None and r.left.kind == "-")
    image = canvas.viewport().grab().toImage()
    assert rows[removed + 1].left is not None and rows[removed + 1].left.kind == "+"
    for k, background in ((removed, LIGHT.removed_bg), (removed + 1, LIGHT.added_bg)):
        assert {_colour(image, x, _row_y(canvas, k)) for x in (width // 2 - 4, width - 4)} == {background}


def test_in_the_dark_theme_the_page_is_dark(qtbot: Any) -> None:
    canvas, _ = _canvas(qtbot, dark=True)
    image = canvas.viewport().grab().toImage()
    assert _colour(image, 10, image.height() - 3) == DARK.page_bg  # below the last row
    assert _colour(image, canvas.viewport().width() - 4, _row_y(canvas, _first(canvas, "line", 0, "+"))) == \
        DARK.added_bg


def test_going_to_a_change_far_down_brings_its_header_near_the_top(qtbot: Any) -> None:
    old = "".join(f"value_{n} = {n}\n" for n in range(1, 301))
    new = old
    for n in (50, 150, 290):
        new = new.replace(f"value_{n} = {n}\n", f"value_{n} = -{n}\n")
    canvas = ReviewCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(900, 200)
    layout = build_layout([compute_diff("v.py", old.encode(), new.encode())], contents={"v.py": new})
    canvas.set_layout(layout, dark=False)
    canvas.show()
    canvas.verticalScrollBar().setValue(0)
    canvas.scroll_to_hunk(1)
    first = canvas.verticalScrollBar().value()
    assert 0 < layout.split_at[1] - first <= 2  # the header, with a row or two above it
    canvas.scroll_to_hunk(1)
    assert canvas.verticalScrollBar().value() == first  # already on screen: nothing jumps


def test_page_keys_and_home_end_scroll_the_diff(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    view.set_diffs([diff], contents={"src/app.py": new})
    view.canvas.setFocus()
    bar = view.canvas.verticalScrollBar()
    qtbot.keyClick(view.canvas, Qt.Key.Key_PageDown)
    assert bar.value() == bar.pageStep() > 20
    qtbot.keyClick(view.canvas, Qt.Key.Key_End)
    assert bar.value() == bar.maximum() > 200
    assert view.canvas.rows[bar.value() + bar.pageStep() - 1].text.startswith("⋯ 67 unchanged lines")
    qtbot.keyClick(view.canvas, Qt.Key.Key_Home)
    assert bar.value() == 0
