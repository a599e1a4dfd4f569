"""`belay attach TARGET`: follow a console from the terminal and answer its approvals, there or on another host.

TARGET is `ssh://[user@]host[:port]/path` (the console `belay serve` runs there, started if need be and
reached through the user's own ssh: core.remote.ssh) or a local workspace whose console runs (a window or
`belay serve`).  Each call prints a line as it ends; each approval is shown as `belay run` shows it (the
request, the diff or the command) and asked about, one at a time: y approves, n denies (with an optional
reason for the agent).  An approval answered elsewhere meanwhile (a window, its rule's timeout) is not asked
about any more.

A dropped link is attached again (the console on the host runs on; what was waiting still waits), up to
five times in a row (core.remote.reach).  The end of standard input stops the asking, not the console: calls
keep waiting for someone else.  Ctrl-C ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from typing import TextIO

from core import (
    ApprovalRequested,
    ApprovalResolved,
    Attached,
    CallFinished,
    Detached,
    Reach,
    RemoteError,
    spawn,
)
from gui.terminal.approver import StdinLines, card

PROMPT = "Allow? [y]es / [n]o: "


class _Asker:
    """Asks about each approval in turn; forgets one answered elsewhere."""

    def __init__(self, attached: Attached, lines: StdinLines, out: TextIO) -> None:
        self.attached, self.lines, self.out = attached, lines, out
        self.queue: asyncio.Queue[ApprovalRequested] = asyncio.Queue()
        self.answered: set[str] = set()
        self.stdin_ended = False

    async def run(self) -> None:
        while not self.stdin_ended:
            request = await self.queue.get()
            if request.call_id not in self.answered:
                await self._ask(request)

    async def _ask(self, request: ApprovalRequested) -> None:
        self.out.write(card(request, request.call_id))
        while True:
            self.out.write(PROMPT)
            self.out.flush()
            line = await self.lines.readline()
            if line is None:
                self.stdin_ended = True
                self.out.write("\nNo more input: not answering; the calls wait for someone else.\n")
                return
            choice = line.strip().lower()
            if choice in ("y", "yes"):
                done = await self.attached.approve(request.call_id, via="terminal")
            elif choice in ("n", "no"):
                self.out.write("Reason for the agent (optional): ")
                self.out.flush()
                reason = await self.lines.readline() or ""
                done = await self.attached.deny(request.call_id, reason, via="terminal")
            else:
                self.out.write("  Please answer y or n.\n")
                continue
            self.out.write("" if done else "  Too late: it had been answered already.\n")
            return


def remote_command(args: argparse.Namespace) -> int:
    """`belay attach` and `belay serve`, as parsed by gui.terminal.cli."""
    if args.command == "serve":
        from gui.terminal.serve import serve
        return serve(args.workspace, args.state_dir, args.ensure)
    return attach(args.target, ssh=args.ssh, remote_belay=args.remote_belay, state_dir=args.state_dir)


def attach(target: str, *, ssh: str, remote_belay: str, state_dir: str | None, out: TextIO | None = None,
           stdin_fd: int = 0) -> int:
    """0 when stopped (Ctrl-C: 130), 1 when the console could not be reached again."""
    out = out or sys.stdout
    try:
        reach = Reach.of(target, ssh=shlex.split(ssh), remote_belay=remote_belay, state_dir=state_dir)
    except ValueError as e:
        print(f"belay attach: {e}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_attach(reach, out, stdin_fd))
    except KeyboardInterrupt:
        return 130


async def _attach(reach: Reach, out: TextIO, fd: int) -> int:
    lines = StdinLines(fd)
    try:
        while True:
            try:
                attached = await reach.attach("terminal", said=lambda text: out.write(text + "\n"))
            except RemoteError as e:
                if e.refused:
                    raise
                out.write(f"{e.info.message[0].upper()}{e.info.message[1:]}\n")
                return 1
            try:
                await _follow(attached, lines, out)
            except Detached as d:
                out.write(f"Detached: {d}. Attaching again…\n")
            finally:
                await attached.close()
    finally:
        lines.close()
        await reach.close()


async def _follow(attached: Attached, lines: StdinLines, out: TextIO) -> None:
    w = attached.welcome
    out.write(f"Attached to {w.workspace}: {len(w.calls)} calls journaled, {len(w.pending)} waiting for approval.\n")
    timeline = attached.timeline()
    asker = _Asker(attached, lines, out)
    for request in w.pending:
        asker.queue.put_nowait(request)
    asking = spawn(asker.run(), "attach: asking")
    try:
        async for event in attached.events():
            timeline.apply(event)
            if isinstance(event, ApprovalRequested):
                asker.queue.put_nowait(event)
            elif isinstance(event, ApprovalResolved):
                asker.answered.add(event.call_id)
            elif isinstance(event, CallFinished) and event.call_id in timeline.runs:
                run = timeline.runs[event.call_id]
                out.write(f"{event.status.value:<11} {run.tool:<10} {run.summary}\n")
                out.flush()
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
