"""A timeline's time spans: what a Gantt chart draws of its agents, batches and runs.

The part of `core.timeline.tree.Timeline` that reads when things waited, ran
and ended, from the nodes the timeline keeps: the row whose time axis a
span is on (`group`: a call's batch, else its agent), whether an agent or a
batch is still at work (`live`), how long its time window is (`window`),
and a run's or a batch's span on that axis (`span`, a `GanttSpan` a front
end scales into a bar).  It changes nothing.
"""

from __future__ import annotations

from datetime import datetime

from core.models.records import AgentStatus
from core.timeline.keys import AgentKey, BatchKey, NodeKey, RunKey, parse_key
from core.timeline.nodes import AgentNode, BatchNode, GanttSpan, RunNode, batch_span, run_span


class TimeSpans:
    """The time spans of a timeline's agents, batches and runs (`Timeline` holds the nodes)."""

    agents: dict[str, AgentNode]
    batches: dict[str, BatchNode]
    runs: dict[str, RunNode]

    def group(self, key: NodeKey | str) -> NodeKey | None:
        """The row whose time window `key`'s span is on: its batch, else its agent (None for an agent)."""
        key = parse_key(key)
        if isinstance(key, RunKey):
            run = self.runs[key.call_id]
            return BatchKey(run.batch_id) if run.batch_id else AgentKey(run.agent_id)
        if isinstance(key, BatchKey):
            return AgentKey(self.batches[key.batch_id].agent_id)
        return None

    def live(self, group: NodeKey | str) -> bool:
        """Whether this agent or batch is still at work (its time window then ends "now").

        It is while one of its runs is unfinished, and a batch is from its start
        to its BatchFinished, even between two calls, unless its agent ended first.
        """
        node = self._group_node(group)
        if any(n > 0 and not status.final for status, n in node.statuses.items()):
            return True
        if isinstance(node, AgentNode):
            return node.status == AgentStatus.RUNNING and bool(node.open_batches)
        return node.batch_id in self.agents[node.agent_id].open_batches and \
            self.agents[node.agent_id].status == AgentStatus.RUNNING

    def window(self, group: NodeKey | str, now: datetime) -> float:
        """How long the agent's or batch's time window is, in seconds from its start."""
        node = self._group_node(group)
        if self.live(group):
            end = now
        else:
            done = node.finished_at if isinstance(node, BatchNode) else node.ended_at
            end = max((t for t in (node.last_at, done) if t is not None), default=node.started_at)
        return max((end - node.started_at).total_seconds(), 0.0)

    def span(self, key: NodeKey | str, now: datetime) -> GanttSpan | None:
        """A run's or a batch's span on its group's time axis (None for an agent)."""
        key = parse_key(key)
        group = self.group(key)
        if group is None:
            return None
        start = self._group_node(group).started_at
        if isinstance(key, BatchKey):
            return batch_span(self.batches[key.batch_id], self.live(key), start, now)
        assert isinstance(key, RunKey)
        run = self.runs[key.call_id]
        return run_span(run, start, self.batches[run.batch_id].started_at if run.batch_id else None, now)

    def _group_node(self, group: NodeKey | str) -> AgentNode | BatchNode:
        group = parse_key(group)
        return self.batches[group.batch_id] if isinstance(group, BatchKey) else self.agents[group.ident]
