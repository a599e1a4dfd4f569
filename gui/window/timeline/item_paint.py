"""What every cell of the timeline draws under its content: the item's panel (selection, hover) and, on the
current row, the focus frame; for the delegates that paint their cells themselves instead of asking the model
every role (`gui.window.timeline.cells`, `gui.window.timeline.gantt`).

Both take the option's state as a plain int, read once per cell by the delegate: a Python enum flag's `&`
makes new enum objects, microseconds a cell, and a repaint of the timeline draws some 300 cells."""

from __future__ import annotations

from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionFocusRect, QStyleOptionViewItem

ENABLED = QStyle.StateFlag.State_Enabled.value
ACTIVE = QStyle.StateFlag.State_Active.value
SELECTED = QStyle.StateFlag.State_Selected.value
HAS_FOCUS = QStyle.StateFlag.State_HasFocus.value
MOUSE_OVER = QStyle.StateFlag.State_MouseOver.value
_PANELLED = SELECTED | MOUSE_OVER
"""The states in which a style draws an item's panel; otherwise it draws nothing there (the delegates give no
background brush: alternate rows are the view's, drawn under the cell)."""


def style_of(option: QStyleOptionViewItem) -> QStyle:
    widget = option.widget
    return widget.style() if widget is not None else QApplication.style()


def row_state(option: QStyleOptionViewItem, row: int) -> int:
    """The option's state as an int, the mouse over it when it is over its row: a table view marks only the cell
    under the mouse, the timeline (`gui.window.timeline.view`, whose `hovered_row` says which) the whole row."""
    state: int = option.state.value
    if not state & MOUSE_OVER and getattr(option.widget, "hovered_row", -1) == row:
        option.state |= QStyle.StateFlag.State_MouseOver
        state |= MOUSE_OVER
    return state


def paint_panel(painter: QPainter, option: QStyleOptionViewItem, state: int) -> None:
    """The item's background as the widget's style draws it when selected or hovered (`state` is
    `option.state` as an int); nothing for a plain cell, whose panel is empty."""
    if state & _PANELLED:
        style_of(option).drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter,
                                       option.widget)


def paint_focus(painter: QPainter, option: QStyleOptionViewItem, state: int) -> None:
    """The focus frame of the current cell, as Qt's own delegate draws it (nothing when it has no focus)."""
    if not state & HAS_FOCUS:
        return
    focus = QStyleOptionFocusRect()
    focus.rect = option.rect
    focus.state = option.state | QStyle.StateFlag.State_KeyboardFocusChange
    focus.palette = option.palette
    focus.backgroundColor = option.palette.color(
        QPalette.ColorRole.Highlight if state & SELECTED else QPalette.ColorRole.Window)
    style_of(option).drawPrimitive(QStyle.PrimitiveElement.PE_FrameFocusRect, focus, painter,
                                   option.widget)
