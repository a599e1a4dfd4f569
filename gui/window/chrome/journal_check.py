"""File → Verify the journal: what `belay verify` says, from the window (the journal read off the GUI thread, or
by the console on the host a window is attached to).

The answer is a message box that does not block the loop: it says whether every row is as Belay last
sealed it, names what is not, and shows the chain's head selectable, to be kept elsewhere (`belay verify
--expect` checks a later journal still holds it).
"""

from __future__ import annotations

import html
from collections.abc import Awaitable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from core import BelayError, JournalCheck

SHOWN = 5
"""Mismatches listed in the box; `belay verify` lists them all."""


async def check_journal(parent: QWidget, verified: Awaitable[JournalCheck]) -> QMessageBox:
    """Show the verdict (`console.verify()`: this machine's journal read off the loop, or the one on the host of a
    console attached over ssh) in a box on `parent` (returned, open)."""
    try:
        verdict = await verified
    except BelayError as e:
        return _show(parent, QMessageBox.Icon.Critical, "The journal could not be verified",
                     html.escape(e.info.message) + (f"<br><br>{html.escape(e.info.suggestion)}"
                                                    if e.info.suggestion else ""))
    if verdict.ok:
        return _show(parent, QMessageBox.Icon.Information, "The journal verifies",
                     f"All {verdict.rows:,} rows are as Belay last sealed them ({verdict.seals:,} seals in one "
                     f"chain): nothing was changed behind its back.{_adopted(verdict)}{_head(verdict)}")
    listed = "".join(f"<li>{html.escape(m.describe())}</li>" for m in verdict.mismatches[:SHOWN])
    more = len(verdict.mismatches) - SHOWN
    rest = f"<br>… and {more} more: <code>belay verify</code> lists them all." if more > 0 else ""
    return _show(parent, QMessageBox.Icon.Warning, "The journal does NOT verify",
                 f"Something in it was changed outside Belay:<ul>{listed}</ul>{rest}{_head(verdict)}")


def _adopted(verdict: JournalCheck) -> str:
    if not verdict.adopted:
        return ""
    return (f"<br><br>{verdict.adopted:,} rows were written before this journal was sealed: they are checked from "
            "when they were first sealed.")


def _head(verdict: JournalCheck) -> str:
    return (f"<br><br>Head: <code>{verdict.seals}:{verdict.head}</code><br>Keep it elsewhere: "
            "<code>belay verify --expect</code> checks that a later journal still holds it.")


def _show(parent: QWidget, icon: QMessageBox.Icon, title: str, text: str) -> QMessageBox:
    box = QMessageBox(icon, title, f"<b>{title}</b><br><br>{text}", QMessageBox.StandardButton.Close, parent)
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()  # not exec(): the loop (and the agents' calls) go on while it is read
    return box
