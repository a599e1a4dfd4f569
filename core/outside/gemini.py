"""Gemini CLI's hook events as Belay sees them, and where Belay's hooks go in its settings.

Gemini CLI (0.61) runs a command hook before each tool call (`BeforeTool`) and after it (`AfterTool`),
with the session's id, the tool's name and its arguments, and waits for the answer: `{"decision":
"deny", "reason": ...}` stops the call and the model reads "Tool execution blocked: <reason>";
`hookSpecificOutput.tool_input` replaces the arguments (the person's edited content); anything else
lets it run.  It cannot ask a person itself, so Belay holds the hook until the person answers in the
console (the hook command keeps waiting while the console sends keepalives).  Observed with the real
binary: tests/integration/GEMINI_HOOKS.md.

The events carry no id for the call, so an `AfterTool` is paired with the open call of the same
session, tool and arguments (the oldest such; failing that, the oldest of that tool).  Nor do they say
which agent made a call: a sub-agent (`invoke_agent`) runs inside its parent's call, with the parent's
session id.  Gemini CLI runs a turn's calls only once every one of them has been let through, and a
sub-agent's calls start after its `invoke_agent` has, so a `BeforeTool` stamped later than Belay's
answer to an open `invoke_agent` is that sub-agent's.  A call Belay allowed that never reports back
(Gemini's own prompt refused it, or it was cancelled) is closed when the turn ends (`AfterAgent`) or
the session does.

Because a turn's calls all wait for each other's answers, a second command of the same turn cannot
wait for the one-author lock the first holds until it reports back: it would wait for ever.  It is
refused at once with a reason that tells the model to run it again on its own.

Calls are judged through Belay's own tools (core.outside.gemini_tools): `write_file` as Write,
`replace` as Edit, `run_shell_command` as Bash, so a write is approved as a diff, its file held and
its change captured for undo, and a command's side effects are captured under the one-author lock.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from core.errors import ErrorInfo, ErrorKind
from core.ids import CallId, new_call_id
from core.models.records import RunStatus
from core.outside import install as claude_install
from core.outside.adapter import Handler, HookAdapter, HookAnswer, HookHost, HookSession
from core.outside.gemini_tools import SPAWNING, BelayCall, belay_call, gemini_args, own_tool, takes_the_lock
from core.outside.hook_events import (
    AfterAgentEvent,
    AfterToolEvent,
    AgentEvent,
    BeforeToolEvent,
    SessionEndEvent,
    SessionStartEvent,
)
from core.outside.install import AgentHooks, Changed
from core.outside.intercept import HARMLESS, Interceptor
from core.run.calls import AgentHandle
from core.store.atomic_file import write_text_atomically
from core.tools.base import Annotations, Tool
from core.transcripts.gemini import GeminiTranscript
from core.transcripts.reader import TranscriptReader

NOT_RUN = ("Gemini CLI did not report this call back before its turn ended: it did not run it (its own "
           "confirmation was refused or the turn was cancelled), or ran it without telling Belay")
ONE_AT_A_TIME = ("Belay: not run. Belay records which command changed what by running one at a time, and Gemini "
                 "CLI starts a turn's commands together, so this one would wait for the other for ever. Run it "
                 "again on its own once the other command has finished (or with wait_for_previous: true).")


@dataclass
class _GeminiCall:
    """A call Belay let through, until its AfterTool."""

    use_id: str
    tool: str
    keys: tuple[str, ...]
    """The (tool, arguments) it may report back with: the model's, and the person's edited ones."""
    exclusive: bool = False
    """It runs under the one-author lock (a command), which it holds until it reports back."""
    answered: float | None = None
    """When Belay let it through (None: still deciding)."""


@dataclass
class _Spawn:
    """An allowed `invoke_agent` call, running its sub-agent."""

    use_id: str
    call_id: str
    name: str
    by: AgentHandle
    answered: float
    """When Belay let it through (seconds since the epoch): later calls of the session are the sub-agent's."""
    child: AgentHandle | None = None


@dataclass
class GeminiHookSession(HookSession):
    """A Gemini CLI session: its calls let through and its sub-agents running."""

    open: dict[str, _GeminiCall] = field(default_factory=dict)
    """The calls let through (or being decided) and not reported back yet, by use id, oldest first."""
    spawns: list[_Spawn] = field(default_factory=list)


class GeminiHooks(HookAdapter[GeminiHookSession]):
    """Turns Gemini CLI's hook events into Belay's records and answers.

    Never links a sub-agent after the fact: a sub-agent is known with its spawning call from its first
    call on."""

    def __init__(self, interceptor: Interceptor, host: HookHost, client_name: str = "gemini-cli") -> None:
        self.client_name = client_name
        super().__init__(interceptor, host)
        self._starting = asyncio.Lock()  # a turn's BeforeTools arrive together: one agent per session
        self._ids = itertools.count(1)

    def _handling(self) -> Mapping[type[AgentEvent], Handler]:
        return {BeforeToolEvent: self._before, AfterToolEvent: self._after, AfterAgentEvent: self._turn_end,
                SessionStartEvent: self._session_start, SessionEndEvent: self._session_end}

    def _new_session(self, agent: AgentHandle) -> GeminiHookSession:
        return GeminiHookSession(agent)

    def _transcript_reader(self, agent: AgentHandle) -> TranscriptReader | None:
        return GeminiTranscript(agent.agent_id)

    async def _session(self, event: AgentEvent) -> GeminiHookSession:
        async with self._starting:
            return await super()._session(event)

    # -- events ----------------------------------------------------------------

    async def _before(self, event: BeforeToolEvent) -> HookAnswer:
        session = await self._session(event)
        agent = await self._caller(session, event)
        await self.host.read_transcripts(session.agent)  # its words so far, for the approval card
        call, tool = belay_call(event.tool_name, event.tool_input, _cwd(event)), own_tool(event.tool_name)
        exclusive = takes_the_lock(call, self._read_only(call, tool))
        if exclusive and _sibling_holds_the_lock(session, _timestamp(event)):
            await self._skipped(agent, call)
            return HookAnswer(output={"decision": "deny", "reason": ONE_AT_A_TIME})
        pending = _GeminiCall(f"gemini-{event.session_id}-{next(self._ids)}", event.tool_name,
                        (_key(event.tool_name, event.tool_input),), exclusive)
        session.open[pending.use_id] = pending  # before deciding: a sibling arriving meanwhile must see it
        alive = session.process.alive if session.process is not None else None
        try:
            verdict = await self.interceptor.before(agent, pending.use_id, call.tool, call.args, alive=alive, tool=tool)
        finally:
            session.open.pop(pending.use_id, None)  # back in once allowed (the turn may have ended meanwhile)
        if verdict.decision == "deny":
            return HookAnswer(output={"decision": "deny", "reason": verdict.reason})
        edited = gemini_args(event.tool_name, event.tool_input, verdict.updated_input) \
            if verdict.updated_input is not None else None
        if edited is not None:
            pending.keys += (_key(event.tool_name, edited),)
        pending.answered = time.time()
        session.open[pending.use_id] = pending
        if event.tool_name in SPAWNING:
            name = str(event.tool_input.get("agent_name") or "sub-agent")
            session.spawns.append(_Spawn(pending.use_id, verdict.call_id, name, agent, pending.answered))
        output: dict[str, Any] = {"decision": "allow"}
        if edited is not None:
            output["hookSpecificOutput"] = {"tool_input": edited}
        return HookAnswer(output=output)

    async def _skipped(self, agent: AgentHandle, call: BelayCall) -> None:
        """Journal a command refused for waiting on its sibling, so the person sees what the model was told."""
        calls = self.interceptor.calls
        summary = " ".join(str(call.args.get("command") or call.tool).split())[:100]
        opened = await calls.open(CallId(new_call_id()), agent, call.tool, call.args, summary)
        await calls.finish(opened, RunStatus.SKIPPED, ONE_AT_A_TIME,
                           ErrorInfo(kind=ErrorKind.SKIPPED, message=ONE_AT_A_TIME))

    def _read_only(self, call: BelayCall, tool: Tool[Any] | None) -> bool:
        known = tool or self.interceptor.registry.get(call.tool)
        return (known.annotations if known is not None else HARMLESS.get(call.tool, Annotations())).read_only

    async def _after(self, event: AfterToolEvent) -> HookAnswer:
        session = await self._session(event)
        call = _pop_match(session.open, event.tool_name, _key(event.tool_name, event.tool_input))
        if call is None:
            return HookAnswer()  # not one Belay let through (hooks installed mid-session)
        response = event.tool_response
        error = response.get("error") if isinstance(response, dict) else None
        text = response.get("llmContent") if isinstance(response, dict) else response
        message = error.get("message") if isinstance(error, dict) else error
        await self.interceptor.after(call.use_id, text, error=str(message) if message else None)
        spawn = next((s for s in session.spawns if s.use_id == call.use_id), None)
        if spawn is not None:
            session.spawns.remove(spawn)
            if spawn.child is not None:
                await self.host.finish_agent(spawn.child, "finished")
        return HookAnswer()

    async def _turn_end(self, event: AfterAgentEvent) -> HookAnswer:
        session = self._sessions.get(event.session_id)
        if session is not None:
            await self._close_open(session, NOT_RUN)
            await self.host.read_transcripts(session.agent)
        return HookAnswer()

    async def _session_end(self, event: SessionEndEvent) -> HookAnswer:
        session = self._sessions.pop(event.session_id, None)
        if session is not None:
            await self._close_open(session, NOT_RUN)
            await self.host.read_transcripts(session.agent)
            await self.host.finish_agent(session.agent, f"session ended ({event.reason or 'no reason given'})")
        return HookAnswer()

    # -- agents ----------------------------------------------------------------

    async def _caller(self, session: GeminiHookSession, event: BeforeToolEvent) -> AgentHandle:
        """The session's agent, or the sub-agent whose `invoke_agent` was let through before this call began."""
        began = _timestamp(event)
        running = [s for s in session.spawns if began is not None and began > s.answered]
        if not running:
            return session.agent
        spawn = running[-1]  # the latest: a nested sub-agent runs inside the one that started it
        if spawn.child is None:
            spawn.child = await self.host.start_agent(spawn.name, "subagent", parent=spawn.by,
                                                      spawned_by=spawn.call_id)
        return spawn.child

    async def _close_open(self, session: GeminiHookSession, why: str) -> None:
        """Calls still open when the turn ended never ran (or never said so): they end failed, saying why."""
        ended = [c for c in session.open.values() if c.answered is not None]  # not those still being decided
        for call in ended:
            del session.open[call.use_id]
            await self.interceptor.after(call.use_id, error=why)
        for spawn in session.spawns:
            if spawn.child is not None:
                await self.host.finish_agent(spawn.child, "its turn ended")
        session.spawns.clear()

    def __repr__(self) -> str:
        open_calls = sum(len(s.open) for s in self._sessions.values())
        return f"<GeminiHooks sessions={len(self._sessions)} open calls={open_calls}>"


def _cwd(event: AgentEvent) -> str:
    cwd = (event.model_extra or {}).get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def _timestamp(event: AgentEvent) -> float | None:
    """When Gemini CLI made the event (its ISO 8601 `timestamp`), in seconds since the epoch."""
    stamp = (event.model_extra or {}).get("timestamp")
    try:
        return datetime.fromisoformat(stamp).timestamp() if isinstance(stamp, str) else None
    except ValueError:
        return None


def _sibling_holds_the_lock(session: GeminiHookSession, began: float | None) -> bool:
    """Whether a command of the same turn holds (or is about to hold) the one-author lock: let through after
    this call began, or not yet decided.  Gemini CLI runs neither before both are let through."""
    return began is not None and any(c.exclusive and (c.answered is None or began < c.answered)
                                     for c in session.open.values())


def _key(tool: str, args: dict[str, Any]) -> str:
    return json.dumps([tool, args], sort_keys=True, default=str)


def _pop_match(calls: dict[str, _GeminiCall], tool: str, key: str) -> _GeminiCall | None:
    """The open call this AfterTool reports on: same arguments if any, else the oldest of that tool."""
    reported = [c for c in calls.values() if c.answered is not None]
    found = next((c for c in reported if key in c.keys), None) or next((c for c in reported if c.tool == tool), None)
    if found is not None:
        del calls[found.use_id]
    return found


# -- settings ------------------------------------------------------------------

EVENTS = ("BeforeTool", "AfterTool", "AfterAgent", "SessionStart", "SessionEnd")
TOOL_EVENTS = frozenset({"BeforeTool", "AfterTool"})
HOOK_NAME = "belay"
"""The name Gemini CLI shows for Belay's hook (`/hooks panel`, `hooksConfig.disabled`)."""
TIMEOUT_MS = claude_install.HOOK_TIMEOUT_S * 1000
"""Gemini CLI runs a call whose hook timed out, so the hook's own limit stays above the hook command's
(--max-wait, 3,000 s by default): Belay, not the timeout, is the one that says no."""


def settings_file(project: Path | None, user: bool) -> Path:
    """The user's `~/.gemini/settings.json` (`$GEMINI_CLI_HOME` moves it), or the project's `.gemini/settings.json`.

    Gemini CLI has no per-machine project file: the project one is the shared one, which projects may
    commit, and it is read only in a trusted folder (tests/integration/GEMINI_HOOKS.md)."""
    if user:
        home = os.environ.get("GEMINI_CLI_HOME")
        return (Path(home) if home else Path.home()) / ".gemini" / "settings.json"
    return (project or Path.cwd()).resolve() / ".gemini" / "settings.json"


def install(path: Path, command: str, config_dir: Path) -> Changed:
    """Add Belay's hook to every event it listens to (once: installing twice changes nothing)."""
    made = claude_install.to_be_made(path)
    settings = claude_install._read(path)

    def entry(event: str) -> dict[str, Any]:
        handler = {"hooks": [{"name": HOOK_NAME, "type": "command", "command": command, "timeout": TIMEOUT_MS,
                              "description": "Belay: the console decides and records this call"}]}
        return {"matcher": "*", **handler} if event in TOOL_EVENTS else handler

    added = claude_install.add_entries(path, settings, EVENTS, entry)
    write_text_atomically(path, json.dumps(settings, indent=2) + "\n")
    claude_install._remember(config_dir, made, True)
    return Changed(path, tuple(added), file_created=path in made)


HOOKS = AgentHooks("gemini", settings_file, install, claude_install.uninstall, console_word="Gemini CLI")
"""`belay hooks install|uninstall --agent gemini`: uninstalling is Claude Code's own (the same shape of entries)."""
