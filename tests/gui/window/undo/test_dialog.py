"""The undo dialog: one decision per conflicting file, and exactly those decisions emitted on Undo."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from core.undo.report import FilePreview, Resolution, UndoPreview
from gui.window.undo.dialog import UndoDialog, has_conflict_markers

MERGED = ("def greet(name):\n<<<<<<< now\n    return f'Hello, {name}!'\n||||||| after the call\n"
          "    return 'Hello, ' + name\n=======\n    return 'Hi ' + name\n>>>>>>> before the call\n")
RESOLVED = "def greet(name):\n    return f'Hi, {name}!'\n"
TEXT = FilePreview(path="src/greet.py", action="conflict", reason="it changed after this call and the edits overlap",
                   now="def greet(name):\n    return f'Hello, {name}!'\n",
                   after_call="def greet(name):\n    return 'Hello, ' + name\n",
                   before_call="def greet(name):\n    return 'Hi ' + name\n", merged=MERGED, now_digest="digest-text")
BINARY = FilePreview(path="assets/logo.png", action="conflict", binary=True, now_digest="digest-png",
                     reason="it changed after this call (not text: it cannot be merged)")
CLEAN = FilePreview(path="src/clean.py", action="merged", reason="changed since this call; the later edits are kept",
                    now="a\nb2\n", after_call="a\nb\n", before_call="a0\nb\n", merged="a0\nb2\n", now_digest="d")
IGNORED = FilePreview(path="build/out.bin", action="unrestorable")
PREVIEW = UndoPreview(op_id="op-1", call_id="call-7", files=(CLEAN, IGNORED, TEXT, BINARY))


@pytest.fixture
def dialog(qtbot: Any) -> Iterator[UndoDialog]:
    """The dialog over two conflicts, a cleanly merged and an unrestorable file, opened as the window opens it."""
    dialog = UndoDialog(PREVIEW)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitUntil(dialog.isActiveWindow)
    yield dialog
    dialog.close()


def _emitted(dialog: UndoDialog) -> list[dict[str, Resolution]]:
    got: list[dict[str, Resolution]] = []
    dialog.resolved.connect(got.append)
    return got


def test_it_opens_without_blocking_and_lists_conflicts_first_with_the_first_selected(dialog: UndoDialog) -> None:
    assert dialog.isVisible() and dialog.isModal()  # open() returned: window-modal, not exec()'d
    assert dialog.windowTitle() == "Undo call-7: 3 files changed since"
    rows = [dialog.files.item(r).text() for r in range(dialog.files.count())]
    assert [row.split("\n")[0].split()[-1] for row in rows] == [TEXT.path, BINARY.path, CLEAN.path, IGNORED.path]
    assert "needs a decision" in rows[0] and "later edits kept" in rows[2] and "cannot be restored" in rows[3]
    assert dialog.current_path() == TEXT.path and dialog.undo_button.isDefault()  # drawn as the primary button
    assert dialog.merged_edit.toPlainText() == MERGED and not dialog.merged_edit.isReadOnly()
    assert dialog.now_view.toPlainText() == TEXT.now and dialog.now_view.isReadOnly()
    assert dialog.before_view.toPlainText() == TEXT.before_call


def test_undo_is_disabled_until_every_conflict_has_a_choice(dialog: UndoDialog) -> None:
    assert not dialog.undo_button.isEnabled()
    dialog.choose(TEXT.path, "overwrite")
    assert not dialog.undo_button.isEnabled()
    dialog.choose(BINARY.path, "skip")
    assert dialog.undo_button.isEnabled()
    assert "overwrite" in dialog.files.item(0).text()
    dialog.choose(BINARY.path, None)
    assert not dialog.undo_button.isEnabled() and dialog.choices() == {TEXT.path: "overwrite"}


def test_merging_while_conflict_markers_remain_is_refused_with_a_message(qtbot: Any, dialog: UndoDialog) -> None:
    got = _emitted(dialog)
    dialog.choose(TEXT.path, "merge")
    dialog.choose(BINARY.path, "skip")
    assert not dialog.undo_button.isEnabled()  # every file decided, but the merge still has a conflict
    assert "merge: 1 conflict left" in dialog.files.item(0).text()
    dialog.files.setCurrentRow(1)
    qtbot.keyClick(dialog.files, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert got == [] and dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert "conflict markers" in dialog.message.text() and TEXT.path in dialog.message.text()
    assert dialog.current_path() == TEXT.path  # brought back to the file that needs editing


def test_edited_merge_and_skip_emit_exactly_those_resolutions(qtbot: Any, dialog: UndoDialog) -> None:
    got = _emitted(dialog)
    dialog.merged_edit.selectAll()
    dialog.merged_edit.insertPlainText(RESOLVED)
    qtbot.keyClicks(dialog.merged_edit, "# ok")  # typed by the person, at the end
    dialog.choose(TEXT.path, "merge")
    dialog.files.setCurrentRow(1)
    dialog.choose(BINARY.path, "skip")
    with qtbot.waitSignal(dialog.accepted, timeout=1000):
        dialog.undo_button.click()
    assert got == [{
        TEXT.path: Resolution(action="merge", content=RESOLVED + "# ok", seen_digest="digest-text"),
        BINARY.path: Resolution(action="skip", content=None, seen_digest="digest-png"),
    }]


def test_an_unedited_crlf_merge_is_passed_back_byte_for_byte(qtbot: Any) -> None:
    text = "a\r\nb\u00a0c\r\n"
    preview = UndoPreview(op_id="o", call_id="c", files=(TEXT.model_copy(update={"merged": text}),))
    dialog = UndoDialog(preview)
    qtbot.addWidget(dialog)
    got = _emitted(dialog)
    dialog.choose(TEXT.path, "merge")
    dialog.undo_button.click()
    assert got[0][TEXT.path].content == text
    dialog.merged_edit.appendPlainText("d")  # edited: the file's CRLF endings are kept
    assert dialog.resolutions()[TEXT.path].content == "a\r\nb\u00a0c\r\n\r\nd"


def test_a_binary_conflict_cannot_be_merged_and_says_why(dialog: UndoDialog) -> None:
    dialog.files.setCurrentRow(1)
    assert dialog.current_path() == BINARY.path
    assert not dialog.choice_buttons["merge"].isEnabled() and not dialog.merged_edit.isEnabled()
    assert "binary file: overwrite or skip" in dialog.merged_label.text()
    assert dialog.merged_edit.placeholderText() == "binary file: overwrite or skip"
    with pytest.raises(ValueError):
        dialog.choose(BINARY.path, "merge")
    assert "later edits are lost" in dialog.choice_buttons["overwrite"].text()


def test_files_that_need_no_decision_are_shown_for_information(dialog: UndoDialog) -> None:
    dialog.files.setCurrentRow(2)
    assert dialog.choice_box.isHidden()
    assert dialog.merged_edit.toPlainText() == CLEAN.merged and dialog.merged_edit.isReadOnly()
    dialog.files.setCurrentRow(3)
    assert dialog.merged_edit.parentWidget().isHidden() and "never stored" in dialog.detail.text()
    with pytest.raises(ValueError):
        dialog.choose(CLEAN.path, "skip")


def test_keyboard_chooses_moves_and_undoes(qtbot: Any, dialog: UndoDialog) -> None:
    got = _emitted(dialog)
    alt = Qt.KeyboardModifier.AltModifier
    qtbot.keyClick(dialog.files, Qt.Key.Key_O, alt)
    qtbot.keyClick(dialog.files, Qt.Key.Key_Down)
    assert dialog.current_path() == BINARY.path
    qtbot.keyClick(dialog.files, Qt.Key.Key_M, alt)  # merge is no choice for a binary file
    assert dialog.choices() == {TEXT.path: "overwrite"}
    qtbot.keyClick(dialog.files, Qt.Key.Key_S, alt)
    qtbot.keyClick(dialog.versions.tabBar(), Qt.Key.Key_Up)  # from the tabs, too
    assert dialog.current_path() == TEXT.path
    qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_M, alt)
    assert dialog.choices() == {TEXT.path: "merge", BINARY.path: "skip"}
    qtbot.keyClick(dialog.files, Qt.Key.Key_S, alt)
    qtbot.keyClick(dialog.files, Qt.Key.Key_Return)  # plain Enter does not undo
    assert got == [] and dialog.isVisible()
    qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert got == [{TEXT.path: Resolution(action="skip", seen_digest="digest-text"),
                    BINARY.path: Resolution(action="skip", seen_digest="digest-png")}]
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.isVisible()


@pytest.mark.parametrize("how", ["button", "escape"])
def test_cancel_emits_nothing(qtbot: Any, dialog: UndoDialog, how: str) -> None:
    got = _emitted(dialog)
    dialog.choose(TEXT.path, "overwrite")
    dialog.choose(BINARY.path, "skip")
    with qtbot.waitSignal(dialog.rejected, timeout=1000):
        if how == "escape":
            qtbot.keyClick(dialog.merged_edit, Qt.Key.Key_Escape)
        else:
            dialog.cancel_button.click()
    assert got == [] and not dialog.isVisible()


def test_without_conflicts_undo_is_enabled_and_redo_is_named(qtbot: Any) -> None:
    dialog = UndoDialog(UndoPreview(op_id="o", call_id="c-9", redo=True, files=(CLEAN,)))
    qtbot.addWidget(dialog)
    got = _emitted(dialog)
    assert dialog.windowTitle() == "Redo c-9: 1 file changed since" and dialog.undo_button.text() == "Redo"
    assert dialog.undo_button.isEnabled()
    dialog.undo_button.click()
    assert got == [{}]


def test_conflict_markers_are_recognised_only_at_the_start_of_a_line() -> None:
    assert has_conflict_markers("x\n<<<<<<< now\ny\n") and has_conflict_markers(">>>>>>>\r\n")
    assert not has_conflict_markers("a <<<<<<< b\n======= \n<<<<<<<< eight\n")


def test_the_three_versions_stand_side_by_side_in_a_wide_dialog_and_in_tabs_in_a_narrow_one(
        qtbot: Any, dialog: UndoDialog) -> None:
    dialog.resize(1900, 700)
    qtbot.waitUntil(lambda: dialog.versions.side_by_side)
    assert dialog.now_view.isVisible() and dialog.after_view.isVisible() and dialog.before_view.isVisible()
    assert dialog.now_view.toPlainText() == TEXT.now  # the same views, moved
    dialog.resize(700, 600)
    qtbot.waitUntil(lambda: not dialog.versions.side_by_side)
    assert dialog.versions.tabs.count() == 3 and not dialog.after_view.isVisible()
