"""Claude Code launched by Belay through the Claude Agent SDK, supervised like a hooked session.

`belay claude [PROMPT]` starts Claude Code (the CLI the SDK's wheel ships) on the workspace with
Belay's hook callbacks for every tool-lifecycle event and a `can_use_tool` callback: approvals, the
record of each call and its changes, and the sub-agent tree all go through the same `ClaudeHooks` as
Claude Code's command hooks (so everything the window offers works the same).  The SDK's task
messages add what hooks cannot say: which `Agent` call a sub-agent task belongs to.

One long-lived task owns the SDK client (the SDK is anyio-based: entered and left in the same task);
the window's interrupt, stop and messages reach it through a queue, never by touching the client from
elsewhere.  A session started with `follow_ups` stays open after Claude's answer (`waiting`), and the
person's next message (`send`) is the client's next query; it ends when stopped.  A hook callback that
fails blocks the call (`on_failure="block"`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from core.outside.hook_client import LAUNCHED_ENV
from core.outside.hooks import ClaudeHooks
from core.outside.requests import HookEvent
from core.tasks import spawn

if TYPE_CHECKING:  # the Agent SDK (and the MCP package under it) take a second to import: only when a session runs
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKClient,
        HookContext,
        HookInput,
        HookJSONOutput,
        PermissionResultAllow,
        PermissionResultDeny,
    )
    from claude_agent_sdk.types import HookEvent as SdkHookEvent
    from claude_agent_sdk.types import SyncHookJSONOutput

log = logging.getLogger(__name__)

SDK_EVENTS: tuple[SdkHookEvent, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
                                        "SubagentStart", "SubagentStop")
HOOK_TIMEOUT_S = 3600.0
Command = Literal["interrupt", "stop", "send"]


@dataclass(frozen=True)
class SessionEnd:
    """How a launched session ended."""

    ok: bool
    summary: str
    session_id: str | None


class ClaudeSession:
    """One Claude Code session Belay started and supervises."""

    def __init__(self, hooks: ClaudeHooks, workspace: Path, prompt: str, *, model: str | None = None,
                 env: dict[str, str] | None = None, cli_path: str | None = None,
                 on_session: Callable[[str], None] | None = None, follow_ups: bool = False) -> None:
        self.hooks, self.workspace, self.prompt = hooks, workspace, prompt
        self.nonce = secrets.token_hex(16)
        """Put in the CLI's environment (LAUNCHED_ENV): hook commands it runs say they belong to this session."""
        self.model, self.env, self.cli_path = model, {**(env or {}), LAUNCHED_ENV: self.nonce}, cli_path
        self.session_id: str | None = None
        self._on_session = on_session
        """Told the session id as soon as it is known (the console registers the window's controls)."""
        self.follow_ups = follow_ups
        """After Claude's answer, wait for the person's next message instead of ending."""
        self.waiting = False
        """Claude answered and the session waits for the person's next message (`send`)."""
        self._answered: SessionEnd | None = None
        """Claude's latest answer, in a session that stays open for follow-ups."""
        self._commands: asyncio.Queue[tuple[Command, str]] = asyncio.Queue()

    def interrupt(self) -> None:
        """Ask Claude to stop what it is doing now (the session stays open for the person)."""
        self._commands.put_nowait(("interrupt", ""))

    def stop(self) -> None:
        """End the session."""
        self._commands.put_nowait(("stop", ""))

    def send(self, text: str) -> None:
        """The person's next message: Claude's next turn (sent when the session waits for one, or queued by the
        CLI behind the turn under way)."""
        self.waiting = False
        self._commands.put_nowait(("send", text))

    async def run(self) -> SessionEnd:
        """Connect, send the prompt, follow the session to its result (or a stop).  The owning task."""
        await asyncio.to_thread(importlib.import_module, "claude_agent_sdk")  # the first time: off the loop
        from claude_agent_sdk import ClaudeSDKClient
        async with ClaudeSDKClient(self._options()) as client:
            await client.query(self.prompt)
            follow = spawn(self._follow(client), "claude session: messages")
            commands = spawn(self._serve_commands(client), "claude session: window commands")
            try:
                await asyncio.wait({follow, commands}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (follow, commands):
                    task.cancel()
                await asyncio.wait({follow, commands})
        if not commands.cancelled() and commands.exception() is not None:
            raise commands.exception()  # type: ignore[misc]  # a message the CLI could not take
        if follow.cancelled():
            return self._answered or SessionEnd(False, "stopped from the window", self.session_id)
        return follow.result()  # raises what the session raised

    def _options(self) -> ClaudeAgentOptions:
        from claude_agent_sdk import ClaudeAgentOptions, HookMatcher
        matchers = {event: [HookMatcher(matcher=None, hooks=[self._hook], timeout=HOOK_TIMEOUT_S, on_failure="block")]
                    for event in SDK_EVENTS}
        return ClaudeAgentOptions(cwd=str(self.workspace), hooks=matchers,
                                  can_use_tool=self._can_use_tool, model=self.model, env=self.env,
                                  cli_path=self.cli_path, permission_mode="default")

    async def _hook(self, event: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        data: dict[str, Any] = dict(event)
        if tool_use_id and not data.get("tool_use_id"):
            data["tool_use_id"] = tool_use_id
        self._saw_session(data.get("session_id"))
        answer = await self.hooks.handle(HookEvent.model_validate(data))
        if answer.exit == 2:
            return {"decision": "block", "reason": answer.stderr or "blocked by Belay"}
        return cast("SyncHookJSONOutput", answer.output or {})  # what a hook command prints: the SDK's shape

    async def _can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any
                            ) -> PermissionResultAllow | PermissionResultDeny:
        """Claude would ask its own user: Belay's decision for the call stands in."""
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny
        event = HookEvent.model_validate({"hook_event_name": "PermissionRequest", "session_id": self.session_id,
                                          "cwd": str(self.workspace), "tool_name": tool_name,
                                          "tool_input": tool_input})  # `cwd` is an extra, as a hook's stdin has it
        answer = await self.hooks.handle(event)
        decision = ((answer.output or {}).get("hookSpecificOutput") or {}).get("decision") or {}
        if decision.get("behavior") == "allow":
            return PermissionResultAllow(updated_input=decision.get("updatedInput"))
        return PermissionResultDeny(message=decision.get("message") or "Belay has not approved this call")

    async def _follow(self, client: ClaudeSDKClient) -> SessionEnd:
        from claude_agent_sdk import ResultMessage
        from claude_agent_sdk.types import TaskStartedMessage
        async for message in client.receive_messages():
            if isinstance(message, TaskStartedMessage):
                self._saw_session(message.session_id)
                await self.hooks.task_started(message.session_id, message.task_id, message.tool_use_id)
            elif isinstance(message, ResultMessage):
                self._saw_session(message.session_id)
                end = SessionEnd(not message.is_error, message.result or message.subtype, message.session_id)
                if not self.follow_ups:
                    return end
                self._answered, self.waiting = end, self._commands.empty()
        return self._answered or SessionEnd(False, "the session ended without a result", self.session_id)

    async def _serve_commands(self, client: ClaudeSDKClient) -> None:
        """Returns when the window asks to stop (the owner then ends the session)."""
        while (command := await self._commands.get())[0] != "stop":
            if command[0] == "send":
                await client.query(command[1])  # a CLI that is gone fails the session: its owner says so
                continue
            with contextlib.suppress(Exception):  # the session may be between turns: nothing to interrupt
                await client.interrupt()

    def _saw_session(self, session_id: object) -> None:
        if isinstance(session_id, str) and session_id and self.session_id is None:
            self.session_id = session_id
            if self._on_session is not None:
                self._on_session(session_id)

    def __repr__(self) -> str:
        return f"<ClaudeSession {self.workspace} session={self.session_id} waiting={self.waiting}>"
