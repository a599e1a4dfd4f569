"""The Codex CLI's hook events as Belay sees them (where its hooks go: core.outside.codex_settings).

Codex (0.124 and later) runs command hooks from `hooks.json` next to each of its config layers
(`$CODEX_HOME/hooks.json`, a trusted project's `.codex/hooks.json`) with events shaped like Claude
Code's: `session_id`, `tool_name`, `tool_input`, `tool_use_id`, and `agent_id`/`agent_type` on a
sub-agent's events (tests/integration/CODEX_HOOKS.md has what was observed with the real CLI).  So
`CodexHooks` is `ClaudeHooks` with Codex's differences:
- a shell command is `Bash` with `{"command": ...}`, judged by Belay's Bash tool (as `cd DIR && ...`
  when it runs elsewhere than the workspace root: the event's `cwd` is the model's `workdir`); a file edit is
  `apply_patch` with the patch as `command`, modelled by core.outside.codex_patch so the approval
  shows each file's diff and undo restores them;
- a sub-agent is spawned by `spawn_agent`, whose result (a JSON string) names the sub-agent's id;
- PreToolUse answers "allow" with no output at all (Codex refuses `permissionDecision: allow` without
  an `updatedInput` as an invalid answer), "deny" with `permissionDecision` and the reason the model
  reads; a hook cannot ask, so Belay holds the call until the person answers;
- a call that fails before it runs (a patch that does not apply) gets no PostToolUse: calls still
  open when their turn ends (Stop, SubagentStop) are closed then, so their files and the change lock
  are let go.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from core.outside import codex_settings, install
from core.outside.adapter import Handler, HookAnswer, HookHost
from core.outside.codex_patch import ApplyPatch
from core.outside.hook_events import (
    AgentEvent,
    PermissionRequestEvent,
    PostToolUseEvent,
    PostToolUseFailureEvent,
    PreToolUseEvent,
    StopEvent,
    SubagentStopEvent,
)
from core.outside.hooks import ClaudeHooks, ClaudeHookSession
from core.outside.intercept import Interceptor
from core.paths import Workspace
from core.run.calls import AgentHandle
from core.tools.base import Annotations, Tool, ToolArgs
from core.tools.names import ToolName
from core.transcripts.codex import CodexTranscript
from core.transcripts.reader import TranscriptReader

SPAWNING = frozenset({ToolName.CODEX_SPAWN_AGENT})
OWN_TOOLS = frozenset({
    # Codex's tools that change nothing on disk: coordinating sub-agents (whose own calls are supervised),
    # planning, goals, looking at an image, searching its tool list or the web, reading MCP resources.
    ToolName.CODEX_SPAWN_AGENT, "wait_agent", "send_input", "send_message", "close_agent", "resume_agent",
    "list_agents", "interrupt_agent", "followup_task", "update_plan", "view_image", "request_user_input", "get_goal",
    "create_goal", "update_goal", "tool_search", "web_search", "list_mcp_resources",
    "list_mcp_resource_templates", "read_mcp_resource"})
"""Judged as read-only, as Claude Code's Agent and TodoWrite are: one that took the change lock would hold it
while it waits (wait_agent) for a sub-agent whose command waits for that lock."""
NAMESPACE = re.compile(r"^multi_agent_v\d+")
"""Codex names a namespaced tool in its hooks with the namespace in front: `multi_agent_v1wait_agent`."""
NO_REPORT = ("Codex did not report how this call ended (it failed before running, or Codex itself refused it); "
             "its turn is over")


class _AnyArgs(ToolArgs):
    model_config = ConfigDict(extra="allow", strict=False, frozen=True)


class CodexOwnTool(Tool[_AnyArgs]):
    """One of Codex's own tools that change nothing on disk (OWN_TOOLS), as Belay judges it: read-only."""

    name = "codex"
    description = "A tool of Codex's own that changes nothing on disk."
    Args = _AnyArgs
    annotations = Annotations(read_only=True, destructive=False)

    def summary(self, args: _AnyArgs, workspace: Workspace) -> str:
        texts = [v for v in (args.model_extra or {}).values() if isinstance(v, str) and v.strip()]
        return " ".join(texts[0].split())[:100] if texts else ""


class CodexHooks(ClaudeHooks):
    """Turns Codex's hook events into Belay's records and answers."""

    def __init__(self, interceptor: Interceptor, host: HookHost) -> None:
        super().__init__(interceptor, host, client_name="codex")
        self._patch, self._own = ApplyPatch(), CodexOwnTool()
        self._turns: dict[str, set[str]] = {}
        """turn_id -> tool_use_ids allowed in that turn and not reported back yet."""

    def _handling(self) -> Mapping[type[AgentEvent], Handler]:
        """Claude Code's events but PostToolUseFailure (Codex sends none), and the end of a turn."""
        handlers: dict[type[AgentEvent], Handler] = {**super()._handling(), StopEvent: self._stop}
        del handlers[PostToolUseFailureEvent]
        return handlers

    def _transcript_reader(self, agent: AgentHandle) -> TranscriptReader | None:
        return CodexTranscript(agent.agent_id)

    def _follow_subagent(self, session: ClaudeHookSession, agent_id: str, child: AgentHandle) -> None:
        """A Codex sub-agent's words are not read yet (its rollout is a file of its own, not named by its hooks)."""

    def _agent_name(self, session_id: str) -> str:
        return f"codex {session_id[-8:]}"  # a UUIDv7: its first digits are a timestamp, its last tell sessions apart

    async def _pre(self, event: PreToolUseEvent) -> HookAnswer:
        agent = await self._agent(event)
        session = await self._session(event)
        use_id, tool_name = event.tool_use_id, event.tool_name
        given = event.tool_input
        tool_input = given
        tool: Tool[Any] | None = None
        if tool_name == ToolName.APPLY_PATCH:  # the patch's paths are relative to where Codex works
            tool_input, tool = {**given, "cwd": _text(event, "cwd") or None}, self._patch
        elif _bare(tool_name) in OWN_TOOLS:
            tool = self._own
        elif tool_name == ToolName.BASH and isinstance(given.get("command"), str):
            elsewhere = _elsewhere(_text(event, "cwd"), self.interceptor.workspace.root)
            if elsewhere is not None:  # judged, shown and journaled where it runs, not in the workspace root
                tool_input = {**given, "command": f"cd {shlex.quote(elsewhere)} && {given['command']}"}
        alive = session.process.alive if session.process is not None else None
        verdict = await self.interceptor.before(agent, use_id, tool_name, tool_input, alive=alive, tool=tool)
        session.verdicts[use_id] = (tool_name, given, verdict)
        if verdict.decision == "deny":
            return HookAnswer(output={"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": verdict.reason}})
        self._turns.setdefault(_text(event, "turn_id"), set()).add(use_id)
        if _bare(tool_name) in SPAWNING:
            session.spawning[use_id] = verdict.call_id
        output: dict[str, Any] = {"hookEventName": "PreToolUse"}
        if verdict.updated_input is not None:  # the person's version: Codex takes it only with an explicit allow
            output.update(permissionDecision="allow", updatedInput=verdict.updated_input)
        if verdict.note:  # the hunks a partial approval left out, for the model
            output["additionalContext"] = verdict.note
        # Allowed as it is: an empty answer is Codex's "go ahead" (a bare "allow" is refused as unsupported).
        return HookAnswer(output={"hookSpecificOutput": output} if len(output) > 1 else None)

    async def _post(self, event: PostToolUseEvent) -> HookAnswer:
        self._turns.get(_text(event, "turn_id"), set()).discard(event.tool_use_id)
        response = event.tool_response
        if _bare(event.tool_name) in SPAWNING and isinstance(response, str):  # {"agent_id": ..., "nickname": ...}
            try:
                response = json.loads(response)
            except ValueError:
                pass
        return await super()._post(event.model_copy(update={"tool_response": response}))

    async def _permission(self, event: PermissionRequestEvent) -> HookAnswer:
        """Codex would ask the person (its own approval policy): Belay's answer at PreToolUse stands."""
        session = await self._session(event)
        decided = next((v for name, given, v in reversed(session.verdicts.values())
                        if name == event.tool_name and given == event.tool_input and v.decision == "allow"), None)
        decision: dict[str, Any] = ({"behavior": "allow"} if decided is not None else
                                    {"behavior": "deny", "message": "Belay has not approved this call"})
        return HookAnswer(output={"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})

    async def _stop(self, event: StopEvent) -> HookAnswer:
        await self._end_turn(event)
        return HookAnswer()

    async def _subagent_stop(self, event: SubagentStopEvent) -> HookAnswer:
        await self._end_turn(event)
        return await super()._subagent_stop(event)

    async def _end_turn(self, event: StopEvent | SubagentStopEvent) -> None:
        """The turn is over: its calls that never reported back end now (failed, as far as Belay knows)."""
        session = self._sessions.get(event.session_id)
        for use_id in sorted(self._turns.pop(_text(event, "turn_id"), set())):
            await self.interceptor.after(use_id, error=NO_REPORT)
            if session is not None:
                session.verdicts.pop(use_id, None)
                session.spawning.pop(use_id, None)

    def __repr__(self) -> str:
        return f"<CodexHooks sessions={len(self._sessions)} open turns={len(self._turns)}>"


def _elsewhere(cwd: str, root: Path) -> str | None:
    """The directory a command runs in (the event's `cwd`: Codex sets it to the model's `workdir`) when it is
    not the workspace root, where Belay's Bash tool runs commands."""
    if not cwd or os.path.realpath(cwd) == os.path.realpath(root):
        return None
    return cwd


def _bare(tool_name: str) -> str:
    """A tool's name without the namespace Codex glues in front of it in hook events."""
    return NAMESPACE.sub("", tool_name)


def _text(event: AgentEvent, key: str) -> str:
    """A field Belay's event model does not type (Codex's `turn_id`, `cwd`), as text."""
    value = (event.model_extra or {}).get(key)
    return value if isinstance(value, str) else ""


HOOKS = install.AgentHooks("codex", codex_settings.settings_file, codex_settings.install_hooks,
                           codex_settings.uninstall_hooks, console_word="Codex")
"""Where `belay hooks install --agent codex` writes (core.outside.codex_settings)."""
