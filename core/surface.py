"""A console as front ends see it: the protocol both consoles share, and what Belay's own answers them from.

`ConsoleSurface` is what the window reads of a console and every command it sends; the window is typed
against it, not against either class, and both `core.console.Console` and
`core.remote.console.RemoteConsole` satisfy it (mypy checks each place the window is given one;
tests/core/test_surface.py checks both at run time).  What only a console on another host has (its reach,
attaching again, where failures of commands sent without waiting go) stays behind an `isinstance` check in
the window.

`ConsoleReads` is the part of `Console` (which extends it) that answers front ends' reads from the
console's parts: its timeline, journal, policy, MCP servers and change tracker.  Nothing in it changes
anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from core.bus import EventBus, Subscription
from core.changes.diffs import diff_of_change
from core.changes.tracker import ChangeTracker, Holding, WatchState
from core.events import ApprovalRequested, Event
from core.models.diffs import FileDiff
from core.models.mcp import ServerStatus
from core.models.policy import RuleEntry
from core.models.records import CallRecord
from core.paths import Workspace
from core.policy.engine import PolicyEngine
from core.recorder import Recorder
from core.run.approvals import ApprovalBroker
from core.run.cache import CallCache
from core.run.results import CacheStats
from core.store.blobs import BlobStore
from core.store.journal_reads import JournalReads
from core.store.seals import JournalCheck, verify_journal
from core.timeline.tree import Timeline

if TYPE_CHECKING:
    from core.events import ElicitationRequested
    from core.mcp.elicitation import Action
    from core.mcp.manager import McpManager
    from core.models.diffs import FileDiff
    from core.models.mcp import ServerStatus
    from core.models.policy import AllowScope, RuleAction, RuleEntry, Scope
    from core.models.records import CallRecord, DecidedBy, DecidedVia
    from core.outside.claude_session import ClaudeSession
    from core.outside.endpoint import Endpoint
    from core.process.overlay import OverlaySupport
    from core.process.sandbox import SandboxInfo
    from core.tools.bash import BashSettings
    from core.undo.report import Resolution, UndoPreview, UndoReport

T = TypeVar("T")


@runtime_checkable
class WorkspaceRoot(Protocol):
    """Where a console's workspace is (on its own host)."""

    @property
    def root(self) -> Path: ...


@runtime_checkable
class FormDesk(Protocol):
    """MCP servers' requests for the person's input, as a console keeps them for the window."""

    def register(self, name: str) -> Callable[[], None]:
        """A front end that shows the forms says so; the callable unregisters it."""
        ...

    def pending(self) -> list[ElicitationRequested]: ...

    def answer(self, elicitation_id: str, action: Action, content: Mapping[str, Any] | None = None) -> bool:
        """The person's answer; False when the request no longer waits."""
        ...


@runtime_checkable
class ConsoleSurface(Protocol):
    """What the window reads of a console and the commands it sends it (see `core.console.Console` for each)."""

    # -- what the window reads -----------------------------------------------

    @property
    def workspace(self) -> WorkspaceRoot: ...

    @property
    def where(self) -> str:
        """How the window names the console: its workspace's path, or ssh://host/path."""
        ...

    @property
    def state_dir(self) -> Path | None:
        """Where its journal and blobs are, on this host (None: on another host)."""
        ...

    @property
    def endpoint(self) -> Endpoint | None:
        """The socket outside agents reach it through (None: it serves none here)."""
        ...

    @property
    def timeline(self) -> Timeline: ...

    @property
    def elicitations(self) -> FormDesk: ...

    @property
    def mode(self) -> str: ...

    @property
    def settings_problems(self) -> tuple[str, ...]: ...

    @property
    def recovery_notes(self) -> tuple[str, ...]: ...

    @property
    def sandbox(self) -> SandboxInfo: ...

    @property
    def bash_settings(self) -> BashSettings: ...

    @property
    def previews(self) -> OverlaySupport: ...

    def attach(self, maxsize: int = 10_000,
               counted: frozenset[type[Event]] = frozenset()) -> tuple[Timeline, Subscription]: ...

    def register_approver(self, name: str) -> Callable[[], None]: ...

    def pending_approvals(self) -> list[ApprovalRequested]: ...

    def rules(self) -> list[RuleEntry]: ...

    def held_back(self) -> list[str]: ...

    def mcp_servers(self) -> list[ServerStatus]: ...

    def workspace_held(self) -> Holding | None: ...

    def watch_state(self) -> WatchState | None: ...

    def cache_stats(self) -> CacheStats | None: ...

    def controls(self, agent_id: str) -> ClaudeSession | None: ...

    async def call_record(self, call_id: str) -> CallRecord | None: ...

    async def full_output(self, call_id: str) -> str | None: ...

    async def diffs_for(self, call_id: str) -> list[FileDiff]: ...

    async def verify(self) -> JournalCheck: ...

    # -- commands ------------------------------------------------------------

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    def approve(self, call_id: str, *, edited: dict[str, str] | None = None,
                hunks: Mapping[str, Collection[int]] | None = None, reason: str = "",
                by: DecidedBy = "person", via: DecidedVia | None = None, preview: bool = False) -> bool: ...

    def deny(self, call_id: str, reason: str = "", *, by: DecidedBy = "person",
             via: DecidedVia | None = None) -> bool: ...

    def always_allow(self, call_id: str, scope: AllowScope = "session", rule: str | None = None, *,
                     via: DecidedVia | None = None) -> bool: ...

    def cancel(self, call_id: str) -> bool: ...

    def set_mode(self, mode: str) -> None: ...

    async def add_rule(self, rule: str, action: RuleAction, scope: Scope) -> str: ...

    async def remove_rule(self, rule: str, action: RuleAction, scope: Scope) -> bool: ...

    async def dry_run(self, rule: str, action: RuleAction = "allow") -> list[CallRecord]: ...

    async def trust_workspace(self) -> None: ...

    async def restart_mcp_server(self, name: str) -> None: ...

    async def kill_shell(self, shell_id: str) -> bool: ...

    async def undo(self, op_id: str, *, paths: Sequence[str] | None = None, force: bool = False,
                   resolutions: Mapping[str, Resolution] | None = None) -> UndoReport: ...

    async def redo(self, call_id: str, *, paths: Sequence[str] | None = None) -> UndoReport: ...

    async def undo_preview(self, op_id: str, *, paths: Sequence[str] | None = None) -> UndoPreview: ...

    async def rewind_plan(self, call_id: str) -> list[CallRecord]: ...

    async def rewind(self, call_id: str) -> list[UndoReport]: ...

    def launch_claude(self, prompt: str, *, model: str | None = None, env: dict[str, str] | None = None,
                      cli_path: str | None = None, follow_ups: bool = False) -> asyncio.Task[Any]: ...

    async def note(self, agent_id: str, text: str) -> bool: ...

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]: ...


class ConsoleReads:
    """What front ends read of Belay's own console, from its parts (`Console` extends this and sets them)."""

    workspace: Workspace
    state_dir: Path
    bus: EventBus
    timeline: Timeline
    approvals: ApprovalBroker
    policy: PolicyEngine
    mcp: McpManager | None
    cache: CallCache | None
    _recorder: Recorder | None
    _blobs: BlobStore | None
    _tracker_: ChangeTracker | None
    _tracking: bool

    @property
    def recorder(self) -> Recorder:
        """The journal and the bus, kept in step (core.recorder)."""
        if self._recorder is None:
            raise RuntimeError("the console is not open")
        return self._recorder

    @property
    def where(self) -> str:
        """How a window names this console: its workspace (one on another host: ssh://host/path)."""
        return str(self.workspace.root)

    async def verify(self) -> JournalCheck:
        """`belay verify` of this workspace's journal, read off the loop (also while this console writes it)."""
        return await asyncio.to_thread(verify_journal, self.state_dir / "journal.sqlite3")

    def attach(self, maxsize: int = 10_000,
               counted: frozenset[type[Event]] = frozenset()) -> tuple[Timeline, Subscription]:
        """The timeline (the console's own, live: read it on the loop's thread, never change it) and a
        subscription to the events after now; events of the `counted` kinds, whose effect the reader takes from
        the timeline, are counted for it, not queued (core.bus)."""
        return self.timeline, self.bus.subscribe(maxsize, counted)

    def subscribe(self, maxsize: int = 10_000) -> Subscription:
        """Live events only, for front ends that keep no timeline (reviewers, loggers)."""
        return self.bus.subscribe(maxsize)

    def pending_approvals(self) -> list[ApprovalRequested]:
        return self.approvals.pending()

    async def history(self) -> list[CallRecord]:
        """Every journaled call of this workspace, oldest first."""
        return await self.recorder.read(JournalReads.calls)

    async def call_record(self, call_id: str) -> CallRecord | None:
        """One journaled call in full (its arguments and output as recorded), for showing it when selected."""
        return await self.recorder.read(JournalReads.call_record, call_id)

    async def full_output(self, call_id: str) -> str | None:
        """A command's whole output as journaled (up to its size limit), when it was more than the agent saw."""
        return await self.recorder.read(JournalReads.full_output, call_id)

    async def diffs_for(self, call_id: str) -> list[FileDiff]:
        """The diff of every file a call changed, computed off the loop."""
        run = self.timeline.runs.get(call_id)
        changes = run.changes if run else ()
        blobs = self._blobs
        assert blobs is not None
        return await asyncio.to_thread(lambda: [diff_of_change(c, blobs) for c in changes])

    @property
    def mode(self) -> str:
        return self.policy.mode

    def rules(self) -> list[RuleEntry]:
        """Every rule in force, user layer first."""
        return self.policy.rules()

    def held_back(self) -> list[str]:
        """What this workspace's settings file would loosen, waiting for the person to trust the workspace."""
        return self.policy.held_back()

    def mcp_servers(self) -> list[ServerStatus]:
        return self.mcp.statuses() if self.mcp is not None else []

    def workspace_held(self) -> Holding | None:
        """Who holds the workspace's one-author lock while other calls wait for it (None: nobody waits)."""
        return self._tracker_.holding if self._tracker_ is not None else None

    def watch_state(self) -> WatchState | None:
        """Whether this workspace's files are watched, or why not and what Belay does instead (see WatchState);
        None where this console does not watch them (it only reads the journal)."""
        return self._tracker_.watch_state if self._tracker_ is not None and self._tracking else None

    def cache_stats(self) -> CacheStats | None:
        """Hits and misses of the result cache; None when results are not cached (no workspace watcher)."""
        return self.cache.stats if self.cache is not None else None
