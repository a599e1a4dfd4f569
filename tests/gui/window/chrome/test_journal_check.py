"""File → Verify the journal (gui.window.chrome.journal_check): whether every row is as Belay sealed it, what is
not, and the chain's head to keep elsewhere, in a box that does not stop the window."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from core import BelayError, Console, ErrorKind, JournalCheck
from core.store.seals import Mismatch
from gui.window.chrome.journal_check import SHOWN, check_journal
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window


@pytest.fixture
def parent(qtbot: Any) -> QWidget:
    """The window the box opens on."""
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _box(parent: QWidget, loop: Any, verified: JournalCheck | BelayError) -> QMessageBox:
    async def answered() -> JournalCheck:
        await asyncio.sleep(0)  # read off the loop, in the app
        if isinstance(verified, BaseException):
            raise verified
        return verified

    box = loop.run_until_complete(check_journal(parent, answered()))
    assert box.isVisible() and box.parent() is parent
    return box


def test_a_journal_that_verifies_says_so_with_the_head_to_keep(parent: QWidget, loop: Any) -> None:
    box = _box(parent, loop, JournalCheck(seals=12, rows=3456, head="9f2c"))
    assert box.icon() == QMessageBox.Icon.Information
    assert "All 3,456 rows are as Belay last sealed them (12 seals in one chain)" in box.text()
    assert "Head: <code>12:9f2c</code>" in box.text() and "belay verify --expect" in box.text()
    assert box.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse  # the head can be copied
    assert "written before this journal was sealed" not in box.text()


def test_rows_older_than_the_seals_are_said_to_be_checked_from_when_they_were_sealed(parent: QWidget, loop: Any) -> None:
    box = _box(parent, loop, JournalCheck(seals=2, rows=40, head="ab", adopted=30))
    assert "30 rows were written before this journal was sealed" in box.text()


def test_a_changed_journal_names_the_first_mismatches_and_counts_the_rest(parent: QWidget, loop: Any) -> None:
    found = tuple(Mismatch("edited", "calls", f"call_{n}", n) for n in range(SHOWN + 3))
    box = _box(parent, loop, JournalCheck(seals=9, rows=50, head="77", mismatches=found))
    assert box.icon() == QMessageBox.Icon.Warning and "does NOT verify" in box.text()
    shown = html.unescape(box.text())
    assert all(f"calls row 'call_{n}' does not match its seal {n}" in shown for n in range(SHOWN))
    assert f"call_{SHOWN}'" not in shown
    assert "… and 3 more: <code>belay verify</code> lists them all." in box.text()


def test_a_journal_that_cannot_be_read_says_why_and_what_to_do(parent: QWidget, loop: Any) -> None:
    error = BelayError(ErrorKind.NOT_FOUND, "the journal <journal.sqlite3> is missing",
                       "Start a session in the workspace first.")
    box = _box(parent, loop, error)
    assert box.icon() == QMessageBox.Icon.Critical and "could not be verified" in box.text()
    assert "the journal &lt;journal.sqlite3&gt; is missing" in box.text()
    assert "Start a session in the workspace first." in box.text()


def test_file_verify_shows_whether_the_journal_was_changed_outside_belay(qtbot: Any, loop: Any,
                                                                        workspace: Path) -> None:
    import sqlite3

    from PySide6.QtWidgets import QApplication

    from core import RunStatus

    def shown() -> QMessageBox | None:
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
        return boxes[-1] if boxes else None

    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("reader", "scripted")
        assert (await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})).status == \
            RunStatus.DONE
        verify = next(a for a in window.menuBar().actions()[0].menu().actions() if "Verify" in a.text())
        verify.trigger()
        await wait_until(lambda: shown() is not None, what="the verdict")
        box = shown()
        assert box is not None and "The journal verifies" in box.text() and "Head: " in box.text()
        box.close()
        await wait_until(lambda: shown() is None, what="the box closed")
        db = sqlite3.connect(console.state_dir / "journal.sqlite3")  # by hand, behind Belay's back
        with db:
            db.execute("UPDATE calls SET summary='something else'")
        db.close()
        verify.trigger()
        await wait_until(lambda: shown() is not None, what="the verdict")
        box = shown()
        assert box is not None and "does NOT verify" in box.text() and "calls row" in box.text()
        box.close()
    in_window(qtbot, loop, workspace, body)
