"""What each row of the timeline shows, worked out ahead of painting: its cells, tooltips, status colour and
Gantt bar, and the time windows the bars are drawn to scale in.

A run's row is prepared when a view first paints it and forgotten again beyond `PREPARED` rows (a flood of calls
costs no formatting for rows nobody scrolls to); an agent's or a batch's is kept up to date as it changes.  The
item model (gui.window.timeline.model) reads these tables straight from `data()`, and tells Qt what changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from core import LEAVES, BatchKey, MessageKey, NodeKey, RunKey, Timeline, expected_left_s
from gui.window.timeline.gantt import GanttBar, GanttWindow, describe
from gui.window.timeline.rows import (
    STATUS_COLOR,
    UNDONE_COLOR,
    agent_columns,
    agent_tip,
    batch_columns,
    batch_state,
    batch_tip,
    message_columns,
    message_tip,
    rollup_colour,
    run_columns,
)

PREPARED = 2_000
"""Runs and messages whose row (cells, tooltips, bar) is kept prepared, the last prepared; far more than a screen
holds."""


class PreparedRows:
    """The prepared rows of one timeline: tables by row key, read by the item model as they are."""

    def __init__(self) -> None:
        self.timeline = Timeline()
        self.cells: dict[NodeKey, tuple[str, ...]] = {}
        self.tips: dict[NodeKey, str] = {}
        self.brushes: dict[NodeKey, str] = {}
        """The theme role of each row's status; the brush is looked up in the theme shown when painted."""
        self.bars: dict[NodeKey, GanttBar] = {}
        self.bar_tips: dict[NodeKey, str] = {}
        self.windows: dict[NodeKey, GanttWindow] = {}
        """Each group's (an agent's or a batch's) time window, shared by the bars of its rows."""
        self.prepared: dict[NodeKey, None] = {}
        """The runs and messages whose row is prepared, oldest first."""
        self.live: set[NodeKey] = set()
        """Rows whose bar ends "now": refreshed by the model's tick."""

    def reset(self, timeline: Timeline) -> None:
        """Forget every row: `timeline` is shown anew."""
        self.timeline = timeline
        for table in (self.cells, self.tips, self.brushes, self.bars, self.bar_tips, self.windows, self.prepared):
            table.clear()
        self.live.clear()

    def refresh(self, key: NodeKey, now: datetime) -> None:
        """A row changed: an agent's or a batch's is worked out again; a run's is forgotten until painted."""
        timeline = self.timeline
        if type(key) is MessageKey:
            self.forget(key)  # (what was said never changes: prepared again when painted)
            return
        if isinstance(key, RunKey):
            self.forget(key)
            if timeline.runs[key.call_id].status.final:
                self.live.discard(key)
            else:
                self.live.add(key)
            group = timeline.group(key)
            if group is not None and group not in self.windows:  # its bars are drawn to scale from now on
                self.windows[group] = GanttWindow(timeline.window(group, now))
            return
        if isinstance(key, BatchKey):
            batch = timeline.batches[key.batch_id]
            live = timeline.live(key)
            runs = (timeline.runs[k.call_id] for k in batch.children if isinstance(k, RunKey)) if live else ()
            left = expected_left_s(batch, runs, now) if live else None
            cells = self.cells[key] = batch_columns(batch, live, timeline.rollup(key), left)
            self.tips[key] = batch_tip(batch, cells)
            self._set_brush(key, STATUS_COLOR[batch_state(batch, live)])
        else:
            agent = timeline.agents[key.ident]
            counts = timeline.rollup(key)
            used = timeline.usage(key.ident).values()  # its branch's: its sub-agents' included
            self.cells[key] = agent_columns(agent, counts, sum(u.input + u.output + u.cache_read + u.cache_write
                                                               for u in used))
            self.tips[key] = agent_tip(agent, timeline.agents.get(agent.parent_id or ""), counts)
            self._set_brush(key, rollup_colour(counts))
        self.refresh_bar(key, now)

    def unshown(self, key: NodeKey) -> bool:
        """A batch's row no view has painted: nothing to refresh, it is prepared when first painted."""
        return type(key) is BatchKey and key not in self.cells

    def prepare(self, key: NodeKey, now: datetime) -> None:
        """A row's cells, tooltips, brush and bar, as the view first asks for them; the oldest prepared runs
        are forgotten beyond PREPARED rows (they are prepared again if painted again)."""
        if type(key) is MessageKey:
            message = self.timeline.messages[key.message_id]
            self.cells[key] = message_columns(message)
            self.tips[key] = message_tip(message)
            self.brushes[key] = "muted"
            self._prepared(key)
            return
        if not isinstance(key, RunKey):
            self.refresh(key, now)
            return
        run = self.timeline.runs[key.call_id]
        self.cells[key] = run_columns(run)
        self.tips[key] = run.error.message if run.error else run.call_id
        self._set_brush(key, UNDONE_COLOR if run.undone_by or run.undone_paths else STATUS_COLOR.get(run.status))
        self.refresh_bar(key, now)
        self._prepared(key)

    def _prepared(self, key: NodeKey) -> None:
        """A leaf's row is prepared: the oldest prepared are forgotten beyond PREPARED rows."""
        self.prepared[key] = None
        if len(self.prepared) > PREPARED:
            self.forget(next(iter(self.prepared)))

    def forget(self, key: NodeKey) -> None:
        if self.prepared.pop(key, 0) is None:  # prepared: its tables' entries go
            for table in (self.cells, self.tips, self.brushes, self.bars, self.bar_tips):
                table.pop(key, None)

    def _set_brush(self, key: NodeKey, role: str | None) -> None:
        if role is None:
            self.brushes.pop(key, None)
        else:
            self.brushes[key] = role

    def refresh_bar(self, key: NodeKey, now: datetime) -> None:
        """The row's Gantt bar as of `now`, in its group's window."""
        span = self.timeline.span(key, now)
        group = self.timeline.group(key)
        if span is None or group is None:
            return
        window = self.windows.get(group)
        if window is None:
            window = self.windows[group] = GanttWindow(self.timeline.window(group, now))
        self.bars[key] = GanttBar(span, window)
        if isinstance(key, BatchKey):
            self.bar_tips[key] = f"{'running' if span.live else 'ran'} {span.ended - span.queued:.2f} s" + \
                (" so far" if span.live else "")
        else:
            self.bar_tips[key] = describe(span)
        if span.live:
            self.live.add(key)
        else:
            self.live.discard(key)

    def groups_of(self, key: NodeKey) -> Iterable[NodeKey]:
        """The windows a change to `key` may stretch: its own (for an agent or a batch), its group's,
        and for a batch's call its agent's too (the batch's bar is drawn there)."""
        if type(key) not in LEAVES:
            yield key
        group = self.timeline.group(key)
        while group is not None:
            yield group
            group = self.timeline.group(group)

    def __repr__(self) -> str:
        return f"<PreparedRows rows={len(self.cells)} runs={len(self.prepared)} live={len(self.live)}>"
