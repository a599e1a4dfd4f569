"""Claude Code's hook events as Belay sees them: agents, calls, approvals, records.

One `ClaudeHooks` per console serves every Claude Code session in its workspace (the hook client sends
the events over the console's endpoint; `belay claude` calls `handle` directly from the Agent SDK's hook
callbacks).  A session is an agent; a sub-agent (its calls carry `agent_id`) is a child of its session's
agent, linked to the `Agent` (formerly `Task`) call that spawned it as soon as the evidence allows: at
once when exactly one such call is in flight, otherwise when the spawning call's PostToolUse names the
sub-agent's id.  A sub-agent whose session is unknown still gets a row (under a session agent made for
it), never dropped.

Answers follow the hook protocol: PreToolUse gets `permissionDecision` allow or deny (the reason reaches
the model), with `updatedInput` when the person edited the content; PermissionRequest gets Belay's
decision for the same call.  A note the person wrote to an agent (core.outside.notes) goes with that
agent's next PreToolUse or PostToolUse answer: as `additionalContext`, or after a refusal's reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.ids import CallId
from core.outside.adapter import Handler, HookAdapter, HookAnswer, HookHost, HookSession
from core.outside.hook_events import (
    AgentEvent,
    PermissionRequestEvent,
    PostToolUseEvent,
    PostToolUseFailureEvent,
    PreToolUseEvent,
    SessionEndEvent,
    SessionStartEvent,
    SubagentEvent,
    SubagentStartEvent,
    SubagentStopEvent,
)
from core.outside.intercept import ENDED, HookVerdict, Interceptor
from core.outside.notes import Notes, joined
from core.run.calls import AgentHandle
from core.tools.names import ToolName
from core.transcripts.claude import ClaudeTranscript
from core.transcripts.reader import TranscriptReader

log = logging.getLogger(__name__)

SPAWNING = frozenset({ToolName.AGENT, ToolName.TASK})


@dataclass
class ClaudeHookSession(HookSession):
    """A Claude Code (or Codex) session: its sub-agents, and the calls in flight that matter later."""

    subagents: dict[str, AgentHandle] = field(default_factory=dict)
    spawning: dict[str, CallId] = field(default_factory=dict)
    """tool_use_id -> call id of Agent/Task calls in flight."""
    unlinked: set[str] = field(default_factory=set)
    """Sub-agents whose spawning call is not known yet."""
    early_links: dict[str, CallId] = field(default_factory=dict)
    """Sub-agent id -> spawning call id, learnt before the sub-agent showed up."""
    verdicts: dict[str, tuple[str, dict[str, Any], HookVerdict]] = field(default_factory=dict)
    """tool_use_id -> (tool, input, what Belay answered at PreToolUse): a PermissionRequest, which carries
    no tool_use_id, gets the same answer for the same tool and input."""


class ClaudeHooks(HookAdapter[ClaudeHookSession]):
    """Turns Claude Code's hook events into Belay's records and answers."""

    def __init__(self, interceptor: Interceptor, host: HookHost, client_name: str = "claude-code") -> None:
        self.client_name = client_name
        self.notes = Notes()
        """What the person wrote to this CLI's agents, until their next hook answer carries it."""
        super().__init__(interceptor, host)

    def _handling(self) -> Mapping[type[AgentEvent], Handler]:
        return {PreToolUseEvent: self._pre, PostToolUseEvent: self._post, PostToolUseFailureEvent: self._failed,
                PermissionRequestEvent: self._permission, SubagentStartEvent: self._subagent_start,
                SubagentStopEvent: self._subagent_stop, SessionStartEvent: self._session_start,
                SessionEndEvent: self._session_end}

    def _new_session(self, agent: AgentHandle) -> ClaudeHookSession:
        return ClaudeHookSession(agent)

    # -- agents ----------------------------------------------------------------

    async def _agent(self, event: SubagentEvent) -> AgentHandle:
        session = await self._session(event)
        agent_id = event.agent_id
        if not agent_id:
            return session.agent
        return session.subagents.get(agent_id) or await self._new_subagent(session, agent_id, event.agent_type or "")

    async def _new_subagent(self, session: ClaudeHookSession, agent_id: str, agent_type: str) -> AgentHandle:
        spawner = session.early_links.pop(agent_id, None)
        if spawner is None and len(session.spawning) == 1:
            spawner = next(iter(session.spawning.values()))
        child = await self.host.start_agent(agent_type or "sub-agent", "subagent", parent=session.agent,
                                            spawned_by=spawner)
        session.subagents[agent_id] = child
        self._follow_subagent(session, agent_id, child)
        if spawner is None:
            session.unlinked.add(agent_id)
        return child

    # -- events ----------------------------------------------------------------

    async def _session_end(self, event: SessionEndEvent) -> HookAnswer:
        session = self._sessions.pop(event.session_id, None)
        if session is not None:
            await self.host.read_transcripts(session.agent, *session.subagents.values())
            agents = {session.agent.agent_id, *(child.agent_id for child in session.subagents.values())}
            await self.interceptor.abandon(ENDED, agents)  # their PostToolUse will not come now
            for child in session.subagents.values():
                await self.host.finish_agent(child, "the session ended")
            await self.host.finish_agent(session.agent, f"session ended ({event.reason or 'no reason given'})")
        return HookAnswer()

    async def _subagent_start(self, event: SubagentStartEvent) -> HookAnswer:
        await self._agent(event)
        return HookAnswer()

    async def _subagent_stop(self, event: SubagentStopEvent) -> HookAnswer:
        session = await self._session(event)
        child = session.subagents.get(event.agent_id or "")
        if child is not None:
            await self.host.read_transcripts(child)
            await self.host.finish_agent(child, "finished")
        return HookAnswer()

    async def _pre(self, event: PreToolUseEvent) -> HookAnswer:
        agent = await self._agent(event)
        session = await self._session(event)
        use_id, tool_name, tool_input = event.tool_use_id, event.tool_name, event.tool_input
        await self.host.read_transcripts(agent, use_id=use_id)  # its words before this call, for the approval card
        alive = session.process.alive if session.process is not None else None
        verdict = await self.interceptor.before(agent, use_id, tool_name, tool_input, alive=alive)
        session.verdicts[use_id] = (tool_name, tool_input, verdict)
        if verdict.decision == "allow" and tool_name in SPAWNING:
            session.spawning[use_id] = verdict.call_id
        told = self.notes.take(agent.agent_id)  # taken once decided: a note written while the person decided goes too
        refused = verdict.decision != "allow"
        reason = joined(verdict.reason, told) if refused else verdict.reason  # a refusal's reason reaches the model
        output: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": verdict.decision,
                                  "permissionDecisionReason": reason}
        if verdict.updated_input is not None:
            output["updatedInput"] = verdict.updated_input
        # The hunks a partial approval left out (the model is not told of updatedInput otherwise), and the notes.
        if context := joined(verdict.note, "" if refused else told):
            output["additionalContext"] = context
        return HookAnswer(output={"hookSpecificOutput": output})

    async def _post(self, event: PostToolUseEvent) -> HookAnswer:
        session = await self._session(event)
        use_id = event.tool_use_id
        response = event.tool_response
        original = response.get("originalFile") if isinstance(response, dict) else None
        await self.interceptor.after(use_id, response, original=original if isinstance(original, str) else None)
        session.verdicts.pop(use_id, None)
        spawn = session.spawning.pop(use_id, None)
        if spawn is not None and isinstance(response, dict):
            await self._link_spawned(session, spawn, response)
        return await self._told(event, "PostToolUse")

    async def _failed(self, event: PostToolUseFailureEvent) -> HookAnswer:
        session = await self._session(event)
        use_id = event.tool_use_id
        error = event.error or event.tool_response or "the tool failed"
        await self.interceptor.after(use_id, error=str(error))
        session.verdicts.pop(use_id, None)
        session.spawning.pop(use_id, None)
        return await self._told(event, "PostToolUseFailure")

    async def _told(self, event: SubagentEvent, name: str) -> HookAnswer:
        """A PostToolUse answer: the notes that wait for the agent, which the model reads after the tool result."""
        told = self.notes.take((await self._agent(event)).agent_id)
        if not told:
            return HookAnswer()
        return HookAnswer(output={"hookSpecificOutput": {"hookEventName": name, "additionalContext": told}})

    async def _permission(self, event: PermissionRequestEvent) -> HookAnswer:
        """Claude Code wants to ask: Belay has decided already (PreToolUse), or decides now."""
        session = await self._session(event)
        tool_name, tool_input = event.tool_name, event.tool_input
        decided = next((v for name, given, v in reversed(session.verdicts.values())
                        if name == tool_name and tool_input in (given, v.updated_input) and v.decision == "allow"),
                       None)
        if decided is None:
            return HookAnswer(output=_permission_output("deny", "Belay has not approved this call"))
        return HookAnswer(output=_permission_output("allow", decided.reason, decided.updated_input))

    async def task_started(self, session_id: str, task_id: str, tool_use_id: str | None) -> None:
        """The Agent SDK says which spawning call (by the agent's tool use id) a sub-agent task came from."""
        session = self._sessions.get(session_id)
        call_id = session.spawning.get(tool_use_id or "") if session is not None else None
        if session is None or call_id is None:
            return
        if task_id in session.unlinked:
            session.unlinked.discard(task_id)
            await self.host.link_agent(session.subagents[task_id].agent_id, call_id)
        elif task_id not in session.subagents:
            session.early_links[task_id] = call_id

    def _transcript_reader(self, agent: AgentHandle) -> TranscriptReader | None:
        return ClaudeTranscript(agent.agent_id)

    def _follow_subagent(self, session: ClaudeHookSession, agent_id: str, child: AgentHandle) -> None:
        """A sub-agent writes its own transcript beside its session's: `<session>/subagents/agent-<id>.jsonl`."""
        if session.transcript is not None:
            own = session.transcript.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"
            self.host.follow_transcript(own, ClaudeTranscript(child.agent_id, sidechains=True))

    def session_agent(self, session_id: str) -> AgentHandle | None:
        session = self._sessions.get(session_id)
        return session.agent if session is not None else None

    def live_agent(self, agent_id: str) -> AgentHandle | None:
        """The agent (a session's, or a sub-agent) of a session that has not ended; None for any other."""
        for session in self._sessions.values():
            for agent in (session.agent, *session.subagents.values()):
                if agent.agent_id == agent_id:
                    return agent
        return None

    async def _link_spawned(self, session: ClaudeHookSession, call_id: CallId, response: dict[str, Any]) -> None:
        """The spawning call reported back with its sub-agent's id: link them, whichever came first.

        A background sub-agent's `Agent` call returns at once, often before the sub-agent's first event:
        the link is then kept for when the sub-agent appears (as the SDK's task messages do)."""
        agent_id = response.get("agentId") or response.get("agent_id")
        if not isinstance(agent_id, str) or not agent_id:
            return
        if agent_id in session.unlinked:
            session.unlinked.discard(agent_id)
            await self.host.link_agent(session.subagents[agent_id].agent_id, call_id)
        elif agent_id not in session.subagents:
            session.early_links[agent_id] = call_id

    def __repr__(self) -> str:
        return f"<ClaudeHooks sessions={len(self._sessions)} open calls={self.interceptor.waiting}>"


def _permission_output(behavior: str, message: str, updated: dict[str, Any] | None = None) -> dict[str, Any]:
    decision: dict[str, Any] = {"behavior": behavior}
    if behavior == "deny":
        decision["message"] = message
    if updated is not None:
        decision["updatedInput"] = updated
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
