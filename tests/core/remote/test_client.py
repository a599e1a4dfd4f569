"""The attaching side against consoles that misbehave: nothing listening, a refusal, silence, garbage."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from core.remote.client import Attached, Detached, RemoteError
from core.remote.protocol import Welcome
from tests.conftest import run

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
WELCOME = Welcome(workspace="/ws", session_id="s1", last_seq=0, agents=[], batches=[], calls=[], externals=[],
                  pending=[]).model_dump_json().encode() + b"\n"


async def _with_server(tmp_path: Path, serve: Serve, body: Callable[[Path], Awaitable[None]]) -> None:
    path = tmp_path / "c.sock"
    handlers: set[asyncio.Task[None]] = set()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.add(asyncio.current_task())  # type: ignore[arg-type]
        await serve(reader, writer)

    server = await asyncio.start_unix_server(handler, path=str(path))
    try:
        await body(path)
    finally:
        if handlers:
            await asyncio.wait(handlers, timeout=5)  # each said what it had to (the loop ends with this test)
        server.close()
        await server.wait_closed()


def test_nothing_listening_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        run(Attached.connect(tmp_path / "none.sock", "t"))


def test_a_refusal_and_a_console_closing_at_once_say_why(tmp_path: Path) -> None:
    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(json.dumps({"ok": False, "error": "wrong token"}).encode() + b"\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.close()
        await writer.wait_closed()

    async def body(path: Path) -> None:
        with pytest.raises(RemoteError, match="refused to attach: wrong token"):
            await Attached.connect(path, "t")

    async def silent(path: Path) -> None:
        with pytest.raises(RemoteError, match="closed the connection before it said anything"):
            await Attached.connect(path, "t")

    async def main() -> None:
        await _with_server(tmp_path, refuse, body)
        await _with_server(tmp_path, hang_up, silent)
    run(main())


def test_a_line_it_cannot_read_ends_the_attach_and_fails_the_waiting_command(tmp_path: Path) -> None:
    async def garbled(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(WELCOME)
        await writer.drain()
        await reader.readline()  # a command: answered with something no version of the protocol sends
        writer.write(b'{"type": "surprise"}\n')
        await writer.drain()
        await reader.read()
        writer.close()
        await writer.wait_closed()

    async def body(path: Path) -> None:
        attached = await Attached.connect(path, "t")
        assert attached.welcome.session_id == "s1" and attached.timeline().runs == {}
        with pytest.raises(RemoteError, match="not attached any more: the console sent something"):
            await attached.approve("c1")
        with pytest.raises(Detached, match="cannot read"):
            async for _ in attached.events():
                pass
        await attached.close()
    run(_with_server(tmp_path, garbled, body))
