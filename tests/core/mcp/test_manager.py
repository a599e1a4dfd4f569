"""MCP servers as the console runs them: real servers over real stdio pipes and real HTTP on 127.0.0.1.

Each test starts the toy server (tests/core/mcp/toy_server.py) as its own
process, reaches its tools through a `ToolRegistry` the way the pipeline
does (validate, then run under the tool's limit), and stops everything.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from pathlib import Path

import pytest

from core.errors import ErrorKind
from core.mcp.manager import McpManager
from core.mcp.results import MCP_TOOL_ERROR
from core.mcp.settings import ServerSettings
from core.models.mcp import ServerState
from core.tools.registry import ToolRegistry
from tests.conftest import run
from tests.core.mcp.conftest import TOY, HttpServer, alive, free_port, harness, start_http, stdio

ERAS = [pytest.param((), id="2026-07-28"), pytest.param(("--legacy",), id="handshake-era")]


def late_start(delay_s: float) -> tuple[str, ...]:
    """Arguments for `python` that start the toy server over stdio after `delay_s` (a server slow to start)."""
    return ("-c", f"import runpy, sys, time; time.sleep({delay_s}); sys.argv = [{str(TOY)!r}, 'stdio']; "
                  f"runpy.run_path({str(TOY)!r}, run_name='__main__')")


@pytest.mark.parametrize("era", ERAS)
def test_stdio_tools_are_listed_and_callable(tmp_path: Path, era: tuple[str, ...]) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy", *era)) as h:
            assert h.manager.status("toy").describe() == "ready (14 tools)"
            assert [s.state for s in h.announced] == [ServerState.STARTING, ServerState.READY]
            assert {"mcp__toy__echo", "mcp__toy__add", "mcp__toy__dotted_name-tool"} <= set(h.registry.names())
            assert (await h.call("mcp__toy__echo", {"text": "hello"})).text == "hello"
            added = await h.call("mcp__toy__add", {"a": 2, "b": 40})
            assert added.text == "42" and added.data["structured"] == {"result": 42}
            picture = await h.call("mcp__toy__picture", {})
            assert picture.text == "a red pixel:\n[image: image/png, 70 bytes]"
            assert (await h.call("mcp__toy__dotted_name-tool", {})).text == "dotted"  # called by its own name

    run(scenario())


def test_http_tools_are_callable_with_headers_that_are_never_logged(tmp_path: Path, http_server: HttpServer,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    settings = ServerSettings(name="web", url=http_server.url, headers={"X-Belay-Token": "header-secret-42"})

    async def scenario() -> None:
        async with harness(tmp_path, settings) as h:
            assert h.manager.status("web").state == ServerState.READY
            assert (await h.call("mcp__web__header", {"name": "X-Belay-Token"})).text == "header-secret-42"
            assert (await h.call("mcp__web__echo", {"text": "over http"})).text == "over http"

    run(scenario())
    assert "header-secret-42" not in caplog.text and "header-secret-42" not in repr(settings)
    assert "mcp__web__header" in caplog.text or "web: ready" in caplog.text  # the session was logged, not its secrets


def test_annotations_reach_the_registry_with_mcps_defaults(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy")) as h:
            echo, add, wipe = (h.registry.get(f"mcp__toy__{n}") for n in ("echo", "add", "wipe"))
            assert echo is not None and add is not None and wipe is not None
            assert echo.annotations.model_dump() == {"read_only": True, "destructive": False, "idempotent": True,
                                                     "open_world": False}
            assert add.annotations.model_dump() == {"read_only": False, "destructive": False, "idempotent": True,
                                                    "open_world": True}
            assert wipe.annotations.model_dump() == {"read_only": False, "destructive": True, "idempotent": False,
                                                     "open_world": True}
            assert echo.retry is not None and add.retry is None and wipe.retry is None
            assert not any(t.cacheable for t in (echo, add, wipe))
            assert echo.Args.model_json_schema()["properties"] == {"text": {"title": "Text", "type": "string"}}

    run(scenario())


def test_bad_arguments_and_error_results_fail_readably(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy")) as h:
            bad = await h.error("mcp__toy__add", {"a": "two", "c": 1})
            assert bad.kind == ErrorKind.INVALID_ARGS
            assert bad.info.message == ("invalid arguments for mcp__toy__add: arguments: 'b' is a required "
                                        "property; a: 'two' is not of type 'integer'")
            assert bad.info.suggestion == "mcp__toy__add takes: a (integer), b (integer)."
            failed = await h.error("mcp__toy__fail", {"message": "the disk is on fire"})
            assert failed.kind == ErrorKind.SYSTEM and failed.info.code == MCP_TOOL_ERROR
            assert "the disk is on fire" in failed.info.message and failed.info.message.startswith("mcp__toy__fail")

    run(scenario())


@pytest.mark.parametrize("era", ERAS)
def test_tools_come_and_go_as_the_server_says(tmp_path: Path, era: tuple[str, ...]) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy", *era)) as h:
            await h.call("mcp__toy__grow", {"name": "fresh"})
            await _until(lambda: "mcp__toy__fresh" in h.registry, "the new tool")
            assert (await h.call("mcp__toy__fresh", {})).text == "fresh"
            assert h.manager.status("toy").describe() == "ready (15 tools)"
            await h.call("mcp__toy__shrink", {"name": "fresh"})
            await _until(lambda: "mcp__toy__fresh" not in h.registry, "the tool to go")
            assert h.manager.status("toy").describe() == "ready (14 tools)"

    run(scenario())


def test_a_tool_that_vanishes_mid_call_fails_that_call(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy")) as h:
            waiting = asyncio.ensure_future(h.error("mcp__toy__hang", {"seconds": 30}))
            await asyncio.sleep(0.3)
            await h.call("mcp__toy__shrink", {"name": "hang"})
            error = await asyncio.wait_for(waiting, 10)
            assert error.kind == ErrorKind.UNKNOWN_TOOL
            assert "no longer offers the tool 'hang'" in error.info.message
            assert "mcp__toy__hang" not in h.registry

    run(scenario())


def test_a_server_that_exits_mid_call_fails_clearly_and_restarts(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy")) as h:
            pid = int((await h.call("mcp__toy__pid", {})).text)
            crashed = await h.error("mcp__toy__crash", {})
            assert crashed.kind == ErrorKind.NETWORK
            assert "its process ended" in crashed.info.message and "crashing on purpose" in crashed.info.message
            status = await h.until("toy", ServerState.FAILED)
            assert status.describe() == "failed: its process ended; it said: toy server: crashing on purpose"
            assert not alive(pid)
            later = await h.error("mcp__toy__echo", {"text": "anyone?"})  # still listed: the agent learns why
            assert later.kind == ErrorKind.NETWORK and not later.info.recoverable
            assert "restart" in later.info.suggestion
            await h.manager.restart("toy")
            assert (await h.settled())["toy"].describe() == "ready (14 tools)"
            assert (await h.call("mcp__toy__echo", {"text": "back"})).text == "back"
            assert int((await h.call("mcp__toy__pid", {})).text) != pid
            assert [s.state.value for s in h.announced] == ["starting", "ready", "failed", "starting", "ready"]

    run(scenario())


def test_an_http_server_that_goes_away_fails_and_restart_reconnects(tmp_path: Path) -> None:
    port = free_port()
    server = start_http(port, tmp_path / "http.log")
    settings = ServerSettings(name="web", url=server.url)

    async def scenario() -> HttpServer:
        async with harness(tmp_path, settings) as h:
            waiting = asyncio.ensure_future(h.error("mcp__web__hang", {"seconds": 30}))
            await asyncio.sleep(0.3)
            await asyncio.to_thread(server.kill)
            lost = await asyncio.wait_for(waiting, 10)
            assert lost.kind == ErrorKind.NETWORK and "MCP server 'web'" in lost.info.message
            assert (await h.until("web", ServerState.FAILED)).reason
            again = await asyncio.to_thread(start_http, port, tmp_path / "http.log")
            await h.manager.restart("web")
            assert (await h.settled())["web"].state == ServerState.READY
            assert (await h.call("mcp__web__echo", {"text": "reconnected"})).text == "reconnected"
            return again

    try:
        server = run(scenario())
    finally:
        server.kill()


def test_a_hanging_server_times_out_without_holding_up_another(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with harness(tmp_path, stdio("slow", timeout_s=1.0), stdio("quick")) as h:
            hung = asyncio.ensure_future(h.error("mcp__slow__hang", {"seconds": 60}))  # the server waits
            blocked = asyncio.ensure_future(h.error("mcp__slow__block", {"seconds": 60}))  # the server is stuck
            assert (await h.call("mcp__quick__echo", {"text": "not waiting"})).text == "not waiting"
            assert not hung.done() and not blocked.done()  # quick answered while slow still kept them waiting
            # Ended by their own 1 s limit, as they say, well before the server's 60 s (this 30 s deadline).
            for error in await asyncio.wait_for(asyncio.gather(hung, blocked), 30):
                assert error.kind == ErrorKind.TIMEOUT and "timed out after 1 s" in error.info.message
            assert h.manager.status("slow").state == ServerState.READY  # slow is not dead
            assert (await h.call("mcp__quick__echo", {"text": "still here"})).text == "still here"

    run(scenario())


@pytest.mark.parametrize(("command", "args", "cwd", "reason"), [
    ("belay-no-such-program", (), None, "could not start 'belay-no-such-program': No such file or directory"),
    (sys.executable, (), "/belay-no-such-dir", "No such file or directory: /belay-no-such-dir"),
    (sys.executable, ("-c", "import sys; print('GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(2)"), None,
     "it said: GITHUB_TOKEN is not set"),
    ("sleep", ("60",), None, "did not answer within 1 s (startup_timeout_s)"),
], ids=["missing-program", "missing-cwd", "exits-at-once", "never-answers"])
def test_a_server_that_cannot_start_fails_with_a_readable_reason(tmp_path: Path, command: str, args: tuple[str, ...],
                                                                 cwd: str | None, reason: str) -> None:
    settings = ServerSettings(name="broken", command=command, args=args, cwd=cwd, startup_timeout_s=1.0)

    async def scenario() -> None:
        async with harness(tmp_path, settings, stdio("toy")) as h:
            status = h.manager.status("broken")
            assert status.state == ServerState.FAILED and reason in status.reason, status.reason
            assert not h.manager.tools("broken")
            assert (await h.call("mcp__toy__echo", {"text": "fine"})).text == "fine"  # the others are unaffected

    run(scenario())


def test_waiting_without_a_limit_lasts_until_each_server_listed_its_tools_or_its_own_limit_failed_it(
        tmp_path: Path) -> None:
    late = ServerSettings(name="late", command=sys.executable, args=late_start(1.5))
    stuck = ServerSettings(name="stuck", command="sleep", args=("60",), startup_timeout_s=2.0)

    async def scenario() -> None:
        registry = ToolRegistry()
        manager = McpManager(registry, {"late": late, "stuck": stuck}, cwd=tmp_path)
        await manager.start()
        try:
            started = time.monotonic()
            statuses = {s.name: s for s in await manager.wait_started()}
            assert time.monotonic() - started >= 1.5
            assert statuses["late"].state == ServerState.READY and "mcp__late__echo" in registry
            assert statuses["stuck"].describe() == "failed: it did not answer within 2 s (startup_timeout_s)"
        finally:
            await manager.close()

    run(scenario())


def test_env_goes_only_to_its_own_servers_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BELAY_CONSOLE_SECRET", "console-only")
    own = stdio("own", env={"API_TOKEN": "token-for-own"})

    async def scenario() -> None:
        async with harness(tmp_path, own, stdio("other")) as h:
            assert (await h.call("mcp__own__env", {"name": "API_TOKEN"})).text == "token-for-own"
            assert (await h.call("mcp__other__env", {"name": "API_TOKEN"})).text == "(unset)"
            assert (await h.call("mcp__own__env", {"name": "BELAY_CONSOLE_SECRET"})).text == "(unset)"

    run(scenario())
    assert "token-for-own" not in repr(own)


def test_close_leaves_no_process_task_or_thread(tmp_path: Path, http_server: HttpServer) -> None:
    threads_before = set(threading.enumerate())
    servers = (stdio("one"), stdio("two", "--legacy"), ServerSettings(name="web", url=http_server.url))

    async def scenario() -> list[int]:
        async with harness(tmp_path, *servers) as h:
            pids = [int((await h.call(f"mcp__{name}__pid", {})).text) for name in ("one", "two")]
            in_flight = asyncio.ensure_future(h.error("mcp__one__hang", {"seconds": 60}))
            await asyncio.sleep(0.3)
            await asyncio.wait_for(h.manager.close(), 15)
            stopped = await asyncio.wait_for(in_flight, 1)
            assert "was stopped" in stopped.info.message
            assert h.registry.names() == []
            assert [s.describe() for s in h.manager.statuses()] == ["stopped"] * 3
            assert asyncio.all_tasks() == {asyncio.current_task()}
        return pids

    pids = run(scenario())
    assert pids and not any(alive(pid) for pid in pids)
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - threads_before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(threading.enumerate()) - threads_before == set()


async def _until(condition: object, what: str) -> None:
    for _ in range(500):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
