"""The timeline you can search: the filter bar, the next-waiting / next-failure keys, roll-ups and depth-three names,
through the real window over a real console (three levels of agents, calls that succeed, fail and wait)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from core import Console, Message, RunKey, RunStatus
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

DEEP_NAME = "integration-tests-runner"


@dataclass
class Work:
    lead: str
    frontend: str
    tests: str
    waiting: str
    failed: list[str]
    ask: asyncio.Future[Any]
    handles: dict[str, Any]


async def _work(console: Console, window: MainWindow, workspace: Path) -> Work:
    """lead › frontend › integration-tests-runner: 7 calls, 2 failed (deepest), 1 waiting (the lead's)."""
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "docs").mkdir(exist_ok=True)
    (workspace / "docs" / "usage.md").write_text("# usage\n")
    lead = await console.start_agent("lead", "scripted")
    frontend = await console.start_agent("frontend", "subagent", parent=lead)
    tests = await console.start_agent(DEEP_NAME, "subagent", parent=frontend)
    await console.call(lead, "Read", {"file_path": str(workspace / "src" / "app.py")})
    await console.call(lead, "LS", {"path": str(workspace)})
    await console.call(frontend, "Read", {"file_path": str(workspace / "docs" / "usage.md")})
    failed = []
    for name in ("missing1.py", "missing2.py"):
        failed.append((await console.call(tests, "Read", {"file_path": str(workspace / name)})).call_id)
    await console.call(tests, "Read", {"file_path": str(workspace / "src" / "app.py")})
    ask = asyncio.ensure_future(console.call(lead, "Read", {"file_path": str(workspace / "docs" / "usage.md")},
                                             ask=True))
    timeline = window.model.timeline
    await wait_until(lambda: any(r.status == RunStatus.BLOCKED_ON_USER for r in timeline.runs.values()),
                     what="a call waiting for approval")
    waiting = next(r.call_id for r in timeline.runs.values() if r.status == RunStatus.BLOCKED_ON_USER)
    await wait_until(lambda: window.timeline_filter.count.text() == "7 calls", what="the 7 calls in the view")
    assert [timeline.runs[c].status for c in failed] == [RunStatus.FAILED, RunStatus.FAILED]
    return Work(lead.agent_id, frontend.agent_id, tests.agent_id, waiting, failed, ask,
                {"lead": lead, "frontend": frontend})


async def _finish(console: Console, work: Work) -> None:
    console.deny(work.waiting, "done testing")
    await asyncio.wait_for(work.ask, 10)


def _hidden(window: MainWindow, key: str) -> bool:
    """Not among the rows the view lays out (hidden itself or under a hidden row)."""
    window.tree.executeDelayedItemsLayout()
    return not window.tree.visualRect(window.model.index_of(key)).isValid()


def _activate(window: MainWindow) -> Any:
    window.activateWindow()
    return wait_until(window.isActiveWindow, what="the window to be active")


def test_typing_in_the_filter_hides_what_does_not_match_keeps_parents_and_esc_clears(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        work = await _work(console, window, workspace)
        bar, tree = window.timeline_filter, window.tree
        await _activate(window)
        tree.setFocus()
        qtbot.keyClick(tree, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        assert QApplication.focusWidget() is bar.text
        qtbot.keyClicks(bar.text, "usage")
        assert bar.count.text() == "7 calls"  # it waits for a pause in the typing
        await wait_until(lambda: bar.count.text() == "2 of 7 calls", what="the filter to answer")
        assert bar.count.toolTip() == "2 of 7 calls"
        narrowest = bar.minimumSizeHint().width()
        bar.count.setText("41250 of 100000 calls")  # a long session's count: cut if need be, never a wider window
        assert bar.minimumSizeHint().width() <= narrowest
        bar.count.setText("2 of 7 calls")
        timeline = window.model.timeline
        shown = sorted(c for c in timeline.runs if not _hidden(window, f"r:{c}"))
        assert shown == sorted(c for c, r in timeline.runs.items() if "usage.md" in r.summary)
        assert not _hidden(window, f"a:{work.lead}") and not _hidden(window, f"a:{work.frontend}")
        assert _hidden(window, f"a:{work.tests}")  # nothing under it matches
        assert tree.isExpanded(window.model.index_of(f"a:{work.frontend}"))
        frontend = window.model.index_of(f"a:{work.frontend}")
        tree.collapse(frontend)  # the person closes it while the filter is on
        lead = work.handles["lead"]
        late = [(await console.call(lead, "Read", {"file_path": str(workspace / p)})).call_id
                for p in ("src/app.py", "docs/usage.md")]
        await wait_until(lambda: bar.count.text() == "3 of 9 calls", what="the calls that came to be filtered")
        assert _hidden(window, f"r:{late[0]}") and not _hidden(window, f"r:{late[1]}")
        assert not tree.isExpanded(frontend)  # a pass for rows that came opens nothing the person closed
        qtbot.keyClick(bar.text, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(bar.text, "src/app")  # a path in the arguments, not in the summary's words
        await wait_until(lambda: bar.count.text() == "3 of 9 calls" and not _hidden(window, f"a:{work.tests}"),
                         what="the path filter")
        assert _hidden(window, f"r:{work.failed[0]}")
        qtbot.keyClick(bar.text, Qt.Key.Key_Escape)
        assert bar.text.text() == ""
        await wait_until(lambda: bar.count.text() == "9 calls", what="the filter to clear")
        assert not any(_hidden(window, f"r:{c}") for c in timeline.runs)
        qtbot.keyClicks(bar.text, "   ")  # spaces ask for nothing: a call that comes is shown and counted
        spaced = (await console.call(lead, "Read", {"file_path": str(workspace / "src" / "app.py")})).call_id
        await wait_until(lambda: bar.count.text() == "10 calls", what="the call that came while only spaces were typed")
        assert not _hidden(window, f"r:{spaced}")
        await _finish(console, work)

    in_window(qtbot, loop, workspace, body)


def test_choices_narrow_by_agent_family_and_status_and_f8_f9_step_to_waiting_and_failed_calls(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        work = await _work(console, window, workspace)
        bar, tree = window.timeline_filter, window.tree
        await wait_until(lambda: bar.agent.findData(work.tests) >= 0, what="the agents to choose from")
        assert [bar.agent.itemText(i) for i in range(bar.agent.count())] == \
            ["All agents", "lead", "   frontend", f"      {DEEP_NAME}"]
        assert bar.tool.findData("Read") >= 0 and bar.tool.findData("LS") >= 0
        bar.agent.setCurrentIndex(bar.agent.findData(work.frontend))
        assert bar.count.text() == "4 of 7 calls"  # its sub-agent's calls too; a choice answers at once
        bar.status.setCurrentIndex(bar.status.findText("failed"))
        assert bar.count.text() == "2 of 7 calls"
        await _activate(window)
        tree.setFocus()
        tree.setCurrentIndex(QModelIndex())
        qtbot.keyClick(tree, Qt.Key.Key_F9)
        assert window.model.key_of(tree.currentIndex()) == RunKey(work.failed[0])
        qtbot.keyClick(tree, Qt.Key.Key_F9)
        assert window.model.key_of(tree.currentIndex()) == RunKey(work.failed[1])
        qtbot.keyClick(tree, Qt.Key.Key_F9)
        assert window.model.key_of(tree.currentIndex()) == RunKey(work.failed[0])  # round again
        qtbot.keyClick(tree, Qt.Key.Key_F8)  # the waiting call is the lead's: filtered out
        assert window.model.key_of(tree.currentIndex()) == RunKey(work.failed[0])
        assert "No call shown is waiting" in window.statusBar().currentMessage()
        bar.agent.setCurrentIndex(0)
        bar.status.setCurrentIndex(0)
        assert bar.count.text() == "7 calls"
        frontend = window.model.index_of(f"a:{work.frontend}")
        tree.collapse(frontend)
        qtbot.keyClick(tree, Qt.Key.Key_F8)
        assert window.model.key_of(tree.currentIndex()) == RunKey(work.waiting)
        qtbot.keyClick(tree, Qt.Key.Key_F9)
        assert window.model.key_of(tree.currentIndex()) == RunKey(work.failed[0])
        assert tree.isExpanded(frontend)  # opened to show it
        view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
        keys = {a.shortcut().toString(): a.text() for a in view.actions()}  # the shortcuts sheet lists the menus
        assert (keys["F8"], keys["F9"], keys["Ctrl+F"]) == ("&Next waiting call", "Next &failed call",
                                                           "&Find in the timeline")
        await _finish(console, work)

    in_window(qtbot, loop, workspace, body)


def test_a_collapsed_agent_rolls_up_its_sub_agents_calls_and_a_depth_three_name_is_not_cut(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        work = await _work(console, window, workspace)
        model, tree = window.model, window.tree
        lead = model.index_of(f"a:{work.lead}")
        frontend = model.index_of(f"a:{work.frontend}")
        tree.collapse(frontend)
        await wait_until(lambda: model.index_of(f"a:{work.frontend}", 1).data().startswith("4 calls · 2 failed"),
                         what="the frontend's roll-up")
        assert model.index_of(f"a:{work.lead}", 1).data().startswith("7 calls · 1 waiting · 2 failed")
        assert "3 calls · 2 failed" in model.index_of(f"a:{work.tests}", 1).data()
        window.tree.setCurrentIndex(lead)
        await wait_until(lambda: "7 calls · 1 waiting · 2 failed" in window.details.info.toPlainText(),
                         what="the lead's details")
        assert "3 of them its own, 4 by its sub-agents" in window.details.info.toPlainText()
        tree.expand(frontend)
        deep = model.index_of(f"a:{work.tests}")
        tree.scrollTo(deep)
        tree.viewport().repaint()  # what a person sees now: the cells keep what they drew, the latest last
        drawn = [text for text, bold in tree.cells.shown() if bold and text and DEEP_NAME.startswith(text.rstrip("…"))]
        assert drawn[-1] == DEEP_NAME, drawn  # whole, not cut with "…", in whatever font this machine has
        await _finish(console, work)

    in_window(qtbot, loop, workspace, body)


def test_an_agent_the_person_closed_stays_closed_as_its_calls_keep_coming_and_new_agents_come_open(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        work = await _work(console, window, workspace)
        rows = window.tree.rows
        frontend = window.model.index_of(f"a:{work.frontend}")
        window.tree.collapse(frontend)
        late = await console.call(work.handles["frontend"], "Read", {"file_path": str(workspace / "src" / "app.py")})
        await wait_until(lambda: window.timeline_filter.count.text() == "8 calls", what="the late call counted")
        window.model.flush()
        assert not window.tree.isExpanded(frontend) and rows.row_of(RunKey(late.call_id)) is None
        helper = await console.start_agent("helper", "subagent", parent=work.handles["lead"])
        await console.call(helper, "Read", {"file_path": str(workspace / "src" / "app.py")})
        await wait_until(lambda: window.timeline_filter.count.text() == "9 calls", what="the helper's call")
        window.model.flush()
        assert window.tree.isExpanded(window.model.index_of(f"a:{helper.agent_id}"))  # a new agent comes open
        window.tree.expand(frontend)
        assert rows.row_of(RunKey(late.call_id)) is not None
        await _finish(console, work)

    in_window(qtbot, loop, workspace, body)


def test_the_words_button_hides_what_agents_said_and_the_text_finds_words_in_it(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("claude", "claude-code")
        at = datetime.now(timezone.utc)
        await console.recorder.conversation(agent.agent_id, [
            Message(message_id="m1", agent_id=agent.agent_id, kind="prompt", text="tidy the release notes", at=at),
            Message(message_id="m2", agent_id=agent.agent_id, kind="text", text="I will read usage.md", at=at)], [])
        outcome = await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
        bar = window.timeline_filter
        await wait_until(lambda: bar.count.text() == "1 call", what="the call in the view")
        assert not _hidden(window, "m:m1") and not _hidden(window, "m:m2")
        bar.words.click()  # what the agents said, hidden: the calls stay
        assert _hidden(window, "m:m1") and _hidden(window, "m:m2") and not _hidden(window, f"r:{outcome.call_id}")
        bar.words.click()
        bar.text.setText("release")  # a word of the prompt: its row, and its agent above it
        await wait_until(lambda: not bar._typing.isActive(), what="the pass")
        assert not _hidden(window, "m:m1") and _hidden(window, "m:m2") and _hidden(window, f"r:{outcome.call_id}")
        assert bar.count.text() == "0 of 1 calls"

    in_window(qtbot, loop, workspace, body)
