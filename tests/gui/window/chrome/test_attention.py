"""Attention: the title count, and desktop notifications through a real notification server.

The notification tests start Xvfb, a private D-Bus session bus and dunst (Debian's packages xvfb, dbus,
dunst; `make system-deps` installs them) and point the window's notifier at that bus.  dunst opens a
notification's actions through its context menu, which runs the `dmenu` program its config names with
the actions on stdin; here that program is a script that writes down the menu it was shown (what the
server received: summary and buttons) and picks the line the test chose.  `dunstctl context` opens
that menu, so the server itself invokes the action, exactly as a click on it would.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon, QWidget

from core import Console, Hub, RunKey, RunStatus
from gui.window.approvals.arming import SEEN_S
from gui.window.chrome.attention import badge_icon, notice_for, titled
from gui.window.hub.window import HubWindow
from gui.window.kit.remembered import window_settings
from gui.window.workspace.window import MainWindow
from tests.conftest import ROOT, wait_until
from tests.desktop import headless_desktop, missing_tools
from tests.gui.window.workspace.test_window import in_window


@dataclass
class Desktop:
    """A headless desktop with a notification server: its bus address and how to drive dunst."""

    bus: str
    folder: Path
    display: str

    def dunstctl(self, *args: str) -> str:
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": self.bus}
        return subprocess.run(["dunstctl", *args], env=env, capture_output=True, text=True, timeout=10,
                              check=True).stdout

    def displayed(self) -> int:
        line = next(x for x in self.dunstctl("count", "displayed").splitlines() if x.strip())
        return int(line.split(":")[-1])

    def history(self) -> list[dict[str, Any]]:
        """The notifications dunst has closed, newest first: each field's value."""
        entries = json.loads(self.dunstctl("history"))["data"][0]
        return [{name: field["data"] for name, field in entry.items()} for entry in entries]

    async def choose(self, pattern: str) -> str:
        """Open the newest notification's action menu and pick the line matching `pattern`; the menu shown."""
        (self.folder / "choice").write_text(pattern)
        (self.folder / "menu.txt").unlink(missing_ok=True)
        await asyncio.to_thread(self.dunstctl, "context")
        await wait_until(lambda: (self.folder / "menu.txt").exists(), what="dunst's action menu")
        return (self.folder / "menu.txt").read_text()


@pytest.fixture(scope="module")
def desktop() -> Iterator[Desktop]:
    missing = missing_tools("dunst", "dunstctl")
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: apt-get install xvfb dbus dunst; make system-deps)")
    folder = Path(tempfile.mkdtemp(prefix="belay-desktop-"))
    picker = folder / "pick.sh"
    picker.write_text(f'#!/bin/sh\ncat > "{folder}/menu.tmp"\nmv "{folder}/menu.tmp" "{folder}/menu.txt"\n'
                      f'grep -i -- "$(cat "{folder}/choice")" "{folder}/menu.txt" | head -n 1\n')
    picker.chmod(0o755)
    (folder / "dunstrc").write_text(f"[global]\n    dmenu = {picker}\n")
    try:
        with headless_desktop() as headless:
            headless.start("dunst", "-config", str(folder / "dunstrc"))
            found = Desktop(headless.bus, folder, headless.display)
            for _ in range(100):
                try:
                    found.displayed()
                    break
                except subprocess.CalledProcessError:
                    subprocess.run(["sleep", "0.05"], check=True)
            yield found
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def look_elsewhere(qtbot: Any, window: MainWindow) -> QWidget:
    """Another application's window takes the focus: the person is not looking at Belay."""
    other = QWidget()
    other.setWindowTitle("another application")
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    await wait_until(lambda: other.isActiveWindow() and not window.isActiveWindow(), what="the other window's focus")
    return other


def _write(console: Console, agent: Any, workspace: Path, name: str) -> asyncio.Future[Any]:
    return asyncio.ensure_future(console.call(agent, "Write", {"file_path": f"{workspace}/{name}", "content": "hi\n"}))


def test_the_title_counts_the_waiting_requests_and_the_badge_shows_it(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        base = window.windowTitle()
        agent = await console.start_agent("lead", "scripted")
        first, second = _write(console, agent, workspace, "a.txt"), _write(console, agent, workspace, "b.txt")
        await wait_until(lambda: len(window.approvals.queue()) == 2, what="two requests")
        assert window.windowTitle() == f"{base} · 2 waiting"
        assert window.attention.tooltip() == "Belay — 2 waiting"
        console.deny(window.approvals.queue()[0].call_id)
        await wait_until(lambda: window.windowTitle() == f"{base} · 1 waiting", what="one left")
        console.deny(window.approvals.queue()[0].call_id)
        await asyncio.gather(first, second)
        await wait_until(lambda: window.windowTitle() == base, what="the title without a count")

    in_window(qtbot, loop, workspace, body)


def test_the_badge_differs_with_a_count_and_the_title_form_matches_the_hub() -> None:
    assert titled("Belay — ws", 0) == "Belay — ws"
    assert titled("Belay — ws", 3) == "Belay — ws · 3 waiting"
    plain, counted = badge_icon(0).pixmap(64).toImage(), badge_icon(3).pixmap(64).toImage()
    assert plain != counted  # the red badge is drawn


def test_a_request_reaches_the_notification_server_and_its_approve_button_answers_it(
        qtbot: Any, loop: Any, workspace: Path, desktop: Desktop) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.attention.use_bus(desktop.bus)
        await look_elsewhere(qtbot, window)
        await console.add_rule("Read", "ask", "session")  # a call that only reads, and still asks
        agent = await console.start_agent("lead", "scripted")
        call = asyncio.ensure_future(console.call(agent, "Read", {"file_path": f"{workspace}/README.md"}))
        await wait_until(lambda: window.attention.notifier is not None and window.attention.notifier.shown(),
                         what="the notification")
        assert window.attention.notifier.server == "dunst"
        assert desktop.displayed() == 1
        await asyncio.sleep(SEEN_S)  # approving from the bubble needs it read first (on screen for SEEN_S)
        menu = await desktop.choose("#Approve")
        assert "#Approve (lead wants Read)" in menu and "#Deny (lead wants Read)" in menu, menu
        outcome = await asyncio.wait_for(call, 10)
        assert outcome.status is RunStatus.DONE, outcome
        assert "Approved Read" in window.statusBar().currentMessage()
        assert not window.approvals.queue()
        [journaled] = [c for c in await console.history() if c.call_id == outcome.call_id]
        assert journaled.decision is not None and (journaled.decision.by, journaled.decision.via) == \
            ("person", "notification")  # who answered, and where
        await wait_until(lambda: desktop.displayed() == 0, what="the notification to go")
        shown = desktop.history()[0]  # what the server showed, as it kept it
        assert (shown["appname"], shown["summary"]) == ("Belay", "lead wants Read")
        assert "README.md" in shown["body"] and "low impact: only reads" in shown["body"], shown
        await window.attention.aclose()

    in_window(qtbot, loop, workspace, body)


def test_deny_from_the_notification_denies_and_answering_in_the_window_withdraws_it(
        qtbot: Any, loop: Any, workspace: Path, desktop: Desktop) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.attention.use_bus(desktop.bus)
        await look_elsewhere(qtbot, window)
        agent = await console.start_agent("lead", "scripted")
        denied = _write(console, agent, workspace, "denied.txt")
        await wait_until(lambda: window.attention.notifier is not None and window.attention.notifier.shown(),
                         what="the first notification")
        menu = await desktop.choose("#Deny")
        assert "#Approve" not in menu, menu  # a write is looked at in the window before it is approved
        await asyncio.wait_for(denied, 10)
        assert not (workspace / "denied.txt").exists()
        assert "Denied Write" in window.statusBar().currentMessage()
        await wait_until(lambda: desktop.displayed() == 0, what="the first notification to go")
        answered = _write(console, agent, workspace, "in-window.txt")
        await wait_until(lambda: desktop.displayed() == 1, what="the second notification")
        console.approve(window.approvals.queue()[0].call_id)  # answered in the window instead
        await asyncio.wait_for(answered, 10)
        await wait_until(lambda: desktop.displayed() == 0, what="the answered request's notification to be withdrawn")
        await window.attention.aclose()

    in_window(qtbot, loop, workspace, body)


def test_a_request_answered_while_its_notification_is_being_put_up_leaves_none(
        qtbot: Any, loop: Any, workspace: Path, desktop: Desktop) -> None:
    """Answered in the window the moment it arrives, before the server has said which notification it put up:
    the notification still goes (it stayed up for good before, and the next tests saw it)."""
    async def body(console: Console, window: MainWindow) -> None:
        window.attention.use_bus(desktop.bus)
        await window.attention.start()
        await look_elsewhere(qtbot, window)
        agent = await console.start_agent("lead", "scripted")
        # answered as soon as the window has it (after the window's own handler, which sends the notification)
        window.bridge.approval_requested.connect(lambda request: console.approve(request.call_id))
        answered = _write(console, agent, workspace, "quick.txt")
        await asyncio.wait_for(answered, 10)
        await wait_until(lambda: window.attention.notified, what="the notification to be sent")
        await wait_until(lambda: desktop.displayed() == 0 and not window.attention.notifier.shown(),
                         what="the answered request's notification to go")
        await asyncio.sleep(0.3)  # and it stays gone
        assert desktop.displayed() == 0
        await window.attention.aclose()

    in_window(qtbot, loop, workspace, body)


def test_one_bubble_per_agent_counts_its_requests_and_is_replaced_not_stacked(
        qtbot: Any, loop: Any, workspace: Path, desktop: Desktop) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        attention = window.attention
        attention.use_bus(desktop.bus)
        await look_elsewhere(qtbot, window)
        lead = await console.start_agent("lead", "scripted")
        docs = await console.start_agent("docs", "scripted")
        calls = [_write(console, lead, workspace, f"{n}.txt") for n in range(3)]
        await wait_until(lambda: len(window.approvals.queue()) == 3, what="three requests from lead")
        await wait_until(lambda: attention.notifier is not None and attention.notifier.current(lead.agent_id)
                         is not None and "3 requests" in attention.notifier.current(lead.agent_id).summary,
                         what="lead's bubble to count three")
        assert desktop.displayed() == 1  # replaced twice, never stacked
        shown = attention.notifier.current(lead.agent_id)
        assert shown.summary == "lead: 3 requests waiting" and shown.body.count("Write") == 3
        assert [key for key, _ in shown.actions] == ["default", "show"]  # several are answered in the window
        calls.append(_write(console, docs, workspace, "docs.txt"))
        await wait_until(lambda: desktop.displayed() == 2, what="docs' own bubble")
        for request in [r for r in window.approvals.queue() if r.agent_id == lead.agent_id][:2]:
            console.deny(request.call_id)
        await wait_until(lambda: attention.notifier.current(lead.agent_id) is not None
                         and attention.notifier.current(lead.agent_id).summary == "lead wants Write",
                         what="lead's bubble to name its one request left")
        assert desktop.displayed() == 2
        for request in window.approvals.queue():
            console.deny(request.call_id)
        await asyncio.gather(*calls)
        await wait_until(lambda: desktop.displayed() == 0, what="every bubble to go")
        summaries = [n.summary for n in attention.notified]
        assert summaries.count("docs wants Write") == 1  # lead's bubbles never touched docs' one
        await attention.aclose()

    in_window(qtbot, loop, workspace, body)


def test_quiet_mode_sends_nothing_but_still_counts(qtbot: Any, loop: Any, workspace: Path, desktop: Desktop) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.attention.use_bus(desktop.bus)
        window.attention.set_quiet(True)
        await look_elsewhere(qtbot, window)
        agent = await console.start_agent("lead", "scripted")
        call = _write(console, agent, workspace, "quiet.txt")
        await wait_until(lambda: window.approvals.queue(), what="the request")
        await asyncio.sleep(0.3)
        assert window.attention.notified == [] and desktop.displayed() == 0
        assert window.windowTitle().endswith("· 1 waiting")
        console.deny(window.approvals.queue()[0].call_id)
        await call

    in_window(qtbot, loop, workspace, body)


def test_nothing_is_sent_while_the_person_looks_at_the_window(qtbot: Any, loop: Any, workspace: Path,
                                                              desktop: Desktop) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.attention.use_bus(desktop.bus)
        window.activateWindow()
        await wait_until(window.isActiveWindow, what="the window's focus")
        agent = await console.start_agent("lead", "scripted")
        call = _write(console, agent, workspace, "seen.txt")
        await wait_until(lambda: window.approvals.queue(), what="the request")
        await asyncio.sleep(0.3)
        assert window.attention.notified == [] and desktop.displayed() == 0
        console.deny(window.approvals.queue()[0].call_id)
        await call

    in_window(qtbot, loop, workspace, body)


def test_a_risky_call_offers_no_approve_button(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("lead", "scripted")
        call = asyncio.ensure_future(console.call(agent, "Bash", {"command": "rm -rf build"}))
        await wait_until(lambda: window.approvals.queue(), what="the request")
        request = window.approvals.queue()[0]
        notice = notice_for(request, "lead")
        assert request.impact.level != "low"
        assert [label for _, label in notice.actions] == ["Show", "Deny", "Open in Belay"]
        assert request.impact.reasons[0] in notice.body
        console.deny(request.call_id)
        await call

    in_window(qtbot, loop, workspace, body)


def _question(window: QWidget) -> list[QMessageBox]:
    return [box for box in window.findChildren(QMessageBox) if box.isVisible()]


def test_closing_the_hub_with_an_agent_attached_asks_once_then_keeps_belay_in_the_tray(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        hub = Hub()
        assert await hub.start()
        window = HubWindow(hub)
        qtbot.addWidget(window)
        window.show()
        closed: list[bool] = []
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.lastWindowClosed.connect(lambda: closed.append(True))
        try:
            page = await window.open_workspace(workspace)
            assert page is not None
            window.attention.tray = QSystemTrayIcon(window)  # the offscreen platform has no tray of its own
            window.close()
            assert not window.isVisible() and not _question(window)  # nothing attached: it just closes
            closed.clear()
            window.show()
            await page.console.start_agent("lead", "scripted")
            assert window.agents_attached() == 1
            window.close()
            await wait_until(lambda: _question(window), what="the question")
            box = _question(window)[0]
            assert "1 agent(s) are still attached" in box.text()
            keep = next(b for b in box.buttons() if b.text() == "Keep in tray")
            qtbot.mouseClick(keep, Qt.MouseButton.LeftButton)
            await wait_until(lambda: not window.isVisible(), what="the window to go to the tray")
            assert not closed and window_settings().value("attention/close") == "tray"
            window.show()
            window.close()  # asked once: the answer stands
            assert not window.isVisible() and not _question(window) and not closed
            window.attention.quit_requested.emit()  # the tray menu's Quit
            assert closed
        finally:
            await window.aclose()

    loop.run_until_complete(scenario())


def test_an_approve_from_a_notification_for_a_write_only_shows_it_and_a_late_answer_is_said(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("lead", "scripted")
        first, second = _write(console, agent, workspace, "a.txt"), _write(console, agent, workspace, "b.txt")
        await wait_until(lambda: len(window.approvals.queue()) == 2, what="two requests")
        later = window.approvals.queue()[1]
        assert window.approvals.current.call_id != later.call_id
        window.attention.action_requested.emit(later.call_id, "approve")  # a server sent an action never offered
        assert len(window.approvals.queue()) == 2 and not (workspace / "b.txt").exists()
        assert window.approvals.current.call_id == later.call_id  # shown instead, in the panel and the timeline
        assert window.model.key_of(window.tree.currentIndex()) == RunKey(later.call_id)
        console.deny(later.call_id)
        await wait_until(lambda: len(window.approvals.queue()) == 1, what="the denial")
        window.attention.action_requested.emit(later.call_id, "deny")
        assert window.statusBar().currentMessage() == "That request was answered already."
        console.deny(window.approvals.queue()[0].call_id)
        await asyncio.gather(first, second)

    in_window(qtbot, loop, workspace, body)


def test_without_a_notification_server_the_notice_goes_to_the_tray(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.attention.use_bus(None)
        await look_elsewhere(qtbot, window)
        agent = await console.start_agent("lead", "scripted")
        call = _write(console, agent, workspace, "tray.txt")
        await wait_until(lambda: window.attention.notified, what="the notice")
        assert [n.summary for n in window.attention.notified] == ["lead wants Write"]
        assert window.attention.notifier is None
        console.deny(window.approvals.queue()[0].call_id)
        await call

    in_window(qtbot, loop, workspace, body)


TRAY_CHILD = """
import json
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMainWindow, QSystemTrayIcon
from gui.window.chrome.attention import Attention
from gui.window.runtime.tasks import TaskSet

app = QApplication([])
window = QMainWindow()
attention = Attention(window, TaskSet(), bus="")
seen = {"available": QSystemTrayIcon.isSystemTrayAvailable(), "shown": attention.show_tray()}
for waiting in (0, 3):
    attention.set_waiting(waiting)
    QTest.qWait(300)
    place = attention.tray.geometry()
    seen[str(waiting)] = {"size": [place.width(), place.height()], "tooltip": attention.tray.toolTip(),
                          "visible": attention.tray.isVisible()}
print(json.dumps(seen))
"""


def test_the_tray_icon_sits_in_a_real_tray_and_its_tooltip_counts(desktop: Desktop) -> None:
    """A child on the X server (the xcb platform), next to wmdocker, an XEmbed system tray: Qt finds the tray
    (the _NET_SYSTEM_TRAY selection) and embeds the icon there."""
    if shutil.which("wmdocker") is None:
        pytest.skip("needs wmdocker, an XEmbed system tray (Debian: apt-get install wmdocker; make system-deps)")
    env = {**os.environ, "DISPLAY": desktop.display, "DBUS_SESSION_BUS_ADDRESS": desktop.bus,
           "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    tray = subprocess.Popen(["wmdocker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        child = subprocess.run([sys.executable, "-c", TRAY_CHILD], env=env, capture_output=True, text=True,
                               timeout=60, cwd=ROOT)
    finally:
        tray.terminate()
        tray.wait(timeout=10)
    if "Could not load the Qt platform plugin" in child.stderr:
        pytest.skip(f"Qt's xcb platform needs libraries this machine lacks (make system-deps): {child.stderr[:300]}")
    assert child.returncode == 0, child.stderr
    seen = json.loads(child.stdout)
    assert seen["available"] and seen["shown"], seen
    assert seen["0"]["size"][0] > 0 and seen["0"]["visible"], seen  # embedded: the tray gave it a place
    assert seen["0"]["tooltip"] == "Belay — nothing waiting" and seen["3"]["tooltip"] == "Belay — 3 waiting"
