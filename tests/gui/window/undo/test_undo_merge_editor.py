"""The undo dialog as a merge editor: opened on the first conflict, numbered, coloured, settled region by region.

The merged text comes from the real three-way merge (`git merge-file`), as
the undo service makes it; the dialog is opened as the window opens it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core.undo.merge import merge3
from core.undo.report import FilePreview, Resolution, UndoPreview
from gui.window.undo.dialog import UndoDialog

PATH = "README.md"
AFTER = "".join(f"Line {n} of the readme.\n" for n in range(1, 41))  # what the call left
NOW = AFTER.replace("Line 20 ", "Line 20 edited by the person ").replace("Line 33 ", "Line 33, the person's, ")
BEFORE = AFTER.replace("Line 20 ", "Line 20 as before the call ").replace("Line 33 ", "Line 33 before ")


def _merged() -> str:
    result = merge3(AFTER.encode(), NOW.encode(), BEFORE.encode())
    assert result is not None and result.conflicts == 2
    return result.content.decode()


def _preview(merged: str) -> UndoPreview:
    conflict = FilePreview(path=PATH, action="conflict", reason="it changed after this call and the edits overlap",
                           now=NOW, after_call=AFTER, before_call=BEFORE, merged=merged, now_digest="digest-now")
    return UndoPreview(op_id="op-3", call_id="call-3", files=(conflict,))


@pytest.fixture
def dialog(qtbot: Any) -> Iterator[UndoDialog]:
    dialog = UndoDialog(_preview(_merged()))
    qtbot.addWidget(dialog)
    dialog.resize(1024, 640)
    dialog.open()
    qtbot.waitUntil(dialog.isActiveWindow)
    yield dialog
    dialog.close()


def _line(dialog: UndoDialog) -> int:
    """The 1-based line the cursor is on."""
    return dialog.merged_edit.textCursor().blockNumber() + 1


def test_it_opens_on_the_first_conflict_numbered_highlighted_and_says_a_merge_is_needed(
        dialog: UndoDialog, tmp_path: Path) -> None:
    first, second = dialog.regions()
    assert first.start == 19 and "edited by the person" in first.now and "as before the call" in first.undo
    assert _line(dialog) == 20 and dialog.merged_edit.hasFocus()  # the cursor on the <<<<<<< of line 20
    assert 1 < dialog.merged_edit.first_visible_line() <= 20  # scrolled there, not left at line 1
    assert dialog.now_view.firstVisibleBlock().blockNumber() + 1 == 17  # the versions show it too
    assert dialog.region_label.text() == "Conflict 1 of 2 · lines 20–26"
    assert dialog.merged_edit.gutter_width() > 0 and dialog.merged_edit.viewportMargins().left() > 0  # numbered
    marked = {s.cursor.blockNumber() + 1 for s in dialog.merged_edit.extraSelections()}
    assert marked == set(range(20, 27)) | set(range(second.start + 1, second.end + 1))
    colours = {s.cursor.blockNumber() + 1: s.format.background().color().name()
               for s in dialog.merged_edit.extraSelections()}
    assert colours[21] != colours[25] != colours[23]  # now, the undo and what the call left told apart
    assert colours[21] != colours[second.start + 2]  # the cursor's region darker than the other
    assert dialog.detail.text() == f"{PATH} changed since this call: undoing it needs a merge (2 conflicting regions)."
    assert not dialog.undo_button.isEnabled()
    shot = Path(os.environ.get("BELAY_SCREENSHOTS", tmp_path)) / "undo-conflict-dialog.png"
    assert dialog.grab().save(str(shot)) and shot.stat().st_size > 0


def test_each_region_is_settled_by_a_take_and_then_the_undo_writes_that_text(
        qtbot: Any, dialog: UndoDialog) -> None:
    got: list[dict[str, Resolution]] = []
    dialog.resolved.connect(got.append)
    qtbot.mouseClick(dialog.take_buttons["undo"], Qt.MouseButton.LeftButton)  # the first region: the undo
    assert dialog.choices() == {PATH: "merge"} and len(dialog.regions()) == 1
    assert dialog.region_label.text() == "Conflict 1 of 1 · lines 33–39"  # line 39 until the first became 1 line
    assert _line(dialog) == 33  # moved on to the next conflict
    assert "merge: 1 conflict left" in dialog.files.item(0).text() and not dialog.undo_button.isEnabled()
    qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_N, Qt.KeyboardModifier.AltModifier)  # the second: now
    assert dialog.regions() == [] and dialog.undo_button.isEnabled()
    assert dialog.region_label.text() == "No conflicts left: Undo writes the merged text"
    with qtbot.waitSignal(dialog.accepted, timeout=1000):
        qtbot.mouseClick(dialog.undo_button, Qt.MouseButton.LeftButton)
    expected = AFTER.replace("Line 20 ", "Line 20 as before the call ").replace("Line 33 ", "Line 33, the person's, ")
    assert got == [{PATH: Resolution(action="merge", content=expected, seen_digest="digest-now")}]


def test_next_and_previous_keys_move_between_regions_and_take_both_keeps_both(
        qtbot: Any, dialog: UndoDialog) -> None:
    first, second = dialog.regions()
    qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_F8)
    assert _line(dialog) == second.start + 1 and dialog.region_label.text().startswith("Conflict 2 of 2")
    qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_F8)  # wraps round to the first
    assert _line(dialog) == first.start + 1
    qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert _line(dialog) == second.start + 1
    qtbot.mouseClick(dialog.take_buttons["both"], Qt.MouseButton.LeftButton)
    assert len(dialog.regions()) == 1
    assert "Line 33, the person's, of the readme.\nLine 33 before of the readme.\n" in dialog.merged_edit.toPlainText()
    assert _line(dialog) == first.start + 1  # the only conflict left


def test_a_hand_edit_is_parsed_again_and_can_settle_a_region(qtbot: Any, dialog: UndoDialog) -> None:
    first, second = dialog.regions()
    cursor = dialog.merged_edit.textCursor()
    cursor.movePosition(cursor.MoveOperation.Down, cursor.MoveMode.KeepAnchor, first.lines - 1)
    cursor.movePosition(cursor.MoveOperation.EndOfBlock, cursor.MoveMode.KeepAnchor)
    dialog.merged_edit.setTextCursor(cursor)  # the whole first region, markers and all, selected
    qtbot.keyClicks(dialog.merged_edit, "Line 20 rewritten by hand.")
    qtbot.waitUntil(lambda: dialog.region_label.text().startswith("1 conflict left"), timeout=2000)
    assert [r.start for r in dialog.regions()] == [second.start - first.lines + 1]
    assert dialog.merged_edit.toPlainText().splitlines()[19] == "Line 20 rewritten by hand."
    assert "merge" not in dialog.choices()  # typing is no decision: the person still chooses merge
    dialog.choose(PATH, "merge")
    assert "1 conflict left" in dialog.files.item(0).text() and not dialog.undo_button.isEnabled()


def test_a_region_at_the_very_end_without_a_final_newline_is_taken_whole(qtbot: Any) -> None:
    merged = "a\n<<<<<<< now\nmine\n=======\nyours\n>>>>>>> before the call"
    dialog = UndoDialog(_preview(merged))
    qtbot.addWidget(dialog)
    assert dialog.region_label.text() == "Conflict 1 of 1 · lines 2–6"
    dialog.take("undo")
    assert dialog.merged_edit.toPlainText() == "a\nyours" and dialog.resolutions()[PATH].content == "a\nyours"


def test_each_conflicting_file_opens_on_its_own_first_conflict(qtbot: Any) -> None:
    other = FilePreview(path="docs/other.md", action="conflict", now="x\n", after_call="y\n", before_call="z\n",
                        merged="<<<<<<< now\nx\n=======\nz\n>>>>>>> before the call\n", now_digest="d2")
    dialog = UndoDialog(_preview(_merged()).model_copy(update={"files": (*_preview(_merged()).files, other)}))
    qtbot.addWidget(dialog)
    dialog.take("now")  # README.md's first region
    dialog.files.setCurrentRow(1)
    assert dialog.current_path() == "docs/other.md" and _line(dialog) == 1
    assert dialog.region_label.text() == "Conflict 1 of 1 · lines 1–5"
    dialog.files.setCurrentRow(0)  # back: README.md kept its edit and shows its one region left
    assert len(dialog.regions()) == 1 and dialog.region_label.text().startswith("Conflict 1 of 1")
    assert "merge: 1 conflict left" in dialog.files.item(0).text()


def test_taking_a_side_of_a_crlf_file_keeps_its_line_endings(qtbot: Any) -> None:
    dialog = UndoDialog(_preview("a\r\n<<<<<<< now\r\nmine\r\n=======\r\nyours\r\n>>>>>>> before the call\r\nz\r\n"))
    qtbot.addWidget(dialog)
    dialog.take("both")
    assert dialog.resolutions()[PATH].content == "a\r\nmine\r\nyours\r\nz\r\n"
