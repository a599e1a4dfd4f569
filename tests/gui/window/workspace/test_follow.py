"""What the console announces, shown in the workspace window: a request that ends while it waits leaves the
approvals, the selected call's details follow its run, and a file changed outside Belay is said."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from core import Console, RunStatus
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window


def test_a_call_cancelled_while_it_waits_leaves_the_approvals_and_its_details_say_so(qtbot: Any, loop: Any,
                                                                                     workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("lead", "scripted")
        waiting = asyncio.ensure_future(console.call(agent, "Bash", {"command": "touch made.txt"}))
        await wait_until(lambda: window.approvals.current is not None, what="the request")
        call_id = window.approvals.current.call_id
        assert window.windowTitle().endswith("· 1 waiting")
        window.select_call(call_id)
        assert "blocked on user" in window.details.info.toPlainText()
        console.cancel(call_id)  # its agent gave up on it: there is nothing left to answer
        assert (await waiting).status == RunStatus.CANCELLED
        await wait_until(lambda: not window.approvals.queue(), what="the request to leave the approvals")
        assert "waiting" not in window.windowTitle()
        await wait_until(lambda: "cancelled" in window.details.info.toPlainText().splitlines()[1],
                         what="the details to follow the run")

    in_window(qtbot, loop, workspace, body)


def test_a_file_changed_outside_belay_is_said_in_the_status_bar(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        console.set_mode("bypass")
        (workspace / "README.md").write_text("# mine\n")  # the person's editor
        agent = await console.start_agent("agent", "scripted")
        await console.call(agent, "Bash", {"command": "echo more >> README.md"})
        await wait_until(lambda: "changed outside Belay" in window.statusBar().currentMessage(),
                         what="the outside change said")
        message = window.statusBar().currentMessage()
        assert message.startswith("1 file changed outside Belay (") and \
            message.endswith("); recorded as yours, never undone by Belay.")

    in_window(qtbot, loop, workspace, body)
