"""`belay attach` on a running console: calls printed as they end, approvals asked about and answered from
the terminal, and a console that goes away given up on after its retries."""

from __future__ import annotations

import asyncio
import io
import os
import threading
from pathlib import Path

import pytest

from core import AttachServer, Console, RunStatus
from core.remote import reach as reach_module
from gui.terminal import attach as attach_module
from tests.conftest import run


class Lines(io.StringIO):
    """What `attach` writes from its thread, read by the test's loop."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            return super().write(text)

    def text(self) -> str:
        with self.lock:
            return self.getvalue()


def test_approvals_are_asked_and_answered_at_the_terminal_and_calls_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reach_module, "RETRIES", 0)
    ws = tmp_path / "ws"
    ws.mkdir()
    read_end, write_end = os.pipe()
    out = Lines()

    async def until(predicate: object, what: str) -> None:
        for _ in range(500):
            if predicate():  # type: ignore[operator]
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"{what}; printed:\n{out.text()}")

    async def main() -> int:
        async with Console(ws) as console:
            assert console.endpoint is not None
            AttachServer(console).install(console.endpoint)
            console.register_approver("attached front ends")
            following = asyncio.ensure_future(asyncio.to_thread(
                attach_module.attach, str(ws), ssh="ssh", remote_belay="belay", state_dir=None, out=out,
                stdin_fd=read_end))
            await until(lambda: "Attached to" in out.text(), "attached")
            agent = await console.start_agent("writer", "scripted")
            os.write(write_end, b"y\n")
            first = await console.call(agent, "Write", {"file_path": str(ws / "a.txt"), "content": "a\n"})
            assert first.status == RunStatus.DONE and (ws / "a.txt").exists()
            os.write(write_end, b"n\nnot this file\n")
            second = await console.call(agent, "Write", {"file_path": str(ws / "b.txt"), "content": "b\n"})
            assert second.status == RunStatus.DENIED and not (ws / "b.txt").exists()
            record = await console.call_record(second.call_id)
            assert record is not None and record.decision is not None
            assert (record.decision.reason, record.decision.via) == ("not this file", "terminal")
            await until(lambda: "denied" in out.text(), "the denial printed")
            os.close(write_end)
        return await following  # the console closed: attaching again fails, and it gives up

    assert run(main()) == 1
    os.close(read_end)
    printed = out.text()
    assert "── approval needed" in printed and "tool:    Write" in printed and "+a" in printed
    assert "done        Write      " in printed and "denied      Write      " in printed
    assert "Gave up attaching" in printed

