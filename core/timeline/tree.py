"""The timeline read model: agents as a tree, their batches and runs beneath, from events.

Qt-free so it can be tested alone and shared by every front end.  `apply`
takes one event and says what changed (a row inserted under a parent, a row
updated), to its caller and to whoever `watch`es, which is all a Qt item
model needs to emit its signals; rows are only ever appended, so a row
number never changes once given.  There is one timeline per console, fed by
the bus as events are published; the window's model adapts it, it keeps no
copy.  Sub-agents
sit under their parent agent, right after the call that spawned them; one
whose parent is unknown sits at the top rather than being dropped.  A batch
is a row under its agent holding the batch's calls (and the sub-agents they
spawn); when its BatchStarted is missing (an old journal) or late, it is
made from its first call, so the order of the stream never matters.

Every run and batch also has a `GanttSpan`: when it waited, asked, ran and
ended, in seconds on its group's time axis (its batch's for a call of a
batch, its agent's otherwise), for a front end to scale into a bar (the nodes
and the spans are in core.timeline.nodes; the timeline reads them as
core.timeline.spans's `TimeSpans`).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from core.events import (
    AgentFinished,
    AgentLinked,
    AgentStarted,
    ApprovalRequested,
    ApprovalResolved,
    BatchFinished,
    BatchStarted,
    CallFinished,
    CallOutput,
    CallProgress,
    CallQueued,
    CallRetrying,
    CallStarted,
    ConversationRecorded,
    Event,
    ExternalChangesRecorded,
    RollbackFinished,
    ShellFinished,
    ShellOutput,
    ShellStarted,
)
from core.models.conversation import Message, TokenUse
from core.models.records import AgentRecord, AgentStatus, BatchRecord, CallRecord, ExternalRecord, RunStatus
from core.timeline.excerpts import OUTPUT_WHOLE_CHARS, excerpt_args, excerpt_line
from core.timeline.kept import answered, batch_node, kept_result, run_node
from core.timeline.keys import AgentKey, BatchKey, NodeKey, RunKey, parse_key
from core.timeline.nodes import (
    AgentNode,
    BatchNode,
    BatchTotals,
    ExternalNode,
    Inserted,
    RunNode,
    Updated,
    known_end,
)
from core.timeline.shells import Shells, tail
from core.timeline.spans import TimeSpans
from core.timeline.talk import Talk

Change = Inserted | Updated

_QUEUED, _RUNNING = RunStatus.QUEUED, RunStatus.RUNNING
"""Read from the module, not the enum: a member looked up on its class costs a flood of calls measurably (3.11)."""
_run_key, _inserted, _updated = str.__new__, tuple.__new__, tuple.__new__
"""A run's key and the changes a call makes, built without the Python frame of their classes' constructors: a flood
makes four of them a call (`_run_key(RunKey, RunKey.prefix + call_id)` is `RunKey(call_id)`)."""


class Timeline(TimeSpans, Talk, Shells):
    """Agents, batches, runs and what the agents said, of this workspace, earlier sessions included."""

    def __init__(self) -> None:
        Talk.__init__(self)
        Shells.__init__(self)
        self.roots: list[NodeKey] = []
        self.agents: dict[str, AgentNode] = {}
        self.runs: dict[str, RunNode] = {}
        self.batches: dict[str, BatchNode] = {}
        self.externals: list[ExternalNode] = []
        """Changes nobody in Belay made, oldest first; never part of the agent tree."""
        self._row: dict[NodeKey, int] = {}
        self._parent: dict[NodeKey, NodeKey | None] = {}
        self._groups: dict[str, NodeKey] = {}
        """The key of each agent's and batch's row by its text: a run's parent is this one key object, not a copy
        per run (60 bytes a call)."""
        self._sub_agents: dict[NodeKey, list[AgentKey]] = {}
        """The agents shown right under each agent or batch (an agent's include those under its batches)."""
        self.tools: dict[str, None] = {}
        """The tools the runs called, in the order first seen (a filter's choices: never a walk of the runs)."""
        self._counts: Counter[RunStatus] = Counter()
        """Every run by status, kept as they change (the status line reads it after each batch)."""
        self.last_seq = 0
        self._watchers: list[Callable[[list[Change]], None]] = []

    def watch(self, watcher: Callable[[list[Change]], None]) -> Callable[[], None]:
        """Call `watcher` with what each applied event changed (rows inserted, rows updated), as it is applied;
        returns the way to stop.  The window's item model shows the rows it has been told of."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    @property
    def watching(self) -> int:
        """How many watchers are told of changes."""
        return len(self._watchers)

    # -- tree navigation --------------------------------------------------

    # Public readers take a key or its text ("a:<agent id>"): a key typed in a test or a script reads the same.

    def children(self, key: NodeKey | str | None) -> list[NodeKey]:
        if key is None:
            return self.roots
        key = parse_key(key)
        if isinstance(key, AgentKey):
            return self.agents[key.agent_id].children
        if isinstance(key, BatchKey):
            return self.batches[key.batch_id].children
        return []

    def parent(self, key: NodeKey | str) -> NodeKey | None:
        return self._parent[key]  # type: ignore[index]  # a key's text finds its row (a NodeKey is its str)

    def sub_agents(self, key: NodeKey | str) -> list[AgentKey]:
        """The agents right under an agent (those under its batches included) or a batch, in the tree's order:
        found without walking the runs."""
        key = parse_key(key)
        found = self._sub_agents.get(key, [])

        def place(sub: AgentKey) -> tuple[int, int]:  # the row under `key` that holds it, then its row there
            holder = self._parent[sub]
            return (self._row[sub], -1) if holder == key or holder is None else (self._row[holder], self._row[sub])

        return sorted(found, key=place)

    def row(self, key: NodeKey | str) -> int:
        return self._row[key]  # type: ignore[index]  # a key's text finds its row (a NodeKey is its str)

    def parent_table(self) -> Mapping[NodeKey, NodeKey | None]:
        """Every row's parent (`parent`), the timeline's own table, to read: for a view that looks up thousands
        of rows a frame, without a call each."""
        return self._parent

    def row_table(self) -> Mapping[NodeKey, int]:
        """Every row's place under its parent (`row`), the timeline's own table, to read."""
        return self._row

    def counts(self) -> Counter[RunStatus]:
        """Every run by status: a copy of the tally kept as runs come and change, never a walk of the runs."""
        return +self._counts

    def rollup(self, key: NodeKey | str) -> Counter[RunStatus]:
        """The runs under an agent or a batch by status, its sub-agents' (at any depth) included: what a
        collapsed row stands for.  Walks the agents only, never the runs."""
        key = parse_key(key)
        node = self._group_node(key)
        total = Counter(node.statuses)
        for sub in self._sub_agents.get(key, ()):
            total.update(self.rollup(sub))
        return total

    def snapshot(self) -> Timeline:
        """An independent copy nobody watches (for a reader on another thread, or a test)."""
        watchers, self._watchers = self._watchers, []
        try:
            return copy.deepcopy(self)
        finally:
            self._watchers = watchers

    # -- building ---------------------------------------------------------

    def _append(self, parent: NodeKey | None, key: NodeKey, siblings: list[NodeKey] | None = None) -> Inserted:
        """`key` appended under `parent` (whose children are `siblings`, when the caller holds them)."""
        if siblings is None:
            siblings = self.children(parent)
        row = self._row[key] = len(siblings)
        self._parent[key] = parent
        siblings.append(key)
        if not isinstance(key, RunKey):
            self._groups[key] = key
        if parent is not None and isinstance(key, AgentKey):
            self._sub_agents.setdefault(parent, []).append(key)
            if isinstance(parent, BatchKey):
                self._sub_agents.setdefault(AgentKey(self.batches[parent.batch_id].agent_id), []).append(key)
        return Inserted(parent, row, key)

    def _add_agent(self, node: AgentNode) -> list[Change]:
        if node.agent_id in self.agents:
            return []
        self.agents[node.agent_id] = node
        parent: NodeKey | None = None
        if node.parent_id in self.agents:
            parent = AgentKey(node.parent_id)
            spawner = self.runs.get(node.spawned_by or "")
            if spawner is not None and spawner.batch_id and spawner.agent_id == node.parent_id:
                parent = BatchKey(spawner.batch_id)  # after its call, inside the batch
        return [self._append(parent, AgentKey(node.agent_id))]

    def _ensure_agent(self, agent_id: str, at: datetime) -> list[Change]:
        if agent_id in self.agents:
            return []
        return self._add_agent(AgentNode(agent_id, "unknown agent", "unknown", "", None, None,
                                         AgentStatus.RUNNING, at))

    def _add_batch(self, node: BatchNode) -> list[Change]:
        if node.batch_id in self.batches:
            return []
        changes = self._ensure_agent(node.agent_id, node.started_at)
        self.batches[node.batch_id] = node
        if node.totals is None and not node.interrupted:
            self.agents[node.agent_id].open_batches.add(node.batch_id)
        self._reach(node.agent_id, None, [node.started_at, node.finished_at])
        changes.append(self._append(AgentKey(node.agent_id), BatchKey(node.batch_id)))
        return changes

    def _add_run(self, node: RunNode) -> list[Change]:
        """A run's row appended: counted by status and placed under its agent or batch.  A flood comes here for
        every call: what helpers would do is written out (a Python call costs about what a dict write does)."""
        call_id, agent_id, batch_id, status = node.call_id, node.agent_id, node.batch_id, node.status
        if call_id in self.runs:
            return []
        changes = [] if agent_id in self.agents else self._ensure_agent(agent_id, node.queued_at)
        # The group's own key, found by its text: a key is not built for every call only to look it up.
        agent = self.agents[agent_id]
        group: AgentNode | BatchNode = agent
        parent = self._groups[AgentKey.prefix + agent_id]
        at = node.queued_at
        if batch_id:
            if batch_id not in self.batches:  # its first call: the batch's row, made from it
                changes += self._add_batch(BatchNode(batch_id, agent_id, "batch", 0, None, at))
            group, parent = self.batches[batch_id], self._groups[BatchKey.prefix + batch_id]
            group.statuses[status] += 1
            if group.last_at is None or at > group.last_at:
                group.last_at = at
        self.runs[call_id] = node
        self.tools[node.tool] = None
        self._counts[status] += 1
        agent.statuses[status] += 1
        if agent.last_at is None or at > agent.last_at:
            agent.last_at = at
        if status is not _QUEUED:  # (a call queued now has not ended; one from the journal may have)
            ended = known_end(node)
            if ended is not None:
                self._reach_at(agent_id, batch_id, ended)
        node.key = key = _run_key(RunKey, RunKey.prefix + call_id)
        siblings = group.children
        row = self._row[key] = len(siblings)  # what `_append` does for a run
        self._parent[key] = parent
        siblings.append(key)
        changes.append(_inserted(Inserted, (parent, row, key)))
        if batch_id:
            changes.append(_updated(Updated, (parent,)))  # one more call seen: its "3/8 done"
        return changes

    def _reach(self, agent_id: str, batch_id: str | None, moments: Iterable[datetime | None]) -> None:
        """Stretch the agent's (and the batch's) time window to take in these moments."""
        for at in moments:
            if at is not None:
                self._reach_at(agent_id, batch_id, at)

    def load(self, agents: list[AgentRecord], calls: list[CallRecord], externals: Sequence[ExternalRecord] = (),
             batches: Sequence[BatchRecord] = (), said: tuple[Sequence[Message], Sequence[TokenUse]] = ((), ()),
             ) -> None:
        """Fill from the journal (earlier sessions), before any live event; `said`: the agents' messages and
        token use."""
        self.externals += [ExternalNode(x.op_id, x.detected_at, x.note, x.changes) for x in externals]
        # In the order they happened, so that a sub-agent lands right after the call that spawned it,
        # as it did live (an agent before its own first call when the clock ties, a batch before its calls).
        ordered: list[tuple[datetime, int, AgentRecord | BatchRecord | CallRecord | Message]]
        ordered = [(a.started_at, 0, a) for a in agents]
        ordered += [(b.created_at, 1, b) for b in batches]
        # An agent's words before the call they explain; never before the agent itself (its prompt is older than
        # its first call, when Belay first heard of it), which would stand an unknown running agent in its place.
        begun = {a.agent_id: a.started_at for a in agents}
        ordered += [(max(m.at, begun.get(m.agent_id, m.at)), 2, m) for m in said[0]]
        ordered += [(c.created_at, 3, c) for c in calls]
        ordered.sort(key=lambda item: (item[0], item[1]))
        for _, _, record in ordered:
            if isinstance(record, AgentRecord):
                self._add_agent(AgentNode(record.agent_id, record.name, record.kind, record.session_id,
                                          record.parent_id, record.spawned_by, record.status, record.started_at))
            elif isinstance(record, BatchRecord):
                self._add_batch(batch_node(record))
            elif isinstance(record, Message):
                self._add_message(record)
            else:
                self._add_run(run_node(record))
        self._count(said[1])
        for batch in self.batches.values():  # made from their calls, their batch record missing
            if batch.totals is None:
                batch.interrupted = True
                self.agents[batch.agent_id].open_batches.discard(batch.batch_id)

    # -- events -----------------------------------------------------------

    def apply(self, event: Event) -> list[Change]:
        """Take in one event; what it changed is returned and told to the watchers."""
        if event.seq > self.last_seq:
            self.last_seq = event.seq
        handler = _HANDLERS.get(type(event))
        changes = handler(self, event) if handler else []
        if changes:
            for watcher in self._watchers:
                watcher(changes)
        return changes

    def _on_agent_started(self, e: AgentStarted) -> list[Change]:
        return self._add_agent(AgentNode(e.agent_id, e.name, e.agent_kind, e.session_id, e.parent_id,
                                         e.spawned_by, AgentStatus.RUNNING, e.at))

    def _on_agent_linked(self, e: AgentLinked) -> list[Change]:
        node = self.agents.get(e.agent_id)
        if node is None:
            return []
        node.spawned_by = e.spawned_by
        return [Updated(AgentKey(e.agent_id))]

    def _on_agent_finished(self, e: AgentFinished) -> list[Change]:
        node = self.agents.get(e.agent_id)
        if node is None:
            return []
        node.status, node.ended_at, node.message = e.status, e.at, e.message
        return [Updated(AgentKey(e.agent_id))]

    def _on_batch_started(self, e: BatchStarted) -> list[Change]:
        node = self.batches.get(e.batch_id)
        if node is None:
            return self._add_batch(BatchNode(e.batch_id, e.agent_id, e.name, e.size, e.plan, e.at))
        # Made from its first call: now it has a name, a plan, and perhaps an earlier start (its runs shift).
        node.name, node.size, node.plan = e.name, e.size, e.plan
        changes: list[Change] = [Updated(BatchKey(e.batch_id))]
        if e.at < node.started_at:
            node.started_at = e.at
            changes += [Updated(key) for key in node.children if isinstance(key, RunKey)]
        return changes

    def _on_batch_finished(self, e: BatchFinished) -> list[Change]:
        node = self.batches.get(e.batch_id)
        if node is None:
            return []
        node.finished_at = e.at
        node.totals = BatchTotals(e.succeeded, e.failed, e.skipped, e.cache_hits, e.duration_s, e.max_running)
        self.agents[node.agent_id].open_batches.discard(e.batch_id)
        self._reach(node.agent_id, node.batch_id, [e.at])
        return [Updated(BatchKey(e.batch_id))]

    def _on_call_queued(self, e: CallQueued) -> list[Change]:
        args, cut = excerpt_args(e.args)
        node = RunNode(e.call_id, e.agent_id, e.tool, excerpt_line(e.summary), args, _QUEUED, e.at)
        # The rest set only when given: keywords to a node of 33 fields cost 0.7 us a call more than this.
        if cut:
            node.args_cut = True
        if e.batch_id is not None:
            node.batch_id, node.batch_key = e.batch_id, e.batch_key
        if e.use_id is not None:
            node.use_id = e.use_id
        return self._add_run(node)

    def _update_run(self, call_id: str, **fields: Any) -> list[Change]:
        node = self.runs.get(call_id)
        if node is None:
            return []
        status = fields.pop("status", node.status)
        for name, value in fields.items():
            setattr(node, name, value)
        self._reach(node.agent_id, node.batch_id, [v for v in fields.values() if isinstance(v, datetime)])
        return self._moved(node, status)

    def _moved(self, node: RunNode, status: RunStatus, at: datetime | None = None) -> list[Change]:
        """The run's status is now `status`, since `at` (which its agent's and batch's windows take in): counted
        where it was no longer, and where it is, in all, in its agent and in its batch (the status line's and the
        roll-ups' counts, kept as runs move: two moves a call under a flood, each written out here).  The rows
        that changed."""
        key = node.key or RunKey(node.call_id)
        agent = self.agents[node.agent_id]
        batch = self.batches[node.batch_id] if node.batch_id else None
        if at is not None:
            if agent.last_at is None or at > agent.last_at:
                agent.last_at = at
            if batch is not None and (batch.last_at is None or at > batch.last_at):
                batch.last_at = at
        was = node.status
        if status is was:
            return [_updated(Updated, (key,))]
        node.status = status
        counts = self._counts
        counts[was] -= 1
        counts[status] += 1
        counts = agent.statuses
        counts[was] -= 1
        counts[status] += 1
        if batch is None:
            return [_updated(Updated, (key,))]
        counts = batch.statuses
        counts[was] -= 1
        counts[status] += 1
        batch_row = self._groups[BatchKey.prefix + batch.batch_id]  # its "3/8 done" moved too
        return [_updated(Updated, (key,)), _updated(Updated, (batch_row,))]

    def _reach_at(self, agent_id: str, batch_id: str | None, at: datetime) -> None:
        """Stretch the agent's (and the batch's) time window to take in `at`."""
        agent = self.agents[agent_id]
        if agent.last_at is None or at > agent.last_at:
            agent.last_at = at
        if batch_id:
            batch = self.batches[batch_id]
            if batch.last_at is None or at > batch.last_at:
                batch.last_at = at

    def _on_approval_requested(self, e: ApprovalRequested) -> list[Change]:
        return self._update_run(e.call_id, status=RunStatus.BLOCKED_ON_USER, approval=e, approval_at=e.at)

    def _on_approval_resolved(self, e: ApprovalResolved) -> list[Change]:
        node = self.runs.get(e.call_id)
        light = answered(node.approval) if node is not None and node.approval is not None else None
        return self._update_run(e.call_id, decision=e.decision, decision_reason=e.reason, decided_by=e.by,
                                decided_via=e.via,
                                decision_rule=e.rule, approval=light)

    def _on_call_started(self, e: CallStarted) -> list[Change]:
        node = self.runs.get(e.call_id)
        if node is None:
            return []
        node.started_at = e.at
        return self._moved(node, _RUNNING, e.at)

    def _on_call_progress(self, e: CallProgress) -> list[Change]:
        return self._update_run(e.call_id, progress=e.elapsed_s)

    def _on_call_retrying(self, e: CallRetrying) -> list[Change]:
        return self._update_run(e.call_id, attempts=e.attempt + 1)

    def _on_call_finished(self, e: CallFinished) -> list[Change]:
        node = self.runs.get(e.call_id)
        if node is None:
            return []
        if e.error is None and len(e.output) <= OUTPUT_WHOLE_CHARS:  # (what `kept_result` keeps of most)
            node.output, node.error, node.output_cut = e.output, None, False
        else:
            (node.output, node.error), node.output_cut = kept_result(e.output, e.error)
        node.ended_at, node.duration_s, node.changes, node.git_changes = e.at, e.duration_s, e.changes, e.git_changes
        node.cached, node.attempts, node.live_output = e.cached, e.attempts, ""
        return self._moved(node, e.status, e.at)

    def _on_rollback_finished(self, e: RollbackFinished) -> list[Change]:
        return self._update_run(e.call_id, undone_by=e.undone_by, undone_paths=e.undone_paths,
                                git_undone=e.git_undone)

    def _on_external_changes(self, e: ExternalChangesRecorded) -> list[Change]:
        self.externals.append(ExternalNode(e.op_id, e.at, e.note, e.changes))
        return []

    def _on_call_output(self, e: CallOutput) -> list[Change]:
        node = self.runs.get(e.call_id)
        if node is None:
            return []
        node.live_output = tail(node.live_output + e.text)
        return [Updated(RunKey(e.call_id))]


# Each handler takes its own kind of event: the table's type can only say "an event" (Any) for all of them.
_HANDLERS: dict[type[Event], Callable[[Timeline, Any], list[Change]]] = {
    AgentStarted: Timeline._on_agent_started,
    AgentFinished: Timeline._on_agent_finished,
    AgentLinked: Timeline._on_agent_linked,
    BatchStarted: Timeline._on_batch_started,
    BatchFinished: Timeline._on_batch_finished,
    CallQueued: Timeline._on_call_queued,
    ApprovalRequested: Timeline._on_approval_requested,
    ApprovalResolved: Timeline._on_approval_resolved,
    CallStarted: Timeline._on_call_started,
    CallProgress: Timeline._on_call_progress,
    CallRetrying: Timeline._on_call_retrying,
    CallFinished: Timeline._on_call_finished,
    RollbackFinished: Timeline._on_rollback_finished,
    ExternalChangesRecorded: Timeline._on_external_changes,
    CallOutput: Timeline._on_call_output,
    ShellStarted: Timeline._on_shell_started,
    ShellOutput: Timeline._on_shell_output,
    ShellFinished: Timeline._on_shell_finished,
    ConversationRecorded: Timeline._on_conversation,
}
