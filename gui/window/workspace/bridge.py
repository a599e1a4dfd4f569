"""The bridge: the GUI's only subscriber to the core's events.

It drains the console's event stream in batches on the shared loop, has
the timeline model show what the console's timeline took in meanwhile (the
bus fed it as the events were published: the window keeps no copy), and
re-emits the few facts panels care about as typed Qt signals.  A call's
own events (queued, started, finished: SHOWN_BY_ROWS) are not queued for
it at all, only counted (core.bus): their rows say what they say, and the
runs whose rows changed are told from the model.  Under a flood that is
most of the stream, never held, so never walked by the collector.  When the
bus says this subscriber lagged, the events it missed are not replayed:
the timeline holds their effect already, and panels that follow events
reread it (`resynced`).

It takes a batch at most once a frame: each batch that inserts rows costs a
repaint of the timeline and a share for each parent its rows came under,
whatever its size, so batches are paced by how long the last one kept the
loop busy (its signals, then Qt's layout and paint, seen as how late the
pause after it ended): the pause is BUSY_SHARE times that, and
under a flood at least FLOOD_PAUSE_S (eight batches a second), so the window
spends about a third of its time showing events and the rest taking them in
and answering, and the rows of a whole batch arrive as one range insert per
parent.  A pause ends early when a batch's worth waits (the bus's
high-water mark, where a publisher that awaits room is held): a window at
rest never keeps a source waiting.  The runs a batch changed are told once,
together (`runs_changed`), after the rows are shown and the batch's other
events are told; a listener that follows runs one at a time (`run_changed`,
tests and scripts) hears each once a batch, just before.

Events may carry a call's whole arguments (CallQueued, ApprovalRequested):
the bridge never holds a CallQueued, and keeps no other event past its
batch.  The timeline keeps excerpts (core.timeline.excerpts), the approval
panel a request only while it waits, and the details pane reads a selected
call back from the journal.

Signals:
    approval_requested(ApprovalRequested): a call now waits for a person.
    approval_resolved(str): the call with this id no longer waits.
    run_changed(str): the run with this call id changed (status, result, output, approval, undo); emitted only
        while connected (the window follows `runs_changed`; tests and scripts follow one run).
    runs_changed(list[str]): the runs a batch changed, once a batch (what the window follows: a flood changes
        thousands of runs a second).
    rollback_refused(RollbackRefused): an undo was refused (conflicts).
    shells_changed(str): the background shell with this id started, printed or ended.
    conversation_changed(str): what this agent said (or spent) was read from its transcript.
    budget_reached(BudgetReached): a limit of the settings' `[budget]` was reached.
    policy_changed(PolicyChanged): the rules or the mode changed (rules, mode and settings problems now in force).
    external_changes(ExternalChangesRecorded): files changed outside Belay were found and journaled.
    mcp_changed(ServerStatus): an MCP server started, became ready, failed or stopped.
    elicitation_requested(ElicitationRequested): an MCP server asks the person for input.
    elicitation_resolved(str): the request for input with this id no longer waits.
    batch_applied(): a batch of events was applied (refresh summaries).
    resynced(): events were missed; panels reread the timeline and the pending approvals.
    link_changed(LinkChanged): a console on another host went out of reach, or was reached again (then its
        timeline is a new one: the console's `timeline`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QMetaMethod, QObject, Signal

from core import (
    ApprovalRequested,
    ApprovalResolved,
    BudgetReached,
    CallFinished,
    CallQueued,
    CallStarted,
    ConsoleSurface,
    ConversationRecorded,
    ElicitationRequested,
    ElicitationResolved,
    Event,
    ExternalChangesRecorded,
    Lagged,
    LinkChanged,
    McpServerChanged,
    PolicyChanged,
    RollbackRefused,
    ShellFinished,
    ShellOutput,
    ShellStarted,
    Subscription,
)
from gui.window.runtime.tasks import TaskSet
from gui.window.timeline.model import TimelineModel

log = logging.getLogger(__name__)

FRAME_S = 0.016
"""The shortest pause between two batches: one a frame at 60 Hz."""
BUSY_SHARE = 2.0
"""The pause after a batch, as a multiple of how long it kept the loop busy: under a flood the window spends
about a third of its time showing rows."""
FLOOD_EVENTS = 1_000
FLOOD_PAUSE_S = 0.125
"""Under a flood (a batch of FLOOD_EVENTS or more) the pause is at least FLOOD_PAUSE_S: each batch costs a repaint
of the timeline and an insert per parent (some 10 to 15 ms at 100,000 rows) whatever its size, so eight a second
show a flood with a third of the loop's time, where a batch a frame spent most of it repainting; and a batch of
an eighth of a second's events is applied within the 50 ms a stall may take."""
MAX_PAUSE_S = 0.5
"""The longest: the rows of a flood still arrive twice a second however slow the view is."""
BACKLOG = 100_000
"""Events the bus keeps for the window between two batches (a flood of 30,000 a second for MAX_PAUSE_S fits)."""
DRAIN = BACKLOG
"""Everything waiting is taken at once: one flush, one layout."""


class Bridge(QObject):
    """Moves events from the console's bus into Qt, in batches."""

    approval_requested = Signal(object)
    approval_resolved = Signal(str)
    run_changed = Signal(str)
    runs_changed = Signal(object)  # a list: as `list` Qt copies it both ways (3 ms for 5,000 ids)
    rollback_refused = Signal(object)
    shells_changed = Signal(str)
    conversation_changed = Signal(str)
    budget_reached = Signal(object)
    policy_changed = Signal(object)
    external_changes = Signal(object)
    mcp_changed = Signal(object)
    elicitation_requested = Signal(object)
    elicitation_resolved = Signal(str)
    batch_applied = Signal()
    resynced = Signal()
    link_changed = Signal(object)

    def __init__(self, console: ConsoleSurface, model: TimelineModel, tasks: TaskSet, *,
                 backlog: int = BACKLOG) -> None:
        super().__init__()
        self._backlog = backlog
        self._console = console
        self._model = model
        self._tasks = tasks
        self._subscription: Subscription | None = None
        self._pump: asyncio.Task[None] | None = None
        self._unregister: Callable[[], None] = lambda: None
        self._unregister_forms: Callable[[], None] = lambda: None
        self._run_changed = QMetaMethod.fromSignal(self.run_changed)

    def start(self) -> None:
        timeline, self._subscription = self._console.attach(self._backlog, SHOWN_BY_ROWS)
        self._unregister = self._console.register_approver("window")
        self._unregister_forms = self._console.elicitations.register("window")  # MCP servers' questions
        self._model.reset(timeline)
        self._model.auto_flush = False  # flushed here, after each batch: once a frame
        self._model.follow_runs()  # the runs a batch changed, told from its rows
        self._pump = self._tasks.spawn(self._run(), "event bridge")

    def stop(self) -> None:
        self._unregister()
        self._unregister_forms()
        if self._subscription is not None:
            self._subscription.close()
        if self._pump is not None:
            self._pump.cancel()

    async def _run(self) -> None:
        subscription = self._subscription
        assert subscription is not None
        loop = asyncio.get_running_loop()
        pause = FRAME_S
        while True:
            await subscription.wait()
            if subscription.closed:
                return
            least = FLOOD_PAUSE_S if subscription.waiting >= FLOOD_EVENTS else FRAME_S
            batch = subscription.drain(DRAIN)
            began = loop.time()
            self._model.flush()  # the rows first, in a turn of their own: what waited meanwhile (input, a paint)
            shown = loop.time()  # runs before the panels hear of the events, not after both
            await asyncio.sleep(0)
            resumed = loop.time()
            self.apply(batch, shown=True)
            del batch  # its events freed in this turn, not in the next batch's, with its rows
            applied = loop.time()
            try:
                async with asyncio.timeout(pause):
                    await subscription.filled()  # a publisher held at the mark is not kept waiting by a pause
                late = 0.0
            except TimeoutError:
                late = loop.time() - applied - pause  # the loop was busy: Qt laid out and painted what was shown
            busy = shown - began + applied - resumed + late
            pause = min(MAX_PAUSE_S, max(least, BUSY_SHARE * busy))

    def apply(self, batch: list[Event], *, shown: bool = False) -> None:
        """Show the rows, then tell: the batch's events in order, then the runs whose rows changed, together (and
        one by one to a `run_changed` listener).  Dispatched on the event's type, not a chain of isinstance.
        `shown`: the batch's rows were shown already (the rows of events published since wait for the next
        batch: one repaint a batch)."""
        if not shown:
            self._model.flush()  # the rows these events made are shown before anyone hears of them
        for event in batch:
            if type(event) in _TELLING:
                self._tell(event)
        runs = self._model.take_changed_runs()
        if runs:
            if self.isSignalConnected(self._run_changed):  # a signal a run is some microseconds each: only if heard
                for call_id in runs:
                    self.run_changed.emit(call_id)
            self.runs_changed.emit(runs)
        self.batch_applied.emit()

    def _tell(self, event: Event) -> None:
        if type(event) is Lagged:
            log.warning("the window fell %d events behind; resynchronising", event.missed)
            self.resynced.emit()
            return
        tell = _TOLD.get(type(event))
        if tell is not None:
            tell(self, event)

    def __repr__(self) -> str:
        return f"<Bridge subscription={self._subscription!r}>"


SHOWN_BY_ROWS: frozenset[type[Event]] = frozenset({CallQueued, CallStarted, CallFinished})
"""What a call's row says all of: the bus counts these for the bridge instead of queueing them (a flood is mostly
these three, some 30,000 a second), and the runs they changed are told from the rows (`runs_changed`)."""
_TOLD: dict[type[Event], Callable[[Bridge, Any], None]] = {
    ApprovalRequested: lambda bridge, e: bridge.approval_requested.emit(e),
    ApprovalResolved: lambda bridge, e: bridge.approval_resolved.emit(e.call_id),
    ShellStarted: lambda bridge, e: bridge.shells_changed.emit(e.shell_id),
    ShellOutput: lambda bridge, e: bridge.shells_changed.emit(e.shell_id),
    ShellFinished: lambda bridge, e: bridge.shells_changed.emit(e.shell_id),
    RollbackRefused: lambda bridge, e: bridge.rollback_refused.emit(e),
    PolicyChanged: lambda bridge, e: bridge.policy_changed.emit(e),
    ExternalChangesRecorded: lambda bridge, e: bridge.external_changes.emit(e),
    McpServerChanged: lambda bridge, e: bridge.mcp_changed.emit(e.status),
    ElicitationRequested: lambda bridge, e: bridge.elicitation_requested.emit(e),
    ElicitationResolved: lambda bridge, e: bridge.elicitation_resolved.emit(e.elicitation_id),
    LinkChanged: lambda bridge, e: bridge.link_changed.emit(e),
    ConversationRecorded: lambda bridge, e: bridge.conversation_changed.emit(e.agent_id),
    BudgetReached: lambda bridge, e: bridge.budget_reached.emit(e),
}
"""What each other event is told as (the events no panel follows are not told)."""
_TELLING = frozenset({*_TOLD, Lagged})
