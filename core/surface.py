"""A console as the window sees it: `ConsoleSurface`, which Belay's own Console and a console on another host share.

The window is typed against this protocol, not against either class: whatever it reads of a console and
every command it sends is here, and both `core.console.Console` and `core.remote.console.RemoteConsole`
satisfy it (mypy checks each place the window is given one; tests/core/test_surface.py checks both at run
time).  What only a console on another host has (its reach, attaching again, where failures of commands
sent without waiting go) stays behind an `isinstance` check in the window.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from core.bus import Subscription
    from core.changes.tracker import Holding
    from core.events import ApprovalRequested, ElicitationRequested, Event
    from core.mcp.elicitation import Action
    from core.models.diffs import FileDiff
    from core.models.mcp import ServerStatus
    from core.models.policy import AllowScope, RuleAction, RuleEntry, Scope
    from core.models.records import CallRecord, DecidedBy, DecidedVia
    from core.outside.claude_session import ClaudeSession
    from core.outside.endpoint import Endpoint
    from core.process.overlay import OverlaySupport
    from core.process.sandbox import SandboxInfo
    from core.run.results import CacheStats
    from core.store.seals import JournalCheck
    from core.timeline.tree import Timeline
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
                      cli_path: str | None = None) -> asyncio.Task[Any]: ...

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]: ...
