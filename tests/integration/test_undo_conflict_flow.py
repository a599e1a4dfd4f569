"""End to end in the window: an undo that needs a merge says so first, then is resolved region by region.

The real console, pipeline, journal, undo service (with `git merge-file`)
and window run on one qasync loop, offscreen; the test clicks what a person
would click.  It leaves a screenshot of the conflict dialog on its conflict
(in $BELAY_SCREENSHOTS when set, else the test's temporary directory).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import Console, Script, Step, run_script
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until

LEFT = Qt.MouseButton.LeftButton
CART = Path("src") / "shop" / "cart.py"
AGENTS_LINE = "        return sum(item.unit_price * item.quantity for item in self.items)\n"
PERSONS_LINE = "        return sum(item.total() for item in self.items)\n"
ORIGINAL_LINE = "        return sum(item.unit_price for item in self.items)\n"


async def _agent_fixes_cart(console: Console, cart: Path) -> str:
    console.policy.add_rule("Edit", "allow", "session")
    _, agent = await console.launch(run_script(console, Script(name="agent", steps=[Step(
        id="fix", tool="Edit", args={"file_path": str(cart), "old_string": "item.unit_price for item",
                                     "new_string": "item.unit_price * item.quantity for item"})])), "agent")
    assert AGENTS_LINE in cart.read_text()
    return str(agent.outcomes["fix"].call_id)


async def _in_window(workspace: Path, qtbot: Any, body: Any) -> None:
    console = Console(workspace)
    await console.open()
    window = MainWindow(console)
    qtbot.addWidget(window)
    window.start()
    window.show()
    try:
        await body(console, window)
    finally:
        await window.tasks.aclose()
        await console.close()
        window.close()


def test_the_pane_says_nothing_for_a_plain_undo_and_says_so_for_one_that_merges_later_edits(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / CART

    async def body(console: Console, window: MainWindow) -> None:
        call_id = await _agent_fixes_cart(console, cart)
        window.select_call(call_id)
        await wait_until(lambda: window.details.undo_button.isEnabled(), 10, "undo to be offered")
        await wait_until(lambda: "undo preview of" not in repr(window.tasks), 10, "the undo's preview")
        assert not window.details.undo_note.isVisibleTo(window)  # nothing changed since: nothing to say
        cart.write_text(cart.read_text() + "# the person's own line\n")
        window.details.show_key(None)  # another row, then this call again: the pane asks again
        window.details.show_key(f"r:{call_id}")
        await wait_until(lambda: window.details.undo_note.isVisibleTo(window), 10, "the merge note")
        assert window.details.undo_note.text() == (
            f"{CART.as_posix()} changed since this call: undoing it merges the later edits (no conflicts).")

    loop.run_until_complete(_in_window(workspace, qtbot, body))


def test_the_details_pane_says_a_merge_is_needed_and_the_dialog_resolves_it_on_its_conflict(
        qtbot: Any, loop: Any, workspace: Path, tmp_path: Path) -> None:
    cart = workspace / CART
    original = cart.read_text()
    conflict_line = original.splitlines(keepends=True).index(ORIGINAL_LINE) + 1  # line 25 of cart.py

    async def body(console: Console, window: MainWindow) -> None:
        call_id = await _agent_fixes_cart(console, cart)
        cart.write_text(cart.read_text().replace(AGENTS_LINE, PERSONS_LINE))  # the person's later edit
        window.select_call(call_id)
        await wait_until(lambda: window.details.undo_note.isVisibleTo(window), 10, "the undo's merge note")
        assert window.details.undo_note.text() == (
            f"{CART.as_posix()} changed since this call: undoing it needs a merge (1 conflicting region).")
        assert PERSONS_LINE in cart.read_text()  # saying so wrote nothing

        qtbot.mouseClick(window.details.undo_button, LEFT)
        await wait_until(lambda: window.undo_dialog is not None and window.undo_dialog.isVisible(), 10,
                         "the undo dialog")
        dialog = window.undo_dialog
        assert dialog is not None
        dialog.resize(1024, 640)
        await wait_until(lambda: dialog.merged_edit.first_visible_line() > 1, 5, "the merged text scrolled")
        assert dialog.detail.text() == window.details.undo_note.text()  # the dialog says it again
        [region] = dialog.regions()
        assert region.start + 1 == conflict_line  # the <<<<<<< takes the conflicting line's place
        assert dialog.merged_edit.textCursor().blockNumber() == region.start
        assert dialog.merged_edit.viewport().rect().contains(dialog.merged_edit.cursorRect())  # on screen
        assert region.now == PERSONS_LINE and region.undo == ORIGINAL_LINE and region.base == AGENTS_LINE
        assert dialog.region_label.text() == f"Conflict 1 of 1 · lines {conflict_line}–{region.end}"
        shot = Path(os.environ.get("BELAY_SCREENSHOTS", tmp_path)) / "undo-conflict-in-window.png"
        assert dialog.grab().save(str(shot))

        qtbot.mouseClick(dialog.take_buttons["both"], LEFT)
        assert dialog.regions() == [] and dialog.undo_button.isEnabled()
        qtbot.mouseClick(dialog.undo_button, LEFT)
        await wait_until(lambda: cart.read_text() == original.replace(ORIGINAL_LINE, PERSONS_LINE + ORIGINAL_LINE),
                         10, "the merged undo written")
        await wait_until(lambda: "undone" in window.details.notice.text().lower() or
                         "merged" in window.details.notice.text().lower(), 10, "the report")
        assert not window.details.undo_note.isVisible()

    loop.run_until_complete(_in_window(workspace, qtbot, body))
