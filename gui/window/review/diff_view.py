"""A read-only view of file diffs, highlighted off the GUI thread.

Highlighting runs in a worker thread; the resulting paragraphs are put into
the document in slices, yielding to the event loop between slices, because
parsing a 5,000-line diff's HTML in one `setHtml` holds the GUI thread for
about 400 ms.  Each `set_diffs` call is a new request that supersedes the
previous one: its task is cancelled and any late result is dropped
(the request / apply-on-the-main-thread / drop-stale pattern of napari's
layer slicer).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtGui import (
    QCloseEvent,
    QPalette,
    QShowEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from core import FileDiff, spawn
from gui.window.kit import theme
from gui.window.kit.code_font import keep_code_font
from gui.window.review.highlight import message_html, render_diff_blocks, wrap_document

log = logging.getLogger(__name__)

EMPTY_TEXT = "No changes to show"
SLICE_BLOCKS = 200
"""Paragraphs inserted per event-loop turn (about 20 ms of Qt parsing and layout)."""


class DiffView(QWidget):
    """Shows a sequence of `FileDiff`s as highlighted, line-numbered text.

    Signals:
        rendered: the latest request is fully on screen (its diffs, the
            empty-state text, or an error message).
    """

    rendered = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, placeholder: str = EMPTY_TEXT, dark: bool | None = None
    ) -> None:
        """`dark=None` follows the widget palette (a dark window gets the dark colours)."""
        super().__init__(parent)
        self._placeholder = placeholder
        if dark is None:
            theme.follow(self, self._on_palette_changed)
        self._dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128 if dark is None else dark
        self._diffs: tuple[FileDiff, ...] = ()
        self._generation = 0
        self._task: asyncio.Task[None] | None = None
        self._is_rendered = False
        self.browser = QTextBrowser(self)
        self.browser.setReadOnly(True)
        self.browser.setOpenLinks(False)
        keep_code_font(self.browser)
        self.browser.document().setUndoRedoEnabled(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._show_message(placeholder)
        self._is_rendered = True

    def __repr__(self) -> str:
        busy = self._task is not None and not self._task.done()
        return (f"<DiffView files={len(self._diffs)} generation={self._generation} "
                f"rendered={self._is_rendered} busy={busy}>")

    # -- public ---------------------------------------------------------------------

    def set_diffs(self, diffs: Sequence[FileDiff]) -> None:
        """Show `diffs` (the placeholder when empty); supersedes any pending request."""
        self._diffs = tuple(diffs)
        self._generation += 1
        self._cancel_render()
        self._is_rendered = False
        if not self._diffs:
            self._show_message(self._placeholder)
            self._finish()
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a script, a test without qasync): render here
            self._render_now()
            return
        self._task = spawn(self._render(self._diffs, self._dark, self._generation),
                           f"DiffView render #{self._generation}")
        self._task.add_done_callback(self._on_task_done)

    def set_placeholder(self, text: str) -> None:
        """The text shown when there are no diffs."""
        self._placeholder = text
        if not self._diffs:
            self.set_diffs(())

    def _on_palette_changed(self) -> None:
        """A theme switch (a new application palette): the diff again, in the new colours."""
        self.set_dark(self.palette().color(QPalette.ColorRole.Base).lightness() < 128)

    def set_dark(self, dark: bool) -> None:
        """Switch between the light and the dark palette, re-rendering what is shown."""
        if dark != self._dark:
            self._dark = dark
            self.set_diffs(self._diffs)

    def is_rendered(self) -> bool:
        """Whether the latest request is fully on screen."""
        return self._is_rendered

    def plain_text(self) -> str:
        """What the view shows, as plain text."""
        return self.browser.toPlainText()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802  (Qt override)
        self._cancel_render()
        super().closeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802  (Qt override)
        super().showEvent(event)
        if not self._is_rendered and self._task is None:  # closed mid-render, shown again
            self.set_diffs(self._diffs)

    # -- rendering ------------------------------------------------------------------

    async def _render(self, diffs: tuple[FileDiff, ...], dark: bool, generation: int) -> None:
        render = functools.partial(render_diff_blocks, diffs, dark=dark)
        try:
            blocks = await asyncio.get_running_loop().run_in_executor(None, render)
            if generation == self._generation and shiboken6.isValid(self.browser):
                await self._apply_in_slices(blocks, dark, generation)
        except Exception as exc:  # shown in the view, and logged with its traceback
            log.exception("rendering %d diff(s) failed", len(diffs))
            if generation == self._generation and shiboken6.isValid(self.browser):
                self._show_message(f"Could not show the diff: {exc}")
                self._finish()

    async def _apply_in_slices(self, blocks: list[str], dark: bool, generation: int) -> None:
        self.browser.setHtml(wrap_document(blocks[:SLICE_BLOCKS], dark=dark))
        cursor = QTextCursor(self.browser.document())
        for start in range(SLICE_BLOCKS, len(blocks), SLICE_BLOCKS):
            await asyncio.sleep(0)  # let Qt paint and handle input between slices
            if generation != self._generation or not shiboken6.isValid(self.browser):
                return
            _append_blocks(cursor, blocks[start:start + SLICE_BLOCKS])
        self._finish()

    def _render_now(self) -> None:
        try:
            blocks = render_diff_blocks(self._diffs, dark=self._dark)
        except Exception as exc:
            log.exception("rendering %d diff(s) failed", len(self._diffs))
            self._show_message(f"Could not show the diff: {exc}")
        else:
            self.browser.setHtml(wrap_document(blocks, dark=self._dark))
        self._finish()

    def _show_message(self, text: str) -> None:
        self.browser.setHtml(message_html(text, dark=self._dark))

    def _finish(self) -> None:
        self._is_rendered = True
        self.rendered.emit()

    def _cancel_render(self) -> None:
        task, self._task = self._task, None
        # A task of a loop already closed can no longer be cancelled (nor run).
        if task is not None and not task.done() and not task.get_loop().is_closed():
            task.cancel()

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if self._task is task:
            self._task = None


def _append_blocks(cursor: QTextCursor, blocks: list[str]) -> None:
    """Append paragraphs at the end of the document, keeping the first one's format.

    `insertHtml` merges the fragment's first paragraph into the block at the
    cursor, losing its block format (background, margins); so a new block
    with that format is made first and the paragraph merges into it.
    """
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertBlock(_block_format(blocks[0]), QTextCharFormat())
    cursor.insertHtml("\n".join(blocks))


def _block_format(block_html: str) -> QTextBlockFormat:
    scratch = QTextDocument()
    scratch.setHtml(block_html)
    return scratch.firstBlock().blockFormat()
