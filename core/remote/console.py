"""A console on another host, as the window sees its own: `RemoteConsole(reach)`.

It answers what the window asks of a `Console` (core.console), from a mirror of the console it attached to:
a timeline and a bus of its own, fed by the attach's events, and the welcome's state (the mode, rules, MCP
servers, approvals and MCP forms waiting) kept current by those events.  What the person does goes to that
console as commands (core.remote.protocol) and is done there, where the files are: approvals, undo, rules.
The window's synchronous commands (approve, deny, cancel, set the mode, answer a form) are sent at once and
answered by events, as locally; a failure goes to `on_error` (the window's status line).

When the link drops, the bus says so (`LinkChanged`, "reattaching") and it attaches again (core.remote.reach):
the new welcome is read into a new timeline (the journal there is the truth), the bus says "attached", and
the window shows that timeline.  Given up on, it says "lost".  A command while detached raises RemoteError.

What the window cannot do here: launch Claude Code (start it on that host) or interrupt a session it did not
start; the workspace's lock and the result cache's figures are the host's own and are not shown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter

from core.bus import EventBus, Subscription
from core.errors import ErrorKind, ToolError
from core.events import (
    ApprovalRequested,
    ApprovalResolved,
    ElicitationRequested,
    ElicitationResolved,
    Event,
    LinkChanged,
    McpServerChanged,
    PolicyChanged,
)
from core.models.diffs import FileDiff
from core.models.mcp import ServerStatus
from core.models.policy import AllowScope, RuleAction, RuleEntry, Scope
from core.models.records import CallRecord, DecidedBy, DecidedVia
from core.process.overlay import OverlaySupport
from core.process.sandbox import SandboxInfo
from core.remote.client import Attached, Detached, RemoteError
from core.remote.protocol import ConsoleState, Op, Welcome
from core.remote.reach import Reach
from core.store.seals import JournalCheck
from core.tasks import spawn
from core.timeline.tree import Timeline
from core.tools.bash import BashSettings
from core.undo.report import Resolution, UndoPreview, UndoReport

log = logging.getLogger(__name__)
T = TypeVar("T")

_RECORDS: TypeAdapter[list[CallRecord]] = TypeAdapter(list[CallRecord])
_DIFFS: TypeAdapter[list[FileDiff]] = TypeAdapter(list[FileDiff])
_REPORTS: TypeAdapter[list[UndoReport]] = TypeAdapter(list[UndoReport])
_VERDICT: TypeAdapter[JournalCheck] = TypeAdapter(JournalCheck)


@dataclass(frozen=True)
class RemoteWorkspace:
    root: Path
    """The workspace's path on its host."""


class RemoteElicitations:
    """MCP servers' requests for input on that host, as `Console.elicitations` has them for the window."""

    def __init__(self, console: RemoteConsole) -> None:
        self._console = console
        self.waiting: dict[str, ElicitationRequested] = {}

    def register(self, name: str) -> Callable[[], None]:
        return lambda: None  # the console there asks whoever attaches

    def pending(self) -> list[ElicitationRequested]:
        return list(self.waiting.values())

    def answer(self, elicitation_id: str, action: str, content: Mapping[str, Any] | None = None) -> bool:
        """Sent to the console; False when it no longer waits.  A form's content is checked here first."""
        request = self.waiting.get(elicitation_id)
        if request is None:
            return False
        if action == "accept" and request.mode == "form":
            from core.mcp.elicitation import checked
            content = checked(request.requested_schema, dict(content or {}))  # ValueError: the form says what
        self._console.send("answer_elicitation", name=elicitation_id, action=action,
                           content=dict(content) if content is not None else None)
        return True


class RemoteConsole:
    """A console on another host, attached through `reach`; `open()` attaches (RemoteError when it cannot)."""

    def __init__(self, reach: Reach) -> None:
        self.reach = reach
        self.where = reach.where
        self.workspace = RemoteWorkspace(Path(reach.path))
        self.state_dir: Path | None = None
        """The journal and the store are on the host (File → Verify asks the console there)."""
        self.endpoint = None
        """Outside agents reach the console on its own host, not this window."""
        self.bus = EventBus()
        self.timeline = Timeline()
        self.bus.listen(self._apply)
        self.session_id = ""
        self.elicitations = RemoteElicitations(self)
        self.on_error: Callable[[str], None] = lambda text: log.warning("%s: %s", self.where, text)
        """Told when a command sent without waiting (approve, deny, cancel...) fails there."""
        self.attached = False
        self._state = ConsoleState()
        self._pending: dict[str, ApprovalRequested] = {}
        self._link: Attached | None = None
        self._follow: asyncio.Task[None] | None = None
        self._sent: set[asyncio.Task[Any]] = set()

    # -- lifecycle ----------------------------------------------------------

    @classmethod
    async def reached(cls, target: str, *, ssh: Sequence[str] = ("ssh",), remote_belay: str = "belay") -> RemoteConsole:
        """Attached to the console of `target` (ssh://host/path, or a local workspace); RemoteError saying why
        when it cannot be: not such a target, no ssh, no console there."""
        try:
            console = cls(Reach.of(target, ssh=ssh, remote_belay=remote_belay))
        except ValueError as e:
            raise RemoteError(str(e), refused=True) from None
        try:
            await console.open()
        except OSError as e:
            raise RemoteError(f"could not reach {target}: {e}") from None
        return console

    async def open(self) -> None:
        """Attach (RemoteError or OSError when the console cannot be reached), then follow it.  A failed attach
        leaves nothing running (an ssh forward it started is ended)."""
        try:
            link = await self.reach.attach("window")
        except BaseException:
            await self.reach.close()
            raise
        await self._adopt(link)
        self._follow = spawn(self._following(link), f"follow the console at {self.where}")

    async def reattach(self) -> None:
        """Attach again after the link was given up on (a person's "Attach again")."""
        if self._follow is not None and not self._follow.done():
            return  # still following, or trying to
        self._follow = spawn(self._following(None), f"follow the console at {self.where}")

    async def close(self) -> None:
        """Detach: the console on the host runs on (calls waiting there wait for the next front end)."""
        if self._follow is not None:
            self._follow.cancel()
            await asyncio.wait([self._follow])
        for task in list(self._sent):
            task.cancel()
        if self._sent:
            await asyncio.wait(self._sent)
        if self._link is not None:
            await self._link.close()
        await self.reach.close()

    async def __aenter__(self) -> RemoteConsole:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _adopt(self, link: Attached) -> None:
        """Read a welcome: its journal is a new timeline; its state and waiting requests replace ours."""
        welcome: Welcome = link.welcome
        timeline = await asyncio.to_thread(link.timeline)  # (20,000 calls: half a second, off the loop)
        timeline.last_seq = self.bus.last_seq  # the events after it come through this bus, numbered here
        self.timeline, self._link, self.attached = timeline, link, True
        self.session_id, self._state = welcome.session_id, welcome.state
        self._pending = {request.call_id: request for request in welcome.pending}
        self.elicitations.waiting = {e.elicitation_id: e for e in welcome.state.elicitations}

    async def _following(self, link: Attached | None) -> None:
        """Publish the attach's events here; when it ends, attach again (None: attach first)."""
        while True:
            if link is not None:
                reason = "the link ended"
                try:
                    async for event in link.events():
                        self.bus.publish(event)
                except Detached as e:
                    reason = str(e)
                await link.close()
                self._link, self.attached = None, False
            else:
                reason = "asked to attach again"
            self.bus.publish(LinkChanged(state="reattaching", detail=reason))
            try:
                link = await self.reach.attach("window", said=lambda text: log.info("%s", text))
            except RemoteError as e:
                self.bus.publish(LinkChanged(state="lost", detail=e.info.message))
                return
            await self._adopt(link)
            self.bus.publish(LinkChanged(state="attached", detail=f"attached again to {self.where}"))

    def _apply(self, event: Event) -> None:
        """Every event, as it is published: the timeline, and the state the window reads synchronously."""
        self.timeline.apply(event)
        if isinstance(event, ApprovalRequested):  # (events are final: isinstance is the kind)
            self._pending[event.call_id] = event
        elif isinstance(event, ApprovalResolved):
            self._pending.pop(event.call_id, None)
        elif isinstance(event, PolicyChanged):
            self._state = self._state.model_copy(update={"mode": event.mode, "rules": list(event.rules),
                                                         "problems": list(event.problems),
                                                         "held_back": list(event.held_back)})
        elif isinstance(event, McpServerChanged):
            status = event.status
            servers = [s for s in self._state.mcp_servers if s.name != status.name]
            self._state = self._state.model_copy(update={"mcp_servers": sorted([*servers, status],
                                                                                key=lambda s: s.name)})
        elif isinstance(event, ElicitationRequested):
            self.elicitations.waiting[event.elicitation_id] = event
        elif isinstance(event, ElicitationResolved):
            self.elicitations.waiting.pop(event.elicitation_id, None)

    # -- what the window reads -------------------------------------------------

    def attach(self, maxsize: int = 10_000,
               counted: frozenset[type[Event]] = frozenset()) -> tuple[Timeline, Subscription]:
        return self.timeline, self.bus.subscribe(maxsize, counted)

    def subscribe(self, maxsize: int = 10_000) -> Subscription:
        return self.bus.subscribe(maxsize)

    def register_approver(self, name: str) -> Callable[[], None]:
        return lambda: None  # `belay serve` keeps an approver of its own: calls wait for whoever attaches

    def pending_approvals(self) -> list[ApprovalRequested]:
        return list(self._pending.values())

    @property
    def mode(self) -> str:
        return self._state.mode

    def rules(self) -> list[RuleEntry]:
        return list(self._state.rules)

    @property
    def settings_problems(self) -> tuple[str, ...]:
        return tuple(self._state.problems)

    def held_back(self) -> list[str]:
        return list(self._state.held_back)

    def mcp_servers(self) -> list[ServerStatus]:
        return list(self._state.mcp_servers)

    @property
    def sandbox(self) -> SandboxInfo:
        return self._state.sandbox or SandboxInfo(available=False, kind="none", detail="not known")

    @property
    def bash_settings(self) -> BashSettings:
        return self._state.bash

    @property
    def previews(self) -> OverlaySupport:
        return OverlaySupport(available=self._state.previews, detail=self._state.previews_detail)

    @property
    def recovery_notes(self) -> tuple[str, ...]:
        return tuple(self._state.recovery_notes)

    def workspace_held(self) -> None:
        return None  # the lock's holder and its time are the host's

    def cache_stats(self) -> None:
        return None

    def watch_state(self) -> None:
        return None  # the host's console watches its files; its window there says what it can

    def controls(self, agent_id: str) -> None:
        return None  # only sessions this window launched can be interrupted from it

    async def note(self, agent_id: str, text: str) -> bool:
        return False  # the wire does not carry notes yet: the host's own window can write them

    def launch_claude(self, prompt: str, **_options: Any) -> asyncio.Task[Any]:
        raise ToolError(ErrorKind.CONFLICT, f"Claude Code cannot be started from here on {self.where}",
                        "Start it on that host (with Belay's hooks installed there): its calls come here.")

    # -- commands ----------------------------------------------------------------

    def _attached(self) -> Attached:
        if self._link is None:
            raise RemoteError(f"not attached to {self.where} now (attaching again)",
                              "Wait for the link to come back; what waits there still waits.")
        return self._link

    async def _ask(self, op: Op, call_id: str = "", **fields: Any) -> Any:
        return await self._attached().ask(op, call_id, **fields)

    def send(self, op: Op, call_id: str = "", **fields: Any) -> None:
        """A command whose answer comes as events (the window does not wait for it); a failure is told."""
        try:
            link = self._attached()
        except RemoteError as e:
            self.on_error(e.info.message)
            return

        async def sent() -> None:
            try:
                await link.command(op, call_id, **fields)
            except RemoteError as e:
                self.on_error(e.info.message)

        task = spawn(sent(), f"{op} at {self.where}")
        self._sent.add(task)
        task.add_done_callback(self._sent.discard)

    def approve(self, call_id: str, *, edited: dict[str, str] | None = None,
                hunks: Mapping[str, Collection[int]] | None = None, reason: str = "",
                by: DecidedBy = "person", via: DecidedVia | None = None, preview: bool = False) -> bool:
        if call_id not in self._pending:
            return False
        self.send("approve", call_id, edited=edited, reason=reason, via=via or "window", preview=preview,
                  hunks={path: sorted(set(indices)) for path, indices in hunks.items()} if hunks is not None else None)
        return True

    def deny(self, call_id: str, reason: str = "", *, by: DecidedBy = "person",
             via: DecidedVia | None = None) -> bool:
        if call_id not in self._pending:
            return False
        self.send("deny", call_id, reason=reason, via=via or "window")
        return True

    def always_allow(self, call_id: str, scope: AllowScope = "session", rule: str | None = None, *,
                     via: DecidedVia | None = None) -> bool:
        if call_id not in self._pending:
            return False
        self.send("always_allow", call_id, scope=scope, rule=rule, via=via or "window")
        return True

    def cancel(self, call_id: str) -> bool:
        self.send("cancel", call_id)
        return True

    def set_mode(self, mode: str) -> None:
        self.send("set_mode", name=mode)

    async def add_rule(self, rule: str, action: RuleAction, scope: Scope) -> str:
        return str(await self._ask("add_rule", rule=rule, action=action, scope=scope))

    async def remove_rule(self, rule: str, action: RuleAction, scope: Scope) -> bool:
        return bool(await self._ask("remove_rule", rule=rule, action=action, scope=scope))

    async def dry_run(self, rule: str, action: RuleAction = "allow") -> list[CallRecord]:
        return _RECORDS.validate_python(await self._ask("dry_run", rule=rule, action=action))

    async def trust_workspace(self) -> None:
        await self._ask("trust_workspace")

    async def restart_mcp_server(self, name: str) -> None:
        await self._ask("restart_mcp_server", name=name)

    async def kill_shell(self, shell_id: str) -> bool:
        return bool(await self._ask("kill_shell", name=shell_id))

    async def call_record(self, call_id: str) -> CallRecord | None:
        value = await self._ask("call_record", call_id)
        return CallRecord.model_validate(value) if value is not None else None

    async def full_output(self, call_id: str) -> str | None:
        value = await self._ask("full_output", call_id)
        return str(value) if value is not None else None

    async def diffs_for(self, call_id: str) -> list[FileDiff]:
        return _DIFFS.validate_python(await self._ask("diffs_for", call_id))

    async def undo(self, op_id: str, *, paths: Sequence[str] | None = None, force: bool = False,
                   resolutions: Mapping[str, Resolution] | None = None) -> UndoReport:
        result = await self._attached().command("undo", op_id, paths=list(paths) if paths is not None else None,
                                                force=force, resolutions=dict(resolutions) if resolutions else None)
        return UndoReport.model_validate(result)

    async def redo(self, call_id: str, *, paths: Sequence[str] | None = None) -> UndoReport:
        result = await self._attached().command("redo", call_id, paths=list(paths) if paths is not None else None)
        return UndoReport.model_validate(result)

    async def undo_preview(self, op_id: str, *, paths: Sequence[str] | None = None) -> UndoPreview:
        return UndoPreview.model_validate(await self._ask("undo_preview", op_id,
                                                          paths=list(paths) if paths is not None else None))

    async def rewind_plan(self, call_id: str) -> list[CallRecord]:
        return _RECORDS.validate_python(await self._ask("rewind_plan", call_id))

    async def rewind(self, call_id: str) -> list[UndoReport]:
        return _REPORTS.validate_python(await self._ask("rewind", call_id))

    async def verify(self) -> JournalCheck:
        """The console there verifies its journal."""
        return _VERDICT.validate_python(await self._ask("verify"))

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        coro.close()
        raise ToolError(ErrorKind.CONFLICT, f"agents cannot be started from here on {self.where}")

    def __repr__(self) -> str:
        return f"<RemoteConsole {self.where} attached={self.attached} pending={len(self._pending)}>"
