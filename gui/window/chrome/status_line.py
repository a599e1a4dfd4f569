"""The status bar's permanent parts: how many calls are in each state (and cache hits), whether Bash is sandboxed,
whether the workspace's files are watched, and how much Belay keeps for the workspace.

The sandbox indicator is always visible because it changes what approving
a command means: inside bubblewrap a command can write only the workspace
(and, with the network off, reach nothing); without it a command runs with
all of the user's rights.  It also says how many processes one command may
have, and what enforces that, since without a limit a fork bomb can stall
the machine.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from core import ConsoleSurface, Holding, RunStatus, SandboxInfo, Timeline, WatchState
from gui.window.kit import theme

if TYPE_CHECKING:
    from core import Retention, StoreUsage

ON_TIP = ("Bash commands run inside bubblewrap: the filesystem is read-only except the workspace, /tmp is "
          "private, Belay's settings and state are hidden, processes cannot see yours, and {network}."
          "{processes}\n\n{detail}")
OFF_TIP = ("Bash commands are NOT sandboxed: an approved command runs with all your rights and can read or change "
           "any file you can, not only the workspace.{processes}\n\nWhy: {detail}\n\n"
           "Install bubblewrap (e.g. apt install bubblewrap) and allow unprivileged user namespaces to turn it on.")
PROCESSES_TIP = "\n\nProcesses: one command may have {processes}; past that, starting another fails."
NO_LIMIT_TIP = ("\n\nProcesses: {processes}. A command that starts processes without end (a fork bomb) can "
                "stall the machine.")
SHORT_DETAIL = 60


def _elide(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


class SandboxIndicator(QLabel):
    """Green when commands run in bubblewrap, red with the reason when they do not."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sandboxIndicator")
        self.info: SandboxInfo | None = None
        self._network = False
        self._previews: tuple[bool, str] | None = None
        theme.follow(self, self._restyle)

    def _restyle(self) -> None:
        if self.info is not None:
            self.show_sandbox(self.info, self._network, self._previews)

    def show_sandbox(self, info: SandboxInfo, network: bool, previews: tuple[bool, str] | None = None) -> None:
        """`previews`: when the settings preview commands (`[bash] effects`), whether they can here, and the
        detail (why not, when they cannot: they then apply as they run)."""
        self.info, self._network, self._previews = info, network, previews
        limit = self._limit_html(info.processes) + self._previews_html(previews)
        if info.available:
            state = "network on" if network else "network off"
            success = theme.colour("success")
            self.setText(f"<span style='color:{success}'>✓ Sandbox: {info.kind} ({state})</span>{limit}")
            reach = "commands can reach the network" if network else "commands cannot reach the network"
            self.setToolTip(ON_TIP.format(network=reach, detail=info.detail, processes=self._limit_tip(info)))
        else:
            why, _, _ = info.detail.rpartition(": ")  # "<why>: commands run unsandboxed ..."
            reason = html.escape(_elide(why or info.detail, SHORT_DETAIL))
            self.setText(f"<span style='background:{theme.colour('deny_bg')}; color:{theme.colour('on_strong')}'>"
                         "&nbsp;<b>⚠ Sandbox OFF</b>: "
                         f"{reason}&nbsp;</span>{limit}")
            self.setToolTip(OFF_TIP.format(detail=info.detail, processes=self._limit_tip(info)))

    @staticmethod
    def _limit_html(processes: str) -> str:
        """", at most 256 processes (pids cgroup)" in grey, or "no process limit (why)" in red."""
        if not processes:
            return ""
        colour = theme.colour("danger" if processes.startswith("no ") else "muted")
        return f"<span style='color:{colour}'>, {html.escape(processes)}</span>"

    @staticmethod
    def _previews_html(previews: tuple[bool, str] | None) -> str:
        if previews is None:
            return ""
        available, detail = previews
        if available:
            return f"<span style='color:{theme.colour('muted')}'>, commands previewed</span>"
        return (f"<span style='color:{theme.colour('danger')}' title='{html.escape(detail, quote=True)}'>, previews "
                f"unavailable ({html.escape(_elide(detail, SHORT_DETAIL))}): commands apply</span>")

    @staticmethod
    def _limit_tip(info: SandboxInfo) -> str:
        if not info.processes:
            return ""
        tip = NO_LIMIT_TIP if info.processes.startswith("no ") else PROCESSES_TIP
        return tip.format(processes=info.processes)

    def __repr__(self) -> str:
        return f"<SandboxIndicator {self.info!r}>"


class CacheCounts(Protocol):
    """What the line reads of the console's `cache_stats()` (core.run.results.CacheStats, not exported)."""

    @property
    def hits(self) -> int: ...
    @property
    def misses(self) -> int: ...


class RunCounts(QLabel):
    """Running, waiting, done, failed, denied, skipped: a line of coloured counts, then the result cache's."""

    PARTS = (
        ("running", "● {} running", (RunStatus.RUNNING,)),
        ("warning", "◐ {} waiting for approval", (RunStatus.BLOCKED_ON_USER,)),
        ("success", "✓ {} done", (RunStatus.DONE,)),
        ("danger", "✗ {} failed", (RunStatus.FAILED, RunStatus.TIMED_OUT)),
        ("denied", "⊘ {} denied", (RunStatus.DENIED,)),
        ("muted", "↷ {} skipped", (RunStatus.SKIPPED,)),
    )
    CACHE_TIP = ("Read-only calls (Read, Grep, Glob, LS) answered from the result cache instead of running again; "
                 "an entry is dropped the moment a file it read changes.")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown: tuple[Timeline, CacheCounts | None] | None = None
        theme.follow(self, self._restyle)

    def _restyle(self) -> None:
        if self._shown is not None:
            self.show_counts(*self._shown)

    def show_counts(self, timeline: Timeline, cache: CacheCounts | None = None) -> None:
        """The counts; with `cache` (None when results are not cached) its hits and misses too."""
        self._shown = (timeline, cache)
        counts = timeline.counts()
        parts = [f"<span style='color:{theme.colour(role)}'>{html.escape(text.format(sum(counts[s] for s in states)))}"
                 "</span>" for role, text, states in self.PARTS]
        if cache is not None:
            parts.append(f"<span style='color:{theme.colour('muted')}'>cache: {_plural(cache.hits, 'hit')} / "
                         f"{_plural(cache.misses, 'miss', 'misses')}</span>")
        self.setText(" &nbsp; ".join(parts))
        self.setToolTip(self.CACHE_TIP if cache is not None else "")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


HELD_AFTER_S = 2.0
"""How long calls must have waited for the workspace before the status bar says why."""


class HeldIndicator(QLabel):
    """Says why calls wait while one call holds the workspace (its changes must be its own): which call, whose,
    for how long.  Hidden while nobody waits, or only briefly."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("heldIndicator")
        self.hide()

    def show_held(self, holding: Holding | None, now: float, timeline: Timeline) -> None:
        held_for = now - holding.since if holding is not None else 0.0
        if holding is None or held_for < HELD_AFTER_S:
            self.hide()
            return
        run = timeline.runs.get(holding.call_id or "")
        agent = timeline.agents.get(run.agent_id) if run is not None else None
        what = f"{run.tool} · {run.summary}" if run is not None else holding.who
        whose = f" ({agent.name})" if agent is not None else ""
        calls = "1 call waits" if holding.waiting == 1 else f"{holding.waiting} calls wait"
        self.setText(f" ⏳ {calls}: {html.escape(what)}{html.escape(whose)} holds the workspace ({held_for:.0f} s) ")
        self.setToolTip(f"{calls} for {what}{whose} to finish. A command holds the workspace while it runs so that "
                        "every change found afterwards is its own. If the agent running it is killed, Belay lets go "
                        "within about a second of noticing (within 10 minutes when it cannot watch the agent's "
                        "process), and the call ends as interrupted.")
        self.show()


WATCH_EVERY_S = 5.0
"""How often the watch indicator reads the console's state (a field read): watching may stop at any time."""
NOT_WATCHING = "⚠ Not watching files: each command rescans the workspace"
NOT_WATCHING_TIP = (
    "Belay cannot watch this workspace's files for changes ({problem}).\n\n"
    "What it does instead: before and after each command it compares the whole workspace with what it "
    "recorded. Every command's changes are still recorded as its own and can be undone, but each command takes "
    "longer in a large workspace; edits made outside Belay (your editor, a build) show up in the timeline when "
    "the next call runs rather than at once; and read-only calls are not answered from the result cache.{why}\n\n"
    "Belay tries again when the workspace is opened again.")
LIMIT_TIPS = {
    "instances": (
        "\n\nWhy: every inotify instance your user may have is taken: each program that watches files (editors, "
        "IDEs, build and test watchers, other Belay windows) uses some. Close some of them, or raise the limit: "
        "sudo sysctl fs.inotify.max_user_instances=512 (add it to /etc/sysctl.d/ to keep it)."),
    "watches": (
        "\n\nWhy: this workspace has more folders than inotify lets your user watch (one watch per folder, shared "
        "with every program that watches files). Raise the limit: sudo sysctl fs.inotify.max_user_watches=524288 "
        "(add it to /etc/sysctl.d/ to keep it)."),
}


class WatchIndicator(QLabel):
    """Hidden while Belay watches the workspace's files; when it cannot (an inotify limit reached: a large
    repository, many editors open), says so and, in its tooltip, what Belay does instead and how to fix it.

    Reads `state` (the console's `watch_state`) every WATCH_EVERY_S: watching can stop while the window is open.
    """

    def __init__(self, state: Callable[[], WatchState | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("watchIndicator")
        self._state = state
        self.shown: WatchState | None = None
        theme.follow(self, self._restyle)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.refresh)
        self._timer.start(int(WATCH_EVERY_S * 1000))
        self.refresh()

    def refresh(self) -> None:
        self.show_state(self._state())

    def _restyle(self) -> None:
        self.show_state(self.shown)

    def show_state(self, state: WatchState | None) -> None:
        """None (a console that does not watch here: another host's) and a watching one show nothing."""
        self.shown = state
        if state is None or state.watching:
            self.hide()
            return
        self.setText(f"<span style='color:{theme.colour('warning')}'>&nbsp;{html.escape(NOT_WATCHING)}&nbsp;</span>")
        why = LIMIT_TIPS.get(state.limit, "") if state.limit is not None else ""
        self.setToolTip(NOT_WATCHING_TIP.format(problem=state.problem or "no reason given", why=why))
        self.show()

    def __repr__(self) -> str:
        return f"<WatchIndicator {self.shown!r}>"


STORE_FIRST_S = 3.0
"""The first measure waits until the window has settled: start-up stays as fast as before."""
STORE_EVERY_S = 300.0
"""Then the store is measured again this often (a walk of the blob folder, off the GUI thread)."""


class StoreIndicator(QLabel):
    """How much Belay keeps for this workspace and how far back undo reaches: "▤ 412 MB · undo to 3 Nov".

    Measured off the GUI thread (a journal query and a walk of the blob folder), rarely; hidden until the
    first measure.  The tooltip says what `belay gc` would end and where retention is set.
    """

    def __init__(self, state_dir: Path, spawn: Spawn, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("storeIndicator")
        self.state_dir, self._spawn = state_dir, spawn
        self.usage: StoreUsage | None = None
        self._shown: tuple[StoreUsage, Retention] | None = None
        self._measuring = False
        theme.follow(self, self._restyle)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._measure_soon)
        self._timer.start(int(STORE_FIRST_S * 1000))
        self.hide()

    def _measure_soon(self) -> None:
        self._timer.start(int(STORE_EVERY_S * 1000))
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no asyncio loop runs Qt here (a bare widget test): nothing measures
        if not self._measuring:
            self._measuring = True
            self._spawn(self.measure(), "measure the store")

    async def measure(self) -> None:
        try:
            usage, retention = await asyncio.to_thread(_measured, self.state_dir)
        finally:
            if shiboken6.isValid(self):
                self._measuring = False
        if shiboken6.isValid(self):  # the window may have closed while the store was walked
            self.show_usage(usage, retention)

    def _restyle(self) -> None:
        if self._shown is not None:
            self.show_usage(*self._shown)

    def show_usage(self, usage: StoreUsage, retention: Retention) -> None:
        """The line; in the warning colour once `belay gc` would end some of this history."""
        self.usage, self._shown = usage, (usage, retention)
        reach = f" · undo to {_day(usage.oldest_call_at)}" if usage.oldest_call_at is not None else ""
        old = (usage.oldest_call_at is not None
               and datetime.now(timezone.utc) - usage.oldest_call_at > timedelta(days=retention.keep_days))
        over = old or usage.state_bytes > retention.max_bytes
        text = html.escape(f" ▤ {_bytes(usage.state_bytes)}{reach} ")
        self.setText(f"<span style='color:{theme.colour('warning')}'>{text}</span>" if over else text)
        oldest = (f"The oldest call still undoable is from {usage.oldest_call_at.astimezone():%Y-%m-%d %H:%M} "
                  f"({_plural(usage.calls, 'call')} journaled)." if usage.oldest_call_at is not None
                  else "No call is journaled yet.")
        beyond = ("It holds more than the retention in your settings keeps: `belay gc` would end the oldest of "
                  "it.\n\n" if over else "")
        self.setToolTip(f"{beyond}Belay's record of this workspace (its journal, and a copy of every file version an "
                        f"undo may need) takes {_bytes(usage.state_bytes)} in {self.state_dir}. {oldest}\n\n"
                        f"`belay gc --workspace …` (with this window closed) ends undo history older than "
                        f"{retention.keep_days:g} days, and the oldest beyond {_bytes(retention.max_bytes)}: "
                        "[storage] keep_days and max_gb in your settings.toml.")
        self.show()

    def __repr__(self) -> str:
        return f"<StoreIndicator {self.state_dir} {self.usage!r}>"


class Spawn(Protocol):
    """The window's task set: runs a coroutine it owns (gui.window.runtime.tasks.TaskSet.spawn)."""

    def __call__(self, coro: Coroutine[Any, Any, Any], name: str) -> object: ...


def _measured(state_dir: Path) -> tuple[StoreUsage, Retention]:
    from core import load_retention, store_usage  # the journal's and the settings' modules: not before first paint

    return store_usage(state_dir), load_retention()[0]


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if n < 10 * scale else f"{n / scale:.0f} {unit}"
    return f"{int(n)} bytes"


def _day(moment: datetime) -> str:
    local = moment.astimezone()
    return f"{local.day} {local:%b}" + ("" if local.year == datetime.now().year else f" {local.year}")


def preview_state(console: ConsoleSurface) -> tuple[bool, str] | None:
    """For the sandbox indicator: whether commands are previewed as the settings ask, or why not (None: the
    settings apply commands as they run)."""
    if console.bash_settings.effects == "apply":
        return None
    return console.previews.available, console.previews.detail
