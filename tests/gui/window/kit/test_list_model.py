"""The base list model: rows over a Python list, shown and kept in step with the views that show them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QTreeView

from gui.window.kit.list_model import ListModel

DISPLAY = Qt.ItemDataRole.DisplayRole


@dataclass
class Task:
    name: str
    minutes: int


class TasksModel(ListModel[Task]):
    """A two-column list, as the window's lists are: a name, and a cell that changes by itself."""

    COLUMNS = ("Task", "Minutes")

    def cell(self, item: Task, column: int, role: int) -> object:
        if role != DISPLAY:
            return None
        return item.name if column == 0 else f"{item.minutes} min"


def _texts(model: TasksModel) -> list[list[str]]:
    return [[model.index(row, column).data() for column in range(model.columnCount())]
            for row in range(model.rowCount())]


def test_the_rows_shown_follow_every_change_and_the_model_stays_valid(qtmodeltester: Any) -> None:
    model = TasksModel()
    qtmodeltester.check(model, force_py=True)  # and on every change below
    assert model.append(Task("build", 3)) == 0 and model.append(Task("test", 7)) == 1
    assert _texts(model) == [["build", "3 min"], ["test", "7 min"]]
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(2)] == ["Task", "Minutes"]
    model.rows[1].minutes = 8
    model.changed(1)
    assert _texts(model)[1] == ["test", "8 min"]
    assert model.remove_first(lambda t: t.name == "build") == Task("build", 3)
    assert model.remove_first(lambda t: t.name == "build") is None  # gone already: nothing else goes
    assert _texts(model) == [["test", "8 min"]]
    model.replace_all([Task("lint", 1), Task("docs", 2)])
    assert _texts(model) == [["lint", "1 min"], ["docs", "2 min"]] and model.find(lambda t: t.name == "docs") == 1
    assert model.item(model.index(1, 0)) == Task("docs", 2) and model.item(QModelIndex()) is None
    model.replace_all([])
    assert model.rowCount() == 0


def test_a_selected_row_stays_selected_when_another_row_comes_or_goes(qtbot: Any) -> None:
    model = TasksModel()
    for name in ("build", "test", "deploy"):
        model.append(Task(name, 1))
    view = QTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.setCurrentIndex(model.index(2, 0))
    model.remove_first(lambda t: t.name == "build")
    model.append(Task("docs", 1))
    assert model.item(view.currentIndex()) == Task("deploy", 1)  # told as a removal, not a new list
    model.replace_all([Task("deploy", 1)])
    assert not view.currentIndex().isValid()  # a new list: the views start again


def test_a_clock_column_is_due_again_in_every_row_and_only_there(qtbot: Any) -> None:
    model = TasksModel()
    due: list[tuple[int, int, int, int, list[int]]] = []
    model.dataChanged.connect(lambda first, last, roles=(): due.append(
        (first.row(), first.column(), last.row(), last.column(), list(roles))))
    model.columns_changed(1, 1)
    assert due == []  # no rows: nothing to repaint
    for name in ("build", "test", "deploy"):
        model.append(Task(name, 1))
    model.columns_changed(1, 1)
    assert due == [(0, 1, 2, 1, [DISPLAY])]
