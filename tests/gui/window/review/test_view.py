"""Tests for gui.window.review.view: a pending write reviewed hunk by hunk in the real window, with keys.

The end-to-end test runs the real console, pipeline, journal and main window on one qasync loop
(offscreen): an agent's 30-hunk Write waits for approval, the person rejects 7 hunks with the diff's
keys, types why and approves; the bytes on disk and what the agent is told are checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from pytestqt.qtbot import QtBot

from core import ApprovalRequested, Console, ProposedFile, RunStatus, Script, Step, run_script
from core.changes.diffs import compute_diff
from core.models.diffs import FileDiff
from gui.window.review.view import SPLIT_COLUMNS, TOO_NARROW, ReviewView
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until

pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")

REJECTED = [2, 8, 11, 15, 20, 26, 29]


def thirty_changes() -> tuple[str, str]:
    """A 2,000-line module with functions, and the agent's version with 30 separate changes."""
    old = [f"def function_{n}(x):\n" if n % 40 == 0 else f"    value_{n} = compute(x, {n})\n" for n in range(2000)]
    new = list(old)
    for k in range(30):
        n = 15 + k * 66
        new[n] = f"    value_{n} = compute(x * 2, {n})  # changed\n"
    return "".join(old), "".join(new)


def expected_partial(old: str, new: str, rejected: list[int]) -> str:
    lines_old, lines_new = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out = list(lines_new)
    for k in rejected:
        out[15 + k * 66] = lines_old[15 + k * 66]
    return "".join(out)


def _view(qtbot: QtBot, tmp_path: Path) -> ReviewView:
    view = ReviewView(dark=False, settings=QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(view)
    view.resize(1600, 640)  # wide enough for side by side (SPLIT_COLUMNS characters a side)
    view.show()
    view.activateWindow()  # the keys act only while the diff (in the active window) has the focus
    qtbot.waitUntil(view.isActiveWindow, timeout=5000)
    return view


def _diff() -> tuple[FileDiff, str]:
    old, new = thirty_changes()
    return compute_diff("src/app.py", old.encode(), new.encode()), new


def test_keys_reject_hunks_in_the_real_window_and_the_partial_content_is_written(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    target = workspace / "src" / "app.py"
    old, new = thirty_changes()
    target.write_text(old)

    async def body(console: Console, window: MainWindow) -> None:
        step = Step(id="rewrite", tool="Write", args={"file_path": str(target), "content": new})
        task = console.launch(run_script(console, Script(name="agent", steps=[step])), "agent")
        panel = window.approvals
        await wait_until(lambda: panel.current is not None and panel.diff.is_rendered() and panel.diff.total == 30,
                         what="the 30-hunk diff")
        assert panel.diff.position.text() == "change 1 of 30"
        assert "@@ -13,7 +13,7 @@ def function_0(x):" in panel.diff.plain_text()
        panel.diff.canvas.setFocus()
        qtbot.keyClick(panel.diff.canvas, Qt.Key.Key_F)
        assert panel.diff.focus_button.isChecked() and not window.tabs.isVisible()  # the diff takes the column
        at = 0
        for k in REJECTED:
            for _ in range(k - at):
                qtbot.keyClick(panel.diff.canvas, Qt.Key.Key_N)
            qtbot.keyClick(panel.diff.canvas, Qt.Key.Key_Space)
            at = k
        assert panel.diff.rejected() == set(REJECTED)
        assert panel.diff.rejected_hunks() == {"src/app.py": REJECTED}  # what Edit & approve would start without
        assert panel.diff.position.text() == "change 30 of 30 · 7 rejected"
        assert panel.diff.position.toolTip() == "Approving writes the 23 accepted changes only"
        qtbot.keyClicks(panel.reason, "keep the old formula there")
        await wait_until(panel.approve_button.isEnabled, what="approve to be offered")
        qtbot.mouseClick(panel.approve_button, Qt.MouseButton.LeftButton)
        _, agent = await task
        outcome = agent.outcomes["rewrite"]
        assert outcome.status == RunStatus.DONE
        assert ("hunks 3, 9, 12, 16, 21, 27 and 30 of 30 in src/app.py were not applied: keep the old formula there"
                in outcome.text), outcome.text
        [record] = await console.history()
        assert record.decision is not None and record.decision.decision.value == "approved_edited"
        await wait_until(lambda: panel.current is None, what="the panel to clear")
        assert not panel.diff.focus_button.isChecked() and window.tabs.isVisible()

    console = Console(workspace)

    async def run_window() -> None:
        await console.open()
        window = MainWindow(console)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.start()
        window.show()
        window.activateWindow()
        try:
            await asyncio.wait_for(body(console, window), 60)
        finally:
            await window.tasks.aclose()
            await console.close()
            window.close()

    loop.run_until_complete(run_window())
    assert target.read_bytes() == expected_partial(old, new, REJECTED).encode()


def test_side_by_side_shows_both_numbers_word_highlights_folds_and_the_enclosing_function(
        qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    view.set_diffs([diff], contents={"src/app.py": new})
    assert view.split and view.is_rendered()
    rows = view.canvas.rows
    changed = next(r for r in rows if r.kind == "line" and r.left is not None and r.left.kind == "-")
    assert (changed.left.old_no, changed.right.new_no) == (16, 16)
    assert changed.left.text == "    value_15 = compute(x, 15)"
    # The words that changed, and only those, are marked (the old line only lost nothing: no mark there).
    assert [changed.right.text[a:b] for a, b in changed.right.words] == [" * 2", "  # changed"]
    assert changed.left.words == ()
    text = view.plain_text().splitlines()
    assert "⋯ 12 unchanged lines  (click to show)" in text and "⋯ 59 unchanged lines  (click to show)" in text
    assert text[-1] == "⋯ 67 unchanged lines  (click to show)"  # the tail, counted from the new content
    assert "@@ -79,7 +79,7 @@ def function_80(x):" in text
    assert f"{'   16 -     value_15 = compute(x, 15)':<60} │    16 +     value_15 = compute(x * 2, 15)  # changed" in text
    assert view.canvas.painted > 0


def test_the_view_choice_is_remembered_and_unified_shows_both_numbers(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    view.set_diffs([diff], contents={"src/app.py": new})
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_V)
    assert not view.split and view.view_button.text() == "Unified"
    lines = view.plain_text().splitlines()
    assert "   16       -     value_15 = compute(x, 15)" in lines
    assert "         16 +     value_15 = compute(x * 2, 15)  # changed" in lines
    again = _view(qtbot, tmp_path)
    assert not again.split


def test_side_by_side_only_where_each_side_has_80_columns_else_unified_saying_why(
        qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    view.set_diffs([diff], contents={"src/app.py": new})
    assert view.split and view.canvas.columns_per_side() >= SPLIT_COLUMNS and not view.narrow.isVisible()
    view.resize(1024, 640)  # each side would show about 60 characters
    qtbot.waitUntil(lambda: not view.split)
    assert view.view_button.isChecked() and view.narrow.isVisible() and view.narrow.text() == TOO_NARROW
    qtbot.waitUntil(lambda: view.narrow.shown_text() == TOO_NARROW)  # read whole, not cut away
    assert "│" not in view.plain_text()  # drawn unified: one column, both numbers
    view.resize(1600, 640)
    qtbot.waitUntil(lambda: view.split)  # the choice stood: split again where it fits
    assert not view.narrow.isVisible()
    view.view_button.setChecked(False)
    view.resize(1024, 640)
    qtbot.waitUntil(lambda: view.width() == 1024)
    assert not view.split and not view.narrow.isVisible()  # unified by choice: nothing to explain


def test_accept_all_reject_all_and_a_file_written_whole(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    created = compute_diff("new.py", None, b"x = 1\n")
    view.set_diffs([diff, created], contents={"src/app.py": new})
    assert view.total == 31
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_R)
    assert view.rejected() == set(range(30))  # the new file's one hunk cannot be left out
    assert view.accepted_hunks() == {"src/app.py": []}
    qtbot.keyClick(view.canvas, Qt.Key.Key_A)
    assert view.rejected() == set() and view.accepted_hunks() is None
    view.go_to(30)
    qtbot.keyClick(view.canvas, Qt.Key.Key_Space)
    assert view.rejected() == set() and not view.toggle_button.isEnabled()
    qtbot.keyClick(view.canvas, Qt.Key.Key_P)
    qtbot.keyClick(view.canvas, Qt.Key.Key_Space)
    assert view.accepted_hunks() == {"src/app.py": list(range(29))}
    assert view.position.text() == "change 30 of 31 · 1 rejected"


def test_a_new_diff_starts_a_new_review(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    view.set_diffs([diff], contents={"src/app.py": new})
    view.reject_all()
    view.set_diffs([diff])
    assert view.rejected() == set() and view.accepted_hunks() is None and view.current == 0


def test_clicking_a_fold_shows_the_unchanged_lines_with_their_numbers(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    view.set_diffs([diff], contents={"src/app.py": new})
    rows = view.canvas.rows
    assert rows[1].text == "⋯ 12 unchanged lines  (click to show)"
    line = view.canvas._line  # noqa: SLF001  (the painted row height)
    qtbot.mouseClick(view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(200, line + line // 2))
    text = view.plain_text().splitlines()
    assert "⋯ 12 unchanged lines  (click to show)" not in text
    assert text[1] == f"{'    1   def function_0(x):':<60} │     1   def function_0(x):"
    assert text[12].startswith("   12       value_11 = compute(x, 11)")
    assert text[13].startswith("@@ -13,7 +13,7 @@ def function_0(x):")
    at = view.canvas._layout.split_at  # noqa: SLF001  (the hunks' rows moved down with the lines put in above)
    assert [view.canvas.rows[k].text.split(" @@")[0] for k in at[:2]] == ["@@ -13,7 +13,7", "@@ -79,7 +79,7"]


def test_coming_back_to_a_request_brings_back_its_review_and_showing_it_again_keeps_it(
        qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    diff, new = _diff()
    first = ApprovalRequested(call_id="c1", agent_id="a1", tool="Write", summary="src/app.py", reason="asks",
                              args={}, diffs=(diff,), proposed=(ProposedFile(path="src/app.py", content=new),))
    second = first.model_copy(update={"call_id": "c2"})
    view.show_request(first)
    view.go_to(4)
    view.toggle_hunk()
    view.show_request(first)  # the panel refreshing the same request
    assert view.rejected() == {4} and view.current == 4
    view.show_request(second)
    assert view.rejected() == set() and view.current == 0
    view.show_request(first)
    assert view.rejected() == {4} and view.current == 4
    assert view.position.text() == "change 5 of 30 · 1 rejected"


def test_a_notebooks_changes_can_be_rejected_and_its_json_is_not_taken_for_the_diffs_text(
        qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    shown_before = "# ── cell c1 · code ──\n" + "".join(f"step_{n} = {n}\n" for n in range(30))
    shown_after = shown_before.replace("step_2 = 2\n", "step_2 = 'two'\n").replace("step_28 = 28", "step_28 = -28")
    diff = compute_diff("analysis.ipynb", shown_before.encode(), shown_after.encode())
    request = ApprovalRequested(call_id="c1", agent_id="a1", tool="NotebookEdit", summary="analysis.ipynb",
                                reason="asks", args={}, diffs=(diff,),
                                proposed=(ProposedFile(path="analysis.ipynb", content='{"cells": []}\n'),))
    view.show_request(request)
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_N)
    qtbot.keyClick(view.canvas, Qt.Key.Key_Space)
    assert view.accepted_hunks() == {"analysis.ipynb": [0]}
    assert "click to show" not in view.plain_text()  # the JSON is not the text the diff's folds hide
