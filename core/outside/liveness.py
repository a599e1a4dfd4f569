"""Whether the agent behind a hook call is still there: its process, found from the hook command's.

Claude Code runs each hook command as a child (through a shell, usually), so
the parent of the process that connected to the console's socket is the
agent itself.  A call the agent was allowed to run holds the change-capture
lock until its PostToolUse arrives; if the agent is killed mid-call that
never comes.  Watching the agent's process lets the console end such a call
as interrupted within a second or two, instead of holding every other
agent's calls for the ten minutes the lock otherwise waits.  A process is
known by its pid and its start time, so a pid the kernel hands to a new
process is not taken for the old one.  The same watch withdraws a call's
approval when its agent dies while a person has not answered yet
(`while_alive`): nobody is left to act on the answer, so the window must not
go on showing it as waiting.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from core.tasks import shielded, spawn

T = TypeVar("T")

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "busybox", "env", "timeout"})
"""Programs that may stand between the agent and its hook command."""


@dataclass(frozen=True)
class AgentProcess:
    """One process, by pid and start time (clock ticks after boot)."""

    pid: int
    started: int

    @staticmethod
    def kept_or_found(current: AgentProcess | None, peer_pid: int, last_peer: int | None,
                      direct: bool = False) -> AgentProcess | None:
        """The agent process to watch once the hook command `peer_pid` spoke: `current` while it lives (one
        /proc read), else looked up from the hook command's ancestry (not again for the peer that spoke last).
        `direct`: the peer is the agent itself (an http hook), watched as it is."""
        if peer_pid == last_peer or (current is not None and current.alive()):
            return current
        found = AgentProcess.of_pid(peer_pid) if direct else AgentProcess.of_hook_client(peer_pid)
        return found or current

    @staticmethod
    def of_pid(pid: int) -> AgentProcess | None:
        """Process `pid` as it is now (None: gone)."""
        stat = _stat(pid)
        return AgentProcess(pid, stat[1]) if stat is not None else None

    @staticmethod
    def of_hook_client(pid: int) -> AgentProcess | None:
        """The agent that ran the hook command `pid`: its first ancestor that is not a shell (None: unknown)."""
        current = _stat(pid)
        hops = 0
        while current is not None and hops < 4:
            parent = _stat(current[2])
            if parent is None or parent[2] <= 1:
                return None
            if parent[0] not in SHELLS:
                return AgentProcess(current[2], parent[1])
            current, hops = parent, hops + 1
        return None

    def alive(self) -> bool:
        """Whether the process still runs (and is the same one: same start time; a zombie counts as gone)."""
        stat = _stat(self.pid)
        return stat is not None and stat[1] == self.started and stat[3] != "Z"


def _stat(pid: int) -> tuple[str, int, int, str] | None:
    """(command name, start time, parent pid, state) of `pid`, from /proc; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    name = raw[raw.index("(") + 1:raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2:].split()
    return os.path.basename(name), int(fields[19]), int(fields[1]), fields[0]


class AgentGone(Exception):
    """The agent's process ended while Belay worked on its call (a person had not answered yet)."""


async def while_alive(work: Coroutine[Any, Any, T], alive: Callable[[], bool], every_s: float, name: str) -> T:
    """`work`'s result, or AgentGone once `alive()` (checked every `every_s`) says the agent is gone: `work` is
    then cancelled and waited for.  For what may wait long (an approval): `work` runs in a task of its own, so
    the agent's end never races a result already on its way."""
    task = spawn(work, name)
    try:
        while True:
            done, _ = await asyncio.wait([task], timeout=every_s)
            if done:
                return task.result()
            if not alive():
                task.cancel()
                await asyncio.wait([task])
                if task.cancelled():
                    raise AgentGone()
                return task.result()  # it ended as it was cancelled: what it did stands
    except asyncio.CancelledError:  # our own caller stopped waiting: so does the work
        task.cancel()
        await shielded(asyncio.wait([task]))
        raise
