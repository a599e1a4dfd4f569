"""Calls an outside agent runs with its own tools (Claude Code): decided by Belay, recorded when they end.

Belay's pipeline runs a tool between deciding and recording; here the agent
runs it.  Both walk the same steps (`core.run.calls`): `before()` opens the
call, puts it through the same policy and approvals (with a diff computed
from the call's input for file tools, the parsed command for Bash), and
answers allow, deny (with the reason for the model) or allow with edited
input.  Once allowed, what the call will change is made attributable:
- a file tool's file is read now (its before-content kept for undo) and
  held, so the change the agent makes to it is this call's and nobody
  else's;
- a command (or any other tool that may change anything) takes the
  one-author lock, held by a task until the agent reports back (or a
  deadline passes), and its side effects are captured like a built-in
  Bash call's;
- a command that is to run in preview (the `[bash] effects` setting, a
  rule, or the person's "Run in preview") is run by Belay itself, as its
  own Bash's previews are (`Pipeline.preview_outside`): in a private layer,
  inside Belay's sandbox; the files the person keeps are applied as the
  call's changes, and the agent's command is replaced by one that prints
  what the command printed, with what became of its changes, and exits
  with its exit code.
`after()` captures the changes and finishes the call.  For a file tool the
before-content is checked against what the agent says it found
(`originalFile`): a difference is someone else's edit, recorded as such.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from core.changes.tracker import ChangeTracker
from core.errors import BelayError, ErrorInfo, ErrorKind
from core.ids import AgentId, CallId, new_call_id
from core.models.records import ChangeKind, FileChange, RunStatus
from core.outside.answers import edited_input, line_for, replay, short
from core.outside.edge import path_problem, separate
from core.outside.liveness import AgentGone, while_alive
from core.outside.wall import Walled, walled
from core.paths import Workspace, one_look, resolved_paths
from core.policy.verdicts import PolicyRequest
from core.process.limits import PidsGroup
from core.recorder import Recorder
from core.run import arguments
from core.run.calls import AgentHandle, Calls, OpenCall, Refused, error_text
from core.store import fsio
from core.store.blobs import BlobStore
from core.store.fsio import MAX_CAPTURE_BYTES
from core.tasks import shielded, spawn
from core.tools.base import (
    Annotations,
    ReadState,
    RunTool,
    Tool,
    ToolArgs,
    ToolContext,
    ToolOutput,
    WritePlan,
    WriteTool,
)
from core.tools.bash import BashArgs, BashTool
from core.tools.names import ToolName
from core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

HOLD_S = 600.0
"""How long an allowed call may take to report back before its capture is closed without it."""
WATCH_S = 1.0
"""How often a call holding the lock checks that its agent's process still runs."""
GONE = "the agent's process ended before the call reported back (killed or crashed mid-call)"
ENDED = "the agent's session ended before the call reported back"
GONE_ASKED = ("the agent's process ended while the call waited for approval (killed or crashed): nobody is left to "
              "act on an answer")
HARMLESS: dict[str, Annotations] = {
    # Claude Code's own tools that change nothing on disk: judged as read-only.
    ToolName.TODO_WRITE: Annotations(read_only=True, destructive=False),
    ToolName.AGENT: Annotations(read_only=True, destructive=False),
    ToolName.TASK: Annotations(read_only=True, destructive=False),
    ToolName.EXIT_PLAN_MODE: Annotations(read_only=True, destructive=False),
    ToolName.WEB_SEARCH: Annotations(read_only=True, destructive=False, open_world=True),
    ToolName.WEB_FETCH: Annotations(read_only=True, destructive=False, open_world=True),
}


@dataclass(frozen=True)
class HookVerdict:
    """What the outside agent is told before it runs a call."""

    decision: Literal["allow", "deny"]
    reason: str
    call_id: CallId
    updated_input: dict[str, Any] | None = None
    """The input the person edited, to run instead of the agent's."""
    note: str = ""
    """What the model should be told beside the allow (the hunks of a partial approval not applied); "": nothing."""


class Previews(Protocol):
    """Runs an outside agent's command in preview (the console's pipeline, `Pipeline.preview_outside`)."""

    async def layers(self) -> bool: ...

    async def preview_outside(self, call: OpenCall, tool: RunTool, args: ToolArgs) -> ToolOutput: ...


@dataclass(frozen=True)
class _Decided:
    """A call that may run: the input the person edited (None: the agent's own), what the model is to be told of
    a partial approval, and whether a command is to run in preview first."""

    updated: dict[str, Any] | None = None
    note: str = ""
    preview: bool = False


@runtime_checkable
class EditableInput(Protocol):
    """A model of an agent's own tool (Codex's apply_patch) that can rewrite the agent's input so the agent's
    tool writes what the person approved: `edited` maps workspace-relative paths to their new content."""

    def edited_input(self, tool_input: dict[str, Any], plan: WritePlan, edited: dict[str, str],
                     workspace: Workspace) -> dict[str, Any] | None: ...


@dataclass
class _Open:
    """An allowed call the agent is running."""

    call: OpenCall
    use_id: str = ""
    alive: Callable[[], bool] | None = None
    """Whether the agent's process still runs (None: not known, so only HOLD_S ends the wait)."""
    gone: bool = False
    """The agent died before reporting back: the call ends interrupted and lets go of the lock."""
    befores: dict[str, bytes | None] = field(default_factory=dict)
    """File tools: relative path -> content before (None: absent)."""
    capture: asyncio.Task[None] | None = None
    """Commands: the task holding the one-author lock, which captures when `done` is set."""
    done: asyncio.Event = field(default_factory=asyncio.Event)
    group: PidsGroup | None = None
    """Commands run inside the wall where processes are limited by a pids cgroup: the command's group, removed
    (what is left in it killed) when the call reports back or is abandoned."""


class Interceptor:
    """Supervises calls an outside agent makes, keyed by the agent's own call id (`tool_use_id`)."""

    def __init__(self, *, calls: Calls, registry: ToolRegistry, blobs: BlobStore,
                 tracker: ChangeTracker | None, previews: Previews | None = None) -> None:
        self.calls, self.registry, self.blobs, self.tracker = calls, registry, blobs, tracker
        self.previews = previews
        """Runs a command that is to be previewed (None: commands always run as the agent runs them)."""
        self.workspace: Workspace = calls.workspace
        self.recorder: Recorder = calls.recorder
        self._open: dict[str, _Open] = {}
        self._sweeper: asyncio.Task[None] | None = None
        """Ends the open calls that hold no lock once their agent's process is gone (`_sweep`)."""

    @property
    def waiting(self) -> int:
        """Calls allowed and not yet reported back."""
        return len(self._open)

    async def before(self, agent: AgentHandle, use_id: str, tool_name: str, tool_input: dict[str, Any], *,
                     alive: Callable[[], bool] | None = None, tool: Tool | None = None) -> HookVerdict:
        """`tool`: Belay's model of an agent's own tool that no registry holds (Codex's apply_patch), which
        plans its diff and names its files; else the registry's tool of that name.  An allowed command comes back
        rewritten to run inside Belay's sandbox (core.outside.wall)."""
        try:
            arguments.check_text(tool_name, tool_input)  # before anything reads (or journals) the call
        except BelayError as e:
            return await self._refuse_unencodable(agent, tool_name, tool_input, e.info)
        tool = tool or self.registry.get(tool_name)
        with one_look():  # its validation, summary and policy request resolve each path once
            args = self._validated(tool, tool_input)
            summary = tool.summary(args, self.workspace) if tool and args else line_for(tool_input)
            named = resolved_paths(tool_input)
            edge = path_problem(tool, args, self.workspace) if tool is not None and args is not None else None
        call = await self.calls.open(CallId(new_call_id()), agent, tool_name, tool_input, summary, wait=False,
                                     use_id=use_id or None)
        try:
            decided = await self._decide(call, tool, args, named, alive, edge)
            if isinstance(decided, Refused):
                await self.calls.finish(call, decided.status, decided.text, decided.error)
                return HookVerdict("deny", decided.text, call.call_id)
            if isinstance(tool, BashTool) and isinstance(args, BashArgs) and await self._previewing(tool, args,
                                                                                                   decided.preview):
                return await self._previewed(use_id, call, tool, args, alive)
        except asyncio.CancelledError:  # the agent stopped waiting (its hook gave up, its session ended)
            await shielded(self.calls.finish(call, RunStatus.CANCELLED, "The agent stopped waiting.",
                                             ErrorInfo(kind=ErrorKind.CANCELLED, message="the agent stopped waiting")))
            raise
        updated, note = decided.updated, decided.note
        # The start of a call that only reads need not be committed before the agent hears the allow: nothing it
        # does can be lost (core.store.group_commit); one that may change anything is, as it then holds files.
        await self.calls.start(call, wait=not self._reads_only(call, tool))
        await self._hold(use_id, call, tool, args, alive)
        if isinstance(tool, BashTool):
            updated = await self._walled(use_id, tool, updated if updated is not None else call.args)
        return HookVerdict("allow", "allowed by Belay", call.call_id, updated, note)

    async def _previewing(self, tool: BashTool, args: BashArgs, asked: bool) -> bool:
        """Whether this allowed command runs in preview: asked for (or the settings preview every command that may
        change something), it can be (not a background shell), and layers work here."""
        return (self.previews is not None and self.tracker is not None and tool.previews(args, asked)
                and await self.previews.layers())

    async def _previewed(self, use_id: str, call: OpenCall, tool: BashTool, args: BashArgs,
                         alive: Callable[[], bool] | None) -> HookVerdict:
        """Run the command here in preview; the agent is then given a command that replays its output."""
        assert self.previews is not None
        await self.calls.start(call)
        try:
            output = await self.previews.preview_outside(call, tool, args)
        except BelayError as e:
            status = RunStatus.TIMED_OUT if e.info.kind == ErrorKind.TIMEOUT else RunStatus.FAILED
            text = error_text(e.info)
            await self.calls.finish(call, status, text, e.info)
            return HookVerdict("deny", text, call.call_id)
        self._open[use_id] = _Open(call, use_id, alive)  # what the agent runs only prints: nothing to hold
        return HookVerdict("allow", "run by Belay in preview", call.call_id,
                           {**call.args, "command": replay(output.text, output.data.get("exit_code"))})

    async def _walled(self, use_id: str, tool: BashTool, given: dict[str, Any]) -> dict[str, Any] | None:
        """The allowed command rewritten to run inside Belay's sandbox (core.outside.wall), its pids group kept
        with the open call until it reports back; None where there is no wall (the card and status line say so)."""
        command = given.get("command")
        if not isinstance(command, str):
            return None

        def build() -> Walled | None:
            info, limit = tool.containment()
            return walled(command, workspace=self.workspace.root, info=info, limit=limit, settings=tool.settings,
                          hide=tool.hidden())

        made = await asyncio.to_thread(build)
        if made is None:
            return None
        opened = self._open.get(use_id)
        if opened is not None:
            opened.group = made.group
        elif made.group is not None:
            await asyncio.to_thread(made.group.remove)
        return {**given, "command": made.command}

    async def _refuse_unencodable(self, agent: AgentHandle, tool_name: str, tool_input: dict[str, Any],
                                  info: ErrorInfo) -> HookVerdict:
        """A call holding text UTF-8 cannot encode (a lone surrogate) is journaled with it escaped, and refused."""
        call = await self.calls.open(CallId(new_call_id()), agent, arguments.shown(tool_name),
                                     arguments.shown_raw(tool_input), "invalid arguments")
        text = error_text(info)
        await self.calls.finish(call, RunStatus.FAILED, text, info)
        return HookVerdict("deny", text, call.call_id)

    async def after(self, use_id: str, response: Any = None, error: str | None = None,
                    original: str | None = None) -> str | None:
        """The agent ran the call: record how it ended and what it changed.  Returns the call id."""
        opened = self._open.pop(use_id, None)
        if opened is None:
            return None  # not one Belay allowed (a hook installed mid-session): nothing to attach it to
        await self._release(opened, original)
        status = RunStatus.FAILED if error else RunStatus.DONE
        error = arguments.shown(error) if error else error  # the agent's text may not be UTF-8 the journal can hold
        info = ErrorInfo(kind=ErrorKind.SYSTEM, message=error) if error else None
        await self.calls.finish(opened.call, status, error or arguments.shown(short(response, 2000)), info)
        return opened.call.call_id

    async def abandon_all(self, why: str) -> None:
        """The console is closing: close every call still open."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.wait([self._sweeper])
        await self.abandon(why)

    async def abandon(self, why: str, agents: Collection[AgentId] | None = None) -> None:
        """The agent went away (its session ended, the console is closing): close its calls still open (every
        agent's when `agents` is None), interrupted, with what they changed so far.  Their report will not come."""
        for opened in list(self._open.values()):
            if agents is None or opened.call.agent.agent_id in agents:
                await self._abandon(opened, why)

    async def _abandon(self, opened: _Open, why: str, text: str | None = None) -> None:
        """Close one open call, interrupted: `why` for the error, `text` (else `why`) for its output."""
        if self._open.get(opened.use_id) is not opened:
            return  # reported back, or abandoned, meanwhile
        del self._open[opened.use_id]
        await self._release(opened, None)  # what it changed is kept; what it left inside the wall ends
        log.info("%s call %s: %s; it ends interrupted", opened.call.tool, opened.call.call_id, why)
        await self.calls.finish(opened.call, RunStatus.INTERRUPTED, text or why,
                                ErrorInfo(kind=ErrorKind.CANCELLED, message=why))

    async def _sweep(self) -> None:
        """While calls that hold no lock are open (a read, a held file), end those whose agent's process is gone
        every WATCH_S: nothing else would (a call holding the lock watches its agent itself, `_wait_for_report`)."""
        while True:
            await asyncio.sleep(WATCH_S)
            watched = [o for o in self._open.values() if o.capture is None and o.alive is not None]
            if not watched:
                return
            for opened in watched:
                if opened.alive is not None and not opened.alive():
                    opened.gone = True
                    log.warning("%s call %s: %s", opened.call.tool, opened.call.call_id, GONE)
                    await shielded(self._abandon(opened, GONE, f"Interrupted: {GONE}."))

    # -- deciding ------------------------------------------------------------

    def _validated(self, tool: Tool | None, raw: dict[str, Any]) -> ToolArgs | None:
        if tool is None:
            return None
        try:
            return arguments.validate(tool, raw)
        except BelayError:
            return None  # the agent's tool may take more than Belay's model of it: judge it by name

    async def _decide(self, call: OpenCall, tool: Tool | None, args: ToolArgs | None, named: tuple[Path, ...],
                      alive: Callable[[], bool] | None = None, edge: ErrorInfo | None = None) -> _Decided | Refused:
        """The refusal, or how the call may run.  `named`: the paths the call names, resolved; `edge`: why Belay's
        own tool would refuse its path (core.outside.edge), which refuses it unless a rule allows it by name.  A
        question put to a person is withdrawn if the agent's process ends before the answer (`alive`, checked
        every WATCH_S)."""
        annotations = tool.annotations if tool else HARMLESS.get(call.tool, Annotations())
        request = functools.partial(PolicyRequest, tool=call.tool, args=call.args, workspace=self.workspace.root,
                                    annotations=annotations, outside_agent=True)
        verdict = await self.calls.decide(lambda: request(paths=named))
        if edge is not None and verdict.action != "deny" and not (verdict.action == "allow" and verdict.by == "rule"):
            return Refused(RunStatus.FAILED, error_text(edge), edge)  # as Belay's own tool would
        plan = await self._plan(tool, args) if verdict.action == "ask" else None
        permitting = self.calls.permit(call, verdict, plan, wait=False)  # committed with the start or end
        if verdict.action != "ask" or alive is None:
            permission = await permitting
        else:
            try:
                permission = await while_alive(permitting, alive, WATCH_S, f"approval of {call.call_id}")
            except AgentGone:
                log.warning("%s call %s: %s; its approval is withdrawn", call.tool, call.call_id, GONE_ASKED)
                return Refused(RunStatus.INTERRUPTED, f"Withdrawn: {GONE_ASKED}.",
                               ErrorInfo(kind=ErrorKind.CANCELLED, message=GONE_ASKED))
        if isinstance(permission, Refused):
            return permission
        reads = verdict.analysis is not None and verdict.analysis.read_only  # changes nothing, so nothing to preview
        preview = not reads and (permission.preview or verdict.preview)
        if permission.edited and plan is not None:
            if isinstance(tool, EditableInput):  # the tool knows how to say the person's version in its own input
                updated = tool.edited_input(call.args, plan, permission.edited, self.workspace)
            else:
                updated = edited_input(call.tool, call.args, plan, permission.edited, self.workspace)
            if updated is None and permission.note:  # running the agent's input would write the rejected hunks too
                text = f"Belay cannot make {call.tool} write only the approved part of this change, so it was not run."
                return Refused(RunStatus.DENIED, text, ErrorInfo(kind=ErrorKind.DENIED, message=text))
            return _Decided(updated, permission.note)
        return _Decided(preview=preview)

    async def _plan(self, tool: Tool | None, args: ToolArgs | None) -> WritePlan | None:
        """What a file tool would write, for the diff the person approves (None when it cannot be told)."""
        if not isinstance(tool, WriteTool) or args is None:
            return None
        ctx = ToolContext(self.workspace, AgentId(""), CallId(""), ReadState())
        try:
            return await asyncio.to_thread(tool.plan, args, ctx)
        except BelayError:
            return None  # the agent's own tool will report the problem

    # -- capturing -----------------------------------------------------------

    def _reads_only(self, call: OpenCall, tool: Tool | None) -> bool:
        """Whether the call is judged to change nothing: nothing is held for it while the agent runs it."""
        return (tool.annotations if tool else HARMLESS.get(call.tool, Annotations())).read_only

    async def _hold(self, use_id: str, call: OpenCall, tool: Tool | None, args: ToolArgs | None,
                    alive: Callable[[], bool] | None = None) -> None:
        """Make what the allowed call changes its own: hold its file, or the one-author lock."""
        opened = _Open(call, use_id, alive)
        self._open[use_id] = opened
        if alive is not None and (self._sweeper is None or self._sweeper.done()):
            self._sweeper = spawn(self._sweep(), "ending calls of agents that died")
        if self._reads_only(call, tool) or self.tracker is None:
            return
        paths = tool.writes(args, self.workspace) if tool is not None and args is not None else None
        if paths and "" not in paths and isinstance(tool, WriteTool):
            try:
                opened.befores = await asyncio.to_thread(self._read_befores, paths)
            except BelayError as e:  # not a file (a directory, a link loop): compare the workspace instead
                log.info("%s call %s: %s; its changes are found by comparing the workspace", call.tool,
                         call.call_id, e.info.message)
            else:
                self.tracker.hold(call.call_id, frozenset(paths))
                return
        ready = asyncio.get_running_loop().create_future()
        opened.capture = spawn(self._hold_lock(opened, ready), f"capture of {call.tool} {call.call_id}")
        try:
            await asyncio.wait([ready])  # the lock is held (what changed before it was settled): the agent may go on
        except asyncio.CancelledError:  # the agent stopped waiting for the lock (its hook gave up, it was killed)
            self._open.pop(use_id, None)
            opened.capture.cancel()
            await shielded(asyncio.wait([opened.capture]))
            await shielded(self.calls.finish(call, RunStatus.CANCELLED, "The agent stopped waiting.",
                                             ErrorInfo(kind=ErrorKind.CANCELLED, message="the agent stopped waiting")))
            raise

    def _read_befores(self, paths: frozenset[str]) -> dict[str, bytes | None]:
        """Blocking: each file's content before the agent writes it (a file with other names given an inode of
        its own first, so that the agent's write in place changes the workspace's name alone)."""
        befores = {}
        for rel in paths:
            separate(self.workspace, rel)
            data = fsio.read_if_exists(self.workspace, self.workspace.resolve(str(self.workspace.root / rel)),
                                       MAX_CAPTURE_BYTES)
            if data is not None:
                self.blobs.put(data)
            befores[rel] = data
        return befores

    async def _hold_lock(self, opened: _Open, ready: asyncio.Future[None]) -> None:
        assert self.tracker is not None
        call = opened.call
        async with self.tracker.mutation(f"call {call.call_id}"):
            if ready.done():  # nobody waits for it any more
                return
            ready.set_result(None)
            await self._wait_for_report(opened)
            captured = await self.tracker.capture()
        if captured.changes or captured.git:
            await self.calls.captured(call, captured.changes, captured.git)
        if opened.gone and opened.group is not None and self._open.get(opened.use_id) is opened:
            await asyncio.to_thread(opened.group.remove)  # what the command left inside the wall ends with its agent
        if opened.gone and self._open.pop(opened.use_id, None) is opened:
            log.warning("%s call %s: %s; it ends interrupted", call.tool, call.call_id, GONE)
            await self.calls.finish(call, RunStatus.INTERRUPTED, f"Interrupted: {GONE}.",
                                    ErrorInfo(kind=ErrorKind.CANCELLED, message=GONE))

    async def _wait_for_report(self, opened: _Open) -> None:
        """Until the agent reports back, its process is gone, or HOLD_S passes."""
        deadline = asyncio.get_running_loop().time() + HOLD_S
        while True:
            try:
                await asyncio.wait_for(opened.done.wait(), WATCH_S)
                return
            except TimeoutError:
                pass
            if opened.alive is not None and not opened.alive():
                opened.gone = True
                return
            if asyncio.get_running_loop().time() > deadline:
                log.warning("%s call %s did not report back within %.0f s; its capture is closed",
                            opened.call.tool, opened.call.call_id, HOLD_S)
                return

    async def _release(self, opened: _Open, original: str | None) -> None:
        """The agent reported back: capture what the call changed and let go of its file or the lock."""
        if opened.group is not None:
            await asyncio.to_thread(opened.group.remove)
        if opened.capture is not None:
            opened.done.set()
            await opened.capture
            return
        if not opened.befores or self.tracker is None:
            return
        call = opened.call
        changes, surprise = await asyncio.to_thread(self._file_changes, opened, original)
        if surprise:
            await self.recorder.external_changes(surprise, f"while call {call.call_id} was waiting to run")
        if changes:
            await self.calls.captured(call, tuple(changes))
        async with self.tracker.mutation(f"call {call.call_id} reported back"):
            self.tracker.release(call.call_id)
            await self.tracker.absorb(changes)

    def _file_changes(self, opened: _Open, original: str | None) -> tuple[list[FileChange], list[FileChange]]:
        """What the agent changed in each held file; and someone else's change before it, if `original`
        (what the agent says it found) differs from what Belay read when it allowed the call."""
        changes, surprises = [], []
        for rel, before in opened.befores.items():
            path = self.workspace.resolve(str(self.workspace.root / rel))
            after = fsio.read_if_exists(self.workspace, path, MAX_CAPTURE_BYTES)
            found = original.encode() if original is not None and len(opened.befores) == 1 else before
            if found != before:
                surprises.append(_change(rel, before, found, self.blobs))
            if after != found:
                changes.append(_change(rel, found, after, self.blobs))
        return changes, surprises

    def __repr__(self) -> str:
        return f"<Interceptor open={len(self._open)}>"


def _change(rel: str, before: bytes | None, after: bytes | None, blobs: BlobStore) -> FileChange:
    kind = ChangeKind.CREATE if before is None else ChangeKind.DELETE if after is None else ChangeKind.MODIFY
    return FileChange(path=rel, kind=kind, before_hash=blobs.put(before) if before is not None else None,
                      after_hash=blobs.put(after) if after is not None else None)
