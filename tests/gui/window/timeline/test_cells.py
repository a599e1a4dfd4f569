"""The timeline's text cells as a person sees them: status colours, the selected row, bold agents, long text cut."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QTreeView

from core import AgentStarted, CallFinished, CallQueued, RunStatus
from gui.window.kit.theme import LIGHT
from gui.window.timeline.cells import TextCells
from gui.window.timeline.model import STATUS_COLUMN, TimelineModel

LONG = "src/" + "very_long_directory_name/" * 12 + "module.py"


def _view(qtbot: Any) -> tuple[QTreeView, TimelineModel]:
    model = TimelineModel()
    for event in (AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="scripted"),
                  CallQueued(seq=2, call_id="ok", agent_id="main", tool="Read", args={}, summary="README.md"),
                  CallQueued(seq=3, call_id="bad", agent_id="main", tool="Edit", args={}, summary=LONG),
                  CallFinished(seq=4, call_id="ok", status=RunStatus.DONE, duration_s=0.01),
                  CallFinished(seq=5, call_id="bad", status=RunStatus.FAILED, duration_s=0.5)):
        model.apply(event)
    view = QTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.setItemDelegate(TextCells(view, model))
    view.setUniformRowHeights(True)
    view.resize(900, 200)
    view.setColumnWidth(1, 240)
    view.expandAll()
    view.show()
    qtbot.waitExposed(view)
    return view, model


def _colours(image: QImage, rect: Any) -> set[str]:
    return {image.pixelColor(x, y).name() for x in range(rect.left(), rect.right())
            for y in range(rect.top(), rect.bottom())}


def _cell(view: QTreeView, model: TimelineModel, row: int, column: int) -> Any:
    return view.visualRect(model.index(row, column, model.index(0, 0, QModelIndex())))


def test_a_failed_call_s_status_is_written_in_the_danger_colour_and_a_done_one_in_success(qtbot: Any) -> None:
    view, model = _view(qtbot)
    image = view.viewport().grab().toImage()
    assert LIGHT.success in _colours(image, _cell(view, model, 0, STATUS_COLUMN))
    failed = _colours(image, _cell(view, model, 1, STATUS_COLUMN))
    assert LIGHT.danger in failed and LIGHT.success not in failed


def test_the_selected_row_is_written_in_the_highlighted_text_colour_on_the_highlight(qtbot: Any) -> None:
    view, model = _view(qtbot)
    view.setFocus()
    view.setCurrentIndex(model.index(0, 0, model.index(0, 0, QModelIndex())))
    image = view.viewport().grab().toImage()
    palette = view.palette()
    seen = _colours(image, _cell(view, model, 0, 0))
    assert palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Highlight).name() in seen
    assert palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText).name() in seen


def test_a_summary_too_long_for_its_column_is_cut_with_an_ellipsis_and_an_agent_is_bold(qtbot: Any) -> None:
    view, model = _view(qtbot)
    view.viewport().grab()
    cells = view.itemDelegate()
    assert isinstance(cells, TextCells)
    shown = {text for text, _ in cells.shown()}
    assert any(t.endswith("…") and LONG.startswith(t[:-1]) for t in shown), shown
    assert ("lead", True) in cells.shown() and ("README.md", False) in cells.shown()
