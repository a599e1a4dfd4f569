"""gui.terminal.approver: standard input read a line at a time, and its reader ended when done."""

from __future__ import annotations

import asyncio
import os
import threading

from gui.terminal.approver import StdinLines


def test_lines_are_read_as_asked_and_closing_ends_the_reader() -> None:
    read_end, write_end = os.pipe()
    lines = StdinLines(read_end)
    os.write(write_end, b"y\nnot this file\r\n")

    async def ask() -> list[str | None]:
        return [await lines.readline(), await lines.readline()]

    try:
        assert asyncio.run(ask()) == ["y", "not this file"]
        reader = next(t for t in threading.enumerate() if t.name == "belay stdin")
        lines.close()  # nobody asks any more, and the input is still open: the reader would wait for ever
        reader.join(5)
        assert not reader.is_alive()
    finally:
        os.close(write_end)
        os.close(read_end)
