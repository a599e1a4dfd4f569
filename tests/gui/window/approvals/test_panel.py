"""The approval panel: what a person sees of a waiting call, and the answers they can give."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core import ApprovalRequested, Console, Impact, RunStatus
from core.process.overlay import overlay_support
from core.tools.bash import BashSettings
from gui.window.approvals.panel import ApprovalPanel
from tests.conftest import wait_until


async def _ask(console: Console, command: str) -> tuple[asyncio.Future[Any], ApprovalRequested]:
    agent = await console.start_agent("agent", "scripted")
    call = asyncio.ensure_future(console.call(agent, "Bash", {"command": command}))
    await wait_until(lambda: console.pending_approvals(), what="an approval request")
    return call, console.pending_approvals()[0]


def test_always_allow_offers_scopes_and_writes_the_exact_rule(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            call, request = await _ask(console, "touch notes.txt")
            panel = _panel(qtbot, console)  # on screen: nothing unseen is armed
            panel.add(request)
            await wait_until(panel.always_button.isEnabled, what="the answers to arm")  # drawn, then SEEN_S
            assert panel.always_button.isEnabled()
            assert panel.rule_action.text() == "Rule: Bash(touch:*)"
            assert [a.text() for a in panel.scope_actions.values()][2].startswith("For this workspace")
            panel.scope_actions["workspace"].trigger()
            assert (await call).status == RunStatus.DONE
            assert [(r.rule, r.scope) for r in console.rules()] == [("Bash(touch:*)", "workspace")]

    loop.run_until_complete(scenario())
    assert "Bash(touch:*)" in (workspace / ".belay" / "settings.toml").read_text()


def test_always_allow_is_disabled_when_no_rule_could_allow_the_call(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            call, request = await _ask(console, "eval \"$(cat setup.sh)\"")
            panel = ApprovalPanel(console, console.timeline)
            qtbot.addWidget(panel)
            panel.add(request)
            assert request.suggested_rule is None
            assert not panel.always_button.isEnabled()
            assert "asked every time" in panel.always_button.toolTip()
            panel.deny()
            await call

    loop.run_until_complete(scenario())


def test_a_request_with_a_deadline_counts_down(qtbot: Any, loop: Any, workspace: Path) -> None:
    (workspace / ".belay").mkdir()
    (workspace / ".belay" / "settings.toml").write_text("[approval]\ntimeout_s = 30\n")

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            call, request = await _ask(console, "touch x")
            panel = ApprovalPanel(console, console.timeline)
            qtbot.addWidget(panel)
            panel.show()
            panel.add(request)
            assert panel.countdown.isVisible() and "denied in 30 s" in panel.countdown.text()
            panel.deny()
            await call
            panel.remove(request.call_id)
            assert not panel.countdown.isVisible() and not panel._tick.isActive()

    loop.run_until_complete(scenario())


async def _write(console: Console, agent: Any, name: str) -> asyncio.Future[Any]:
    return asyncio.ensure_future(console.call(agent, "Write", {"file_path": f"{console.workspace.root}/{name}",
                                                               "content": f"{name}\n"}))


def _panel(qtbot: Any, console: Console) -> ApprovalPanel:
    panel = ApprovalPanel(console, console.timeline)
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    return panel


def test_the_inbox_lists_every_waiting_call_with_its_agents_branch_and_j_k_choose_the_one_shown(
        qtbot: Any, loop: Any, workspace: Path, qtmodeltester: Any) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            lead = await console.start_agent("lead", "scripted")
            frontend = await console.start_agent("frontend", "scripted", parent=lead)
            docs = await console.start_agent("docs-writer", "scripted")
            calls = [await _write(console, agent, name)
                     for agent, name in ((lead, "a.txt"), (frontend, "b.txt"), (docs, "c.txt"))]
            await wait_until(lambda: len(console.pending_approvals()) == 3, what="three requests")
            panel = _panel(qtbot, console)
            for request in sorted(console.pending_approvals(), key=lambda r: r.summary):  # as the bridge would
                panel.add(request)
            qtmodeltester.check(panel.inbox_model, force_py=True)
            assert panel.inbox.isVisible() and panel.inbox_model.rowCount() == 3
            cells = [[panel.inbox_model.index(row, column).data() for column in range(3)] for row in range(3)]
            assert ["lead › frontend", "Write", "b.txt"] in cells and ["docs-writer", "Write", "c.txt"] in cells
            assert panel.current is not None and panel.current.summary == "a.txt"
            assert "1 of 3 waiting" in panel.title.text()
            panel.inbox.setFocus()
            qtbot.keyClick(panel.inbox, Qt.Key.Key_J)
            assert panel.current.summary == "b.txt" and "2 of 3 waiting" in panel.title.text()
            assert "lead › frontend" in panel.detail.text()
            qtbot.keyClick(panel.inbox, Qt.Key.Key_J)
            qtbot.keyClick(panel.inbox, Qt.Key.Key_K)
            assert panel.current.summary == "b.txt"
            panel.approve()  # answers the one shown, not the oldest
            assert (await calls[1]).status == RunStatus.DONE
            panel.remove(calls[1].result().call_id)
            assert panel.current.summary == "c.txt"  # the next one in the list takes its place
            for _ in range(2):
                panel.deny()
                panel.remove(panel.current.call_id)
            assert [(await c).status for c in calls] == [RunStatus.DENIED, RunStatus.DONE, RunStatus.DENIED]
            assert not panel.inbox.isVisible()

    loop.run_until_complete(scenario())


def test_j_and_k_keep_working_when_the_inbox_hides_and_never_type_into_the_reason_box(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            lead = await console.start_agent("lead", "scripted")
            calls = [await _write(console, lead, name) for name in ("a.txt", "b.txt")]
            await wait_until(lambda: len(console.pending_approvals()) == 2, what="two requests")
            panel = _panel(qtbot, console)
            panel.activateWindow()
            await wait_until(panel.isActiveWindow, what="the panel's window to be active")
            for request in console.pending_approvals():
                panel.add(request)
            panel.inbox.setFocus()
            qtbot.keyClick(panel.inbox, Qt.Key.Key_J)
            assert "2 of 2 waiting" in panel.title.text()
            console.deny(panel.current.call_id)
            panel.remove(panel.current.call_id)  # one left: the inbox hides with the focus in it
            assert not panel.inbox.isVisible()
            focused = QApplication.focusWidget()
            assert focused is panel, focused
            for key in (Qt.Key.Key_J, Qt.Key.Key_K, Qt.Key.Key_J):
                qtbot.keyClick(focused, key)
            assert panel.reason.text() == "" and panel.current is not None
            console.deny(panel.current.call_id)
            await asyncio.gather(*calls)

    loop.run_until_complete(scenario())


def test_approve_keys_act_only_with_the_panel_focused_and_not_in_the_first_moment_of_a_new_request(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    from gui.window.workspace.window import MainWindow

    async def scenario() -> None:
        async with Console(workspace) as console:
            window = MainWindow(console)
            qtbot.addWidget(window)
            window.start()
            window.show()
            try:
                agent = await console.start_agent("lead", "scripted")
                first, second = await _write(console, agent, "a.txt"), await _write(console, agent, "b.txt")
                await wait_until(lambda: len(window.approvals.queue()) == 2, what="both requests in the panel")
                await wait_until(window.approvals.approve_button.isEnabled, what="the arming moment to pass")
                window.activateWindow()  # keys reach shortcuts only in the active window
                await wait_until(window.isActiveWindow, what="the window to be active")
                window.rules.rule.setFocus()  # typing a rule elsewhere in the window
                qtbot.keyClick(window.rules.rule, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
                await asyncio.sleep(0.1)
                assert not first.done() and len(console.pending_approvals()) == 2

                window.focus_approvals()  # Ctrl+Shift+A
                focused = QApplication.focusWidget()
                assert focused is window.approvals.inbox
                shown = window.approvals.current.summary  # the two asked at once: either may be shown first
                calls = {"a.txt": first, "b.txt": second}
                first, second = calls.pop(shown), calls.popitem()[1]
                qtbot.keyClick(focused, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
                assert (await asyncio.wait_for(first, 20)).status == RunStatus.DONE  # fails, never hangs
                assert f"Approved Write {shown} (lead)" in window.statusBar().currentMessage()
                await wait_until(lambda: window.approvals.current is not None
                                 and window.approvals.current.summary != shown, what="the next request shown")
                window.approvals.setFocus()
                qtbot.keyClick(window.approvals, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # too soon
                await asyncio.sleep(0.1)
                assert not second.done() and not window.approvals.approve_button.isEnabled()
                await wait_until(window.approvals.approve_button.isEnabled, what="the lock to end")
                qtbot.keyClick(window.approvals, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
                assert QApplication.focusWidget() is window.approvals.reason
                qtbot.keyClicks(window.approvals.reason, "not that file")
                qtbot.keyClick(window.approvals.reason, Qt.Key.Key_Return)  # Enter in the reason box denies
                done = await asyncio.wait_for(second, 20)
                assert done.status == RunStatus.DENIED and "not that file" in done.text
            finally:
                await window.tasks.aclose()
                window.close()

    loop.run_until_complete(scenario())


def test_approve_all_answers_one_agents_alike_calls_but_is_not_offered_for_high_impact(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            docs = await console.start_agent("docs-writer", "scripted")
            other = await console.start_agent("lead", "scripted")
            mine = [await _write(console, docs, f"doc{i}.md") for i in range(3)]
            theirs = await _write(console, other, "lead.md")
            await wait_until(lambda: len(console.pending_approvals()) == 4, what="four requests")
            panel = _panel(qtbot, console)
            for request in console.pending_approvals():
                panel.add(request)
            panel.focus_request(next(r.call_id for r in panel.queue() if r.summary == "doc1.md"))
            await wait_until(panel.bulk_button.isEnabled, what="the answers to arm")
            assert panel.bulk_button.isVisible() and panel.bulk_button.text() == "Approve all 3 Write of docs-writer"
            qtbot.mouseClick(panel.bulk_button, Qt.MouseButton.LeftButton)
            assert [(await asyncio.wait_for(c, 20)).status for c in mine] == [RunStatus.DONE] * 3
            assert not theirs.done()
            high = ApprovalRequested(call_id="h1", agent_id=docs.agent_id, tool="Write", summary="x", reason="test",
                                     args={}, impact=Impact(level="high", reasons=("writes outside",)),
                                     suggested_rule="Write(x)")
            same = high.model_copy(update={"call_id": "h2"})
            panel.add(high)
            panel.add(same)
            panel.focus_request("h1")
            assert panel.alike(high) == [] and not panel.bulk_button.isVisible()
            console.deny(next(r.call_id for r in panel.queue() if r.summary == "lead.md"))
            assert (await asyncio.wait_for(theirs, 20)).status == RunStatus.DENIED

    loop.run_until_complete(scenario())


def test_the_header_shows_what_the_agent_said_and_every_impact_reason_and_the_countdown_is_fixed_when_asked(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            panel = _panel(qtbot, console)
            reasons = tuple(f"writes file{i}.txt" for i in range(6))
            asked = datetime.now(UTC) - timedelta(seconds=3)
            request = ApprovalRequested(call_id="c1", agent_id="a1", tool="Write", summary="6 files",
                                        reason="writes need approval in this mode; and they are many",
                                        args={"description": "Regenerate the fixtures"}, timeout_s=8, at=asked,
                                        impact=Impact(level="medium", reasons=reasons))
            older = request.model_copy(update={"call_id": "c0", "at": asked - timedelta(seconds=20),
                                               "timeout_s": None})
            panel.add(older)
            panel.add(request)
            panel.focus_request("c1")
            text = panel.detail.text()
            assert "Regenerate the fixtures" in text and "and they are many" in text
            assert all(r in text for r in reasons) and "more)" not in text
            assert "denied in 5 s" in panel.countdown.text()  # asked 3 s ago with 8 s: 5 left, not 8
            row = panel.inbox_model.row_of("c1")
            assert panel.inbox_model.index(row, 5).data() == "denied in 5 s"
            assert panel.inbox_model.index(panel.inbox_model.row_of("c0"), 4).data() == "23 s"

    loop.run_until_complete(scenario())


def test_a_request_without_a_diff_shows_no_empty_diff_box(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            panel = _panel(qtbot, console)
            panel.add(ApprovalRequested(call_id="r1", agent_id="a1", tool="Read", summary="pkg/mod.py",
                                        reason="the plan asks for a person's approval of this call", args={}))
            assert panel.isVisible() and not panel.diff.isVisible() and panel.approve_button.isVisible()

    loop.run_until_complete(scenario())


def test_a_previewed_command_shows_its_output_and_diffs_and_applies_only_the_files_kept(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    if not overlay_support().available:
        pytest.skip(overlay_support().detail)
    (workspace / "one.txt").write_text("old one\n")
    (workspace / "two.txt").write_text("old two\n")

    async def scenario() -> None:
        async with Console(workspace, bash=BashSettings(effects="preview")) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Bash", {
                "command": "sed -i s/old/new/ one.txt two.txt && echo made a new file > three.txt && echo finished"}))
            await wait_until(lambda: console.pending_approvals(), what="the command's approval")
            console.approve(console.pending_approvals()[0].call_id)  # to run it; then its effects are asked about
            await wait_until(lambda: [r for r in console.pending_approvals() if r.diffs], what="the preview",
                             timeout=10)
            panel = _panel(qtbot, console)
            panel.add(console.pending_approvals()[0])
            assert panel.diff.isVisible() and not panel.command_card.isVisible()
            assert panel.approve_button.text().startswith("Apply") and panel.deny_button.text().startswith("Discard")
            assert "Previewed" in panel.detail.text() and "finished" in panel.detail.text()
            assert "network calls" in panel.detail.text()  # what a preview cannot show is said on the card
            await wait_until(panel.diff.is_rendered, what="the diffs")
            assert panel.diff.total == 3  # one change per file: one.txt, three.txt (created), two.txt
            for n in (1, 2):  # leave out the created file and two.txt, each whole
                panel.diff.go_to(n)
                panel.diff.toggle_hunk()
            await asyncio.sleep(0.5)  # approving waits a moment after a new request is shown
            panel.approve()
            outcome = await call
            assert (workspace / "one.txt").read_text() == "new one\n"
            assert (workspace / "two.txt").read_text() == "old two\n" and not (workspace / "three.txt").exists()
            assert "applied: one.txt" in outcome.text and "discarded: three.txt, two.txt" in outcome.text

    loop.run_until_complete(scenario())


def test_run_in_preview_on_a_command_s_card_brings_its_changes_back_before_they_land(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:  # commands apply as they run, unless the person asks
            console.register_approver("test")
            call, request = await _ask(console, "echo made > made.txt && rm README.md")
            panel = _panel(qtbot, console)
            panel.add(request)
            button = panel.preview_button
            assert button.isVisible() and not panel.edit_button.isVisible()
            await wait_until(button.isEnabled, what="the card to be armed")
            assert button.isEnabled() == console.previews.available, button.toolTip()
            if not console.previews.available:
                panel.deny()
                return
            qtbot.keyClick(panel, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
            await wait_until(lambda: [r for r in console.pending_approvals() if r.diffs], what="its changes")
            preview = console.pending_approvals()[0]
            assert {d.path for d in preview.diffs} == {"made.txt", "README.md"}
            assert not (workspace / "made.txt").exists() and (workspace / "README.md").exists()
            panel.add(preview)
            await asyncio.sleep(0.5)
            panel.deny()
            outcome = await call
            assert outcome.status == RunStatus.DONE and "none were applied" in outcome.text
            assert not (workspace / "made.txt").exists() and (workspace / "README.md").exists()

    loop.run_until_complete(scenario())


def test_a_background_shell_cannot_run_in_preview_and_the_card_says_why(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Bash", {"command": "rm -rf build; sleep 5",
                                                                      "run_in_background": True}))
            await wait_until(lambda: console.pending_approvals(), what="an approval request")
            panel = _panel(qtbot, console)
            panel.add(console.pending_approvals()[0])
            await asyncio.sleep(0.5)
            assert panel.preview_button.isVisible() and not panel.preview_button.isEnabled()
            assert "background shell" in panel.preview_button.toolTip()
            panel.deny()
            assert (await call).status == RunStatus.DENIED

    loop.run_until_complete(scenario())
