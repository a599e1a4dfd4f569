"""What every cell of the timeline draws under its content: the item's panel (selection, hover) and, on the
current row, the focus frame; for the delegates that paint their cells themselves instead of asking the model
every role (`gui.window.timeline_cells`, `gui.window.gantt`)."""

from __future__ import annotations

from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionFocusRect, QStyleOptionViewItem


def style_of(option: QStyleOptionViewItem) -> QStyle:
    widget = option.widget  # type: ignore[attr-defined]
    return widget.style() if widget is not None else QApplication.style()


def paint_panel(painter: QPainter, option: QStyleOptionViewItem) -> None:
    """The item's background as the widget's style draws it: selected, hovered, alternate."""
    style_of(option).drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter,
                                   option.widget)  # type: ignore[attr-defined]


def paint_focus(painter: QPainter, option: QStyleOptionViewItem) -> None:
    """The focus frame of the current cell, as Qt's own delegate draws it (nothing when it has no focus)."""
    if not option.state & QStyle.StateFlag.State_HasFocus:  # type: ignore[attr-defined]
        return
    focus = QStyleOptionFocusRect()
    focus.rect = option.rect  # type: ignore[attr-defined]
    focus.state = option.state | QStyle.StateFlag.State_KeyboardFocusChange  # type: ignore[attr-defined]
    focus.palette = option.palette  # type: ignore[attr-defined]
    selected = option.state & QStyle.StateFlag.State_Selected  # type: ignore[attr-defined]
    focus.backgroundColor = option.palette.color(  # type: ignore[attr-defined]
        QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Window)
    style_of(option).drawPrimitive(QStyle.PrimitiveElement.PE_FrameFocusRect, focus, painter,
                                   option.widget)  # type: ignore[attr-defined]
