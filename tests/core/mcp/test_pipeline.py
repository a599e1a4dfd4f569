"""MCP tools through the console's own pipeline: policy from annotations, validation, error results, timeouts.

The manager is attached to the console's registry exactly as `Console.open`
does it, and calls go through `Console.call`, so what is checked here is
what an agent sees.
"""

from __future__ import annotations

from pathlib import Path

from core import Console, ErrorKind, RunStatus
from core.mcp.manager import McpManager
from tests.conftest import run
from tests.core.mcp.conftest import START_S, stdio


def test_mcp_calls_run_through_the_console_pipeline(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace, tools=[]) as console:
            manager = McpManager(console.registry, {"toy": stdio("toy", timeout_s=1.0)}, cwd=console.workspace.root)
            await manager.start()
            try:
                await manager.wait_started(START_S)
                agent = await console.start_agent("agent", "scripted")
                read = await console.call(agent, "mcp__toy__echo", {"text": "read-only: allowed"})
                assert read.status == RunStatus.DONE and read.text == "read-only: allowed"
                asked = await console.call(agent, "mcp__toy__wipe", {"target": "everything"})
                assert asked.status == RunStatus.DENIED  # destructive by MCP's default: asked, and nobody can answer

                await console.add_rule("mcp__toy", "allow", "session")
                done = await console.call(agent, "mcp__toy__add", {"a": 1, "b": 2})
                assert done.status == RunStatus.DONE and done.text == "3"
                assert done.data["structured"] == {"result": 3} and done.data["server"] == "toy"
                bad = await console.call(agent, "mcp__toy__add", '{"a": 1, "b": "2"}')
                assert bad.status == RunStatus.FAILED and bad.error is not None
                assert bad.error.kind == ErrorKind.INVALID_ARGS and "b: '2' is not of type 'integer'" in bad.text
                failed = await console.call(agent, "mcp__toy__fail", {"message": "no such repository"})
                assert failed.status == RunStatus.FAILED and "no such repository" in failed.text
                slow = await console.call(agent, "mcp__toy__hang", {"seconds": 30})
                assert slow.status == RunStatus.TIMED_OUT and slow.error is not None
                assert slow.error.kind == ErrorKind.TIMEOUT
                records = {r.call_id: r for r in await console.history()}
                assert records[done.call_id].args == {"a": 1, "b": 2}
            finally:
                await manager.close()

    run(scenario())


def test_files_an_approved_mcp_tool_changes_are_recorded_against_its_call_and_undone(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace, tools=[]) as console:
            manager = McpManager(console.registry, {"toy": stdio("toy", "--writer")}, cwd=console.workspace.root)
            await manager.start()
            try:
                await manager.wait_started(START_S)
                await console.add_rule("mcp__toy__write_note", "allow", "session")
                agent = await console.start_agent("agent", "scripted")
                done = await console.call(agent, "mcp__toy__write_note", {"name": "note.txt", "text": "by mcp\n"})
                assert done.status == RunStatus.DONE, done.text
                run_ = console.timeline.runs[done.call_id]
                assert [(c.path, c.kind.value) for c in run_.changes] == [("note.txt", "create")]
                assert not console.timeline.externals  # the server's write is the call's, not "outside Belay"
                report = await console.undo(done.call_id)
                assert report.ok, report.message
            finally:
                await manager.close()

    run(scenario())
    assert not (workspace / "note.txt").exists()


def test_a_call_to_a_server_still_starting_waits_for_it_rather_than_failing(workspace: Path) -> None:
    """The window's and the demo's path: the console opens, starts its MCP servers, and an agent's first call
    names a tool of one that is still starting.  It waits (bounded by the server's start-up limit), as
    `belay run` waits for every server before its plan; a tool no server can offer still fails at once."""
    import sys

    from core.policy.settings import config_dir
    from tests.core.mcp.test_manager import late_start

    args = ", ".join(f'"{a}"' for a in late_start(2.0)).replace("\\", "\\\\")
    (config_dir() / "settings.toml").write_text(
        f'[mcp.servers.late]\ncommand = "{sys.executable}"\nargs = [{args}]\nstartup_timeout_s = 20\n'
        f'[mcp.servers.never]\ncommand = "{sys.executable}"\nargs = ["-c", "import time; time.sleep(60)"]\n'
        'startup_timeout_s = 1\n')

    async def scenario() -> None:
        async with Console(workspace) as console:
            assert {s.name: s.state.value for s in console.mcp_servers()} == {"late": "starting", "never": "starting"}
            agent = await console.start_agent("agent", "scripted")
            echo = await console.call(agent, "mcp__late__echo", {"text": "after the start"})
            assert echo.status == RunStatus.DONE and echo.text == "after the start"
            unknown = await console.call(agent, "mcp__nobody__echo", {"text": "x"})
            assert unknown.status == RunStatus.FAILED and unknown.error is not None
            assert unknown.error.kind == ErrorKind.UNKNOWN_TOOL
            never = await console.call(agent, "mcp__never__echo", {"text": "x"})  # waits for its failure, no more
            assert never.status == RunStatus.FAILED and never.error is not None
            assert never.error.kind == ErrorKind.UNKNOWN_TOOL
            assert {s.name: s.state.value for s in console.mcp_servers()}["never"] == "failed"

    run(scenario())
