"""The approval's diff, reviewed hunk by hunk: side by side or unified, each hunk accepted or rejected.

The rows are built in a worker thread (`gui.window.review.rows`: syntax
colours, changed words, enclosing functions) and painted by
`gui.window.review.canvas`, which draws only what is on screen; a newer
`set_diffs` supersedes a pending one and its late result is dropped.  Every
hunk starts accepted.  The person moves between hunks and toggles them with
the toolbar or, while the diff has the focus, with keys that no other part
of the window uses:

    N / P     next / previous change          Space   accept or reject it
    A         accept every change             R       reject every change
    V         side by side <-> unified        F       focus mode (the diff takes the column)

A click on a fold ("⋯ 59 unchanged lines") shows those lines, when the new
text is known.  The view (split or unified) is remembered between runs (QSettings, under
Belay's config directory); side by side is drawn only where each side has
room for SPLIT_COLUMNS characters, else the diff is unified and a short
note beside the switch says why (the choice stands for a wider window).  Hunks of a file that cannot be approved in part
(a new file, a binary or truncated diff) cannot be rejected; the view says
so.  A notebook's diff is of its cells as shown, not its JSON: the core
turns its accepted hunks back into the notebook (`core.tools.nbpartial`).

Signals:
    rendered: the latest request is on screen.
    review_changed(int): the number of rejected hunks changed (or a new diff came).
    focus_changed(bool): focus mode was turned on or off.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QKeySequence, QPalette, QResizeEvent, QShortcut
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from core import ToolName, spawn
from gui.window.kit import theme
from gui.window.kit.fold_row import FoldingRow, Note
from gui.window.kit.remembered import window_settings
from gui.window.review.canvas import ReviewCanvas
from gui.window.review.rows import Layout, ReviewRow, build_layout, open_fold

if TYPE_CHECKING:
    from core import ApprovalRequested, FileDiff

log = logging.getLogger(__name__)

SPLIT_KEY = "review/side_by_side"
KEYS_HELP = "N / P next / previous · Space accept or reject · A accept all · R reject all · V view · F focus"
KEPT_REVIEWS = 50
"""Reviews kept for requests not shown at the moment (the oldest go first)."""
RENDERED = frozenset({ToolName.NOTEBOOK_EDIT})
"""Tools whose diff shows a rendering of the file, not its bytes: their proposed content is not the diff's text."""
NOT_SPLITTABLE = "this file is written whole: its changes cannot be approved in part"
SPLIT_COLUMNS = 80
"""Side by side only where each side shows this many characters of code."""
TOO_NARROW = "unified: too narrow to split"


class ReviewView(QWidget):
    """A diff with per-hunk accept / reject, a "change n of m" line and a side-by-side / unified switch."""

    rendered = Signal()
    review_changed = Signal(int)
    focus_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, *, dark: bool | None = None,
                 settings: QSettings | None = None) -> None:
        super().__init__(parent)
        if dark is None:
            theme.follow(self, self._on_palette_changed)
        self._dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128 if dark is None else dark
        self._settings = settings if settings is not None else window_settings()
        self._diffs: tuple[FileDiff, ...] = ()
        self._contents: dict[str, str] = {}
        self._fixed: set[str] = set()
        self._whole_files = False
        self._whole: tuple[str, ...] = ()
        self._call_id: str | None = None
        """The request shown (None: diffs given directly)."""
        self._reviews: dict[str, tuple[set[int], int]] = {}
        """Reviews of requests shown before: rejected changes and the current one, by call id."""
        self._review: tuple[set[int], int] = (set(), 0)
        self._layout = Layout()
        self._rejected: set[int] = set()
        self._current = -1
        self._generation = 0
        self._task: asyncio.Task[None] | None = None
        self._is_rendered = True
        self.canvas = ReviewCanvas(self)
        self.canvas.setAccessibleName("Diff of the pending write, change by change")
        self.canvas.hunk_clicked.connect(self._on_hunk_clicked)
        self.canvas.drawn.connect(self._on_drawn)
        self._drawing: int | None = None
        """The generation whose rows wait for their first paint."""
        self.canvas.fold_clicked.connect(self.open_fold)
        self.position = QLabel()
        self.position.setObjectName("reviewPosition")
        # The label gives way (cut at its end) rather than widening the window's right column.
        self.position.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.position.setMinimumWidth(self.position.fontMetrics().horizontalAdvance("change 30 of 30"))
        self.previous_button = _tool("◀", "Previous change (P)", self.previous_hunk)
        self.next_button = _tool("▶", "Next change (N)", self.next_hunk)
        # Keys live in the tooltips (and the F1 sheet): with them in the labels the bar alone was wider than
        # the right column of a 1024-pixel window.
        self.toggle_button = QPushButton("Reject")
        self.toggle_button.setToolTip("Accept or reject the current change (Space)")
        self.toggle_button.clicked.connect(self.toggle_hunk)
        self.accept_all_button = QPushButton("Accept all")
        self.accept_all_button.setToolTip("Accept every change (A)")
        self.accept_all_button.clicked.connect(self.accept_all)
        self.reject_all_button = QPushButton("Reject all")
        self.reject_all_button.setToolTip("Reject every change (R)")
        self.reject_all_button.clicked.connect(self.reject_all)
        self.view_button = QPushButton()
        self.view_button.setToolTip("Side by side or unified diff (V)")
        self.view_button.setCheckable(True)
        self.view_button.toggled.connect(self._on_view_toggled)
        self.focus_button = QPushButton("Focus")
        self.focus_button.setCheckable(True)
        self.focus_button.setToolTip("Give the diff the whole column (F)")
        self.focus_button.toggled.connect(self.focus_changed.emit)
        self.narrow = Note(TOO_NARROW)
        self.narrow.setObjectName("reviewNarrow")
        self.narrow.setToolTip(f"Side by side needs room for {SPLIT_COLUMNS} characters on each side; this diff is "
                               "shown unified until the window or the column is wider")
        self.narrow.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        # It gives way (shortened, "…") rather than widening the right column of a 1024-pixel window.
        self.narrow.setVisible(False)
        self._build()
        split = self._settings.value(SPLIT_KEY, True, type=bool)
        self.view_button.setChecked(bool(split))
        self._on_view_toggled(bool(split))
        self.shortcuts: list[tuple[str, str]] = []
        """(keys, what they do), for the shortcuts sheet; they act while the diff has the focus."""
        for keys, slot, what in (("N", self.next_hunk, "Next change in the diff"),
                                 ("P", self.previous_hunk, "Previous change in the diff"),
                                 ("Space", self.toggle_hunk, "Accept or reject the current change"),
                                 ("A", self.accept_all, "Accept every change"),
                                 ("R", self.reject_all, "Reject every change"),
                                 ("V", self.view_button.toggle, "Side by side or unified diff"),
                                 ("F", self.focus_button.toggle, "Focus mode: the diff takes the column")):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
            self.shortcuts.append((keys, what))
        self._update_controls()

    def _build(self) -> None:
        self.setObjectName("reviewView")  # its buttons are compact (resources/styles): the bar fits 1024 pixels
        # One line where it fits; where it does not (a 1024-pixel hub), the answers for all the changes and the
        # view's switches go on a second line rather than widening the window's right column.
        self.bar = FoldingRow([(self.previous_button, 0), (self.position, 0), (self.next_button, 0),
                               (self.toggle_button, 0), (self.accept_all_button, 0), (self.reject_all_button, 0),
                               (None, 1), (self.narrow, 100), (self.view_button, 0), (self.focus_button, 0)],
                              fold_at=4)  # the note takes the spare room while it shows (its policy: Ignored)
        self.narrow.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.bar)
        layout.addWidget(self.canvas, 1)
        self.setToolTip(KEYS_HELP)

    def __repr__(self) -> str:
        return (f"<ReviewView files={len(self._diffs)} hunks={self.total} rejected={sorted(self._rejected)} "
                f"current={self._current} rendered={self._is_rendered}>")

    # -- showing -------------------------------------------------------------------

    def set_diffs(self, diffs: Sequence[FileDiff], *, contents: Mapping[str, str] | None = None,
                  whole: Sequence[str] = ()) -> None:
        """Show `diffs`, every hunk accepted; `contents` (path: new text) names enclosing functions and
        counts the unchanged tail; the files in `whole` cannot be split (beyond those the diff rules out)."""
        self._keep_review()
        self._call_id = None
        self._show(diffs, contents, whole, (set(), 0))

    def show_request(self, request: ApprovalRequested) -> None:
        """The diff of a pending write, its new text naming enclosing functions (not a notebook's: its diff is
        of a rendering, its new text JSON).  Showing the request already shown changes nothing; coming back to
        one shown before brings back its review (which changes were rejected)."""
        if request.call_id == self._call_id and tuple(request.diffs) == self._diffs:
            return
        self._keep_review()
        self._call_id = request.call_id
        contents = {p.path: p.content for p in request.proposed if p.content is not None} \
            if request.tool not in RENDERED else {}
        self._show(request.diffs, contents, (), self._reviews.pop(request.call_id, (set(), 0)),
                   whole_files=request.tool == ToolName.BASH)  # a previewed command's: a file can be left out whole

    @property
    def shown_call(self) -> str | None:
        """The call id of the request shown (None: diffs given directly, or nothing)."""
        return self._call_id

    def has_rejections(self, call_id: str) -> bool:
        """Whether the person rejected some of this request's changes (shown now, or reviewed before)."""
        if call_id == self._call_id:
            return bool(self._rejected)
        return bool(self._reviews.get(call_id, (set(), 0))[0])

    def _keep_review(self) -> None:
        """Remember the review of the request shown, for when it is shown again."""
        if self._call_id is not None and self._is_rendered and (self._rejected or self._current > 0):
            self._reviews[self._call_id] = (set(self._rejected), self._current)
            while len(self._reviews) > KEPT_REVIEWS:
                del self._reviews[next(iter(self._reviews))]

    def _show(self, diffs: Sequence[FileDiff], contents: Mapping[str, str] | None, whole: Sequence[str],
              review: tuple[set[int], int], *, whole_files: bool = False) -> None:
        """`whole_files`: a file created or removed whole can still be left out, its one change rejected (the
        changes of a previewed command, where leaving a file out discards what the command did to it)."""
        self._review = review
        self._diffs = tuple(diffs)
        self._contents = dict(contents or {})
        self._whole = tuple(whole)
        self._whole_files = whole_files
        self._fixed = {d.path for d in self._diffs
                       if not (splittable(d) or whole_files and len(d.hunks) == 1 and not d.binary)} | set(whole)
        self._generation += 1
        self._cancel()
        self._is_rendered = False
        self._rejected = set()  # a review belongs to the diff it was made on
        self.canvas.set_review(self._rejected, self._current)
        if not self._diffs:
            self.focus_button.setChecked(False)  # nothing to focus on: the column goes back to normal
        build = functools.partial(build_layout, self._diffs, dark=self._dark, contents=self._contents)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a script, a test without qasync): build and paint here
            self._apply(build(), self._generation)
            self.canvas.viewport().repaint()
            return
        self._task = spawn(self._build_off_thread(build, self._generation), f"ReviewView build #{self._generation}")

    async def _build_off_thread(self, build: functools.partial[Layout], generation: int) -> None:
        try:
            layout = await asyncio.get_running_loop().run_in_executor(None, build)
        except Exception:  # shown as an empty view with the reason logged; the request is still answerable
            log.exception("building the review of %d diff(s) failed", len(self._diffs))
            layout = Layout()
        if generation == self._generation and shiboken6.isValid(self.canvas):
            self._apply(layout, generation)

    def _apply(self, layout: Layout, generation: int) -> None:
        self._layout = layout
        rejected, current = self._review
        self._rejected = {n for n in rejected if n < len(layout.hunks)}
        self._current = min(current, len(layout.hunks) - 1) if layout.hunks else -1
        self.canvas.set_layout(layout, dark=self._dark)
        self.canvas.verticalScrollBar().setValue(0)
        self.canvas.scroll_to_hunk(self._current)
        self._update_controls()
        self.review_changed.emit(len(self._rejected))
        # Done once the rows are painted: at the next paint event (one paint, not a repaint now and the
        # queued update after it), or now when nothing is on screen to paint.
        self._drawing = generation
        if not self.canvas.viewport().isVisible():
            self._on_drawn()

    def _on_drawn(self) -> None:
        if self._drawing is not None and self._drawing == self._generation:
            self._drawing = None
            self._is_rendered = True
            self.rendered.emit()

    def _cancel(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done() and not task.get_loop().is_closed():
            task.cancel()

    def _on_palette_changed(self) -> None:
        """A theme switch (a new application palette): the diff again, in the new colours."""
        self.set_dark(self.palette().color(QPalette.ColorRole.Base).lightness() < 128)

    def set_dark(self, dark: bool) -> None:
        if dark != self._dark:
            self._dark = dark
            self._show(self._diffs, self._contents, self._whole, (set(self._rejected), max(self._current, 0)),
                       whole_files=self._whole_files)

    def is_rendered(self) -> bool:
        return self._is_rendered

    @property
    def split(self) -> bool:
        """Whether the diff is drawn side by side now (chosen, and wide enough)."""
        return self.view_button.isChecked() and self.wide_enough()

    def wide_enough(self) -> bool:
        """Each side of a split view would show SPLIT_COLUMNS characters of code."""
        return self.canvas.columns_per_side() >= SPLIT_COLUMNS

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit_view()

    def _fit_view(self) -> None:
        """Split as chosen where it fits; unified, saying why, where it does not."""
        chosen = self.view_button.isChecked()
        self.canvas.set_split(self.split)
        self.narrow.setVisible(chosen and not self.wide_enough())

    def plain_text(self) -> str:
        """What the view shows, as text: one line per row."""
        return "\n".join(_row_text(row, self.split) for row in self.canvas.rows)

    # -- review --------------------------------------------------------------------

    @property
    def total(self) -> int:
        return len(self._layout.hunks)

    @property
    def current(self) -> int:
        return self._current

    def rejected(self) -> set[int]:
        """The rejected hunks, by their "change n of m" index (0-based)."""
        return set(self._rejected)

    def accepted_hunks(self) -> dict[str, list[int]] | None:
        """For `Console.approve(hunks=...)`: the accepted hunks of each file with a rejected one; None when
        every hunk is accepted."""
        if not self._rejected:
            return None
        out: dict[str, list[int]] = {}
        for n, (file, hunk) in enumerate(self._layout.hunks):
            path = self._diffs[file].path
            out.setdefault(path, [])
            if n not in self._rejected:
                out[path].append(hunk)
        touched = {self._diffs[self._layout.hunks[n][0]].path for n in self._rejected}
        return {path: hunks for path, hunks in out.items() if path in touched}

    def rejected_hunks(self) -> dict[str, list[int]]:
        """The rejected hunks of each file that has one (indices into its diff), e.g. to edit from."""
        out: dict[str, list[int]] = {}
        for n in sorted(self._rejected):
            file, hunk = self._layout.hunks[n]
            out.setdefault(self._diffs[file].path, []).append(hunk)
        return out

    def go_to(self, n: int) -> None:
        if 0 <= n < self.total:
            self._current = n
            self.canvas.scroll_to_hunk(n)
            self._update_controls()

    def next_hunk(self) -> None:
        self.go_to(min(self._current + 1, self.total - 1))

    def previous_hunk(self) -> None:
        self.go_to(max(self._current - 1, 0))

    def toggle_hunk(self) -> None:
        self._set(self._current, self._current not in self._rejected)

    def accept_all(self) -> None:
        self._rejected.clear()
        self._changed()

    def reject_all(self) -> None:
        self._rejected = {n for n in range(self.total) if self._may_reject(n)}
        self._changed()

    def _set(self, n: int, rejected: bool) -> None:
        if not 0 <= n < self.total or (rejected and not self._may_reject(n)):
            return
        (self._rejected.add if rejected else self._rejected.discard)(n)
        self._changed()

    def _may_reject(self, n: int) -> bool:
        return self._diffs[self._layout.hunks[n][0]].path not in self._fixed

    def _changed(self) -> None:
        self._update_controls()
        self.review_changed.emit(len(self._rejected))

    def _on_hunk_clicked(self, n: int, on_header: bool) -> None:
        self.go_to(n)
        if on_header:
            self.toggle_hunk()

    def open_fold(self, k: int) -> None:
        """Show the unchanged lines folded at row `k` of the current view (when the new text is known)."""
        rows = self.canvas.rows
        if not 0 <= k < len(rows) or rows[k].kind != "fold" or rows[k].file >= len(self._diffs):
            return
        text = self._contents.get(self._diffs[rows[k].file].path)
        if text is not None and open_fold(self._layout, rows[k], text):
            self.canvas.set_layout(self._layout, dark=self._dark)

    def _on_view_toggled(self, split: bool) -> None:
        self.view_button.setText("Split" if split else "Unified")
        self.view_button.setToolTip("Side by side, or unified in one column (V); remembered")
        self._fit_view()
        self._settings.setValue(SPLIT_KEY, split)

    def _update_controls(self) -> None:
        total = self.total
        for widget in (self.previous_button, self.next_button, self.toggle_button, self.accept_all_button,
                       self.reject_all_button):
            widget.setEnabled(total > 0)
        if not total:
            self.position.setText("")
        else:
            kept = total - len(self._rejected)
            rejected = f" · {len(self._rejected)} rejected" if self._rejected else ""
            self.position.setText(f"change {self._current + 1} of {total}{rejected}")
            self.position.setToolTip(f"Approving writes the {kept} accepted change{'s' if kept != 1 else ''} only"
                                     if self._rejected else "Approving writes every change")
            may = self._may_reject(self._current)
            self.toggle_button.setText("Accept" if self._current in self._rejected else "Reject")
            self.toggle_button.setEnabled(may or self._current in self._rejected)
            self.toggle_button.setToolTip("" if may else NOT_SPLITTABLE)
        self.canvas.set_review(self._rejected, self._current)


def splittable(diff: FileDiff) -> bool:
    """Whether the core can apply part of this diff (see core.changes.partial)."""
    return diff.status == "modify" and not diff.binary and not diff.truncated and bool(diff.hunks)


def _tool(text: str, tip: str, slot: object) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.clicked.connect(slot)
    return button


def _row_text(row: ReviewRow, split: bool) -> str:
    if row.kind != "line":
        return row.text
    if not split:
        cell = row.left
        assert cell is not None
        old = "" if cell.old_no is None else cell.old_no
        new = "" if cell.new_no is None else cell.new_no
        return f"{old:>5} {new:>5} {cell.kind} {cell.text}"
    left = f"{row.left.old_no:>5} {row.left.kind} {row.left.text}" if row.left is not None else ""
    right = f"{row.right.new_no:>5} {row.right.kind} {row.right.text}" if row.right is not None else ""
    return f"{left:<60} │ {right}"
