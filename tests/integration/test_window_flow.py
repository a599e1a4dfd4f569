"""End to end in the window: a scripted agent's edit is approved, denied, edited, undone.

The real console, pipeline, tools, journal and window run on one qasync
loop, offscreen; the test clicks what a person would click.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import Console, RunStatus, Script, Step, run_script
from gui.window.review.edit_dialog import EditDialog
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until

LEFT = Qt.MouseButton.LeftButton


def _edit_step(workspace: Path) -> Step:
    return Step(id="fix", tool="Edit", args={
        "file_path": str(workspace / "src" / "shop" / "cart.py"),
        "old_string": "item.unit_price for item", "new_string": "item.unit_price * item.quantity for item"})


async def _with_window(workspace: Path, qtbot: Any,
                       body: Callable[[Console, MainWindow], Awaitable[None]]) -> None:
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


def _start(console: Console, steps: list[Step]) -> asyncio.Task[Any]:
    return console.launch(run_script(console, Script(name="agent", steps=steps)), "agent")


def test_approve_in_the_panel_then_undo_from_the_details_pane(qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"
    original = cart.read_text()

    async def body(console: Console, window: MainWindow) -> None:
        task = _start(console, [_edit_step(workspace)])
        await wait_until(lambda: window.approvals.current is not None, what="an approval request")
        assert "Edit" in window.approvals.title.text() and "agent" in window.approvals.detail.text()
        await wait_until(lambda: "item.quantity" in window.approvals.diff.plain_text(), what="the diff")
        assert "⏸" in window.status_text() or "1 waiting" in window.status_text()
        assert cart.read_text() == original
        await wait_until(window.approvals.approve_button.isEnabled, what="Approve to arm (SEEN_S after it is drawn)")
        qtbot.mouseClick(window.approvals.approve_button, LEFT)
        _, agent = await task
        call_id = agent.outcomes["fix"].call_id
        assert "item.quantity" in cart.read_text()
        [record] = await console.history()
        assert record.call_id == call_id and record.status == RunStatus.DONE
        await wait_until(lambda: window.approvals.current is None, what="the panel to clear")
        window.select_call(call_id)
        await wait_until(lambda: "item.quantity" in window.details.diff.plain_text(), what="the call's diff")
        assert window.details.undo_button.isEnabled()
        qtbot.mouseClick(window.details.undo_button, LEFT)
        await wait_until(lambda: cart.read_text() == original, what="the undo")
        await wait_until(lambda: "undone" in window.model.index_of(f"r:{call_id}", 2).data(), what="undone row")
        assert not window.details.undo_button.isEnabled()

    loop.run_until_complete(_with_window(workspace, qtbot, body))


def test_deny_with_a_reason_leaves_the_file_and_tells_the_agent(qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"
    original = cart.read_text()

    async def body(console: Console, window: MainWindow) -> None:
        task = _start(console, [_edit_step(workspace)])
        await wait_until(lambda: window.approvals.current is not None, what="an approval request")
        await wait_until(window.approvals.deny_button.isEnabled, what="Deny to arm (once the diff is drawn)")
        qtbot.keyClicks(window.approvals.reason, "not this way")
        qtbot.mouseClick(window.approvals.deny_button, LEFT)
        _, agent = await task
        outcome = agent.outcomes["fix"]
        assert outcome.status == RunStatus.DENIED and "not this way" in outcome.text
        await wait_until(lambda: "denied" in window.model.index_of(f"r:{outcome.call_id}", 2).data(),
                         what="the denied row")

    loop.run_until_complete(_with_window(workspace, qtbot, body))
    assert cart.read_text() == original


def test_edit_then_approve_writes_what_the_person_typed(qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"

    async def body(console: Console, window: MainWindow) -> None:
        task = _start(console, [_edit_step(workspace)])
        await wait_until(lambda: window.approvals.current is not None, what="an approval request")
        await wait_until(window.approvals.edit_button.isEnabled, what="Edit to arm (SEEN_S after it is drawn)")
        qtbot.mouseClick(window.approvals.edit_button, LEFT)
        await wait_until(lambda: window.findChild(EditDialog) is not None, what="the edit dialog")
        dialog = window.findChild(EditDialog)
        assert "item.quantity" in dialog.editor.toPlainText()
        dialog.editor.setPlainText("# rewritten by the person\n")
        qtbot.mouseClick(dialog.ok_button, LEFT)
        _, agent = await task
        assert agent.outcomes["fix"].status == RunStatus.DONE and "edited" in agent.outcomes["fix"].text

    loop.run_until_complete(_with_window(workspace, qtbot, body))
    assert cart.read_text() == "# rewritten by the person\n"


async def _fix_edit_again_and_undo(console: Console, window: MainWindow, qtbot: Any,
                                   later_edit: Callable[[str], str]) -> str:
    """The agent fixes cart.py, the person edits it again, then presses Undo on the agent's call."""
    cart = console.workspace.root / "src" / "shop" / "cart.py"
    console.policy.add_rule("Edit", "allow", "session")
    _, agent = await _start(console, [_edit_step(console.workspace.root)])
    call_id = agent.outcomes["fix"].call_id
    cart.write_text(later_edit(cart.read_text()))
    window.select_call(call_id)
    await wait_until(lambda: window.details.undo_button.isEnabled(), what="undo to be offered")
    qtbot.mouseClick(window.details.undo_button, LEFT)
    return call_id


def test_an_undo_merges_a_later_edit_and_redo_puts_the_call_back(qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"
    original = cart.read_text()

    async def body(console: Console, window: MainWindow) -> None:
        call_id = await _fix_edit_again_and_undo(console, window, qtbot, lambda text: text + "# the person's own line\n")
        await wait_until(lambda: cart.read_text() == original + "# the person's own line\n", what="the merged undo")
        await wait_until(lambda: "Merged with later edits" in window.details.notice.text(), what="the report")
        await wait_until(lambda: window.details.redo_button.isVisibleTo(window), what="redo to be offered")
        assert "↶ undone" in window.model.index_of(f"r:{call_id}", 2).data()
        qtbot.mouseClick(window.details.redo_button, LEFT)
        await wait_until(lambda: "item.quantity" in cart.read_text(), what="the redo")
        assert "# the person's own line" in cart.read_text()

    loop.run_until_complete(_with_window(workspace, qtbot, body))


def test_overlapping_later_edits_open_the_undo_dialog_and_the_persons_choice_is_written(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"
    original = cart.read_text()

    async def body(console: Console, window: MainWindow) -> None:
        await _fix_edit_again_and_undo(console, window, qtbot,
                                       lambda text: text.replace("item.unit_price * item.quantity", "item.total()"))
        await wait_until(lambda: window.undo_dialog is not None and window.undo_dialog.isVisible(),
                         what="the undo dialog")
        dialog = window.undo_dialog
        assert dialog is not None and dialog.current_path() == "src/shop/cart.py"
        assert "item.total()" in cart.read_text()  # nothing written while the person decides
        dialog.choose("src/shop/cart.py", "overwrite")
        qtbot.mouseClick(dialog.undo_button, LEFT)
        await wait_until(lambda: cart.read_text() == original, what="the overwrite")

    loop.run_until_complete(_with_window(workspace, qtbot, body))


def test_one_file_of_a_shell_command_is_undone_from_its_link(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        console.set_mode("bypass")
        step = Step(id="sh", tool="Bash", args={"command": "echo one > one.txt && echo two > two.txt"})
        _, agent = await _start(console, [step])
        call_id = agent.outcomes["sh"].call_id
        window.select_call(call_id)
        await wait_until(lambda: "undo this file" in window.details.info.toHtml(), what="the file links")
        assert "Changed 2 files" in window.details.info.toPlainText()
        window.details.undo_requested.emit(call_id, ["two.txt"])  # what the link in the pane emits
        await wait_until(lambda: not (workspace / "two.txt").exists(), what="the one-file undo")
        assert (workspace / "one.txt").exists()
        await wait_until(lambda: "1 undone" in window.model.index_of(f"r:{call_id}", 4).data(),
                         what="the partly undone state in the timeline")
        window.tabs.setCurrentWidget(window.changes)
        rows = dict(window.changes.file_rows())
        assert set(rows) >= {"one.txt", "two.txt"}

    loop.run_until_complete(_with_window(workspace, qtbot, body))


def test_a_restarted_window_shows_and_undoes_an_earlier_call(qtbot: Any, loop: Any, workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"
    original = cart.read_text()
    call_ids: list[str] = []

    async def first(console: Console, window: MainWindow) -> None:
        console.policy.add_rule("Edit", "allow", "session")
        _, agent = await _start(console, [_edit_step(workspace)])
        call_ids.append(agent.outcomes["fix"].call_id)

    async def second(console: Console, window: MainWindow) -> None:
        [call_id] = call_ids
        assert window.model.index_of(f"r:{call_id}", 0).data() == "Edit"
        window.select_call(call_id)
        await wait_until(lambda: window.details.undo_button.isEnabled(), what="undo to be offered")
        qtbot.mouseClick(window.details.undo_button, LEFT)
        await wait_until(lambda: cart.read_text() == original, what="the undo")

    loop.run_until_complete(_with_window(workspace, qtbot, first))
    assert cart.read_text() != original
    loop.run_until_complete(_with_window(workspace, qtbot, second))


def test_a_rule_added_in_the_rules_tab_and_the_mode_decide_the_agents_next_calls(qtbot: Any, loop: Any,
                                                                                 workspace: Path) -> None:
    cart = workspace / "src" / "shop" / "cart.py"

    async def body(console: Console, window: MainWindow) -> None:
        window.tabs.setCurrentWidget(window.rules)
        qtbot.keyClicks(window.rules.rule, "Edit(./src/**)")
        qtbot.mouseClick(window.rules.add_button, LEFT)
        await wait_until(lambda: window.rules.model.rowCount() == 1, what="the rule in the table")
        _, agent = await _start(console, [_edit_step(workspace)])
        assert agent.outcomes["fix"].status == RunStatus.DONE and "item.quantity" in cart.read_text()
        assert window.approvals.current is None  # nobody was asked
        window.mode.setFocus()
        qtbot.keyClick(window.mode, Qt.Key.Key_Down)  # accept edits
        qtbot.keyClick(window.mode, Qt.Key.Key_Down)  # read-only (plan)
        await wait_until(lambda: console.mode == "plan", what="plan mode")
        notes = workspace / "notes.txt"
        step = Step(id="write", tool="Write", args={"file_path": str(notes), "content": "x\n"})
        _, agent = await _start(console, [step])
        assert agent.outcomes["write"].status == RunStatus.DENIED and not notes.exists()

    loop.run_until_complete(_with_window(workspace, qtbot, body))
