"""The status line's run counts: skipped calls and the result cache's hits and misses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import CallFinished, CallQueued, RunStatus, Timeline
from gui.window.status_line import RunCounts


@dataclass(frozen=True)
class Stats:
    hits: int
    misses: int


def _timeline() -> Timeline:
    t = Timeline()
    for n, status in enumerate((RunStatus.DONE, RunStatus.SKIPPED, RunStatus.SKIPPED, RunStatus.FAILED)):
        t.apply(CallQueued(call_id=f"c{n}", agent_id="a", tool="Read", args={}, summary=""))
        t.apply(CallFinished(call_id=f"c{n}", status=status))
    return t


def test_the_counts_say_how_many_calls_were_skipped_and_how_the_cache_did(qtbot: Any) -> None:
    counts = RunCounts()
    qtbot.addWidget(counts)
    counts.show_counts(_timeline(), Stats(hits=12, misses=30))
    text = counts.text()
    assert "✓ 1 done" in text and "✗ 1 failed" in text and "↷ 2 skipped" in text
    assert "cache: 12 hits / 30 misses" in text and "cache" in counts.toolTip()
    counts.show_counts(_timeline(), Stats(hits=1, misses=1))
    assert "cache: 1 hit / 1 miss" in counts.text()


def test_without_a_cache_the_line_says_nothing_about_one(qtbot: Any) -> None:
    counts = RunCounts()
    qtbot.addWidget(counts)
    counts.show_counts(_timeline(), None)
    assert "cache" not in counts.text() and counts.toolTip() == ""
