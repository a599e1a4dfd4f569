"""The console's side of an attach: the welcome from its journal, then its events, and the person's commands.

`AttachServer(console).install(endpoint)` lets front ends attach through the console's own socket (its door
checks who connects and the token before anything here runs).  Each attached front end gets the journal as
it stands and the approvals waiting (`Welcome`), then the bus's events from that moment on, and may send
commands, carried out as the console's own window would (`via` says where the person answered).  Several may
attach at once; the first answer to an approval wins, as between a window and a desktop notification.

A headless console (`belay serve`) registers an approver of its own for as long as it runs, so that a call
needing a person waits for one to attach (or for its rule's timeout) instead of being denied at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from core.errors import BelayError, ErrorKind, ToolError
from core.mcp.elicitation import Action as ElicitAction
from core.models.policy import RuleAction, Scope
from core.models.records import CallRecord
from core.remote.protocol import (
    PROTOCOL_VERSION,
    WELCOME_CHUNK,
    AttachRequest,
    CallsLine,
    Command,
    ConsoleState,
    EventLine,
    Reply,
    Welcome,
)
from core.store.journal_reads import JournalReads
from core.tasks import spawn
from core.timeline.excerpts import excerpt_args, excerpt_text

if TYPE_CHECKING:
    from core.bus import Subscription
    from core.console import Console
    from core.outside.endpoint import Endpoint

log = logging.getLogger(__name__)

BATCH = 500
"""Events sent per write: a flood goes out in few syscalls, a single event at once."""


class AttachServer:
    def __init__(self, console: Console) -> None:
        self.console = console

    def install(self, endpoint: Endpoint) -> None:
        endpoint.stream(AttachRequest, self._attach)

    async def _attach(self, request: AttachRequest, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        if request.version != PROTOCOL_VERSION:
            writer.write(json.dumps({"ok": False, "error": f"this console speaks version {PROTOCOL_VERSION} of the "
                                     f"attach protocol, not {request.version}: install the same Belay on both "
                                     "hosts"}).encode() + b"\n")
            await writer.drain()
            return
        subscription = self.console.subscribe()
        lock = asyncio.Lock()
        log.info("%s attached (peer pid %s)", request.client or "a front end", request.peer_pid)
        try:
            welcome, calls = await self._welcome()
            async with lock:  # a long journal's calls are megabytes of JSON: a chunk a line, the loop turning
                for line in (welcome, *(CallsLine(calls=calls[at:at + WELCOME_CHUNK])
                                        for at in range(0, len(calls), WELCOME_CHUNK))):
                    writer.write(_line(line))
                    await writer.drain()
            pump = spawn(self._pump(subscription, writer, lock), "attach: events out")
            try:
                await self._commands(reader, writer, lock)
            finally:
                pump.cancel()
                await asyncio.wait([pump])  # (a cancellation of this task still goes through)
                if not pump.cancelled():
                    pump.exception()  # the front end went away as events went out: nothing to tell it
        finally:
            subscription.close()
            log.info("%s detached", request.client or "a front end")

    async def _welcome(self) -> tuple[Welcome, list[CallRecord]]:
        """The welcome, and the journal's calls that follow it (cut on the journal's thread)."""
        console = self.console
        read = console.recorder.read
        last_seq = console.bus.last_seq  # the subscription has everything after it; what it reflects, below
        pending, state = console.pending_approvals(), state_of(console)
        calls = await read(_light_calls)
        messages, tokens = await read(JournalReads.conversation)
        return Welcome(workspace=str(console.workspace.root), session_id=console.session_id, last_seq=last_seq,
                       agents=await read(JournalReads.agents), batches=await read(JournalReads.batches), calls=[],
                       calls_following=len(calls), externals=await read(JournalReads.externals), pending=pending,
                       messages=messages, tokens=tokens, state=state), calls

    async def _pump(self, subscription: Subscription, writer: asyncio.StreamWriter, lock: asyncio.Lock) -> None:
        while True:
            events = await subscription.next_batch(BATCH)
            if not events:
                return  # the subscription closed: the console is closing
            await _send(writer, lock, [EventLine(event=e) for e in events])

    async def _commands(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, lock: asyncio.Lock) -> None:
        while line := await reader.readline():
            try:
                command = Command.model_validate_json(line)
            except ValidationError as e:
                problem = "; ".join(f"{'.'.join(str(p) for p in x['loc']) or 'command'}: {x['msg']}"
                                    for x in e.errors()[:3])
                await _send(writer, lock, [Reply(id=_id_of(line), ok=False, error=f"malformed command: {problem}")])
                continue
            try:
                result = await self._run(command)
            except BelayError as e:  # refused as the window would say it (nothing to undo, a bad rule...)
                reply = Reply(id=command.id, ok=False, error=" ".join(p for p in (e.info.message, e.info.suggestion)
                                                                      if p))
            except Exception as e:  # noqa: BLE001 - told to the person who asked
                log.exception("attach: %s of %s failed", command.op, command.call_id)
                reply = Reply(id=command.id, ok=False, error=f"{type(e).__name__}: {e}")
            else:
                reply = Reply(id=command.id, ok=True, result=result)
            await _send(writer, lock, [reply])

    async def _run(self, c: Command) -> dict[str, Any]:
        console = self.console
        if c.op == "approve":
            hunks = {path: tuple(indices) for path, indices in c.hunks.items()} if c.hunks is not None else None
            return {"answered": console.approve(c.call_id, edited=c.edited, hunks=hunks, reason=c.reason,
                                                via=c.via, preview=c.preview)}
        if c.op == "deny":
            return {"answered": console.deny(c.call_id, c.reason, via=c.via)}
        if c.op == "always_allow":
            return {"answered": console.always_allow(c.call_id, c.scope, c.rule, via=c.via)}
        if c.op == "undo":
            report = await console.undo(c.call_id, paths=c.paths, force=c.force, resolutions=c.resolutions)
            return report.model_dump(mode="json")
        if c.op == "redo":
            return (await console.redo(c.call_id, paths=c.paths)).model_dump(mode="json")
        return {"value": _JSON.dump_python(await self._ask(c), mode="json")}

    async def _ask(self, c: Command) -> object:
        """What the window's own console answers, for the ops whose answer is a value."""
        answer = _ASKED[c.op](self.console, c)
        return await answer if asyncio.iscoroutine(answer) else answer


def _set_mode(console: Console, c: Command) -> str:
    console.set_mode(c.name)
    return console.mode


async def _records(records: Awaitable[list[CallRecord]]) -> list[CallRecord]:
    return [_light(r) for r in await records]


# A command's fields serve every op: these take what one op needs, refusing what no front end would send.

def _rule_of(c: Command) -> tuple[str, RuleAction]:
    action = c.action
    if c.rule is None or action not in ("allow", "ask", "deny"):
        raise ToolError(ErrorKind.INVALID_ARGS, f"{c.op} needs a rule and its action (allow, ask or deny)")
    return c.rule, action


def _layer_of(c: Command) -> Scope:
    scope = c.scope
    if scope == "once":
        raise ToolError(ErrorKind.INVALID_ARGS, f"{c.op} needs the layer a rule lives in (session, workspace, user)")
    return scope


def _answer_of(c: Command) -> ElicitAction:
    action = c.action
    if action not in ("accept", "decline", "cancel"):
        raise ToolError(ErrorKind.INVALID_ARGS, f"{c.op} needs an answer: accept, decline or cancel")
    return action


_ASKED: dict[str, Callable[[Console, Command], object]] = {
    "call_record": lambda console, c: console.call_record(c.call_id),
    "full_output": lambda console, c: console.full_output(c.call_id),
    "diffs_for": lambda console, c: console.diffs_for(c.call_id),
    "undo_preview": lambda console, c: console.undo_preview(c.call_id, paths=c.paths),
    "rewind_plan": lambda console, c: _records(console.rewind_plan(c.call_id)),
    "rewind": lambda console, c: console.rewind(c.call_id),
    "cancel": lambda console, c: console.cancel(c.call_id),
    "set_mode": _set_mode,
    "add_rule": lambda console, c: console.add_rule(*_rule_of(c), _layer_of(c)),
    "remove_rule": lambda console, c: console.remove_rule(*_rule_of(c), _layer_of(c)),
    "dry_run": lambda console, c: _records(console.dry_run(*_rule_of(c))),
    "trust_workspace": lambda console, c: console.trust_workspace(),
    "restart_mcp_server": lambda console, c: console.restart_mcp_server(c.name),
    "kill_shell": lambda console, c: console.kill_shell(c.name),
    "answer_elicitation": lambda console, c: console.elicitations.answer(c.name, _answer_of(c), c.content),
    "verify": lambda console, c: console.verify(),
}
"""The ops whose answer is a value: the console's method of the same name (calls cut as in the welcome)."""


def state_of(console: Console) -> ConsoleState:
    """What the window shows of `console` beside its timeline, now."""
    return ConsoleState(mode=console.mode, rules=console.rules(), problems=list(console.settings_problems),
                        held_back=console.held_back(), mcp_servers=console.mcp_servers(), sandbox=console.sandbox,
                        bash=console.bash_settings, previews=console.previews.available,
                        previews_detail=console.previews.detail, recovery_notes=list(console.recovery_notes),
                        elicitations=console.elicitations.pending())


_JSON: TypeAdapter[Any] = TypeAdapter(Any)
"""Models, dataclasses (a Verdict) and plain values as JSON."""


def _light_calls(journal: JournalReads) -> list[CallRecord]:
    """Every call of the journal, light (on the journal's thread)."""
    return [_light(c) for c in journal.calls()]


def _light(record: CallRecord) -> CallRecord:
    """A call as a welcome carries it: its arguments and output cut as the timeline keeps them (a Write's whole
    content, a command's whole output would make a long journal's welcome hundreds of megabytes)."""
    args = excerpt_args(record.args)
    output, cut = excerpt_text(record.output)
    if not args.cut and not cut:
        return record
    return record.model_copy(update={"args": args.args, "output": output})


def _line(model: Any) -> bytes:
    return model.model_dump_json().encode() + b"\n"


async def _send(writer: asyncio.StreamWriter, lock: asyncio.Lock, lines: list[Any]) -> None:
    async with lock:
        writer.write(b"".join(_line(line) for line in lines))
        await writer.drain()


def _id_of(line: bytes) -> int:
    """The id of a command that did not validate, when it has one (so its sender can tell which failed)."""
    try:
        value = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return 0
    return value if isinstance(value, int) else 0
