"""Background shells: ids, bounded output read in increments, events, kill and close of whole trees."""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import ErrorKind, ToolError
from core.events import Event, ShellFinished, ShellOutput, ShellStarted
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.process.limits import pids_parent
from core.process.sandbox import detect_sandbox, wrap
from core.process.shells import Launch, ShellManager, ShellProcess
from core.tools.base import ReadState, ToolContext
from core.tools.bash import BashArgs, BashSettings, BashTool
from tests.conftest import RUNAWAY_S, wait_until

TAG = os.getpid()
"""Sleeps carry this run's pid (`sleep 98780.<pid>`), so parallel test runs never see each other's."""


def sleep(number: int) -> str:
    return f"sleep {number}.{TAG}"


def sleeps(number: int) -> list[int]:
    """Pids of this run's `sleep <number>` processes."""
    found = []
    for name in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline == f"sleep\0{number}.{TAG}\0".encode():
            found.append(int(name))
    return found


@pytest.fixture(autouse=True)
def _no_sleep_left() -> Iterator[None]:
    yield
    left = [pid for n in range(98780, 98790) for pid in sleeps(n)]
    assert left == [], "background shells left processes behind"


def launch(ws: Path, script: str) -> Launch:
    return Launch(argv=("bash", "--noprofile", "--norc", "-c", script), env={"PATH": "/usr/bin:/bin"}, cwd=ws,
                  tmp=Path(tempfile.mkdtemp(prefix="belay-test-")), sandboxed=False, kill_grace_s=0.5,
                  drain_timeout_s=0.5)


def test_shells_run_report_and_finish(tmp_path: Path) -> None:
    async def go() -> list[Event]:
        events: list[Event] = []
        shells = ShellManager(events.append)
        try:
            first = await shells.start(launch(tmp_path, "echo one; sleep 0.2; echo two"), command="c1", call_id="k1")
            second = await shells.start(launch(tmp_path, "exit 4"), command="c2", call_id="k2")
            assert (first, second) == ("bash_1", "bash_2")
            await wait_until(lambda: all(s.status != "running" for s in shells.list()), what="both shells end")
            assert [(s.shell_id, s.status, s.exit_code) for s in shells.list()] == [
                ("bash_1", "completed", 0), ("bash_2", "failed", 4)]
            read = shells.read(first)
            assert (read.output, read.status, read.exit_code) == ("one\ntwo\n", "completed", 0)
            assert shells.read(first).output == ""
            assert shells.read(first, since_last=False).output == "one\ntwo\n"
        finally:
            await shells.aclose()
        return events

    events = asyncio.run(go())
    assert ShellStarted(shell_id="bash_1", call_id="k1", command="c1", at=events[0].at) in events
    outputs = "".join(e.text for e in events if isinstance(e, ShellOutput) and e.shell_id == "bash_1")
    assert outputs == "one\ntwo\n"
    finished = {e.shell_id: (e.exit_code, e.killed) for e in events if isinstance(e, ShellFinished)}
    assert finished == {"bash_1": (0, False), "bash_2": (4, False)}


def test_kill_ends_the_whole_tree(tmp_path: Path) -> None:
    async def go() -> list[Event]:
        events: list[Event] = []
        shells = ShellManager(events.append)
        try:
            shell_id = await shells.start(launch(tmp_path, f"{sleep(98780)} & setsid {sleep(98781)} & wait"),
                                          command="c", call_id="k")
            await wait_until(lambda: sleeps(98780) and sleeps(98781), what="both sleeps")
            assert await shells.kill(shell_id) == "running"
            assert sleeps(98780) == [] and sleeps(98781) == []
            read = shells.read(shell_id)
            assert (read.status, read.exit_code) == ("killed", None)
            assert await shells.kill(shell_id) == "killed"
            with pytest.raises(ToolError) as info:
                await shells.kill("bash_7")
            assert info.value.kind == ErrorKind.NOT_FOUND and "bash_1" in info.value.info.suggestion
        finally:
            await shells.aclose()
        return events

    finished = [e for e in asyncio.run(go()) if isinstance(e, ShellFinished)]
    assert [(e.exit_code, e.killed) for e in finished] == [(None, True)]


def test_aclose_kills_every_shell_and_refuses_new_ones(tmp_path: Path) -> None:
    async def go() -> None:
        shells = ShellManager(lambda event: None)
        for n in (98782, 98783):
            await shells.start(launch(tmp_path, f"trap '' TERM; {sleep(n)}"), command="c", call_id="k")
        await wait_until(lambda: sleeps(98782) and sleeps(98783), what="both sleeps")
        await shells.aclose()
        assert [s.status for s in shells.list()] == ["killed", "killed"]
        with pytest.raises(ToolError):
            await shells.start(launch(tmp_path, "true"), command="c", call_id="k")

    asyncio.run(go())


def test_output_is_bounded_between_reads(tmp_path: Path) -> None:
    async def go() -> str:
        events: list[Event] = []
        shells = ShellManager(events.append)
        try:
            shell_id = await shells.start(launch(tmp_path, "yes | head -c 5000000; echo; echo END"),
                                          command="c", call_id="k")
            await wait_until(lambda: shells.list()[0].status != "running", what="the shell ends")
            live = sum(len(e.text) for e in events if isinstance(e, ShellOutput))
            assert live < 100_000
            return shells.read(shell_id).output
        finally:
            await shells.aclose()

    text = asyncio.run(go())
    assert len(text) < 30_000 and "bytes cut" in text and text.endswith("y\n\nEND\n")


def test_too_many_running_shells_are_refused(tmp_path: Path) -> None:
    async def go() -> None:
        shells = ShellManager(lambda event: None, max_running=1)
        try:
            await shells.start(launch(tmp_path, sleep(98784)), command="c", call_id="k")
            with pytest.raises(ToolError) as info:
                await shells.start(launch(tmp_path, "true"), command="c", call_id="k")
            assert info.value.kind == ErrorKind.RESOURCE_LIMIT
        finally:
            await shells.aclose()

    asyncio.run(go())


@pytest.mark.timeout(RUNAWAY_S)  # a close that waited for the pipe's holder would wait a day
def test_process_close_removes_the_private_tmp_and_abandons_a_held_pipe(tmp_path: Path) -> None:
    async def go() -> Path:
        chunks: list[bytes] = []
        spec = launch(tmp_path, f"(setsid {sleep(98785)} &); echo out")
        process = ShellProcess(spec, chunks.append)
        await process.start()
        assert await process.wait() == 0
        await process.close()
        assert b"".join(chunks) == b"out\n" and not process.killed
        return spec.tmp

    try:
        tmp = asyncio.run(go())
        assert not tmp.exists()
    finally:
        for pid in sleeps(98785):  # the escaped daemon the fallback cannot link back to the command
            os.kill(pid, 9)


@pytest.mark.skipif(not detect_sandbox().available, reason="bubblewrap cannot run on this machine")
def test_a_sandbox_stopped_while_it_is_still_starting_leaves_nothing(tmp_path: Path) -> None:
    # Killing bubblewrap in its first milliseconds, before its inner process asks to die with it, used to leave
    # the whole sandbox running (the console closing just after an agent started a background shell).
    async def go() -> None:
        info = detect_sandbox()
        for attempt in range(20):
            tmp = Path(tempfile.mkdtemp(prefix="belay-test-"))
            argv = wrap(["bash", "-c", sleep(98789)], workspace=tmp_path, tmp=tmp, network=True, info=info)
            process = ShellProcess(Launch(tuple(argv), {"PATH": "/usr/bin:/bin"}, tmp_path, tmp, True, 0.5, 0.5),
                                   lambda chunk: None)
            await process.start()
            await asyncio.sleep((attempt % 5) / 1000)
            await process.close()
            assert sleeps(98789) == [], f"the sandbox outlived its stop (attempt {attempt})"

    asyncio.run(go())


# --- which processes are the commands' ------------------------------------------------------------------------

def bash_tool(shells: ShellManager, sandbox: str, ws: Path) -> tuple[BashTool, ToolContext]:
    return (BashTool(BashSettings(sandbox=sandbox, kill_grace_s=0.5), shells),  # type: ignore[arg-type]
            ToolContext(Workspace(ws), AgentId("a"), CallId("c"), ReadState()))


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_background_commands_processes_are_known_and_others_are_not(sandbox: str, tmp_path: Path) -> None:
    """What the endpoint asks before it talks to a socket peer: is this one of the agent's commands?"""
    async def go(stranger: int) -> None:
        shells = ShellManager(lambda event: None)
        tool, ctx = bash_tool(shells, sandbox, tmp_path)
        try:
            await tool.run(BashArgs(command=f"(setsid {sleep(98785)} &); {sleep(98786)}", run_in_background=True),
                           ctx)
            await wait_until(lambda: sleeps(98785) and sleeps(98786), what="both sleeps")
            inner, escaped = sleeps(98786)[0], sleeps(98785)[0]
            assert shells.started_by_a_command(inner)
            # A setsid'd orphan is tied to the command only by its cgroup, or by the sandbox's PID namespace.
            assert shells.started_by_a_command(escaped) == (pids_parent() is not None or sandbox == "auto")
            assert not shells.started_by_a_command(os.getpid()) and not shells.started_by_a_command(stranger)
            assert not shells.started_by_a_command(1)
        finally:
            await shells.aclose()
        assert not shells.started_by_a_command(inner)

    stranger = subprocess.Popen(["sleep", "30"])
    try:
        asyncio.run(go(stranger.pid))
    finally:
        stranger.kill()
        stranger.wait()


def test_a_foreground_commands_processes_are_known_while_it_runs(tmp_path: Path) -> None:
    async def go() -> None:
        shells = ShellManager(lambda event: None)
        tool, ctx = bash_tool(shells, "auto", tmp_path)
        call = asyncio.create_task(tool.run(BashArgs(command=f"{sleep(98787)}; echo done", timeout=20_000), ctx))
        try:
            await wait_until(lambda: sleeps(98787), what="the sleep")
            pid = sleeps(98787)[0]
            assert shells.started_by_a_command(pid)
        finally:
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await shells.aclose()
        assert not shells.started_by_a_command(pid)

    asyncio.run(go())
