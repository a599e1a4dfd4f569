"""Starting the window: a journal it cannot open is said in a message box and on stderr, not a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from core import Console, spawn
from gui.window.app import _opened
from tests.conftest import wait_until


def test_a_damaged_journal_is_shown_in_a_message_box_until_dismissed(qtbot: Any, loop: Any, workspace: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    console = Console(workspace)
    journal = console.state_dir / "journal.sqlite3"
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b"not a database at all" * 100)

    async def scenario() -> None:
        opening = spawn(_opened(console, "watch", interactive=True), "opening the console")
        await wait_until(lambda: _box() is not None, what="the message box")
        box = _box()
        assert box is not None and f"the journal {journal} is damaged" in box.text() and "Move it aside" in box.text()
        assert not opening.done()  # it waits for the person
        box.accept()
        assert await opening is False

    loop.run_until_complete(scenario())
    assert f"belay watch: the journal {journal} is damaged" in capsys.readouterr().err
    assert journal.read_bytes() == b"not a database at all" * 100


def _box() -> QMessageBox | None:
    return next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()), None)
