"""A front end's side of an attach: the welcome, the stream of events, and commands that wait for their reply.

`Attached.connect(socket, token)` opens the console's socket (a local one, or the local end of an ssh
forward: core.remote.ssh) and reads the `Welcome`.  `timeline()` builds the console's timeline from it, and
`events()` yields every event after it, in order, until the connection ends (`Detached` then says why: a
dropped link, a closed console, a stream the front end fell behind on).  Commands (`approve`, `deny`,
`always_allow`, `undo`, `redo`) are sent at once and wait for the console's reply; one that fails raises
`RemoteError` with the console's reason.  One task reads the socket; events wait in a queue for `events()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.errors import BelayError, ErrorKind
from core.events import Event, Lagged
from core.remote.protocol import (
    PROTOCOL_VERSION,
    AttachRequest,
    CallsLine,
    Command,
    EventLine,
    Op,
    Reply,
    ServerLine,
    Welcome,
)
from core.tasks import spawn
from core.timeline.tree import Timeline

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line read: a command's reply may carry a call's whole output as journaled."""
_LINE: TypeAdapter[Welcome | CallsLine | EventLine | Reply] = TypeAdapter(ServerLine)


class RemoteError(BelayError):
    """The console refused or could not do what was asked; its reason is the message.  `refused`: it turned the
    attach away (a wrong token, another protocol version): asking again will not help."""

    def __init__(self, message: str, suggestion: str = "", *, refused: bool = False) -> None:
        super().__init__(ErrorKind.SYSTEM, message, suggestion, code="remote")
        self.refused = refused


class Detached(Exception):
    """The attach ended: `lagged` when the front end fell behind (attach again to resync), else the link or the
    console went away."""

    def __init__(self, reason: str, *, lagged: bool = False) -> None:
        super().__init__(reason)
        self.lagged = lagged


class Attached:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, welcome: Welcome) -> None:
        self.welcome = welcome
        self._reader, self._writer = reader, writer
        self._events: asyncio.Queue[Event | Detached] = asyncio.Queue()
        self._replies: dict[int, asyncio.Future[Reply]] = {}
        self._ids = itertools.count(1)
        self._ended: Detached | None = None
        self._reading = spawn(self._read(), "attached: reading the console")

    @classmethod
    async def connect(cls, socket: Path, token: str, *, client: str = "terminal") -> Attached:
        """Attach to the console serving `socket`; raises RemoteError when it refuses (a wrong token, another
        protocol version) and OSError when nothing answers there."""
        reader, writer = await asyncio.open_unix_connection(str(socket), limit=MAX_LINE_BYTES)
        try:
            request = AttachRequest(kind="attach", token=token, version=PROTOCOL_VERSION, client=client)
            writer.write(request.model_dump_json(exclude={"peer_pid"}).encode() + b"\n")
            await writer.drain()
            line = await reader.readline()
            if not line:
                raise RemoteError("the console closed the connection before it said anything",
                                  "Check that `belay serve` runs on that host for that workspace.")
            if not line.startswith(b'{"type":"welcome"'):  # a refusal: a short line
                refusal = json.loads(line)
                said = refusal.get("error") if isinstance(refusal, dict) else None
                raise RemoteError(f"the console refused to attach: {said or line[:200].decode(errors='replace')}",
                                  refused=True)
            welcome = Welcome.model_validate_json(line)
            while len(welcome.calls) < welcome.calls_following:  # a line each WELCOME_CHUNK calls, the loop turning
                more = await reader.readline()
                if not more:
                    raise RemoteError("the console closed the connection while it sent its journal")
                welcome.calls += CallsLine.model_validate_json(more).calls
                await asyncio.sleep(0)
        except BaseException:
            writer.close()
            raise
        return cls(reader, writer, welcome)

    def timeline(self) -> Timeline:
        """The console's timeline as the welcome has it (its journal); `events()` brings it up to date."""
        w = self.welcome
        timeline = Timeline()
        timeline.load(w.agents, w.calls, w.externals, w.batches, (w.messages, w.tokens))
        timeline.last_seq = w.last_seq
        return timeline

    async def events(self) -> AsyncIterator[Event]:
        """Every event after the welcome, in order; raises `Detached` when the attach ends."""
        while True:
            item = await self._events.get()
            if isinstance(item, Detached):
                self._events.put_nowait(item)  # a second reader, or a second call, hears it too
                raise item
            yield item

    async def command(self, op: Op, call_id: str, **fields: Any) -> dict[str, Any]:
        if self._ended is not None:
            raise RemoteError(f"not attached any more: {self._ended}")
        command = Command(id=next(self._ids), op=op, call_id=call_id, **fields)
        reply: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._replies[command.id] = reply
        try:
            self._writer.write(command.model_dump_json().encode() + b"\n")
            await self._writer.drain()
            answer = await reply
        finally:
            self._replies.pop(command.id, None)
        if not answer.ok:
            raise RemoteError(f"the console could not {op.replace('_', ' ')}{f' {call_id}' if call_id else ''}: "
                              f"{answer.error}")
        return answer.result

    async def ask(self, op: Op, call_id: str = "", **fields: Any) -> Any:
        """An op whose answer is a value (a call's record, its diffs...), as JSON: the caller reads it into its
        model."""
        return (await self.command(op, call_id, **fields))["value"]

    async def approve(self, call_id: str, **fields: Any) -> bool:
        return bool((await self.command("approve", call_id, **fields))["answered"])

    async def deny(self, call_id: str, reason: str = "", **fields: Any) -> bool:
        return bool((await self.command("deny", call_id, reason=reason, **fields))["answered"])

    async def always_allow(self, call_id: str, scope: str = "session", **fields: Any) -> bool:
        return bool((await self.command("always_allow", call_id, scope=scope, **fields))["answered"])

    async def undo(self, call_id: str, **fields: Any) -> dict[str, Any]:
        return await self.command("undo", call_id, **fields)

    async def redo(self, call_id: str, **fields: Any) -> dict[str, Any]:
        return await self.command("redo", call_id, **fields)

    async def _read(self) -> None:
        reason = Detached("the console closed the connection")
        try:
            while line := await self._reader.readline():
                item = _LINE.validate_json(line)
                if isinstance(item, EventLine):
                    if isinstance(item.event, Lagged):
                        reason = Detached(f"fell {item.event.missed} events behind the console", lagged=True)
                        break
                    self._events.put_nowait(item.event)
                elif isinstance(item, Reply):
                    waiting = self._replies.get(item.id)
                    if waiting is not None and not waiting.done():
                        waiting.set_result(item)
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as e:
            reason = Detached(f"the connection to the console broke: {e}")
        except (ValidationError, ValueError) as e:
            reason = Detached(f"the console sent something this Belay cannot read: {str(e).splitlines()[0]}")
        self._end(reason)

    def _end(self, reason: Detached) -> None:
        self._ended = reason
        for waiting in self._replies.values():
            if not waiting.done():
                waiting.set_exception(RemoteError(f"not attached any more: {reason}"))
        self._events.put_nowait(reason)

    async def close(self) -> None:
        self._reading.cancel()
        await asyncio.wait([self._reading])  # (a cancellation of close itself still goes through)
        if self._ended is None:
            self._end(Detached("closed by this side"))
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()
