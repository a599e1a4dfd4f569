"""The conflict regions of the merged text an undo writes: found again as the person edits, the cursor's region
marked darker than the others, and a bar that says where the cursor is and moves between regions.

The regions are parsed back out of the text (`core.conflict_regions`) once typing pauses, so they are whatever
the text now holds.  Settling a region with a side is the undo dialog's (it also decides the file).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QTextCursor, QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from core import ConflictRegion, Take, conflict_regions
from gui.window.kit import theme
from gui.window.review.code_editor import CodeEditor

TAKE_TEXT: dict[Take, tuple[str, str, str]] = {  # take: (button, shortcut, tooltip)
    "now": ("Take now", "Alt+N", "Keep this region as the file is now (the later edits)"),
    "undo": ("Take the undo", "Alt+U", "Put this region back as it was before the call"),
    "both": ("Take both", "Alt+B", "Keep the file's lines as they are now, then the undo's"),
}
MARKS = {"marker": "undo_marker", "now": "undo_now", "base": "undo_base", "undo": "undo_undo"}
"""What a line of a region is -> its theme role; the other regions get it half-way to the page."""
REPARSE_MS = 150
"""After an edit, the regions are parsed again once typing pauses this long."""


class RegionBar(QWidget):
    """Above the merged text: which region the cursor is in, Previous / Next, and the three takes.

    Signals:
        reparsed: the regions were found again (after the text was set or edited).
        went_to(object): the cursor was put on this region (a `ConflictRegion`).
        take_requested(str): a take button was pressed ("now", "undo" or "both").
    """

    reparsed = Signal()
    went_to = Signal(object)
    take_requested = Signal(str)

    def __init__(self, editor: CodeEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._active = False
        self.regions: list[ConflictRegion] = []
        """The regions of the merged text, as last parsed."""
        self._at: int | None = None
        """The index of the region the cursor is in (or the one marked as current)."""
        self.reparse = QTimer(self)
        self.reparse.setSingleShot(True)
        self.reparse.setInterval(REPARSE_MS)
        self.reparse.timeout.connect(self.refresh)
        self.label = QLabel(textFormat=Qt.TextFormat.PlainText)
        self.previous_button = QPushButton("↑ Previous")
        self.previous_button.setToolTip("Previous conflict (Alt+Up, Shift+F8)")
        self.previous_button.clicked.connect(lambda: self.go_to(-1))
        self.next_button = QPushButton("↓ Next")
        self.next_button.setToolTip("Next conflict (Alt+Down, F8)")
        self.next_button.clicked.connect(lambda: self.go_to(1))
        self.take_buttons: dict[Take, QPushButton] = {}
        for take, (text, keys, tip) in TAKE_TEXT.items():
            button = self.take_buttons[take] = QPushButton(text)
            button.setToolTip(f"{tip} ({keys})")
            button.clicked.connect(lambda _=False, t=take: self.take_requested.emit(t))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        for button in (self.previous_button, self.next_button, *self.take_buttons.values()):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # a click leaves the cursor in its region
            row.addWidget(button)
        editor.cursorPositionChanged.connect(self._show_region_of_cursor)

    def show_text(self, active: bool) -> None:
        """The editor shows another file's merged text; `active`: it is one whose regions are settled here."""
        self._active = active
        self.setVisible(active)
        self._at = None
        self.refresh_now(force=True)
        if self.regions:
            self.put_cursor_on(self.regions[0])
        else:
            self._editor.moveCursor(QTextCursor.MoveOperation.Start)

    def refresh_now(self, *, force: bool = False) -> None:
        """Parse the regions now if an edit is waiting for it (or when `force`d)."""
        if force or self.reparse.isActive():
            self.reparse.stop()
            self.refresh()

    def refresh(self) -> None:
        """The merged text was set or edited: find its regions and mark them."""
        self.regions = conflict_regions(self._editor.toPlainText()) if self._active else []
        self._at = None
        self.reparsed.emit()
        self._show_region_of_cursor(force=True)

    def index_at(self, line: int) -> int | None:
        """The index of the region holding 0-based `line`, or None."""
        return next((i for i, r in enumerate(self.regions) if r.start <= line < r.end), None)

    def go_to(self, step: int) -> None:
        """Put the cursor on the next (step 1) or previous (-1) region, wrapping around; 0: the first."""
        self.refresh_now()
        if not self.regions or self.isHidden():
            return
        line = self._editor.textCursor().blockNumber()
        if step > 0:
            index = next((i for i, r in enumerate(self.regions) if r.start > line), 0)
        elif step < 0:
            index = next((i for i in reversed(range(len(self.regions))) if self.regions[i].end <= line),
                         len(self.regions) - 1)
        else:
            index = 0
        self.put_cursor_on(self.regions[index])

    def put_cursor_on(self, region: ConflictRegion) -> None:
        self._editor.setTextCursor(cursor_at(self._editor.document(), region.start))
        self._editor.go_to_line(region.start + 1)
        self._show_region_of_cursor()
        self.went_to.emit(region)

    def _show_region_of_cursor(self, *, force: bool = False) -> None:
        """Say which region the cursor is in and mark it darker than the others."""
        if self.reparse.isActive():
            return  # the regions are stale until the edit is parsed
        index = self.index_at(self._editor.textCursor().blockNumber())
        if index == self._at and not force:
            return
        self._at = index
        count = len(self.regions)
        for button in (*self.take_buttons.values(), self.previous_button, self.next_button):
            button.setEnabled(bool(count))
        if not count:
            self.label.setText("No conflicts left: Undo writes the merged text")
        elif index is None:
            self.label.setText(f"{count} conflict{'s' if count != 1 else ''} left · F8 goes to the next")
        else:
            r = self.regions[index]
            self.label.setText(f"Conflict {index + 1} of {count} · lines {r.start + 1}–{r.end}")
        self._editor.set_marks(self._marks())

    def _marks(self) -> dict[int, str]:
        """1-based line: colour, for every line of every region (the cursor's region darker)."""
        marks: dict[int, str] = {}
        for i, r in enumerate(self.regions):
            for line in range(r.start, r.end):
                marks[line + 1] = _mark_colour(MARKS[line_kind(r, line)], dim=i != self._at)
        return marks

    def __repr__(self) -> str:
        return f"<RegionBar regions={len(self.regions)} at={self._at} active={self._active}>"


def line_kind(r: ConflictRegion, line: int) -> str:
    """Which part of region `r` line `line` is: a marker, the file now, what the call left, or the undo."""
    base_at = r.start + 1 + r.now.count("\n")  # the ||||||| marker, or ======= when there is no base
    undo_at = r.end - 1 - r.undo.count("\n")  # the first line after =======
    if line in (r.start, r.end - 1, undo_at - 1) or (line == base_at < undo_at - 1):
        return "marker"
    return "now" if line < base_at else "undo" if line >= undo_at else "base"


def cursor_at(doc: QTextDocument, line: int) -> QTextCursor:
    """A cursor at the start of 0-based `line` (the last line when there are fewer)."""
    block = doc.findBlockByNumber(line)
    return QTextCursor(block if block.isValid() else doc.lastBlock())


def _mark_colour(role: str, *, dim: bool) -> str:
    """The current region's colour for `role`; other regions get it mixed half with the page."""
    full = theme.qcolour(role)
    if not dim:
        return full.name()
    page = theme.qcolour("base_bg")
    return QColor((full.red() + page.red()) // 2, (full.green() + page.green()) // 2,
                  (full.blue() + page.blue()) // 2).name()
