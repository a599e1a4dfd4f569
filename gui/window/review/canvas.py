"""The painted diff of the review: only the rows on screen are drawn, whatever the diff's size.

A `QAbstractScrollArea` over the rows of `gui.window.review.rows`: one row
per line height, the visible ones painted on each paint event, so a
2,000-line diff costs the same to show as a 20-line one once its rows are
built (off the GUI thread, by the caller).  Side by side, the old side is on
the left and the new on the right, each with its line numbers; unified, one
column with both numbers.  Changed words get a stronger background; the
current hunk has a bar at its left; a rejected hunk is dimmed and its header
says so.

Signals:
    hunk_clicked(int, bool): a hunk (its "change n of m" index) was clicked;
        True when on its header (which toggles it).
    fold_clicked(int): a fold row (its index in the rows shown) was clicked.
    drawn: a paint event has drawn the rows on screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from gui.window.kit.code_font import code_font, keep_code_font
from gui.window.review.highlight import DARK, LIGHT, Palette
from gui.window.review.rows import Cell, Layout, ReviewRow


@dataclass(frozen=True)
class Colors:
    """The canvas's colours for one theme, beyond the highlight palette's."""

    added_word: str
    removed_word: str
    filler: str
    accent: str
    rejected: str
    rejected_fg: str
    fold_bg: str


LIGHT_EXTRA = Colors(added_word="#abf2bc", removed_word="#ffcecb", filler="#f6f8fa", accent="#0969da",
                     rejected="#eaeef2", rejected_fg="#8c959f", fold_bg="#f6f8fa")
DARK_EXTRA = Colors(added_word="#1f6f3a", removed_word="#8e2c2f", filler="#161b22", accent="#2f81f7",
                    rejected="#21262d", rejected_fg="#6e7681", fold_bg="#161b22")


class ReviewCanvas(QAbstractScrollArea):
    """Paints a `Layout` split or unified, with the review state of its hunks."""

    hunk_clicked = Signal(int, bool)
    fold_clicked = Signal(int)
    drawn = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        font = code_font()
        self._font = font
        """What rows are drawn and measured in: the canvas's own, since an application style sheet resets a
        viewport's font to its parent's (the grid would be measured in one font and drawn in another)."""
        keep_code_font(self.viewport())
        self._bold = QFont(font)
        self._bold.setBold(True)
        self._italic = QFont(font)
        self._italic.setItalic(True)
        self._layout = Layout()
        self._split = True
        self._dark = False
        self._rejected: set[int] = set()
        self._current = -1
        self._hunk_of: dict[tuple[int, int], int] = {}
        self.painted = 0
        """Paint events that drew rows (for the bench and tests)."""
        self._measure()

    def __repr__(self) -> str:
        return (f"<ReviewCanvas rows={len(self.rows)} split={self._split} current={self._current} "
                f"rejected={sorted(self._rejected)}>")

    # -- state -------------------------------------------------------------------

    @property
    def rows(self) -> list[ReviewRow]:
        return self._layout.split if self._split else self._layout.unified

    def set_layout(self, layout: Layout, *, dark: bool) -> None:
        self._layout, self._dark = layout, dark
        self._hunk_of = {key: n for n, key in enumerate(layout.hunks)}
        self._update_scrollbars()
        self.viewport().update()

    def set_split(self, split: bool) -> None:
        if split != self._split:
            self._split = split
            self._update_scrollbars()
            self.scroll_to_hunk(self._current)
            self.viewport().update()

    def set_review(self, rejected: set[int], current: int) -> None:
        self._rejected, self._current = set(rejected), current
        self.viewport().update()

    def scroll_to_hunk(self, n: int) -> None:
        """Bring hunk `n`'s header near the top, unless the whole hunk is already on screen."""
        at = self._layout.split_at if self._split else self._layout.unified_at
        if not 0 <= n < len(at):
            return
        row = at[n]
        end = at[n + 1] if n + 1 < len(at) else len(self.rows)
        first, visible = self.verticalScrollBar().value(), self._visible_rows()
        if row < first or end > first + visible:
            self.verticalScrollBar().setValue(max(row - 2, 0))

    # -- geometry ----------------------------------------------------------------

    def _measure(self) -> None:
        metrics = QFontMetrics(self._font)
        self._line = metrics.height() + 2
        # The grid is the font's own advance, fractions included: a run of 40 characters drawn at 7.22 pixels
        # each must end where the 41st character of the grid begins (an integer grid drifts 9 pixels there).
        self._char = max(QFontMetricsF(self._font).horizontalAdvance("M"), 1.0)
        self._ascent = metrics.ascent() + 1

    @property
    def line_height(self) -> int:
        """The height of one row, in pixels."""
        return self._line

    @property
    def char_width(self) -> float:
        """The grid's column width: every character is placed on it."""
        return self._char

    def columns_per_side(self) -> float:
        """How many characters of code each side of a split view shows at this width (scroll bar and frame
        excluded, whether or not they show now: the answer must not change with the view it chooses)."""
        bar = self.style().pixelMetric(self.style().PixelMetric.PM_ScrollBarExtent)
        width = self.width() - 2 * self.frameWidth() - bar
        return (width // 2 - self._gutter(0)) / self._char

    def _visible_rows(self) -> int:
        return max(self.viewport().height() // self._line, 1)

    def _gutter(self, file: int) -> float:
        digits = self._layout.widths[file] if file < len(self._layout.widths) else 4
        numbers = digits if self._split else 2 * digits + 1
        return (numbers + 3) * self._char

    def _update_scrollbars(self) -> None:
        rows = len(self.rows)
        self.verticalScrollBar().setRange(0, max(rows - self._visible_rows(), 0))
        self.verticalScrollBar().setPageStep(self._visible_rows())
        column = self.viewport().width() // 2 if self._split else self.viewport().width()
        widest = round((self._layout.longest + 2) * self._char + self._gutter(0))
        self.horizontalScrollBar().setRange(0, max(widest - column, 0))
        self.horizontalScrollBar().setPageStep(max(column, 1))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802  (Qt override)
        super().resizeEvent(event)
        self._update_scrollbars()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802  (Qt override)
        self.viewport().update()

    # -- painting ----------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802  (Qt override)
        palette, extra = (DARK, DARK_EXTRA) if self._dark else (LIGHT, LIGHT_EXTRA)
        painter = QPainter(self.viewport())
        painter.setFont(self._font)
        try:
            width = self.viewport().width()
            painter.fillRect(self.viewport().rect(), QColor(palette.page_bg))
            first = self.verticalScrollBar().value()
            rows = self.rows
            for k in range(first, min(first + self._visible_rows() + 1, len(rows))):
                y = (k - first) * self._line
                self._paint_row(painter, rows[k], y, width, palette, extra)
            if rows:
                self.painted += 1
        finally:
            painter.end()
        self.drawn.emit()

    def _paint_row(self, painter: QPainter, row: ReviewRow, y: int, width: int, palette: Palette,
                   extra: Colors) -> None:
        n = self._hunk_of.get((row.file, row.hunk), -1)
        rejected = n in self._rejected
        if row.kind == "line":
            if self._split:
                half = width // 2
                self._paint_cell(painter, row.left, row.file, QRect(0, y, half, self._line), "old", rejected,
                                 palette, extra)
                self._paint_cell(painter, row.right, row.file, QRect(half, y, width - half, self._line), "new",
                                 rejected, palette, extra)
                painter.setPen(QColor(palette.muted))
                painter.drawLine(half, y, half, y + self._line)
            else:
                self._paint_cell(painter, row.left, row.file, QRect(0, y, width, self._line), "both", rejected,
                                 palette, extra)
        else:
            self._paint_band(painter, row, n, rejected, QRect(0, y, width, self._line), palette, extra)
        if n >= 0 and n == self._current:
            painter.fillRect(QRect(0, y, 4, self._line), QColor(extra.accent))

    def _paint_band(self, painter: QPainter, row: ReviewRow, n: int, rejected: bool, rect: QRect, palette: Palette,
                    extra: Colors) -> None:
        """A file header, hunk header, fold or note: one line across both sides."""
        background = {"file": palette.header_bg, "hunk": extra.rejected if rejected else palette.hunk_bg,
                      "fold": extra.fold_bg}.get(row.kind, palette.page_bg)
        painter.fillRect(rect, QColor(background))
        text = row.text
        color = palette.text
        if row.kind == "hunk":
            total = len(self._layout.hunks)
            mark = "✗ rejected" if rejected else "✓ accepted"
            text = f"[{mark}]  change {n + 1} of {total}   {row.text}"
            color = palette.removed_fg if rejected else palette.hunk_fg
        elif row.kind in ("fold", "note"):
            color = palette.muted
        painter.setFont(self._bold if row.kind in ("file", "hunk") else self._italic if row.kind == "note"
                        else self._font)
        painter.setPen(QColor(color))
        painter.drawText(QPoint(rect.x() + 8, rect.y() + self._ascent), text)
        painter.setFont(self._font)

    def _paint_cell(self, painter: QPainter, cell: Cell | None, file: int, rect: QRect, side: str, rejected: bool,
                    palette: Palette, extra: Colors) -> None:
        if cell is None:
            painter.fillRect(rect, QColor(extra.filler))
            return
        background, word_bg, marker_fg = {
            "+": (palette.added_bg, extra.added_word, palette.added_fg),
            "-": (palette.removed_bg, extra.removed_word, palette.removed_fg),
            " ": (palette.page_bg, "", palette.muted),
        }[cell.kind]
        if rejected and cell.kind != " ":
            background, word_bg = extra.rejected, ""
        painter.fillRect(rect, QColor(background))
        gutter = self._gutter(file)
        digits = self._layout.widths[file] if file < len(self._layout.widths) else 4
        numbers = self._numbers(cell, side, digits)
        painter.setPen(QColor(palette.muted))
        baseline = rect.y() + self._ascent
        painter.drawText(QPoint(rect.x() + 6, baseline), numbers)
        painter.setPen(QColor(marker_fg))
        painter.drawText(QPointF(rect.x() + gutter - 2 * self._char, baseline), cell.kind)
        painter.save()
        painter.setClipRect(QRectF(rect.x() + gutter, rect.y(), rect.width() - gutter, rect.height()))
        x0 = rect.x() + gutter - self.horizontalScrollBar().value()
        if word_bg:
            for start, end in cell.words:
                painter.fillRect(QRectF(x0 + start * self._char, rect.y() + 1, (end - start) * self._char,
                                       rect.height() - 2), QColor(word_bg))
        self._paint_text(painter, cell, x0, baseline, extra.rejected_fg if rejected and cell.kind != " "
                         else None, palette)
        if cell.no_newline:
            painter.setPen(QColor(palette.muted))
            painter.drawText(QPointF(x0 + (len(cell.text) + 2) * self._char, baseline), "⏎̸ no newline at end")
        painter.restore()

    def _numbers(self, cell: Cell, side: str, digits: int) -> str:
        old = "" if cell.old_no is None else str(cell.old_no)
        new = "" if cell.new_no is None else str(cell.new_no)
        if side == "old":
            return f"{old:>{digits}}"
        if side == "new":
            return f"{new:>{digits}}"
        return f"{old:>{digits}} {new:>{digits}}"

    def _paint_text(self, painter: QPainter, cell: Cell, x0: float, baseline: int, override: str | None,
                    palette: Palette) -> None:
        at = 0
        default = QColor(override or palette.text)
        for run in cell.runs:
            if run.start > at:
                painter.setPen(default)
                painter.drawText(QPointF(x0 + at * self._char, baseline), cell.text[at:run.start])
            painter.setPen(QColor(override or run.color or palette.text))
            painter.setFont(self._bold if run.bold else self._italic if run.italic else self._font)
            painter.drawText(QPointF(x0 + run.start * self._char, baseline), cell.text[run.start:run.end])
            painter.setFont(self._font)
            at = run.end
        if at < len(cell.text):
            painter.setPen(default)
            painter.drawText(QPointF(x0 + at * self._char, baseline), cell.text[at:])

    # -- input -------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802  (Qt override)
        bar = self.verticalScrollBar()
        if event.key() in (Qt.Key.Key_Home, Qt.Key.Key_End) and not event.modifiers():
            bar.setValue(bar.minimum() if event.key() == Qt.Key.Key_Home else bar.maximum())
            return
        super().keyPressEvent(event)  # the arrows and page keys scroll

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802  (Qt override)
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        k = self.verticalScrollBar().value() + int(event.position().y()) // self._line
        if 0 <= k < len(self.rows):
            row = self.rows[k]
            if row.kind == "fold":
                self.fold_clicked.emit(k)
                return
            n = self._hunk_of.get((row.file, row.hunk), -1)
            if n >= 0:
                self.hunk_clicked.emit(n, row.kind == "hunk")
                return
        super().mousePressEvent(event)
