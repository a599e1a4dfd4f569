"""Asking a question from a coroutine without a nested event loop.

`QMessageBox.exec()` would spin a second Qt loop inside a running asyncio
task on the shared thread (qasync), so other tasks' callbacks would run
re-entrantly.  `answer` opens the box window-modal with `open()` and awaits
its `finished` signal instead; if the awaiting task is cancelled (the
window closes), the box goes away with it.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QMessageBox


async def answer(box: QMessageBox) -> QMessageBox.StandardButton:
    """Show `box` and return the standard button the person chose (Escape gives the escape button)."""
    chosen: asyncio.Future[QMessageBox.StandardButton] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        if not chosen.done():
            chosen.set_result(box.standardButton(box.clickedButton()))

    box.finished.connect(finished)
    box.open()
    try:
        return await chosen
    finally:
        box.finished.disconnect(finished)
        box.close()
        box.deleteLater()
