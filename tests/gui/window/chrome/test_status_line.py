"""The status line: run counts (skipped calls, the result cache), how commands are contained, and whether the
workspace's files are watched."""

from __future__ import annotations

import asyncio
import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from core import CallFinished, CallQueued, Console, RunStatus, SandboxInfo, Timeline, WatchState
from core.tools.bash import BashSettings
from gui.window.chrome.status_line import RunCounts, SandboxIndicator, WatchIndicator, preview_state
from gui.window.kit.theme import LIGHT
from tests.conftest import run, wait_until
from tests.inotify_limits import limit_instances_to, limit_watches_to


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


def test_the_store_indicator_shows_the_state_size_and_how_far_undo_reaches_measured_off_the_gui_thread(
        qtbot: Any, loop: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gui.window.chrome import status_line
    from tests.gui.window.workspace.test_window import in_window

    monkeypatch.setattr(status_line, "STORE_FIRST_S", 0.05)
    monkeypatch.setattr(status_line, "STORE_EVERY_S", 0.2)
    measured_on: list[threading.Thread] = []
    measure = status_line._measured

    def _measured(state_dir: Path) -> object:
        measured_on.append(threading.current_thread())
        return measure(state_dir)
    monkeypatch.setattr(status_line, "_measured", _measured)

    async def body(console: Console, window: Any) -> None:
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("writer", "scripted")
        await console.call(agent, "Write", {"file_path": str(workspace / "new.txt"), "content": "x\n" * 5000})
        await wait_until(lambda: window.store.usage is not None and window.store.usage.calls == 1,
                         what="the store indicator to measure again")
        assert window.store.isVisible()
        today = datetime.now()
        assert re.fullmatch(rf" ▤ \d+(\.\d)? (kB|MB) · undo to {today.day} {today:%b} ", window.store.text())
        assert window.store.usage is not None and window.store.usage.calls == 1
        assert "`belay gc --workspace …`" in window.store.toolTip() and "30 days" in window.store.toolTip()
        assert measured_on and threading.main_thread() not in measured_on

    in_window(qtbot, loop, workspace, body)


def test_a_window_closed_while_the_store_is_measured_takes_the_late_answer_quietly(
        qtbot: Any, loop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk of the store runs in a thread; the window (and this indicator) may be gone when it returns,
    as when a test's window closes on a loaded machine: the answer is dropped, nothing fails."""
    import shiboken6

    from gui.window.chrome import status_line

    release = threading.Event()
    measured: list[Any] = []

    def _slow(state_dir: Path) -> object:
        release.wait(5)
        from core import Retention, StoreUsage
        return StoreUsage(state_bytes=1, calls=0, oldest_call_at=None), Retention()
    monkeypatch.setattr(status_line, "_measured", _slow)
    indicator = status_line.StoreIndicator(tmp_path, lambda coro, name: measured.append(loop.create_task(coro)))

    async def body() -> None:
        indicator._measure_soon()
        await asyncio.sleep(0.05)
        shiboken6.delete(indicator)
        release.set()
        await measured[0]  # raised "Internal C++ object (StoreIndicator) already deleted" before
    loop.run_until_complete(body())
    assert measured[0].exception() is None


def test_the_store_indicator_turns_amber_once_belay_gc_would_end_some_history(qtbot: Any, tmp_path: Path) -> None:
    from core import Retention, StoreUsage
    from gui.window.chrome.status_line import StoreIndicator

    indicator = StoreIndicator(tmp_path, lambda coro, name: coro.close())
    qtbot.addWidget(indicator)
    recent = datetime.now(timezone.utc) - timedelta(days=2)
    indicator.show_usage(StoreUsage(state_bytes=300 << 20, calls=40, oldest_call_at=recent), Retention())
    assert indicator.text() == f" ▤ 300 MB · undo to {recent.astimezone().day} {recent.astimezone():%b} "
    assert "would end" not in indicator.toolTip() and "older than 30 days" in indicator.toolTip()
    old = datetime.now(timezone.utc) - timedelta(days=45)
    indicator.show_usage(StoreUsage(state_bytes=300 << 20, calls=40, oldest_call_at=old), Retention())
    assert f"color:{LIGHT.warning}" in indicator.text()
    assert indicator.toolTip().startswith("It holds more than the retention in your settings keeps")
    indicator.show_usage(StoreUsage(state_bytes=3 << 30, calls=40, oldest_call_at=recent), Retention())
    assert "3.0 GB" in indicator.text() and f"color:{LIGHT.warning}" in indicator.text()


def test_when_settings_preview_commands_the_indicator_says_whether_they_can_be_here(
        qtbot: Any, workspace: Path) -> None:
    async def states() -> tuple[Any, Any]:  # one after the other: a workspace has one console at a time
        async with Console(workspace, bash=BashSettings(effects="preview")) as previewing:
            first = preview_state(previewing)
        async with Console(workspace, bash=BashSettings(), state_dir=workspace.parent / "other-state") as applying:
            return first, preview_state(applying)

    previewing, applying = run(states())
    assert applying is None and previewing is not None
    indicator = SandboxIndicator()
    qtbot.addWidget(indicator)
    on = SandboxInfo(available=True, kind="bubblewrap", detail="bubblewrap 0.8.0", processes="")
    indicator.show_sandbox(on, network=True, previews=previewing)
    assert ("commands previewed" in indicator.text()) == previewing[0]
    indicator.show_sandbox(on, network=True, previews=(False, "the kernel refused an overlay in a user namespace"))
    assert "previews unavailable (the kernel refused an overlay" in indicator.text()
    assert "commands apply" in indicator.text()
    indicator.show_sandbox(on, network=True, previews=None)
    assert "preview" not in indicator.text()


@pytest.mark.parametrize("limit", ["instances", "watches"])
def test_at_an_inotify_limit_the_line_says_files_are_not_watched_and_what_belay_does_instead(
        qtbot: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch, limit: str) -> None:
    """Many editors open, or a large repository: the console cannot watch, and the person reads so in the
    status line, with what Belay does instead and how to lift the limit in the tooltip."""
    if limit == "instances":
        limit_instances_to(monkeypatch, 0)
    else:
        limit_watches_to(monkeypatch, {os.fsencode(workspace.resolve())})
    indicators: list[WatchIndicator] = []

    async def opened() -> None:
        async with Console(workspace) as console:
            indicator = WatchIndicator(console.watch_state)
            qtbot.addWidget(indicator)
            indicators.append(indicator)

    run(opened())
    [indicator] = indicators
    assert not indicator.isHidden()
    text = re.sub(r"<[^>]+>|&nbsp;", "", indicator.text())
    assert text == "⚠ Not watching files: each command rescans the workspace"
    tip = indicator.toolTip()
    assert tip.startswith("Belay cannot watch this workspace's files for changes (cannot watch ")
    assert "before and after each command it compares the whole workspace" in tip and "can be undone" in tip
    assert "show up in the timeline when the next call runs" in tip and "not answered from the result cache" in tip
    assert ("fs.inotify.max_user_instances" in tip) == (limit == "instances")
    assert ("fs.inotify.max_user_watches" in tip) == (limit == "watches")


def test_while_files_are_watched_the_line_says_nothing_and_it_speaks_up_when_watching_stops(
        qtbot: Any, workspace: Path) -> None:
    states: list[WatchState | None] = []

    async def opened() -> None:
        async with Console(workspace) as console:
            states.append(console.watch_state())

    run(opened())
    assert states == [WatchState(True)]
    indicator = WatchIndicator(lambda: states[-1])
    qtbot.addWidget(indicator)
    assert indicator.isHidden()
    states.append(WatchState(False, "cannot watch /ws/big: inotify watch limit reached", "watches"))  # a restart failed
    indicator.refresh()  # what its timer does every few seconds
    assert not indicator.isHidden() and "inotify watch limit reached" in indicator.toolTip()
    states.append(None)  # a console on another host: its own window says
    indicator.refresh()
    assert indicator.isHidden()
