"""The undo's three versions: side by side where each shows SIDE_COLUMNS characters, tabs otherwise, the same
views (and what they show) either way."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gui.window.undo.versions import VersionsView


def _on_screen(widget: QWidget, top: QWidget) -> bool:
    """Shown whole inside `top` (not hidden behind a tab, not clipped)."""
    return (widget.isVisible() and not widget.visibleRegion().isEmpty()
            and top.rect().contains(QRect(widget.mapTo(top, QPoint(0, 0)), widget.size())))


def test_the_versions_stand_side_by_side_when_wide_and_in_tabs_when_narrow(qtbot: Any) -> None:
    views = [(QPlainTextEdit(f"{name} line\n" * 5), name) for name in ("Now", "After the call", "Undo restores")]
    versions = VersionsView(views)
    qtbot.addWidget(versions)
    versions.show()
    advance = views[0][0].fontMetrics().horizontalAdvance("M")
    wide, narrow = advance * 200, advance * 60
    assert versions.wide_enough(wide) and not versions.wide_enough(narrow)

    versions.resize(wide, 300)
    qtbot.waitUntil(lambda: versions.side_by_side)
    assert all(_on_screen(view, versions) for view, _ in views)  # all three at once
    lefts = [view.mapTo(versions, QPoint(0, 0)).x() for view, _ in views]
    assert lefts == sorted(lefts) and len(set(lefts)) == 3  # in columns, in order
    assert all(view.viewport().width() >= 40 * advance for view, _ in views)

    views[1][0].verticalScrollBar().setValue(2)
    versions.resize(narrow, 300)
    qtbot.waitUntil(lambda: not versions.side_by_side)
    assert [versions.tabs.tabText(n) for n in range(3)] == ["Now", "After the call", "Undo restores"]
    assert [_on_screen(view, versions) for view, _ in views] == [True, False, False]  # one tab at a time
    versions.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: _on_screen(views[1][0], versions))  # once laid out in its tab
    assert views[1][0].toPlainText().startswith("After the call line")

    versions.resize(wide, 300)
    qtbot.waitUntil(lambda: versions.side_by_side)
    assert all(_on_screen(view, versions) for view, _ in views)
