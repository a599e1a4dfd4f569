"""The Console: the one object front ends act on.

Front ends (the window, the terminal, tests) send commands through its
small methods (approve, deny, always allow, cancel, undo) and learn what
happened from events (`attach`).  Agents, built-in or external, submit
calls through `call`.  It owns every task it starts and the journal's
thread, and `close` ends them all, answering waiting approvals first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from core import undo as undo_mod
from core.approvals import Answer, ApprovalBroker
from core.blobs import BlobStore
from core.bus import EventBus, Subscription
from core.diffs import FileDiff, compute_diff
from core.errors import BelayError, ErrorKind, ToolError, UndoConflict
from core.environment import make_non_dumpable
from core.events import (AgentFinished, AgentStarted, ApprovalRequested, PolicyChanged, RollbackFinished,
                         RollbackRefused, SessionStarted)
from core.ids import CallId, new_agent_id, new_call_id, new_rollback_id, new_session_id
from core.journal import Journal
from core.lock import OwnerLock
from core.models import AgentStatus, CallRecord, Decision, RunStatus
from core.paths import Workspace
from core.pipeline import AgentHandle, CallOutcome, Pipeline
from core.policy_engine import PolicyEngine, PolicyRequest, RuleEntry
from core.rules import RuleAction
from core.sandbox import SandboxInfo
from core.settings import workspace_state_dir
from core.timeline import Timeline
from core.shells import ShellManager
from core.snapshot import WorkspaceIndex
from core.tools.base import Annotations, SpawnAgent, Tool
from core.tools.bash import BashSettings, BashTool
from core.tools.catalog import default_tools, shell_tools
from core.tools.registry import ToolRegistry
from core.undo_report import UndoReport

log = logging.getLogger(__name__)
T = TypeVar("T")

CLOSE_GRACE_S = 5.0
"""How long closing waits for calls to record how they ended before cancelling them."""

AgentBody = Callable[[AgentHandle], Awaitable[str]]
"""What an agent does once started; returns its final summary."""


class Console:
    """The supervising core for one workspace."""

    def __init__(self, workspace: str | Path, *, state_dir: str | Path | None = None,
                 tools: Sequence[Tool] | None = None, bash: BashSettings | None = None) -> None:
        """`tools` replaces the default set (file tools, Task, Bash and its background shells)."""
        self.workspace = Workspace(workspace)
        self.state_dir = workspace_state_dir(self.workspace.root, state_dir)
        self.bus = EventBus()
        self.timeline = Timeline()
        self.bus.listen(self.timeline.apply)
        self.policy = PolicyEngine()
        self.approvals = ApprovalBroker()
        self.shells = ShellManager(self.bus.publish)
        self.bash_settings = bash or BashSettings()
        if tools is None:
            tools = [*default_tools(), *shell_tools(self.bash_settings, self.shells)]
        self.registry = ToolRegistry(tools)
        self.sandbox = SandboxInfo(available=False, kind="none", detail="not checked yet")
        """What Bash commands run in; checked when the console opens."""
        self.settings_problems: tuple[str, ...] = ()
        self.session_id = new_session_id()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="belay-journal")
        self._journal: Journal | None = None
        self._blobs: BlobStore | None = None
        self._index: WorkspaceIndex | None = None
        self._pipeline: Pipeline | None = None
        self._call_tasks: dict[str, asyncio.Task[CallOutcome]] = {}
        self._agent_tasks: set[asyncio.Task[Any]] = set()
        self._session_open = False
        self._lock: OwnerLock | None = None

    # -- lifecycle ----------------------------------------------------------

    async def open(self) -> None:
        """Open the journal, reload earlier sessions into the timeline, read the policy, probe the sandbox."""
        # A command's scrubbed environment is no use if it can read ours from /proc/<console>/environ.
        make_non_dumpable()
        self._journal = await self._io(Journal, self.state_dir / "journal.sqlite3")
        self._blobs = await self._io(BlobStore, self.state_dir / "blobs")
        self._index = WorkspaceIndex(self.workspace, self._blobs)
        self._lock = await self._io(OwnerLock.try_acquire, self.state_dir / "console.lock")
        if self._lock is not None:
            # Only the console that owns the workspace may call unfinished runs dead;
            # `belay calls` next to a running window must not.
            interrupted = await self._io(self._journal.mark_interrupted)
            await self._recover(interrupted)
        agents, calls = await self._io(self._journal.agents), await self._io(self._journal.calls)
        self.timeline.load(agents, calls)
        problems = await asyncio.to_thread(self.policy.load, self.workspace.root)
        bash = self.registry.get("Bash")
        if isinstance(bash, BashTool):
            problems += self._apply_bash_settings(bash)
            self.sandbox = await bash.sandbox_info()
        self.settings_problems = tuple(problems)
        for problem in self.settings_problems:
            log.warning("settings: %s", problem)
        self._pipeline = Pipeline(workspace=self.workspace, registry=self.registry, policy=self.policy,
                                  approvals=self.approvals, bus=self.bus, journal=self._journal,
                                  blobs=self._blobs, io=self._io, session_id=self.session_id,
                                  always_allow=lambda rule, scope: self.add_rule(rule, "allow", scope),
                                  sandbox=self._sandbox_text, index=self._index)
        self._policy_changed("settings loaded")

    def _apply_bash_settings(self, bash: BashTool) -> list[str]:
        """The user's `[bash]` table over the console's own settings; a bad value is reported, not used."""
        overrides = self.policy.bash_overrides()
        if not overrides:
            return []
        try:
            self.bash_settings = BashSettings.model_validate({**self.bash_settings.model_dump(), **overrides})
        except ValidationError as e:
            why = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'bash'}: {err['msg']}" for err in e.errors())
            return [f"user settings [bash]: {why}; the defaults are used"]
        bash.settings = self.bash_settings
        return []

    async def _recover(self, interrupted: list[str]) -> None:
        """Give a command killed with the console the file changes it made but could not record.

        Without this, the files it changed would differ from what the journal says they hold, and undoing
        any earlier call on them would be refused as a conflict.  What differs from the journal's last
        record is attributed to the last interrupted command (it may include edits made while Belay was not
        running: nobody else can be named).  Earlier calls are undone through it, so nothing is lost.
        """
        assert self._journal is not None and self._index is not None
        journal, index = self._journal, self._index
        capturing = [c for c in interrupted if (t := self.registry.get(journal.call_tool(c) or "")) is not None
                     and t.captures_workspace]
        if not capturing:
            return
        await asyncio.to_thread(index.changes_since)  # the first look: what is on disk now
        changes = index.differences_from(await self._io(journal.latest_contents))
        if changes:
            log.warning("call %s was interrupted; %d file change(s) it made are recovered", capturing[-1],
                        len(changes))
            await self._io(journal.add_changes, capturing[-1], changes)

    async def close(self) -> None:
        """Deny what waits, cancel what runs, close the journal."""
        self.approvals.deny_all("the console was closed")
        await self.shells.aclose()
        for task in list(self._agent_tasks):
            task.cancel()
        pending = [*self._agent_tasks, *self._call_tasks.values()]
        if pending:
            _, still = await asyncio.wait(pending, timeout=CLOSE_GRACE_S)
            for task in still:
                task.cancel()
            if still:
                await asyncio.wait(still)
        if self._journal is not None:
            if self._session_open:
                await self._io(self._journal.end_session, self.session_id)
            await self._io(self._journal.close)
        if self._lock is not None:
            self._lock.release()
        self._executor.shutdown(wait=True)

    async def __aenter__(self) -> Console:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _io(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking journal work on the journal's own thread."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, partial(fn, *args))

    async def _ensure_session(self) -> None:
        if not self._session_open:
            self._session_open = True
            await self._io(self.journal.start_session, self.session_id, str(self.workspace.root))
            self.bus.publish(SessionStarted(session_id=self.session_id, workspace=str(self.workspace.root)))

    @property
    def journal(self) -> Journal:
        if self._journal is None:
            raise RuntimeError("the console is not open")
        return self._journal

    # -- what front ends read ------------------------------------------------

    def attach(self, maxsize: int = 10_000) -> tuple[Timeline, Subscription]:
        """A snapshot of the timeline and a subscription to everything after it."""
        return self.timeline.snapshot(), self.bus.subscribe(maxsize)

    def subscribe(self, maxsize: int = 10_000) -> Subscription:
        """Live events only, for front ends that keep no timeline (reviewers, loggers)."""
        return self.bus.subscribe(maxsize)

    def register_approver(self, name: str) -> Callable[[], None]:
        """A front end that can answer approvals says so; without one, asking means denying."""
        return self.approvals.register_approver(name)

    def pending_approvals(self) -> list[ApprovalRequested]:
        return self.approvals.pending()

    async def history(self) -> list[CallRecord]:
        """Every journaled call of this workspace, oldest first."""
        return await self._io(self.journal.calls)

    async def full_output(self, call_id: str) -> str | None:
        """A command's whole output as journaled (up to its size limit), when it was more than the agent saw."""
        return await self._io(self.journal.full_output, call_id)

    async def diffs_for(self, call_id: str) -> list[FileDiff]:
        """The diff of every file a call changed, computed off the loop."""
        run = self.timeline.runs.get(call_id)
        changes = run.changes if run else ()
        blobs = self._blobs
        assert blobs is not None

        def work() -> list[FileDiff]:
            def content(h: str | None) -> bytes | None:
                return blobs.get(h) if h else None
            return [compute_diff(c.path, content(c.before_hash), content(c.after_hash)) for c in changes]

        return await asyncio.to_thread(work)

    # -- commands ------------------------------------------------------------

    def approve(self, call_id: str, *, edited: dict[str, str] | None = None) -> bool:
        """Let a waiting call run, optionally with the person's content per file."""
        decision = Decision.APPROVED_EDITED if edited else Decision.APPROVED
        return self.approvals.resolve(call_id, Answer(decision=decision, edited=edited))

    def deny(self, call_id: str, reason: str = "") -> bool:
        """Refuse a waiting call; the agent is told `reason`."""
        return self.approvals.resolve(call_id, Answer(decision=Decision.DENIED, reason=reason.strip()))

    def always_allow(self, call_id: str, scope: str = "session", rule: str | None = None) -> bool:
        """Approve a waiting call and add an allow rule so calls like it stop asking.

        `scope` is once (just this call), session, workspace or user; `rule`
        defaults to the one the request suggested.
        """
        if scope not in ("once", "session", "workspace", "user"):
            raise ValueError(f"unknown scope {scope!r}: use once, session, workspace or user")
        return self.approvals.resolve(call_id, Answer(decision=Decision.ALWAYS_ALLOWED, scope=scope, rule=rule))

    # -- policy ----------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self.policy.mode

    def set_mode(self, mode: str) -> None:
        """Switch the mode for this session: default, accept_edits, plan or bypass."""
        self.policy.set_mode(mode)
        self._policy_changed(f"mode set to {self.policy.mode}")

    def rules(self) -> list[RuleEntry]:
        """Every rule in force, user layer first."""
        return self.policy.rules()

    async def add_rule(self, rule: str, action: RuleAction, scope: str) -> str:
        """Add a rule to a layer (a workspace or user rule is written to its settings file); returns it normalised."""
        stored = await asyncio.to_thread(self.policy.add_rule, rule, action, scope)  # type: ignore[arg-type]
        self._policy_changed(f"added {action} rule {stored} to {scope}")
        return stored

    async def remove_rule(self, rule: str, action: RuleAction, scope: str) -> bool:
        """Remove a rule from a layer; False when it was not there."""
        removed = await asyncio.to_thread(self.policy.remove_rule, rule, action, scope)  # type: ignore[arg-type]
        if removed:
            self._policy_changed(f"removed {action} rule {rule} from {scope}")
        return removed

    async def dry_run(self, rule: str, action: RuleAction = "allow") -> list[CallRecord]:
        """The journaled calls of this workspace whose verdict the rule would change to `action`."""
        records = await self.history()
        root = self.workspace.root

        def work() -> list[CallRecord]:
            requests = [PolicyRequest(tool=r.tool, args=r.args, workspace=root,
                                      annotations=t.annotations if (t := self.registry.get(r.tool)) else Annotations())
                        for r in records]
            return [records[i] for i in self.policy.dry_run(rule, action, requests)]

        return await asyncio.to_thread(work)

    def _policy_changed(self, what: str) -> None:
        self.bus.publish(PolicyChanged(what=what, mode=self.policy.mode, rules=tuple(self.policy.rules()),
                                       problems=self.settings_problems))

    def _sandbox_text(self) -> str:
        if not self.sandbox.available:
            return f"sandbox off: {self.sandbox.detail}"
        network = "network on" if self.bash_settings.network else "network off"
        return f"bubblewrap sandbox ({network}): {self.sandbox.detail}"

    def cancel(self, call_id: str) -> bool:
        """Stop a queued, waiting or running call; the agent is told it was cancelled."""
        task = self._call_tasks.get(call_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def kill_shell(self, shell_id: str) -> bool:
        """Stop a background shell and everything it started; False when it had already ended or is unknown."""
        try:
            return await self.shells.kill(shell_id) == "running"
        except BelayError:
            return False

    async def undo(self, call_id: str, *, force: bool = False) -> UndoReport:
        """Restore what a call changed.  Refuses (and says why) rather than overwrite later work."""
        try:
            report = await self._undo(call_id, force)
        except UndoConflict as e:
            self.bus.publish(RollbackRefused(call_id=call_id, message=e.info.message, conflicts=tuple(e.paths)))
            return UndoReport(call_id=call_id, ok=False, message=e.info.message, conflicts=tuple(e.paths))
        except BelayError as e:
            self.bus.publish(RollbackRefused(call_id=call_id, message=e.info.message))
            return UndoReport(call_id=call_id, ok=False, message=e.info.message)
        self.bus.publish(RollbackFinished(rollback_id=report.rollback_id or "", call_id=call_id,
                                          paths=report.paths, forced=force))
        return report

    async def rewind_plan(self, call_id: str) -> list[CallRecord]:
        """What "rewind to here" would undo: every later call that changed files and stands, newest first."""
        records = await self.history()
        position = next((i for i, r in enumerate(records) if r.call_id == call_id), None)
        if position is None:
            raise ToolError(ErrorKind.NOT_FOUND, f"no call {call_id} in this workspace's journal")
        return [r for r in reversed(records[position + 1:]) if r.changes and not r.undone_by]

    async def rewind(self, call_id: str) -> list[UndoReport]:
        """Undo every later call, newest first, leaving the workspace as this call left it.

        Stops at the first refusal (a file someone changed since), which is the last report: nothing is
        overwritten, and what was undone before it stays undone (each undo can itself be undone).
        """
        reports: list[UndoReport] = []
        for record in await self.rewind_plan(call_id):
            report = await self.undo(record.call_id)
            reports.append(report)
            if not report.ok:
                break
        return reports

    async def _undo(self, call_id: str, force: bool) -> UndoReport:
        records = await self._io(self.journal.calls, call_id)
        if not records:
            raise ToolError(ErrorKind.NOT_FOUND, f"no call {call_id} in this workspace's journal")
        record = records[0]
        if record.undone_by:
            raise ToolError(ErrorKind.CONFLICT, f"call {call_id} was already undone ({record.undone_by})")
        if not record.changes:
            raise ToolError(ErrorKind.NOT_FOUND, f"call {call_id} ({record.tool}) changed no files")
        await self._ensure_session()
        rollback_id = new_rollback_id()
        blobs = self._blobs
        assert blobs is not None

        def work() -> tuple[str, ...]:
            steps = undo_mod.plan_undo(self.workspace, record.changes, force)
            # apply_undo records the rollback (even an empty one: every file already restored) before writing.
            undo_mod.apply_undo(self.workspace, blobs, steps,
                                lambda changes: self.journal.add_rollback(rollback_id, call_id, force, changes))
            return tuple(c.path for c in record.changes)

        paths = await asyncio.to_thread(work)
        return UndoReport(call_id=call_id, ok=True, rollback_id=rollback_id, paths=paths,
                          message=f"Restored {len(paths)} file(s): {', '.join(paths)}")

    # -- agents ----------------------------------------------------------------

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: str | None = None, tools: Sequence[str] | None = None) -> AgentHandle:
        """Register an agent (journal, event) and return its handle."""
        await self._ensure_session()
        allowed = frozenset(tools) if tools is not None else None
        if parent is not None and parent.tools is not None and allowed is not None:
            allowed &= parent.tools
        handle = AgentHandle(new_agent_id(), name, self.session_id, allowed)
        await self._io(self.journal.add_agent, handle.agent_id, self.session_id, name, kind,
                       parent.agent_id if parent else None, spawned_by, sorted(allowed) if allowed else None)
        self.bus.publish(AgentStarted(agent_id=handle.agent_id, session_id=self.session_id, name=name,
                                      agent_kind=kind, parent_id=parent.agent_id if parent else None,
                                      spawned_by=spawned_by, tools=tuple(sorted(allowed)) if allowed else None))
        return handle

    async def run_agent(self, handle: AgentHandle, body: AgentBody) -> str:
        """Run an agent's body to the end, recording how it finished."""
        status, message = AgentStatus.DONE, ""
        try:
            message = await body(handle)
            return message
        except asyncio.CancelledError:
            status, message = AgentStatus.CANCELLED, "cancelled"
            raise
        except Exception as e:
            log.exception("agent %s failed", handle.name)
            status, message = AgentStatus.FAILED, f"{type(e).__name__}: {e}"
            raise
        finally:
            await asyncio.shield(self._finish_agent(handle, status, message))

    async def _finish_agent(self, handle: AgentHandle, status: AgentStatus, message: str) -> None:
        await self._io(self.journal.finish_agent, handle.agent_id, status)
        self.bus.publish(AgentFinished(agent_id=handle.agent_id, status=status, message=message))

    def launch(self, coro: Awaitable[T], name: str) -> asyncio.Task[T]:
        """Start a top-level agent task that the console owns and ends on close."""
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._agent_tasks.add(task)
        task.add_done_callback(self._agent_tasks.discard)
        return task

    async def call(self, agent: AgentHandle, tool: str, args: object,
                   spawn: SpawnAgent | None = None) -> CallOutcome:
        """Submit one call for `agent` and wait for its outcome."""
        if self._pipeline is None:
            raise RuntimeError("the console is not open")
        call_id = new_call_id()
        task = asyncio.ensure_future(self._pipeline.execute(call_id, agent, tool, args, spawn))
        self._call_tasks[call_id] = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _being_cancelled():
                # Cancelled from the window: the agent hears about it and goes on.
                return CallOutcome(CallId(call_id), RunStatus.CANCELLED, "The user cancelled this call.")
            task.cancel()
            await asyncio.wait([task])
            raise
        finally:
            self._call_tasks.pop(call_id, None)

    def __repr__(self) -> str:
        return (f"<Console {self.workspace.root} session={self.session_id} "
                f"pending={len(self.approvals.pending())} agents={len(self._agent_tasks)}>")


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


