"""The console end to end without a window: approvals, journal, undo, restart.

These drive the real pipeline and real tools on a real temporary workspace;
the "person" is the test, answering through the console's commands.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from core import BelayError, Console, Decision, ErrorKind, RunStatus
from core.events import ApprovalRequested
from core.run.calls import AgentHandle, CallOutcome
from tests.conftest import run
from tests.inotify_limits import limit_instances_to, limit_watches_to


@asynccontextmanager
async def attended(workspace: Path) -> AsyncIterator[Console]:
    """A console with someone (the test) able to answer approvals."""
    async with Console(workspace) as console:
        console.register_approver("test")
        yield console


async def _next_request(console: Console, timeout: float = 5.0) -> ApprovalRequested:
    async def poll() -> ApprovalRequested:
        while not console.pending_approvals():
            await asyncio.sleep(0.005)
        return console.pending_approvals()[0]
    return await asyncio.wait_for(poll(), timeout)


async def _edit(console: Console, agent: AgentHandle, path: Path, old: str, new: str) -> asyncio.Task[CallOutcome]:
    return asyncio.ensure_future(console.call(agent, "Edit", {"file_path": str(path), "old_string": old,
                                                              "new_string": new}))


def test_an_approved_edit_is_written_journaled_and_undoable(workspace: Path) -> None:
    target = workspace / "src" / "shop" / "pricing.py"
    original = target.read_text()

    async def scenario() -> None:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            task = await _edit(console, agent, target, "amount * (1", "round(amount * (1")
            request = await _next_request(console)
            assert request.tool == "Edit" and request.diffs[0].path == "src/shop/pricing.py"
            assert request.diffs[0].added == 1 and request.diffs[0].removed == 1
            assert target.read_text() == original  # nothing written before approval
            assert console.approve(request.call_id)
            outcome = await task
            assert outcome.status == RunStatus.DONE
            assert "round(amount" in target.read_text()
            [record] = await console.history()
            assert record.status == RunStatus.DONE and [c.path for c in record.changes] == ["src/shop/pricing.py"]
            report = await console.undo(outcome.call_id)
            assert report.ok and report.paths == ("src/shop/pricing.py",)
            assert target.read_text() == original
            assert (await console.history())[0].undone_by == report.rollback_id
            again = await console.undo(outcome.call_id)
            assert not again.ok and "already undone" in again.message

    run(scenario())


def test_a_denied_write_leaves_the_file_alone_and_the_agent_hears_the_reason(workspace: Path) -> None:
    target = workspace / "tests" / "test_cart.py"
    original = target.read_text()

    async def scenario() -> CallOutcome:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(target), "content": "x"}))
            request = await _next_request(console)
            console.deny(request.call_id, "keep the tests")
            return await task

    outcome = run(scenario())
    assert outcome.status == RunStatus.DENIED
    assert "keep the tests" in outcome.text
    assert target.read_text() == original


def test_approving_with_edits_writes_the_persons_content(workspace: Path) -> None:
    target = workspace / "notes.txt"

    async def scenario() -> CallOutcome:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(target), "content": "agent\n"}))
            request = await _next_request(console)
            assert request.proposed[0].content == "agent\n"
            console.approve(request.call_id, edited={"notes.txt": "person\n"})
            return await task

    outcome = run(scenario())
    assert target.read_text() == "person\n"
    assert "edited" in outcome.text


def test_always_allow_adds_the_suggested_rule_so_similar_calls_stop_asking(workspace: Path) -> None:
    async def scenario() -> tuple[list[RunStatus], str | None]:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            first = asyncio.ensure_future(
                console.call(agent, "Write", {"file_path": str(workspace / "src" / "a"), "content": "1"}))
            request = await _next_request(console)
            console.always_allow(request.call_id)
            statuses = [(await first).status]
            second = await console.call(agent, "Write", {"file_path": str(workspace / "src" / "b"), "content": "2"})
            statuses.append(second.status)
            assert console.pending_approvals() == []
            decisions = [(r.decision, r.decided_by, r.decision_rule) for r in console.timeline.runs.values()]
            assert decisions == [(Decision.ALWAYS_ALLOWED, "person", None),  # the person, in the window
                                 (Decision.APPROVED, "rule", "Edit(./src/**) [session]")]  # then the rule they added
            journaled = [c.decision for c in await console.history()]
            assert [(d.decision, d.by, d.rule) for d in journaled if d] == decisions
            assert [(e.rule, e.scope) for e in console.rules()] == [("Edit(./src/**)", "session")]
            return statuses, request.suggested_rule

    statuses, suggested = run(scenario())
    assert statuses == [RunStatus.DONE, RunStatus.DONE]
    assert suggested == "Edit(./src/**)"
    assert (workspace / "src" / "b").read_text() == "2"


def test_always_allow_for_the_workspace_is_kept_in_its_settings_file(workspace: Path) -> None:
    async def first_session() -> None:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Bash", {"command": "touch made-by-bash"}))
            request = await _next_request(console)
            assert request.suggested_rule == "Bash(touch:*)"
            console.always_allow(request.call_id, scope="workspace")
            assert (await call).status == RunStatus.DONE

    async def second_session() -> RunStatus:
        async with Console(workspace) as console:  # nobody attached: an ask would be a denial
            agent = await console.start_agent("agent", "scripted")
            return (await console.call(agent, "Bash", {"command": "touch second"})).status

    run(first_session())
    assert "Bash(touch:*)" in (workspace / ".belay" / "settings.toml").read_text()
    assert run(second_session()) == RunStatus.DONE
    assert (workspace / "second").exists()


def test_bad_input_becomes_a_failed_run_with_a_clear_error(workspace: Path) -> None:
    async def scenario() -> list[CallOutcome]:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            dup = '{"file_path": "%s", "file_path": "/etc/passwd"}' % (workspace / "README.md")
            return [
                await console.call(agent, "Read", dup),
                await console.call(agent, "Read", '{"file_path": "unterminated'),
                await console.call(agent, "Edit", {"file_path": str(workspace / "README.md"), "old_string": "a",
                                                   "new_string": "b", "replace_all": "yes"}),
                await console.call(agent, "Frobnicate", {}),
                await console.call(agent, "Read", {"file_path": "/etc/passwd"}),
            ]

    dup, broken, wrong_type, unknown, outside = run(scenario())
    assert dup.error is not None and dup.error.kind == ErrorKind.INVALID_ARGS and "twice" in dup.error.message
    assert broken.error is not None and broken.error.kind == ErrorKind.INVALID_ARGS
    assert wrong_type.error is not None and "replace_all" in wrong_type.error.message
    assert unknown.error is not None and unknown.error.kind == ErrorKind.UNKNOWN_TOOL
    assert "Read" in unknown.error.suggestion
    assert outside.error is not None and outside.error.kind == ErrorKind.OUTSIDE_WORKSPACE
    assert all(o.status == RunStatus.FAILED for o in (dup, broken, wrong_type, unknown, outside))


def test_undo_refuses_to_overwrite_later_changes_unless_forced(workspace: Path) -> None:
    target = workspace / "README.md"
    original = target.read_text()

    async def scenario() -> None:
        async with attended(workspace) as console:
            console.policy.add_rule("Edit", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Edit", {"file_path": str(target), "old_string": "# shop",
                                                         "new_string": "# Shop"})
            target.write_text(target.read_text().replace("# Shop", "# Shop, as the person retitled it"))
            refused = await console.undo(outcome.call_id)
            assert not refused.ok and refused.conflicts == ("README.md",)
            assert "as the person retitled it" in target.read_text()
            forced = await console.undo(outcome.call_id, force=True)
            assert forced.ok

    run(scenario())
    assert target.read_text() == original


def test_undo_of_a_created_file_removes_it(workspace: Path) -> None:
    async def scenario() -> None:
        async with attended(workspace) as console:
            console.policy.add_rule("Write", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Write", {"file_path": str(workspace / "new" / "f.py"), "content": "x"})
            assert (workspace / "new" / "f.py").exists()
            assert (await console.undo(outcome.call_id)).ok

    run(scenario())
    assert not (workspace / "new" / "f.py").exists()


def test_a_restarted_console_lists_and_undoes_an_earlier_call(workspace: Path) -> None:
    target = workspace / "README.md"
    original = target.read_text()

    async def first_session() -> str:
        async with attended(workspace) as console:
            console.policy.add_rule("Write", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            return (await console.call(agent, "Write", {"file_path": str(target), "content": "new\n"})).call_id

    async def second_session(call_id: str) -> None:
        async with attended(workspace) as console:
            assert call_id in console.timeline.runs
            assert console.timeline.runs[call_id].status == RunStatus.DONE
            assert (await console.undo(call_id)).ok

    call_id = run(first_session())
    assert target.read_text() == "new\n"
    run(second_session(call_id))
    assert target.read_text() == original


def test_closing_the_console_answers_a_waiting_call(workspace: Path) -> None:
    async def scenario() -> CallOutcome:
        console = Console(workspace)
        await console.open()
        console.register_approver("test")
        agent = await console.start_agent("agent", "scripted")
        task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(workspace / "x"), "content": "1"}))
        await _next_request(console)
        await console.close()
        return await task

    outcome = run(scenario())
    assert outcome.status == RunStatus.DENIED and "closed" in outcome.text
    assert not (workspace / "x").exists()


def test_cancelling_a_waiting_call_tells_the_agent_and_records_it(workspace: Path) -> None:
    async def scenario() -> tuple[CallOutcome, RunStatus]:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(workspace / "x"), "content": "1"}))
            request = await _next_request(console)
            assert console.cancel(request.call_id)
            outcome = await task
            [record] = await console.history()
            return outcome, record.status

    outcome, recorded = run(scenario())
    assert outcome.status == RunStatus.CANCELLED and recorded == RunStatus.CANCELLED
    assert not (workspace / "x").exists()


def test_a_file_changed_while_waiting_for_approval_is_not_overwritten(workspace: Path) -> None:
    target = workspace / "README.md"

    async def scenario() -> CallOutcome:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            task = await _edit(console, agent, target, "# shop", "# Shop")
            request = await _next_request(console)
            target.write_text("the person rewrote it\n")
            console.approve(request.call_id)
            return await task

    outcome = run(scenario())
    assert outcome.status == RunStatus.FAILED and outcome.error is not None
    assert outcome.error.kind == ErrorKind.CONFLICT
    assert target.read_text() == "the person rewrote it\n"


def test_a_second_console_does_not_call_the_owners_running_calls_dead(workspace: Path) -> None:
    async def scenario() -> RunStatus:
        async with attended(workspace) as owner:
            agent = await owner.start_agent("agent", "scripted")
            task = asyncio.ensure_future(owner.call(agent, "Write", {"file_path": str(workspace / "x"), "content": "1"}))
            request = await _next_request(owner)
            async with Console(workspace, track=False) as reader:  # what `belay calls` does
                [record] = await reader.history()
            owner.approve(request.call_id)
            assert (await task).status == RunStatus.DONE
            return record.status

    assert run(scenario()) == RunStatus.BLOCKED_ON_USER


def test_cancelling_a_task_call_cancels_its_sub_agents_waiting_call(workspace: Path) -> None:
    from core import Script, run_script

    script = Script.model_validate({"name": "lead", "steps": [{"tool": "Task", "args": {
        "description": "write", "subagent_type": "writer", "tools": ["Write"],
        "steps": [{"id": "w", "tool": "Write", "args": {"file_path": "{workspace}/x", "content": "1"}}]}}]})

    async def scenario() -> dict[str, RunStatus]:
        async with attended(workspace) as console:
            task = console.launch(run_script(console, script), "lead")
            await _next_request(console)
            task_call = next(r for r in console.timeline.runs.values() if r.tool == "Task")
            assert console.cancel(task_call.call_id)
            await task
            return {r.tool: r.status for r in await console.history()}

    assert run(scenario()) == {"Task": RunStatus.CANCELLED, "Write": RunStatus.CANCELLED}
    assert not (workspace / "x").exists()


def test_with_nobody_attached_asking_means_denying(workspace: Path) -> None:
    async def scenario() -> CallOutcome:
        async with Console(workspace) as console:  # no approver registered: headless
            agent = await console.start_agent("agent", "scripted")
            return await console.call(agent, "Write", {"file_path": str(workspace / "x"), "content": "1"})

    outcome = run(scenario())
    assert outcome.status == RunStatus.DENIED and "no window is attached" in outcome.text
    assert not (workspace / "x").exists()


def test_an_unanswered_approval_times_out_and_the_agent_is_told_so(workspace: Path) -> None:
    (workspace / ".belay").mkdir()
    (workspace / ".belay" / "settings.toml").write_text('[permissions]\nask = [{ rule = "Write", timeout_s = 0.2 }]\n')

    async def scenario() -> CallOutcome:
        async with attended(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            return await console.call(agent, "Write", {"file_path": str(workspace / "x"), "content": "1"})

    outcome = run(scenario())
    assert outcome.status == RunStatus.TIMED_OUT
    assert "in time" in outcome.text and "denied" not in outcome.text.lower()
    assert not (workspace / "x").exists()


def test_rewind_to_a_call_undoes_every_later_one_newest_first(workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def scenario() -> tuple[list[str], list[str]]:
        async with Console(workspace) as console:
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            ids = []
            for content in ("one\n", "two\n", "three\n"):
                outcome = await console.call(agent, "Write", {"file_path": str(notes), "content": content})
                ids.append(outcome.call_id)
            extra = await console.call(agent, "Write", {"file_path": str(workspace / "extra.txt"), "content": "x"})
            plan = [r.call_id for r in await console.rewind_plan(ids[0])]
            reports = await console.rewind(ids[0])
            assert all(r.ok for r in reports)
            return plan, [ids[2], ids[1], extra.call_id]

    plan, expected = run(scenario())
    assert sorted(plan) == sorted(expected) and plan[0] == expected[2]  # the newest first
    assert notes.read_text() == "one\n" and not (workspace / "extra.txt").exists()


def test_rewind_stops_at_a_file_someone_changed_since(workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def scenario() -> list[bool]:
        async with Console(workspace) as console:
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            first = await console.call(agent, "Write", {"file_path": str(notes), "content": "one\n"})
            await console.call(agent, "Write", {"file_path": str(notes), "content": "two\n"})
            notes.write_text("the person's edit\n")
            return [r.ok for r in await console.rewind(first.call_id)]

    assert run(scenario()) == [False]
    assert notes.read_text() == "the person's edit\n"


def test_mcp_started_waits_for_a_server_slow_to_start_so_a_first_call_finds_its_tools(workspace: Path) -> None:
    toy = Path(__file__).parent / "mcp" / "toy_server.py"
    late = f"import runpy, sys, time; time.sleep(1.5); sys.argv = [{str(toy)!r}, 'stdio']; " \
           f"runpy.run_path({str(toy)!r}, run_name='__main__')"
    (Path(os.environ["BELAY_CONFIG_DIR"]) / "settings.toml").write_text(
        f"[mcp.servers.late]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(['-c', late])}\n")

    async def scenario() -> None:
        async with Console(workspace) as console:
            assert [s.describe() for s in console.mcp_servers()] == ["starting"]  # opening does not wait
            [late_status] = await console.mcp_started()
            assert late_status.describe().startswith("ready") and "mcp__late__echo" in console.registry
            await console.add_rule("mcp__late__echo", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "mcp__late__echo", {"text": "first call"})
            assert outcome.status == RunStatus.DONE and outcome.text == "first call"

    run(scenario())


def test_an_answer_given_the_moment_the_request_is_announced_is_kept(workspace: Path, state_dir: Path) -> None:
    """An approver that answers as soon as it hears of a request (here inside the announcement itself) is
    heard: the request takes answers before it is announced.  The generated-calls fuzz found the race: with
    the journal's group commit an approver could answer before the call got to wait, and the call then waited
    for ever."""
    async def scenario() -> None:
        async with Console(workspace, state_dir=state_dir) as console:
            console.register_approver("quick")
            console.bus.listen(lambda e: console.approve(e.call_id) if isinstance(e, ApprovalRequested) else None)
            agent = await console.start_agent("lead", "scripted")
            outcome = await asyncio.wait_for(console.call(agent, "Write", {"file_path": str(workspace / "n.txt"),
                                                                          "content": "quick\n"}), 10)
            assert outcome.status is RunStatus.DONE, outcome.text
            assert (workspace / "n.txt").read_text() == "quick\n"

    run(scenario())


@pytest.mark.parametrize("limit", ["instances", "watches"])
def test_at_an_inotify_limit_the_console_says_so_and_still_captures_and_undoes_every_command(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, limit: str) -> None:
    """Many editors open (every inotify instance taken) or a large repository (more directories than watches):
    the console cannot watch the workspace.  It says why, compares the workspace whole before and after each
    command instead (a command's changes are still its own, and undoable; the person's edit is recorded as
    theirs when the next call runs), and caches no result (nothing would tell it a file changed)."""
    if limit == "instances":
        limit_instances_to(monkeypatch, 0)
    else:
        limit_watches_to(monkeypatch, {os.fsencode(workspace.resolve())})
    readme = workspace / "README.md"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            state = console.watch_state()
            assert state is not None and not state.watching and state.limit == limit and state.problem
            assert console.cache_stats() is None
            agent = await console.start_agent("agent", "scripted")
            before = readme.read_text()
            readme.write_text(before + "the person's line\n")  # no watcher sees it: the look before the command does
            outcome = await console.call(agent, "Bash", {"command": "echo new > made.txt; rm -r src/shop"})
            assert outcome.status == RunStatus.DONE
            [record] = [r for r in await console.history() if r.call_id == outcome.call_id]
            assert {c.path for c in record.changes} >= {"made.txt", "src/shop/pricing.py"}
            assert "README.md" not in {c.path for c in record.changes}
            assert [[c.path for c in x.changes] for x in console.timeline.externals] == [["README.md"]]
            report = await console.undo(outcome.call_id)
            assert report.ok and not (workspace / "made.txt").exists()
            assert (workspace / "src" / "shop" / "pricing.py").exists() and "the person's line" in readme.read_text()

    run(scenario())


def test_a_second_console_on_a_workspace_is_refused_naming_the_first_and_a_reader_still_reads(
        workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace, holder="window") as first:
            agent = await first.start_agent("agent", "scripted")
            await first.call(agent, "Read", {"file_path": str(workspace / "README.md")})
            second = Console(workspace, holder="belay run")
            with pytest.raises(BelayError) as refused:
                await second.open()
            await second.close()
            assert refused.value.kind is ErrorKind.CONFLICT
            assert f"open in another Belay console: window (pid {os.getpid()})" in refused.value.info.message
            async with Console(workspace, track=False) as reader:  # `belay calls` beside the window
                assert [r.tool for r in reader.timeline.runs.values()] == ["Read"]
        async with Console(workspace, holder="belay run") as after:  # the first closed: the workspace is free
            assert after.endpoint is not None

    run(scenario())


def test_a_console_opened_to_read_the_journal_runs_no_agent(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace, track=False) as reader:
            with pytest.raises(BelayError) as refused:
                await reader.start_agent("agent", "scripted")
            assert refused.value.kind is ErrorKind.CONFLICT and "read the journal only" in refused.value.info.message

    run(scenario())
