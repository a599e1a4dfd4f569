"""Shell processes: one command's pipe and process tree, and the background shells an agent keeps.

`ShellProcess` starts a prepared command (`Launch`) with stdin closed and
stdout+stderr on one pipe it owns, and ends it completely: SIGTERM to the
whole tree, SIGKILL after a grace period, what the command left behind
swept after it exits, the pipe abandoned after a drain timeout (an escaped
orphan holding it cannot hang the call), the private /tmp removed.  With
a pids cgroup (core.process.limits) it is also sealed against new
processes when the command is stopped, and every member is killed and the
group removed at the end: what escaped the sweep by `setsid` goes too.
`ShellManager` keeps background shells (Bash with run_in_background): each
has an owning task here, bounded output, and events for the window.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import signal
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from core.errors import ErrorKind, ToolError
from core.events import Event, ShellFinished, ShellOutput, ShellStarted
from core.ids import CallId, ShellId
from core.process.limits import PidsGroup
from core.process.output import Coalescer, LiveText, OutputCapture
from core.process.sandbox import proc_stat, signal_pids, tree_pids
from core.tasks import shielded, spawn

T = TypeVar("T")
_POLL_S = 0.05
_KILLED_GONE_S = 1.0
_MAX_DEPTH = 256


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one command, prepared by the Bash tool."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    tmp: Path
    """The command's private temporary directory; removed when it is done."""
    sandboxed: bool
    """Whether `argv` runs bubblewrap (its PID namespace contains the tree)."""
    kill_grace_s: float = 2.0
    drain_timeout_s: float = 2.0
    group: PidsGroup | None = None
    """The command's own pids cgroup (its argv joins it first); removed, members killed, when it is done."""


def discard(launch: Launch) -> None:
    """Remove what a launch holds: its private /tmp and its pids cgroup (blocking; for a worker thread)."""
    shutil.rmtree(launch.tmp, ignore_errors=True)
    if launch.group is not None:
        launch.group.remove()


class _Pipe(asyncio.Protocol):
    def __init__(self, on_output: Callable[[bytes], None]) -> None:
        self._on_output = on_output
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self._on_output(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class ShellProcess:
    """One running command: its merged output pipe, its process tree, and how to end both."""

    def __init__(self, launch: Launch, on_output: Callable[[bytes], None]) -> None:
        self.launch = launch
        self._on_output = on_output
        self._proc: asyncio.subprocess.Process | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._pipe: _Pipe | None = None
        self.killed = False
        """The command was still running when it was stopped (timeout, cancel, kill)."""
        self._seen: dict[int, int] = {}
        """Outside a sandbox: every process of the tree seen so far (pid -> start time)."""
        self.refused_processes = 0
        """With a pids cgroup: how many new processes the limit refused before the command was stopped."""
        self._sealed = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    async def start(self) -> None:
        """Spawn the command; OSError when it cannot be started."""
        rfd, wfd = os.pipe()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.launch.argv, stdin=asyncio.subprocess.DEVNULL, stdout=wfd, stderr=wfd,
                cwd=self.launch.cwd, env=dict(self.launch.env), start_new_session=True)
        except BaseException:
            os.close(rfd)
            raise
        finally:
            os.close(wfd)
        reader = os.fdopen(rfd, "rb", buffering=0)
        try:
            self._transport, self._pipe = await asyncio.get_running_loop().connect_read_pipe(
                lambda: _Pipe(self._on_output), reader)
        except BaseException:
            reader.close()
            await shielded(self.close())
            raise

    async def wait(self) -> int:
        """The command's own exit status, as soon as it exits (its leftovers are `close`'s job)."""
        assert self._proc is not None
        return await self._proc.wait()

    async def stop(self) -> None:
        """Stop the command and its whole tree now (SIGTERM, then SIGKILL after the grace period)."""
        if self._proc is not None:
            self.killed = self.killed or self._proc.returncode is None
            await self._end_tree()

    async def close(self) -> None:
        """End everything: the command if still running, what it left behind, the pipe, the temp dir."""
        try:
            await self.stop()
            await self._drain()
        finally:
            await asyncio.to_thread(discard, self.launch)

    async def _end_tree(self) -> None:
        assert self._proc is not None
        group = self.launch.group
        self._seal_if_full()
        try:
            if self.launch.sandboxed and await self._pin_sandbox():
                return
            await self._signal_tree(signal.SIGTERM)  # with a free place, an exit trap may still run its cleanup
            await self._gone_within(self.launch.kill_grace_s)
            if group is not None:
                group.seal()  # one small sysfs write: nothing new while the tree is killed
                self._sealed = True
            await self._signal_tree(signal.SIGKILL)
            await self._proc.wait()
            await self._gone_within(_KILLED_GONE_S)  # SIGKILL is not instant: return once the tree has gone
        finally:
            if group is not None:
                await asyncio.to_thread(group.kill_all)  # what left the tree by setsid is still in the group

    async def _pin_sandbox(self) -> bool:
        """Stop bubblewrap before looking inside it; True when it was still setting up and is now gone.

        Stopped, it cannot start the sandbox's first process behind the scan's back, so the scan either
        finds that process (remembered, so the sweep ends it even once orphaned) or proves there is none,
        and then the setup is simply killed: nothing inside needs ending gently.
        """
        assert self._proc is not None
        if self._proc.returncode is not None:
            return False
        try:
            os.kill(self._proc.pid, signal.SIGSTOP)
        except ProcessLookupError:
            return False
        inside = set(await self._scan()) - {self._proc.pid}
        try:
            os.kill(self._proc.pid, signal.SIGCONT if inside else signal.SIGKILL)
        except ProcessLookupError:
            pass
        if inside:
            return False
        await self._proc.wait()
        return True

    async def _gone_within(self, seconds: float) -> None:
        deadline = asyncio.get_running_loop().time() + seconds
        while await self._alive() and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110 - /proc tells no one
            self._seal_if_full()
            await asyncio.sleep(_POLL_S)

    def _seal_if_full(self) -> None:
        """Seal the group once it has run into its limit (a fork bomb, most likely): what dies must not be
        replaced.  Until then a stopping command may still start processes, so an exit trap can clean up.
        Small sysfs reads and a write: fine on the loop thread."""
        group = self.launch.group
        if group is None or self._sealed:
            return
        self.refused_processes = group.refused()  # read before the seal, which refuses more
        if self.refused_processes:
            group.seal()
            self._sealed = True

    async def _signal_tree(self, signum: int) -> None:
        assert self._proc is not None
        # Before signalling: a dying parent would orphan its children out of sight.  A sandbox needs the
        # sweep too: bubblewrap killed in its first milliseconds, before the inner process has asked to die
        # with it, leaves the namespace running (measured: 4 in 10 kills within 3 ms of the start leaked).
        # Killing the namespace's first process, found here as the outer bwrap's child, ends all of it.
        live = await self._scan()
        if self._proc.returncode is None:  # not yet reaped: its pid (and group id) cannot have been reused
            try:
                os.killpg(self._proc.pid, signum)
            except ProcessLookupError:
                pass  # it exited between the check and the signal; the wait reaps it
        signal_pids(live, signum)  # only what the scan just matched by start time: never a reused pid

    async def _scan(self) -> dict[int, int]:
        assert self._proc is not None
        live = await asyncio.to_thread(tree_pids, self._proc.pid, self._seen)
        self._seen = {**self._seen, **live}
        return live

    async def _alive(self) -> bool:
        assert self._proc is not None
        if self._proc.returncode is None:
            return True
        return bool(await self._scan())

    def started(self, pid: int) -> bool:
        """Whether `pid` is this command or one of its processes (blocking: a few /proc reads).

        Its pids cgroup answers exactly when it has one; otherwise the parent chain of `pid` is walked up
        to this command's first process, or to a process an earlier scan found in its tree (matched by
        start time, so a reused pid is not taken for it).
        """
        if self._proc is None:
            return False
        if self.launch.group is not None and self.launch.group.holds(pid):
            return True
        for ancestor, start in _ancestry(pid):
            if (ancestor == self._proc.pid and self._proc.returncode is None) or self._seen.get(ancestor) == start:
                return True
        return False

    async def _drain(self) -> None:
        """Read what is left in the pipe, but not for ever: a process that escaped may hold it open."""
        if self._pipe is None or self._transport is None:
            return
        try:
            # Past the timeout an escaped process still holds the pipe: stop listening to it.
            await asyncio.wait([self._pipe.closed], timeout=self.launch.drain_timeout_s)
        finally:
            self._transport.close()

    def __repr__(self) -> str:
        state = "not started" if self._proc is None else f"pid {self._proc.pid} rc {self._proc.returncode}"
        group = self.launch.group
        where = " ".join(filter(None, ["bwrap" if self.launch.sandboxed else "", repr(group) if group else ""]))
        return f"<ShellProcess {state}{' killed' if self.killed else ''} {where}>"


def _ancestry(pid: int) -> Iterator[tuple[int, int]]:
    """`pid` and its ancestors up to (not including) pid 1, as (pid, start time)."""
    for _ in range(_MAX_DEPTH):
        stat = proc_stat(pid)
        if stat is None or pid <= 1:
            return
        yield pid, stat[4]
        pid = stat[0]


def exit_code(returncode: int | None) -> int | None:
    """A shell-style exit code: 128 + N for death by signal N."""
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode


ShellStatus = Literal["running", "completed", "failed", "killed"]


def status_of(process: ShellProcess) -> ShellStatus:
    if process.returncode is None:
        return "running"
    if process.killed:
        return "killed"
    return "completed" if process.returncode == 0 else "failed"


@dataclass(frozen=True)
class ShellInfo:
    """A background shell as the window lists it."""

    shell_id: ShellId
    command: str
    call_id: CallId
    status: ShellStatus
    exit_code: int | None
    output_bytes: int


@dataclass(frozen=True)
class ShellRead:
    """What the agent gets from BashOutput."""

    output: str
    status: ShellStatus
    exit_code: int | None


@dataclass
class _Shell:
    shell_id: ShellId
    command: str
    call_id: CallId
    process: ShellProcess
    unread: OutputCapture
    whole: OutputCapture
    live: LiveText
    coalescer: Coalescer
    task: asyncio.Task[None] | None = None


class ShellManager:
    """Background shells: started at once, read and killed by id, all killed when the console closes.

    `publish` receives ShellStarted, ShellOutput (coalesced) and ShellFinished.
    """

    def __init__(self, publish: Callable[[Event], object], *, max_running: int = 16) -> None:
        self._publish = publish
        self.max_running = max_running
        self._shells: dict[str, _Shell] = {}
        self._ids = itertools.count(1)
        self._closed = False
        self._foreground: set[ShellProcess] = set()

    async def start(self, launch: Launch, *, command: str, call_id: CallId) -> ShellId:
        """Start `launch` in the background and return its shell id (bash_1, bash_2, ...)."""
        running = sum(1 for s in self._shells.values() if s.process.returncode is None)
        if self._closed or running >= self.max_running:
            await asyncio.to_thread(discard, launch)  # the launch was handed over: ours to clean
            raise ToolError(ErrorKind.RESOURCE_LIMIT, f"{running} background shells are already running"
                            if not self._closed else "the console is closing", "Kill a shell with KillShell first.")
        shell_id = ShellId(f"bash_{next(self._ids)}")
        coalescer = Coalescer(lambda text: self._publish(ShellOutput(shell_id=shell_id, text=text)))
        shell = _Shell(shell_id, command, call_id, ShellProcess(launch, lambda b: self._on_output(shell_id, b)),
                       OutputCapture(), OutputCapture(), LiveText(), coalescer)
        try:
            await shell.process.start()
        except BaseException:
            await asyncio.to_thread(discard, launch)
            raise
        self._shells[shell_id] = shell
        self._publish(ShellStarted(shell_id=shell_id, call_id=call_id, command=command))
        shell.task = spawn(self._watch(shell), f"background shell {shell_id}")
        return shell_id

    @contextmanager
    def foreground(self, process: ShellProcess) -> Iterator[None]:
        """Count `process` (a command the Bash tool waits for) among the commands Belay runs, while inside."""
        self._foreground.add(process)
        try:
            yield
        finally:
            self._foreground.discard(process)

    def started_by_a_command(self, pid: int) -> bool:
        """Whether `pid` is a command Belay runs (foreground or background) or one of its processes.

        For refusing connections from agent commands: a socket peer's pid goes in.  Blocking but cheap (a
        few small /proc and cgroup reads per running command).
        """
        running = [*self._foreground, *(s.process for s in self._shells.values() if s.task and not s.task.done())]
        return any(process.started(pid) for process in running)

    def _on_output(self, shell_id: str, chunk: bytes) -> None:
        shell = self._shells.get(shell_id)
        if shell is None:
            return
        shell.unread.feed(chunk)
        shell.whole.feed(chunk)
        if shell.coalescer.full:
            shell.coalescer.skip(len(chunk))
            shell.live.resync()
        else:
            shell.coalescer.feed(shell.live.feed(chunk))

    async def _watch(self, shell: _Shell) -> None:
        try:
            await shell.process.wait()
        finally:
            await shielded(shell.process.close())
            shell.coalescer.close()
            code = None if shell.process.killed else exit_code(shell.process.returncode)
            self._publish(ShellFinished(shell_id=shell.shell_id, exit_code=code, killed=shell.process.killed))

    def _get(self, shell_id: str) -> _Shell:
        shell = self._shells.get(shell_id)
        if shell is None:
            known = ", ".join(self._shells) or "none"
            raise ToolError(ErrorKind.NOT_FOUND, f"there is no background shell {shell_id!r}",
                            f"Background shells of this session: {known}.")
        return shell

    def read(self, shell_id: str, since_last: bool = True) -> ShellRead:
        """Output since the last read (or all of it, head and tail), the status and the exit code."""
        shell = self._get(shell_id)
        capture = shell.unread if since_last else shell.whole
        if since_last:
            shell.unread = OutputCapture()
        status = status_of(shell.process)
        code = None if status in ("running", "killed") else exit_code(shell.process.returncode)
        return ShellRead(capture.text_for_agent() if capture.total else "", status, code)

    async def kill(self, shell_id: str) -> ShellStatus:
        """Stop the shell and its whole tree; returns its status before the kill."""
        shell = self._get(shell_id)
        before = status_of(shell.process)
        await self._stop(shell)
        return before

    @staticmethod
    async def _stop(shell: _Shell) -> None:
        # Stop the process rather than cancel the task: a task cancelled before its first step never runs its
        # cleanup.  The owning task sees the exit and finishes the rest.
        await shielded(shell.process.stop())
        if shell.task is not None:
            await asyncio.wait([shell.task])

    def list(self) -> list[ShellInfo]:
        """Every background shell of this manager, oldest first."""
        return [ShellInfo(s.shell_id, s.command, s.call_id, status_of(s.process),
                          None if s.process.killed else exit_code(s.process.returncode), s.whole.total)
                for s in self._shells.values()]

    async def aclose(self) -> None:
        """Kill every shell (the console is closing); nothing they started outlives this."""
        self._closed = True
        if self._shells:
            await asyncio.gather(*(self._stop(shell) for shell in self._shells.values()))

    def __repr__(self) -> str:
        running = sum(1 for s in self._shells.values() if s.process.returncode is None)
        return f"<ShellManager {len(self._shells)} shells, {running} running{' closed' if self._closed else ''}>"
