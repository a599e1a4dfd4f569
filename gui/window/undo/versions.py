"""The three versions of a file an undo weighs (now, after the call, what the undo restores), side by side
where the width allows, tabs otherwise.

Side by side, a person compares the versions at a glance, and the undo dialog scrolls all three to the
conflict region being decided; each column must still show `SIDE_COLUMNS` characters of code, so a
narrow dialog (a small screen) puts them in tabs instead.  The choice follows the width on every resize;
the same three views move between the two arrangements, so their documents, cursors and scroll
positions stay.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedLayout,
    QTabBar,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

SIDE_COLUMNS = 40
"""Characters of code each version shows, at least, for the three to go side by side."""
_SPARE = 40
"""Pixels of a column that are not text: the frame, the scroll bar, the margins."""


class VersionsView(QWidget):
    """Three read-only views with a caption each: in columns when wide enough, in tabs when not."""

    def __init__(self, views: list[tuple[QPlainTextEdit, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._views = views
        self.tabs = QTabWidget()
        self.columns = QWidget()
        self._captions: list[QLabel] = []
        self._slots: list[QVBoxLayout] = []
        row = QHBoxLayout(self.columns)
        row.setContentsMargins(0, 0, 0, 0)
        for _, caption in views:
            label = QLabel(f"<b>{caption}</b>")
            column = QVBoxLayout()
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(2)
            column.addWidget(label)
            row.addLayout(column, 1)
            self._captions.append(label)
            self._slots.append(column)
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.tabs)
        self._stack.addWidget(self.columns)
        self._side_by_side: bool | None = None
        self._arrange(False)

    def __repr__(self) -> str:
        return f"<VersionsView {'side by side' if self.side_by_side else 'tabs'} width={self.width()}>"

    @property
    def side_by_side(self) -> bool:
        return bool(self._side_by_side)

    def tabBar(self) -> QTabBar:  # noqa: N802 - as QTabWidget names it
        return self.tabs.tabBar()

    def wide_enough(self, width: int) -> bool:
        """Whether `width` pixels give each of the three versions SIDE_COLUMNS characters."""
        view = self._views[0][0]
        advance = max(view.fontMetrics().horizontalAdvance("M"), 1)
        return width // len(self._views) - _SPARE >= SIDE_COLUMNS * advance

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._arrange(self.wide_enough(event.size().width()))

    def _arrange(self, side_by_side: bool) -> None:
        if side_by_side == self._side_by_side:
            return
        self._side_by_side = side_by_side
        current = self.tabs.currentIndex()
        if side_by_side:
            self.tabs.clear()  # the tabs let go of the views (they are not deleted)
            for (view, _), slot in zip(self._views, self._slots, strict=True):
                slot.addWidget(view, 1)
            self._stack.setCurrentWidget(self.columns)
        else:
            for view, caption in self._views:
                self.tabs.addTab(view, caption)
            self.tabs.setCurrentIndex(max(current, 0))
            self._stack.setCurrentWidget(self.tabs)
        for n, (view, _) in enumerate(self._views):  # moved in from the columns, each was shown
            view.setVisible(side_by_side or n == self.tabs.currentIndex())

