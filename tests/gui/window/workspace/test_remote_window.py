"""The window on a console it attached to (core.remote.console): approve and undo there, a dropped link.

The console here is a real one on a temporary workspace, serving its socket as `belay serve` does; the window
attaches to it as it does over ssh (tests/integration/test_remote_ssh.py drives the same through a real sshd).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QMessageBox

from core import ApprovalRequested, Console, RemoteConsole, RunStatus
from core.remote.reach import Reach
from core.remote.server import AttachServer
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until


def _waiting(window: MainWindow) -> list[ApprovalRequested]:
    return window.approvals.queue()


async def _serving(ws: Path) -> Console:
    """The workspace's console, open to attaches as `belay serve` has it."""
    console = Console(ws)
    await console.open()
    assert console.endpoint is not None
    AttachServer(console).install(console.endpoint)
    return console


async def _window_attached(qtbot: Any, ws: Path, pause_s: float) -> tuple[RemoteConsole, MainWindow]:
    reach = Reach.of(str(ws))
    reach.pause_s = pause_s
    remote = RemoteConsole(reach)
    await remote.open()
    window = MainWindow(remote)
    qtbot.addWidget(window)
    window.start()
    window.show()
    return remote, window


def test_a_write_is_approved_and_undone_from_the_window_and_a_dropped_link_loses_nothing(
        qtbot: Any, loop: Any, tmp_path: Path, qtmodeltester: Any) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def scenario() -> None:
        console = await _serving(ws)
        console.register_approver("attached front ends")  # as `belay serve` does
        remote, window = await _window_attached(qtbot, ws, 0.05)
        links: list[str] = []
        window.bridge.link_changed.connect(lambda event: links.append(event.state))
        try:
            assert window.windowTitle() == f"Belay — {ws}" and window.store is None
            agent = await console.start_agent("writer", "scripted")
            first = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "a.txt"),
                                                                        "content": "hello\n"}))
            await wait_until(lambda: bool(_waiting(window)), what="the write waiting in the window")
            [request] = _waiting(window)
            assert request.tool == "Write" and request.diffs
            window.approvals.approve()
            assert (await first).status == RunStatus.DONE and (ws / "a.txt").read_text() == "hello\n"
            await wait_until(lambda: window.model.timeline.runs[request.call_id].status == RunStatus.DONE,
                             what="the row done")
            [record] = await console.history()
            assert record.decision is not None and record.decision.via == "window"

            window.select_call(request.call_id)
            await wait_until(lambda: bool(window.details.key), what="the call's details")
            window.undo(request.call_id)
            await wait_until(lambda: not (ws / "a.txt").exists(), what="undone on the console's host")
            await wait_until(lambda: bool(window.model.timeline.runs[request.call_id].undone_paths),
                             what="the row says it was undone")

            assert remote._link is not None
            await remote._link.close()  # the link drops...
            await wait_until(lambda: links[:1] == ["reattaching"], what="the link's banner")
            assert "attaching again" in window.link.label.text()
            second = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "b.txt"),
                                                                         "content": "two\n"}))
            await wait_until(lambda: bool(_waiting(window)) and links == ["reattaching", "attached"], timeout=15,
                             what="attached again, the call that waited meanwhile shown")
            assert not window.link.isVisible() and "Attached again" in window.statusBar().currentMessage()
            assert window.model.timeline is remote.timeline  # read anew from the console's journal
            [again] = _waiting(window)
            assert again.summary.endswith("b.txt") and again.call_id in window.model.timeline.runs
            qtmodeltester.check(window.model, force_py=True)
            window.approvals.approve()
            assert (await second).status == RunStatus.DONE and (ws / "b.txt").read_text() == "two\n"

            verify = next(a for a in window.menuBar().actions()[0].menu().actions() if "Verify" in a.text())
            verify.trigger()  # the console there verifies its journal

            def shown() -> QMessageBox | None:
                boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
                return boxes[-1] if boxes else None
            await wait_until(lambda: shown() is not None, what="the verdict")
            box = shown()
            assert box is not None and "The journal verifies" in box.text()
            box.close()
        finally:
            await window.tasks.aclose()
            await remote.close()
            await console.close()
            window.close()

    loop.run_until_complete(scenario())


def test_a_console_that_goes_away_is_given_up_on_and_can_be_attached_again(qtbot: Any, loop: Any,
                                                                           tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def scenario() -> None:
        console = await _serving(ws)
        remote, window = await _window_attached(qtbot, ws, 0.01)
        try:
            await console.close()
            await wait_until(lambda: window.link.again.isVisible(), timeout=20, what="given up on")
            assert "out of reach" in window.link.label.text()
            assert not window.approvals.isEnabled()  # nothing can be answered there meanwhile
            console = await _serving(ws)  # a console runs there again (`belay serve --ensure`)
            window.link.again.click()
            await wait_until(lambda: not window.link.isVisible() and remote.attached, timeout=20,
                             what="attached again")
            assert window.model.timeline is remote.timeline and window.approvals.isEnabled()
        finally:
            await window.tasks.aclose()
            await remote.close()
            await console.close()
            window.close()

    loop.run_until_complete(scenario())
