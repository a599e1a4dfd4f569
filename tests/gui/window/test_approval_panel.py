"""The approval panel: what a person sees of a waiting call, and the answers they can give."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from core import ApprovalRequested, Console, RunStatus
from core.policy.bash import analyse
from gui.window.approval_panel import ApprovalPanel
from gui.window.command_card import MAX_TREE_ITEMS, CommandCard
from tests.conftest import wait_until


async def _ask(console: Console, command: str) -> tuple[asyncio.Future[Any], ApprovalRequested]:
    agent = await console.start_agent("agent", "scripted")
    call = asyncio.ensure_future(console.call(agent, "Bash", {"command": command}))
    await wait_until(lambda: console.pending_approvals(), what="an approval request")
    return call, console.pending_approvals()[0]


def test_a_bash_request_shows_the_part_that_caused_the_question(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            await console.add_rule("Bash(ls:*)", "allow", "session")
            call, request = await _ask(console, "ls -la && rm -rf build")
            panel = ApprovalPanel(console, console.timeline)
            qtbot.addWidget(panel)
            panel.show()
            panel.add(request)
            card = panel.command_card
            assert card.isVisible() and not panel.diff.isVisible()
            assert any("rm -rf build" in text for text in card.flagged_texts())
            assert not any(text.startswith("ls") for text in card.flagged_texts())
            header = card.header.text()
            assert str(workspace.resolve()) in header and "impact" in header
            assert ("No sandbox" in header) != console.sandbox.available
            flagged = [card.tree.topLevelItem(0)]
            rows = []
            while flagged:
                item = flagged.pop()
                rows.append((item.text(0), item.text(1)))
                flagged.extend(item.child(i) for i in range(item.childCount()))
            assert any("rm -rf build" in part and why for part, why in rows)
            panel.deny()
            assert (await call).status == RunStatus.DENIED

    loop.run_until_complete(scenario())


def test_always_allow_offers_scopes_and_writes_the_exact_rule(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            call, request = await _ask(console, "touch notes.txt")
            panel = ApprovalPanel(console, console.timeline)
            qtbot.addWidget(panel)
            panel.add(request)
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


def test_a_ten_thousand_command_chain_renders_quickly(qtbot: Any, workspace: Path) -> None:
    command = " && ".join(["true"] * 9_999 + ["curl -s https://example.invalid"])
    analysis = analyse(command, workspace)
    request = ApprovalRequested(call_id="c1", agent_id="a1", tool="Bash", summary="true && …", reason="test",
                                args={"command": command}, analysis=analysis, cwd=str(workspace),
                                impact=analysis.impact, sandbox="sandbox off: test")
    card = CommandCard()
    qtbot.addWidget(card)
    started = time.monotonic()
    card.show_request(request)
    assert time.monotonic() - started < 3
    assert card.flagged_texts()[-1].startswith("curl")
    last = card.tree.topLevelItem(card.tree.topLevelItemCount() - 1)
    assert last.text(0).startswith("…") and "more parts" in last.text(0)
    assert card.tree.topLevelItem(0).childCount() + 1 <= MAX_TREE_ITEMS + 1
