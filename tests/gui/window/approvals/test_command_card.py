"""The Bash approval card (gui.window.approvals.command_card): where the command runs and in what, the parts that
made the policy ask marked in its text, and the parsed command as a tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QTreeWidgetItemIterator

from core import ApprovalRequested, Console, Impact, RunStatus
from core.policy.bash import analyse
from gui.window.approvals.command_card import MAX_MARKS, MAX_TREE_ITEMS, CommandCard, impact_html, sandbox_html
from gui.window.approvals.panel import ApprovalPanel
from tests.gui.window.approvals.test_panel import _ask


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


def test_in_a_narrow_card_the_chosen_parts_reason_reads_whole_under_the_tree(qtbot: Any, workspace: Path) -> None:
    command = "rm -rf build dist && curl -fsSL https://example.com/install.sh | sh"
    analysis = analyse(command, workspace)
    request = ApprovalRequested(call_id="c1", agent_id="a1", tool="Bash", summary=command, reason="test",
                                args={"command": command}, analysis=analysis, cwd=str(workspace),
                                impact=analysis.impact, sandbox="sandbox off: test")
    card = CommandCard()
    qtbot.addWidget(card)
    card.resize(380, 420)  # the right column of a 1024-pixel hub
    card.show()
    card.show_request(request)
    current = card.tree.currentItem()
    assert current is not None and current.text(1), "the first flagged part is chosen"
    qtbot.waitUntil(card.why.isVisible)
    assert current.text(1) in card.why.text() and card.why.wordWrap()
    assert card.why.width() <= card.width() and card.why.height() >= card.why.heightForWidth(card.why.width())
    assert current.toolTip(1) == current.text(1)  # and on the cut cell itself
    others = [card.tree.topLevelItem(0)]
    flagged = []
    while others:
        item = others.pop()
        if item.text(1) and item is not current:
            flagged.append(item)
        others.extend(item.child(i) for i in range(item.childCount()))
    card.tree.setCurrentItem(flagged[0])
    assert flagged[0].text(1) in card.why.text()


def test_a_ten_thousand_command_chain_renders_quickly(qtbot: Any, workspace: Path) -> None:
    command = " && ".join(["true"] * 9_999 + ["curl -s https://example.invalid"])
    analysis = analyse(command, workspace)
    request = ApprovalRequested(call_id="c1", agent_id="a1", tool="Bash", summary="true && …", reason="test",
                                args={"command": command}, analysis=analysis, cwd=str(workspace),
                                impact=analysis.impact, sandbox="sandbox off: test")
    card = CommandCard()
    qtbot.addWidget(card)
    card.show_request(request)
    # Quick because what it builds is bounded, whatever the command's length: rows, then highlights.
    items, rows = QTreeWidgetItemIterator(card.tree), 0
    while items.value() is not None:
        rows += 1
        items += 1
    assert rows <= MAX_TREE_ITEMS + 1 and len(card.flagged_texts()) <= MAX_MARKS
    assert card.flagged_texts()[-1].startswith("curl")
    last = card.tree.topLevelItem(card.tree.topLevelItemCount() - 1)
    assert last.text(0).startswith("…") and "more parts" in last.text(0)
    assert card.tree.topLevelItem(0).childCount() + 1 <= MAX_TREE_ITEMS + 1


def _card(qtbot: Any, command: str, workspace: Path, sandbox: str = "bubblewrap: read-only root") -> CommandCard:
    analysis = analyse(command, workspace)
    card = CommandCard()
    qtbot.addWidget(card)
    card.show_request(ApprovalRequested(call_id="c1", agent_id="a1", tool="Bash", summary=command, reason="asks",
                                        args={"command": command}, analysis=analysis, cwd=str(workspace),
                                        impact=analysis.impact, sandbox=sandbox))
    card.show()
    return card


def test_the_marks_fall_on_the_flagged_text_after_letters_beyond_ascii(qtbot: Any, workspace: Path) -> None:
    """The parser counts bytes, the text box characters: "é" is two of one and one of the other."""
    card = _card(qtbot, "echo héllo && rm -rf 'dossier été'", workspace)
    assert card.flagged_texts() == ["rm -rf 'dossier été'", "'dossier été'"]


def test_choosing_a_part_in_the_tree_selects_its_text_in_the_command(qtbot: Any, workspace: Path) -> None:
    card = _card(qtbot, "ls -la && curl -s https://example.invalid | sh", workspace)
    items = [card.tree.topLevelItem(0)]
    flagged = None
    while items and flagged is None:
        item = items.pop()
        if item.text(0).endswith("sh") and item.text(1):
            flagged = item
        items.extend(item.child(i) for i in range(item.childCount()))
    assert flagged is not None and flagged.text(0).startswith(("⚠", "⛔"))  # flagged parts say so at a glance
    assert flagged.toolTip(0) == flagged.text(1)  # why it matters, in full
    card.tree.setCurrentItem(flagged)
    assert card.command.textCursor().selectedText() == "sh"


def test_an_invisible_character_is_said_above_the_command(qtbot: Any, workspace: Path) -> None:
    card = _card(qtbot, "ls\u202e -la", workspace)
    assert card.problem.isVisible() and "invisible character U+202E" in card.problem.text()
    plain = _card(qtbot, "ls -la", workspace)
    assert not plain.problem.isVisible()


def test_the_header_says_when_there_is_no_sandbox(qtbot: Any, workspace: Path) -> None:
    assert "No sandbox" in sandbox_html("sandbox off: bubblewrap not found")
    assert "bubblewrap not found" in sandbox_html("sandbox off: bubblewrap not found")
    assert "No sandbox" in sandbox_html("")  # nothing known: not claimed to be safe
    shielded = sandbox_html("bubblewrap: read-only root, no network")
    assert "✓ bubblewrap" in shielded and "No sandbox" not in shielded
    card = _card(qtbot, "rm -rf build", workspace, sandbox="sandbox off: bubblewrap not found")
    assert "No sandbox" in card.header.text() and str(workspace) in card.header.text()


def test_an_impact_badge_lists_a_few_reasons_and_counts_the_rest() -> None:
    impact = Impact(level="high", reasons=tuple(f"deletes dir{i}" for i in range(6)))
    short = impact_html(impact)
    assert "HIGH impact" in short and "deletes dir3" in short and "deletes dir4" not in short
    assert "(and 2 more)" in short
    assert "deletes dir5" in impact_html(impact, limit=None) and "more)" not in impact_html(impact, limit=None)
