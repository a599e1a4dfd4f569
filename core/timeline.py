"""The timeline read model: agents as a tree, their runs beneath, from events.

Qt-free so it can be tested alone and shared by every front end.  `apply`
takes one event and says what changed (a row inserted under a parent, a row
updated), which is all a Qt item model needs to emit its signals; rows are
only ever appended, so a row number never changes once given.  Sub-agents
sit under their parent agent, right after the call that spawned them; one
whose parent is unknown sits at the top rather than being dropped.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.errors import ErrorInfo
from core.events import (AgentFinished, AgentStarted, ApprovalRequested, ApprovalResolved, CallFinished,
                         CallOutput, CallQueued, CallStarted, Event, ExternalChangesRecorded, RollbackFinished,
                         ShellFinished, ShellOutput, ShellStarted)
from core.models import (AgentRecord, AgentStatus, CallRecord, Decision, ExternalRecord, FileChange, GitChange,
                         RunStatus)

NodeKey = str
"""'a:<agent id>' for an agent node, 'r:<call id>' for a run."""


def agent_key(agent_id: str) -> NodeKey:
    return f"a:{agent_id}"


def run_key(call_id: str) -> NodeKey:
    return f"r:{call_id}"


@dataclass
class AgentNode:
    agent_id: str
    name: str
    agent_kind: str
    session_id: str
    parent_id: str | None
    spawned_by: str | None
    status: AgentStatus
    started_at: datetime
    ended_at: datetime | None = None
    message: str = ""
    children: list[NodeKey] = field(default_factory=list)


@dataclass
class RunNode:
    call_id: str
    agent_id: str
    tool: str
    summary: str
    args: dict[str, Any]
    status: RunStatus
    queued_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    duration_s: float | None = None
    output: str = ""
    error: ErrorInfo | None = None
    changes: tuple[FileChange, ...] = ()
    git_changes: tuple[GitChange, ...] = ()
    undone_by: str | None = None
    """A rollback undoing the whole call now (None when some or none of it is undone)."""
    undone_paths: tuple[str, ...] = ()
    """The changed paths undone now."""
    git_undone: bool = False
    """Its git reference moves are undone now."""
    approval: ApprovalRequested | None = None
    decision: Decision | None = None
    decision_reason: str = ""
    live_output: str = ""
    """The tail of the output streamed while it ran (bounded)."""


@dataclass
class ShellNode:
    """A background shell and the tail of its output."""

    shell_id: str
    call_id: str
    command: str
    output: str = ""
    running: bool = True
    exit_code: int | None = None


@dataclass(frozen=True)
class ExternalNode:
    """Changes made outside Belay (an editor, a build), as found."""

    op_id: str
    at: datetime
    note: str
    changes: tuple[FileChange, ...]


@dataclass(frozen=True)
class Inserted:
    parent: NodeKey | None
    row: int
    key: NodeKey


@dataclass(frozen=True)
class Updated:
    key: NodeKey


Change = Inserted | Updated


class Timeline:
    """Agents and runs of this workspace, earlier sessions included."""

    def __init__(self) -> None:
        self.roots: list[NodeKey] = []
        self.agents: dict[str, AgentNode] = {}
        self.runs: dict[str, RunNode] = {}
        self.shells: dict[str, ShellNode] = {}
        self.externals: list[ExternalNode] = []
        """Changes nobody in Belay made, oldest first; never part of the agent tree."""
        self._row: dict[NodeKey, int] = {}
        self._parent: dict[NodeKey, NodeKey | None] = {}
        self.last_seq = 0
        self.before_insert: Callable[[NodeKey | None, int], None] | None = None
        """Called just before a row is appended (a Qt model begins its insert here)."""
        self.after_insert: Callable[[NodeKey], None] | None = None

    # -- tree navigation --------------------------------------------------

    def children(self, key: NodeKey | None) -> list[NodeKey]:
        if key is None:
            return self.roots
        if key.startswith("a:"):
            return self.agents[key[2:]].children
        return []

    def parent(self, key: NodeKey) -> NodeKey | None:
        return self._parent[key]

    def row(self, key: NodeKey) -> int:
        return self._row[key]

    def counts(self) -> Counter[RunStatus]:
        return Counter(run.status for run in self.runs.values())

    def snapshot(self) -> Timeline:
        """An independent copy without hooks, for a front end to own."""
        hooks = self.before_insert, self.after_insert
        self.before_insert = self.after_insert = None
        try:
            return copy.deepcopy(self)
        finally:
            self.before_insert, self.after_insert = hooks

    # -- building ---------------------------------------------------------

    def _append(self, parent: NodeKey | None, key: NodeKey) -> Inserted:
        siblings = self.children(parent)
        if self.before_insert is not None:
            self.before_insert(parent, len(siblings))
        self._row[key] = len(siblings)
        self._parent[key] = parent
        siblings.append(key)
        if self.after_insert is not None:
            self.after_insert(key)
        return Inserted(parent, self._row[key], key)

    def _add_agent(self, node: AgentNode) -> list[Change]:
        if node.agent_id in self.agents:
            return []
        self.agents[node.agent_id] = node
        parent = agent_key(node.parent_id) if node.parent_id in self.agents else None
        return [self._append(parent, agent_key(node.agent_id))]

    def _add_run(self, node: RunNode) -> list[Change]:
        if node.call_id in self.runs:
            return []
        changes: list[Change] = []
        if node.agent_id not in self.agents:
            changes += self._add_agent(AgentNode(node.agent_id, "unknown agent", "unknown", "", None, None,
                                                 AgentStatus.RUNNING, node.queued_at))
        self.runs[node.call_id] = node
        changes.append(self._append(agent_key(node.agent_id), run_key(node.call_id)))
        return changes

    def load(self, agents: list[AgentRecord], calls: list[CallRecord],
             externals: Sequence[ExternalRecord] = ()) -> None:
        """Fill from the journal (earlier sessions), before any live event."""
        self.externals += [ExternalNode(x.op_id, x.detected_at, x.note, x.changes) for x in externals]
        # In the order they happened, so that a sub-agent lands right after the call that spawned it,
        # as it did live (an agent before its own first call when the clock ties).
        ordered: list[tuple[datetime, int, AgentRecord | CallRecord]] = [(a.started_at, 0, a) for a in agents]
        ordered += [(c.created_at, 1, c) for c in calls]
        ordered.sort(key=lambda item: (item[0], item[1]))
        for _, _, record in ordered:
            if isinstance(record, AgentRecord):
                self._add_agent(AgentNode(record.agent_id, record.name, record.kind, record.session_id,
                                          record.parent_id, record.spawned_by, record.status, record.started_at))
            else:
                c = record
                self._add_run(RunNode(c.call_id, c.agent_id, c.tool, c.summary, c.args, c.status, c.created_at,
                                      duration_s=c.duration_s, output=c.output, error=c.error, changes=c.changes,
                                      git_changes=c.git_changes, undone_by=c.undone_by,
                                      undone_paths=c.undone_paths, git_undone=c.git_undone))

    # -- events -----------------------------------------------------------

    def apply(self, event: Event) -> list[Change]:
        self.last_seq = max(self.last_seq, event.seq)
        handler = _HANDLERS.get(type(event))
        return handler(self, event) if handler else []

    def _on_agent_started(self, e: AgentStarted) -> list[Change]:
        return self._add_agent(AgentNode(e.agent_id, e.name, e.agent_kind, e.session_id, e.parent_id,
                                         e.spawned_by, AgentStatus.RUNNING, e.at))

    def _on_agent_finished(self, e: AgentFinished) -> list[Change]:
        node = self.agents.get(e.agent_id)
        if node is None:
            return []
        node.status, node.ended_at, node.message = e.status, e.at, e.message
        return [Updated(agent_key(e.agent_id))]

    def _on_call_queued(self, e: CallQueued) -> list[Change]:
        return self._add_run(RunNode(e.call_id, e.agent_id, e.tool, e.summary, e.args, RunStatus.QUEUED, e.at))

    def _update_run(self, call_id: str, **fields: Any) -> list[Change]:
        node = self.runs.get(call_id)
        if node is None:
            return []
        for name, value in fields.items():
            setattr(node, name, value)
        return [Updated(run_key(call_id))]

    def _on_approval_requested(self, e: ApprovalRequested) -> list[Change]:
        return self._update_run(e.call_id, status=RunStatus.BLOCKED_ON_USER, approval=e)

    def _on_approval_resolved(self, e: ApprovalResolved) -> list[Change]:
        return self._update_run(e.call_id, decision=e.decision, decision_reason=e.reason)

    def _on_call_started(self, e: CallStarted) -> list[Change]:
        return self._update_run(e.call_id, status=RunStatus.RUNNING, started_at=e.at)

    def _on_call_finished(self, e: CallFinished) -> list[Change]:
        return self._update_run(e.call_id, status=e.status, ended_at=e.at, duration_s=e.duration_s,
                                output=e.output, error=e.error, changes=e.changes, git_changes=e.git_changes)

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
        node.live_output = _tail(node.live_output + e.text)
        return [Updated(run_key(e.call_id))]

    def _on_shell_started(self, e: ShellStarted) -> list[Change]:
        self.shells[e.shell_id] = ShellNode(e.shell_id, e.call_id, e.command)
        return []

    def _on_shell_output(self, e: ShellOutput) -> list[Change]:
        shell = self.shells.get(e.shell_id)
        if shell is not None:
            shell.output = _tail(shell.output + e.text)
        return []

    def _on_shell_finished(self, e: ShellFinished) -> list[Change]:
        shell = self.shells.get(e.shell_id)
        if shell is not None:
            shell.running, shell.exit_code = False, e.exit_code
        return []


LIVE_OUTPUT_CHARS = 64_000


def _tail(text: str) -> str:
    return text if len(text) <= LIVE_OUTPUT_CHARS else text[-LIVE_OUTPUT_CHARS:]


_HANDLERS = {
    AgentStarted: Timeline._on_agent_started,
    AgentFinished: Timeline._on_agent_finished,
    CallQueued: Timeline._on_call_queued,
    ApprovalRequested: Timeline._on_approval_requested,
    ApprovalResolved: Timeline._on_approval_resolved,
    CallStarted: Timeline._on_call_started,
    CallFinished: Timeline._on_call_finished,
    RollbackFinished: Timeline._on_rollback_finished,
    ExternalChangesRecorded: Timeline._on_external_changes,
    CallOutput: Timeline._on_call_output,
    ShellStarted: Timeline._on_shell_started,
    ShellOutput: Timeline._on_shell_output,
    ShellFinished: Timeline._on_shell_finished,
}
