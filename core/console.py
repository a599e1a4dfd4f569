"""The Console: the one object front ends act on.

Front ends (the window, the terminal, tests) send commands through its small methods (approve, deny, always
allow, cancel, undo, a note to an agent) and learn what happened from events (`attach`).  Agents, built-in or
external, submit calls through `call`.  It wires the rooms of the core together: its roster (core.run.roster)
owns every agent and call task, its recorder (core.recorder) the journal and its thread; `close` ends them
all, answering waiting approvals first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from core.bus import EventBus
from core.changes.tracker import ChangeTracker
from core.errors import BelayError, ErrorKind, ToolError
from core.events import McpServerChanged, PolicyChanged
from core.ids import BatchId, CallId, new_session_id
from core.mcp.elicitation import Elicitations
from core.models.batches import BatchCall, BatchReport
from core.models.mcp import ServerStatus
from core.models.policy import AllowScope, RuleAction, Scope
from core.models.records import CallRecord, DecidedBy, DecidedVia, Decision
from core.orchestration.runner import BatchRunner
from core.outside.agents import OutsideAgents
from core.outside.claude_session import ClaudeSession, SessionEnd
from core.outside.endpoint import Endpoint, install_token, start_failed
from core.outside.hooks import ClaudeHooks
from core.outside.intercept import Interceptor
from core.outside.requests import UndoRequest
from core.paths import Workspace
from core.policy.engine import PolicyEngine
from core.policy.settings import config_dir
from core.policy.verdicts import PolicyRequest
from core.process.environment import make_non_dumpable
from core.process.overlay import OverlaySupport, overlay_support
from core.process.sandbox import SandboxInfo, describe
from core.process.shells import ShellManager
from core.recorder import Recorder
from core.run.approvals import Answer, ApprovalBroker
from core.run.cache import CallCache
from core.run.calls import AgentHandle, CallOutcome, Calls
from core.run.pipeline import Pipeline
from core.run.roster import AgentBody, Roster
from core.settings import workspace_state_dir
from core.store.blobs import BlobStore
from core.store.journal_reads import JournalReads
from core.store.lock import OwnerLock, own_workspace
from core.surface import ConsoleReads
from core.tasks import spawn
from core.timeline.tree import Timeline
from core.tools.base import Annotations, SpawnAgent, Tool
from core.tools.bash import BashSettings, BashTool
from core.tools.catalog import default_tools, shell_tools
from core.tools.names import ToolName
from core.tools.registry import ToolRegistry
from core.undo import recovery
from core.undo.report import Resolution, UndoPreview, UndoReport
from core.undo.service import Undoer

if TYPE_CHECKING:
    from core.mcp.manager import McpManager, McpStart
    from core.mcp.oauth import OAuthPlace
    from core.telemetry.spans import SpanExport

log = logging.getLogger(__name__)
T = TypeVar("T")


def _mcp_classes() -> tuple[type[McpManager], type[OAuthPlace]]:
    """The MCP manager and sign-in place, imported when a console first needs them (see `Console.open`)."""
    from core.mcp.manager import McpManager
    from core.mcp.oauth import OAuthPlace
    return McpManager, OAuthPlace

CLOSE_GRACE_S = 5.0
"""How long closing waits for calls to record how they ended before cancelling them."""


class Console(ConsoleReads):
    """The supervising core for one workspace (what front ends read of it: `core.surface.ConsoleReads`)."""

    def __init__(self, workspace: str | Path, *, state_dir: str | Path | None = None,
                 tools: Sequence[Tool] | None = None, bash: BashSettings | None = None, track: bool = True,
                 serve: bool = True, holder: str = "a Belay console", mcp: McpStart = "always") -> None:
        """`tools` replaces the default set (file tools, Task, Bash and its background shells).

        One console at a time works on a workspace: opening raises `WorkspaceBusy` naming the one that
        has it (`holder` is what this one is called then: "window", "belay run"...).

        `track=False` opens the journal only to read it (`belay calls`), beside the console that has the
        workspace: the workspace is not indexed or watched, nothing is recovered, and undo is refused.
        `serve=False` keeps the endpoint closed (no Claude Code hooks, no `belay mcp-serve` bridge to it);
        `mcp` says when the user's MCP servers start (core.mcp.manager.McpStart: a window's always).
        """
        self.workspace = Workspace(workspace)
        self.state_dir = workspace_state_dir(self.workspace.root, state_dir)
        self.bus = EventBus()
        self.timeline = Timeline()
        self.bus.listen(self.timeline.apply)
        self.policy = PolicyEngine()
        self.approvals = ApprovalBroker()
        self.elicitations = Elicitations(self.bus.publish)
        """MCP servers' requests for the person's input; a front end that shows them registers with
        `elicitations.register` and answers with `elicitations.answer` (with none, they are declined)."""
        self.shells = ShellManager(self.bus.publish)
        self.bash_settings = bash or BashSettings()
        self.registry = ToolRegistry(tools if tools is not None else
                                     [*default_tools(), *shell_tools(self.bash_settings, self.shells)])
        self.sandbox = SandboxInfo(available=False, kind="none", detail="not checked yet")
        """What Bash commands run in; checked when the console opens."""
        self.previews = OverlaySupport(available=False, detail="not checked yet")
        """Whether a command can run in preview (a private layer over the workspace); checked when it opens."""
        self._probe: asyncio.Task[None] | None = None
        self.settings_problems: tuple[str, ...] = ()
        self.session_id = new_session_id()
        self._recorder: Recorder | None = None
        self._blobs: BlobStore | None = None
        self._tracker_: ChangeTracker | None = None
        self.cache: CallCache | None = None
        """Answers repeated read-only calls while nothing they read has changed."""
        self.recovery_notes: tuple[str, ...] = ()
        """What opening found and repaired after a crash (an interrupted undo finished...), for the window."""
        self._calls: Calls | None = None
        self._pipeline: Pipeline | None = None
        self._roster: Roster | None = None
        self._lock: OwnerLock | None = None
        self._spans: SpanExport | None = None
        """Spans of the agents and calls, sent to `[telemetry] otlp_endpoint` when the user set one."""
        self._track, self._holder, self._mcp_start, self._serve, self._tracking = track, holder, mcp, serve, False
        self.endpoint: Endpoint | None = None
        """The socket other processes reach this console through (Claude Code's hooks, mcp-serve)."""
        self.hooks: ClaudeHooks | None = None
        self.interceptor: Interceptor | None = None
        self.outside: OutsideAgents | None = None
        self.mcp: McpManager | None = None
        """The user's MCP servers; their tools join `registry` as mcp__<server>__<tool>."""

    # -- lifecycle ----------------------------------------------------------

    async def open(self) -> None:
        """Open the journal, then take the workspace (unless only reading): raises WorkspaceBusy when another has it."""
        # A command's scrubbed environment is no use if it can read ours from /proc/<console>/environ.
        make_non_dumpable()
        recorder = self._recorder = await Recorder.open(self.state_dir / "journal.sqlite3", self.bus,
                                                        self.session_id, self.workspace.root)
        if self._track:  # after the journal: one that is not Belay's is refused before a lock file is made
            try:
                self._lock = await asyncio.to_thread(own_workspace, self.state_dir, self.workspace.root, self._holder)
            except BaseException:
                self._recorder = None
                await recorder.close()  # refused: nothing of it runs on
                raise
        try:
            await self._open(recorder)
        except BaseException as e:
            if self._lock is not None:  # a console that could not open leaves the workspace to another
                if isinstance(e, Exception):  # said first: a hook command waiting for it reads why once it is free
                    await asyncio.to_thread(start_failed, self.state_dir, e)
                self._lock.release()
            raise

    async def _open(self, recorder: Recorder) -> None:
        """Reload earlier sessions into the timeline, read the policy, probe the sandbox."""
        self._blobs = await asyncio.to_thread(BlobStore, self.state_dir / "blobs")
        owner = self._lock is not None
        problems = await asyncio.to_thread(self.policy.load, self.workspace.root)
        # Only the owner watches the workspace: a reader (`belay calls` beside a window) looks, no more.
        self._tracker_ = ChangeTracker(self.workspace, self._blobs, recorder.external_changes,
                                       ignore_extra=self.policy.ignore_patterns(), watch=owner)
        telemetry = self.policy.telemetry()
        if owner and self._track and telemetry.otlp_endpoint:
            from core.telemetry.spans import SpanExport  # the SDK loads only for those who send spans

            self._spans = SpanExport(telemetry, str(self.workspace.root), self.session_id)
            self.bus.listen(self._spans)
        if owner and self._track:
            # Only the console that owns the workspace may call unfinished runs dead;
            # `belay calls` next to a running window must not.
            interrupted = await recorder.runs_interrupted()
            await self._tracker_.start()
            self._tracking = True
            self.cache = CallCache.kept_by(self._tracker_.watcher, self.workspace)
            opening = recovery.Opening(self.workspace, recorder, self._blobs, self._tracker_, self._captures)
            self.recovery_notes = tuple(await recovery.recover(opening, interrupted))
        agents, calls = await recorder.read(JournalReads.agents), await recorder.read(JournalReads.calls)
        self.timeline.load(agents, calls, await recorder.read(JournalReads.externals),
                           await recorder.read(JournalReads.batches), await recorder.read(JournalReads.conversation))
        bash = self.registry.get(ToolName.BASH)
        if isinstance(bash, BashTool):
            self.bash_settings, problem = self.bash_settings.overlaid(self.policy.bash_overrides(),
                                                                      self.policy.timeouts().get(ToolName.BASH))
            bash.settings = self.bash_settings
            problems += [problem] if problem else []
            self.sandbox = await bash.sandbox_info()
            if self.bash_settings.effects != "apply":  # the status line says at once whether they can be
                self.previews = await asyncio.to_thread(overlay_support)
            else:  # only "Run in preview" asks, later: the probe (a short subprocess) does not hold up opening
                self._probe = spawn(self._probe_previews(), "probe for command previews")
        self.settings_problems = tuple(problems)
        for problem in self.settings_problems:
            log.warning("settings: %s", problem)
        self._calls = Calls(workspace=self.workspace, policy=self.policy, approvals=self.approvals, recorder=recorder,
                            always_allow=lambda rule, scope: self.add_rule(rule, "allow", scope),
                            sandbox=self._sandbox_text)
        self._pipeline = Pipeline(calls=self._calls, registry=self.registry, blobs=self._blobs,
                                  tracker=self._tracker_ if self._tracking else None, cache=self.cache,
                                  timeouts=self.policy.timeouts)
        self._roster = Roster(recorder, self._pipeline)
        self._policy_changed("settings loaded")
        servers = self.policy.mcp_servers()
        if self._tracking and self._mcp_start != "never" and servers:
            # Only the owning console starts programs (not `belay calls`); the MCP package takes a second or more to
            # import: off the loop, and only when the settings name servers to start.
            McpManager, OAuthPlace = await asyncio.to_thread(_mcp_classes)  # noqa: N806 - classes
            self.mcp = McpManager(self.registry, servers, on_status=self._mcp_changed,
                                  cwd=self.workspace.root, elicit=self.elicitations.ask,
                                  oauth=OAuthPlace(config_dir() / "mcp-oauth"))
            self._pipeline.tool_starting = self.mcp.wait_for_tool  # a call to a starting server's tool waits
            await self.mcp.start()
        if self._tracking and self._serve:
            await self._open_endpoint()

    @property
    def _tracker(self) -> ChangeTracker:
        if self._tracker_ is None:
            raise RuntimeError("the console is not open")
        if not self._tracking:
            raise ToolError(ErrorKind.CONFLICT, "this console was opened to read the journal only")
        return self._tracker_

    async def _captures(self, call_id: CallId) -> bool:
        """Whether the call's tool finds its changes by comparing the workspace (a command)."""
        name = await self.recorder.read(JournalReads.call_tool, call_id)
        tool = self.registry.get(name or "")
        return tool is not None and tool.captures_workspace

    async def _open_endpoint(self) -> None:
        """Serve outside agents (Claude Code's hooks, `belay mcp-serve`) on the workspace's private socket."""
        assert self._blobs is not None and self._calls is not None
        self.interceptor = Interceptor(calls=self._calls, registry=self.registry, blobs=self._blobs,
                                       tracker=self._tracker_, previews=self._pipeline)
        self.outside = OutsideAgents(self.roster, self.recorder, self.interceptor, state_dir=self.state_dir)
        self.hooks = self.outside.hooks
        # A command Belay runs may read the token: its processes are turned away (it could approve itself).
        self.endpoint = await self.outside.serve(await asyncio.to_thread(install_token, config_dir()),
                                                 refuse_peer=self.shells.started_by_a_command,
                                                 undo=self._undo_asked)

    async def _undo_asked(self, request: UndoRequest) -> UndoReport:
        """`belay undo|redo` in a terminal while this console owns the workspace: done here, where the lock is."""
        paths = list(request.files) or None
        if request.redo:
            return await self.redo(request.call_id, paths=paths)
        return await self.undo(request.call_id, paths=paths, force=request.force)

    def launch_claude(self, prompt: str, *, model: str | None = None, env: dict[str, str] | None = None,
                      cli_path: str | None = None, follow_ups: bool = False) -> asyncio.Task[SessionEnd]:
        """Start Claude Code (Agent SDK) here, supervised; `follow_ups`: it waits for the next message (`note`)."""
        if self.outside is None:
            raise RuntimeError("Claude Code needs a console that serves its workspace (open it tracking and serving)")
        return self.outside.launch_claude(prompt, model=model, env=env, cli_path=cli_path, follow_ups=follow_ups)

    def controls(self, agent_id: str) -> ClaudeSession | None:
        """The launched session an agent row stands for, which the window can interrupt or stop."""
        return self.outside.controls(agent_id) if self.outside is not None else None

    async def note(self, agent_id: str, text: str) -> bool:
        """Tell a hooked Claude Code agent something with its next call (core.outside.notes); False: it cannot be."""
        return await self.outside.note(agent_id, text) if self.outside is not None else False

    def _mcp_changed(self, status: ServerStatus) -> None:
        self.bus.publish(McpServerChanged(status=status))

    async def restart_mcp_server(self, name: str) -> None:
        """The window's restart button for a crashed or hung MCP server."""
        if self.mcp is None:
            raise ToolError(ErrorKind.NOT_FOUND, f"no MCP server named {name!r} runs in this console",
                            "MCP servers are declared in the user settings ([mcp.servers.NAME]).")
        await self.mcp.restart(name)

    async def mcp_started(self, timeout_s: float | None = None) -> list[ServerStatus]:
        """Wait until every MCP server has listed its tools or failed (None: within the slowest server's own
        startup timeout); their statuses.  Opening only starts them: a plan's first call may name their tools."""
        return await self.mcp.wait_started(timeout_s) if self.mcp is not None else []

    async def _probe_previews(self) -> None:
        self.previews = await asyncio.to_thread(overlay_support)

    async def close(self) -> None:
        """Deny what waits, cancel what runs, close the journal."""
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
        if self.outside is not None:
            await self.outside.aclose()  # its socket, and the transcripts it follows
        if self.interceptor is not None:
            await self.interceptor.abandon_all("the Belay console closed before the agent reported back")
        self.approvals.deny_all("the console was closed")
        await self.shells.aclose()
        if self.mcp is not None:
            await self.mcp.close()
        if self._tracker_ is not None and self._tracking:
            await self._tracker_.stop()
        if self._roster is not None:
            await self._roster.aclose(CLOSE_GRACE_S)
        if self._recorder is not None:
            await self._recorder.close()
        if self._spans is not None:
            await asyncio.to_thread(self._spans.close)  # what is still queued is sent, within a bounded wait
        if self._lock is not None:
            self._lock.release()

    async def __aenter__(self) -> Console:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def roster(self) -> Roster:
        """The agents at work and their calls (core.run.roster)."""
        if self._roster is None:
            raise RuntimeError("the console is not open")
        return self._roster

    # -- commands ------------------------------------------------------------

    def register_approver(self, name: str) -> Callable[[], None]:
        """A front end that can answer approvals says so; without one, asking means denying."""
        return self.approvals.register_approver(name)

    def approve(self, call_id: str, *, edited: dict[str, str] | None = None,
                hunks: Mapping[str, Collection[int]] | None = None, reason: str = "",
                by: DecidedBy = "person", via: DecidedVia | None = None, preview: bool = False) -> bool:
        """Let a waiting call run, optionally with the person's content per file, or only in part: `hunks` gives
        the accepted hunks (0-based indices into the approval's diff) per relative path, and `reason` why the
        others were not (the agent is told which ones).  `by` is who answers: a person unless an unattended
        answerer says it is one ("auto-approver"); the journal keeps it, and `via`, where a person answered (the
        window, a notification, the terminal).  `preview`: a command runs in a private
        layer and its changes are asked about before they land (`previews` says whether commands can)."""
        kept = {path: tuple(sorted(set(indices))) for path, indices in hunks.items()} if hunks is not None else None
        decision = Decision.APPROVED_EDITED if edited or kept is not None else Decision.APPROVED
        return self.approvals.resolve(call_id, Answer(decision=decision, edited=edited, hunks=kept,
                                                      reason=reason.strip(), by=by, via=via, preview=preview))

    def deny(self, call_id: str, reason: str = "", *, by: DecidedBy = "person",
             via: DecidedVia | None = None) -> bool:
        """Refuse a waiting call; the agent is told `reason`.  `by` and `via` as for `approve`."""
        return self.approvals.resolve(call_id, Answer(decision=Decision.DENIED, reason=reason.strip(), by=by,
                                                      via=via))

    def always_allow(self, call_id: str, scope: AllowScope = "session", rule: str | None = None, *,
                     via: DecidedVia | None = None) -> bool:
        """Approve a waiting call and add an allow rule so calls like it stop asking.

        `scope` is once (just this call), session, workspace or user; `rule`
        defaults to the one the request suggested.
        """
        if scope not in ("once", "session", "workspace", "user"):
            raise ValueError(f"unknown scope {scope!r}: use once, session, workspace or user")
        return self.approvals.resolve(call_id, Answer(decision=Decision.ALWAYS_ALLOWED, scope=scope, rule=rule,
                                                      via=via))

    # -- policy ----------------------------------------------------------------

    def set_mode(self, mode: str) -> None:
        """Switch the mode for this session: default, accept_edits, plan or bypass."""
        self.policy.set_mode(mode)
        self._policy_changed(f"mode set to {self.policy.mode}")

    async def add_rule(self, rule: str, action: RuleAction, scope: Scope) -> str:
        """Add a rule to a layer (a workspace or user rule is written to its settings file); returns it normalised."""
        stored = await asyncio.to_thread(self.policy.add_rule, rule, action, scope)
        self._policy_changed(f"added {action} rule {stored} to {scope}")
        return stored

    async def trust_workspace(self) -> None:
        """The person trusts this workspace: its settings file's allow rules and mode apply (and are remembered)."""
        held = self.policy.held_back()
        await asyncio.to_thread(self.policy.trust_workspace)
        self._policy_changed("trusted this workspace" + (f": {', '.join(held)} now apply" if held else ""))

    async def remove_rule(self, rule: str, action: RuleAction, scope: Scope) -> bool:
        """Remove a rule from a layer; False when it was not there."""
        removed = await asyncio.to_thread(self.policy.remove_rule, rule, action, scope)
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
        if self.cache is not None:  # what Grep, Glob, LS show depends on the Read rules: a cached answer may not
            self.cache.changed(frozenset(), everything=True)
        self.bus.publish(PolicyChanged(what=what, mode=self.policy.mode, rules=tuple(self.policy.rules()),
                                       problems=self.settings_problems, held_back=tuple(self.policy.held_back())))

    def _sandbox_text(self) -> str:
        return describe(self.sandbox, self.bash_settings.network)

    def cancel(self, call_id: str) -> bool:
        """Stop a queued, waiting or running call; the agent is told it was cancelled."""
        return self._roster.cancel(call_id) if self._roster is not None else False

    async def kill_shell(self, shell_id: str) -> bool:
        """Stop a background shell and everything it started; False when it had already ended or is unknown."""
        try:
            return await self.shells.kill(shell_id) == "running"
        except BelayError:
            return False

    async def undo(self, op_id: str, *, paths: Sequence[str] | None = None, force: bool = False,
                   resolutions: Mapping[str, Resolution] | None = None) -> UndoReport:
        """Restore what an operation changed: a call, or an earlier undo (which redoes what it undid).  `paths`
        limits it to some files.  A file changed since is merged when the later edits do not overlap; otherwise it
        needs a resolution (or `force`, which overwrites), else the undo is refused and nothing is written.  Git
        references the call moved are moved back (whole-call undos only)."""
        return await self._undoer().undo(op_id, paths=paths, force=force, resolutions=resolutions)

    async def redo(self, call_id: str, *, paths: Sequence[str] | None = None) -> UndoReport:
        """Put back what undoing `call_id` took away (all of it, or `paths`): each undo in force is undone."""
        return await self._undoer().redo(call_id, paths=paths)

    async def undo_preview(self, op_id: str, *, paths: Sequence[str] | None = None) -> UndoPreview:
        """What undoing would do to each file (restore, merge, conflict...), for the person to decide."""
        return await self._undoer().preview(op_id, paths=paths)

    async def rewind_plan(self, call_id: str) -> list[CallRecord]:
        """What "rewind to here" would undo: every later call that changed files and stands, newest first."""
        return await self._undoer().rewind_plan(call_id)

    async def rewind(self, call_id: str) -> list[UndoReport]:
        """Undo every later call, newest first, leaving the workspace as this call left it.  Stops at the first
        refusal (a file someone changed since), which is the last report: nothing is overwritten, and what was
        undone before it stays undone (each undo can itself be undone)."""
        return await self._undoer().rewind(call_id)

    def _undoer(self) -> Undoer:
        if self._blobs is None:
            raise RuntimeError("the console is not open")
        return Undoer(workspace=self.workspace, recorder=self.recorder, blobs=self._blobs,
                      tracker=lambda: self._tracker)

    # -- agents ----------------------------------------------------------------

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: CallId | None = None, tools: Sequence[str] | None = None) -> AgentHandle:
        """Register an agent (journal, event) and return its handle; only the console that has the workspace."""
        if not self._tracking:
            raise ToolError(ErrorKind.CONFLICT, "this console was opened to read the journal only; agents run in "
                            "the console that has the workspace open")
        return await self.roster.start_agent(name, kind, parent=parent, spawned_by=spawned_by, tools=tools)

    async def run_agent(self, handle: AgentHandle, body: AgentBody) -> str:
        """Run an agent's body to the end, recording how it finished."""
        return await self.roster.run_agent(handle, body)

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Start a top-level agent task that the console owns and ends on close."""
        return self.roster.launch(coro, name)

    async def call(self, agent: AgentHandle, tool: str, args: object, spawn: SpawnAgent | None = None, *,
                   timeout_s: float | None = None, batch: tuple[BatchId, str] | None = None,
                   ask: bool = False) -> CallOutcome:
        """Submit one call for `agent` and wait for its outcome.

        `timeout_s` overrides the tool's limit for this call; `batch` is (batch id, the call's id in it);
        `ask` has a person approve it even where the policy would allow it.
        """
        return await self.roster.call(agent, tool, args, spawn, timeout_s=timeout_s, batch=batch, ask=ask)

    async def run_batch(self, agent: AgentHandle, calls: Sequence[BatchCall], *, name: str = "batch",
                        concurrency: int = 10, fail_fast: bool = False) -> BatchReport:
        """Run calls as a dependency graph (see core.orchestration); raises BatchError when it cannot start."""
        await self.recorder.session()
        runner = BatchRunner(workspace=self.workspace, registry=self.registry, recorder=self.recorder,
                             call=self.roster.call)
        return await runner.run(agent, calls, name=name, concurrency=concurrency, fail_fast=fail_fast)

    def __repr__(self) -> str:
        return (f"<Console {self.workspace.root} session={self.session_id} "
                f"pending={len(self.approvals.pending())} agents={self._roster.running if self._roster else 0}>")
