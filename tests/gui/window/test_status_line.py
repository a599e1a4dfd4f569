"""The status line: run counts (skipped calls, the result cache), and how commands are contained."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import CallFinished, CallQueued, RunStatus, SandboxInfo, Timeline
from gui.window.status_line import RunCounts, SandboxIndicator
from gui.window.theme import LIGHT


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


def test_the_sandbox_indicator_shows_the_process_limit_with_the_sandbox_state(qtbot: Any) -> None:
    indicator = SandboxIndicator()
    qtbot.addWidget(indicator)
    on = SandboxInfo(available=True, kind="bubblewrap", detail="bubblewrap 0.8.0: PID namespace",
                     processes="at most 256 processes (pids cgroup)")
    indicator.show_sandbox(on, network=False)
    assert f"Sandbox: bubblewrap (network off)</span><span style='color:{LIGHT.muted}'>, at most 256 processes (pids " \
           "cgroup)" in indicator.text()
    assert "one command may have at most 256 processes (pids cgroup)" in indicator.toolTip()
    assert "settings and state are hidden" in indicator.toolTip()


def test_without_a_limit_or_a_sandbox_the_indicator_says_what_a_command_can_do(qtbot: Any) -> None:
    indicator = SandboxIndicator()
    qtbot.addWidget(indicator)
    off = SandboxInfo(available=False, kind="none", processes="no process limit (RLIMIT_NPROC does not bind root)",
                      detail="bubblewrap not found: commands run unsandboxed in their own process group")
    indicator.show_sandbox(off, network=True)
    assert "Sandbox OFF</b>: bubblewrap not found" in indicator.text()
    assert f"color:{LIGHT.danger}'>, no process limit (RLIMIT_NPROC does not bind root)" in indicator.text()
    tip = indicator.toolTip()
    assert "can read or change any file you can" in tip and "fork bomb" in tip
