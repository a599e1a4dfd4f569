"""Tests for gui.window.review.edit_dialog: editing a pending write beside the file as it is, with the diff kept live."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from core import ApprovalRequested, ProposedFile
from core.changes.diffs import compute_diff
from gui.window.review.edit_dialog import EditDialog, old_line_for
from tests.conftest import wait_until
from tests.gui.window.review.test_view import thirty_changes

pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")


def _request(old: str, new: str, tool: str = "Write") -> ApprovalRequested:
    diff = compute_diff("src/app.py", old.encode(), new.encode())
    return ApprovalRequested(call_id="c1", agent_id="a1", tool=tool, summary="src/app.py", reason="asks", args={},
                             diffs=(diff,), proposed=(ProposedFile(path="src/app.py", content=new),))


def _dialog(qtbot: QtBot, request: ApprovalRequested) -> EditDialog:
    dialog = EditDialog(request)
    qtbot.addWidget(dialog)
    dialog.resize(1024, 640)
    dialog.show()
    return dialog


def test_the_file_as_it_is_stands_beside_the_proposal_with_the_changes_marked_and_stepped_through(
        qtbot: QtBot) -> None:
    old, new = thirty_changes()
    dialog = _dialog(qtbot, _request(old, new))
    assert dialog.before.toPlainText() == old and dialog.editor.toPlainText() == new
    assert dialog.position.text() == "30 changes · +30 −30"
    assert len(dialog.before.extraSelections()) == 30 and len(dialog.editor.extraSelections()) == 30
    for _ in range(4):
        dialog.next_change()
    assert dialog.position.text() == "change 4 of 30 · +30 −30"
    assert dialog.editor.first_visible_line() <= 214 <= dialog.editor.first_visible_line() + 20
    assert dialog.before.first_visible_line() <= 214 <= dialog.before.first_visible_line() + 20


def test_typing_updates_the_diff_off_the_gui_thread_and_approving_sends_the_edited_text(
        qtbot: QtBot, loop: Any) -> None:
    old, new = thirty_changes()
    dialog = _dialog(qtbot, _request(old, new))
    sent: list[tuple[str, dict[str, str]]] = []
    dialog.approved_with_edits.connect(lambda call_id, edits: sent.append((call_id, edits)))

    async def scenario() -> None:
        undone = new.replace("    value_15 = compute(x * 2, 15)  # changed\n", "    value_15 = compute(x, 15)\n")
        dialog.editor.setPlainText(undone)  # the person takes one change back
        await wait_until(lambda: dialog.position.text() == "29 changes · +29 −29", what="the diff to follow")
        assert len(dialog.editor.extraSelections()) == 29
        dialog.ok_button.click()
        assert sent == [("c1", {"src/app.py": undone})]

    loop.run_until_complete(asyncio.wait_for(scenario(), 20))


def test_a_notebook_or_a_cut_diff_is_edited_without_a_before_side(qtbot: QtBot) -> None:
    old, new = thirty_changes()
    dialog = _dialog(qtbot, _request(old, new, tool="NotebookEdit"))
    assert "cannot be shown" in dialog.before.toPlainText() and dialog.position.text() == ""
    assert dialog.editor.toPlainText() == new


def test_the_left_side_follows_the_shift_of_the_changes_above() -> None:
    old = "".join(f"{n}\n" for n in range(100))
    new = old.replace("10\n", "10\nextra\nextra\n").replace("50\n", "")
    hunks = compute_diff("f", old.encode(), new.encode()).hunks
    assert old_line_for(5, hunks) == 5
    assert old_line_for(40, hunks) == 38  # two lines were added above
    assert old_line_for(90, hunks) == 89  # and one removed since


def test_hunks_rejected_in_the_review_are_left_out_of_the_text_to_edit(qtbot: QtBot) -> None:
    old, new = thirty_changes()
    request = _request(old, new)
    dialog = EditDialog(request, rejected={"src/app.py": [0, 29]})
    qtbot.addWidget(dialog)
    lines_old, lines_new = old.splitlines(keepends=True), new.splitlines(keepends=True)
    expected = list(lines_new)
    for k in (0, 29):
        expected[15 + k * 66] = lines_old[15 + k * 66]
    assert dialog.editor.toPlainText() == "".join(expected)
    assert dialog.position.text() == "28 changes · +28 −28"
