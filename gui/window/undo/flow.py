"""Undo, redo and rewind as the window runs them: preview, ask where needed, run, report.

An undo is previewed first; when a file was changed since the call, the
person resolves it in an `UndoDialog` (opened, never exec'd) and the undo
runs when they press Undo.  A rewind lists the later calls it would undo, with
their diffs, and asks before undoing any (gui.window.undo.rewind).  Everything runs as a task of the window's
`TaskSet`; the window shows the reports.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from core import BelayError, CallRecord, ConsoleSurface, Resolution, UndoPreview, UndoReport
from gui.window.runtime.tasks import TaskSet
from gui.window.undo.dialog import UndoDialog


class UndoFlow:
    """The window's undo, redo and rewind."""

    def __init__(self, console: ConsoleSurface, tasks: TaskSet, parent: QWidget, *,
                 report: Callable[[UndoReport], None], say: Callable[[str, int], None],
                 confirm_rewind: Callable[[list[CallRecord]], Awaitable[bool]], rewound: Callable[[], None]) -> None:
        self.console, self.tasks, self.parent = console, tasks, parent
        self._report, self._say, self._confirm_rewind, self._rewound = report, say, confirm_rewind, rewound
        self.dialog: UndoDialog | None = None
        """The last undo dialog opened (the person resolving conflicting files)."""

    def undo(self, call_id: str, paths: list[str] | None = None) -> None:
        """Undo a call (or some of its files): merged where later edits allow, else the person decides."""
        self.tasks.spawn(self._undo(call_id, paths), f"undo {call_id}")

    def redo(self, call_id: str, paths: list[str] | None = None) -> None:
        self.tasks.spawn(self._redo(call_id, paths), f"redo {call_id}")

    def rewind(self, call_id: str) -> None:
        """Preview, confirm, then undo every later call that changed files."""
        self.tasks.spawn(self._rewind(call_id), f"rewind to {call_id}")

    async def _undo(self, call_id: str, paths: list[str] | None) -> None:
        try:
            preview = await self.console.undo_preview(call_id, paths=paths)
        except BelayError as e:
            self._say(f"Nothing to undo: {e.info.message}", 10_000)
            return
        if preview.conflicts:
            self.open_dialog(preview, paths)
            return
        await self._finish_undo(call_id, paths, {})

    def open_dialog(self, preview: UndoPreview, paths: list[str] | None) -> UndoDialog:
        """The person decides each conflicting file; the undo runs when they press Undo."""
        dialog = UndoDialog(preview, self.parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.resolved.connect(functools.partial(self._on_dialog_resolved, preview.op_id, paths))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _on_dialog_resolved(self, op_id: str, paths: list[str] | None, resolutions: dict[str, Resolution]) -> None:
        self.tasks.spawn(self._finish_undo(op_id, paths, resolutions), f"undo {op_id}")

    async def _finish_undo(self, call_id: str, paths: list[str] | None,
                           resolutions: dict[str, Resolution]) -> None:
        self._report(await self.console.undo(call_id, paths=paths, resolutions=resolutions))

    async def _redo(self, call_id: str, paths: list[str] | None) -> None:
        self._report(await self.console.redo(call_id, paths=paths))

    async def _rewind(self, call_id: str) -> None:
        plan = await self.console.rewind_plan(call_id)
        if not plan:
            self._say("Nothing after this call changed files: there is nothing to rewind.", 10_000)
            return
        if not await self._confirm_rewind(plan):
            return
        reports = await self.console.rewind(call_id)
        undone = sum(r.ok for r in reports)
        refused = next((r for r in reports if not r.ok), None)
        message = f"Rewound: undid {undone} of {len(plan)} calls."
        if refused is not None:
            message += f" Stopped at {refused.call_id}: {refused.message}"
        self._say(message, 15_000)
        self._rewound()
