"""A console attached to as the window uses its own: the mirror, the commands done there, a dropped link."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core import ApprovalRequested, CallFinished, Console, LinkChanged, RunStatus
from core.bus import Subscription
from core.remote.console import RemoteConsole
from core.remote.reach import Reach
from core.remote.server import AttachServer
from tests.conftest import run, wait_until


def _served(console: Console) -> None:
    assert console.endpoint is not None
    AttachServer(console).install(console.endpoint)
    console.register_approver("attached front ends")


async def _next(subscription: Subscription, kind: type, within_s: float = 10) -> object:
    async def wait() -> object:
        while True:
            for event in await subscription.next_batch():
                if isinstance(event, kind):
                    return event
    return await asyncio.wait_for(wait(), within_s)


def test_a_write_is_approved_shown_diffed_and_undone_through_the_mirror_and_rules_and_mode_follow(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            _served(console)
            async with RemoteConsole(Reach.of(str(ws))) as remote:
                assert remote.workspace.root == ws and remote.session_id == console.session_id
                assert remote.mode == "default" and remote.pending_approvals() == []
                timeline, events = remote.attach()
                agent = await console.start_agent("writer", "scripted")
                call = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "a.txt"),
                                                                           "content": "hello\n"}))
                asked = await _next(events, ApprovalRequested)
                assert isinstance(asked, ApprovalRequested)
                assert [r.call_id for r in remote.pending_approvals()] == [asked.call_id]
                assert timeline.runs[asked.call_id].status == RunStatus.BLOCKED_ON_USER
                assert remote.approve(asked.call_id)  # sent; the answer comes as events
                assert (await call).status == RunStatus.DONE and (ws / "a.txt").read_text() == "hello\n"
                await wait_until(lambda: timeline.runs[asked.call_id].status == RunStatus.DONE, what="shown done")
                assert remote.pending_approvals() == []
                [diff] = await remote.diffs_for(asked.call_id)
                assert diff.path == "a.txt" and diff.status == "create" and diff.added == 1
                record = await remote.call_record(asked.call_id)
                assert record is not None and record.decision is not None and record.decision.via == "window"
                preview = await remote.undo_preview(asked.call_id)
                assert [f.path for f in preview.files] == ["a.txt"]
                report = await remote.undo(asked.call_id)
                assert report.ok and not (ws / "a.txt").exists()  # undone there, where the files are

                remote.set_mode("accept_edits")
                await wait_until(lambda: console.mode == "accept_edits" and remote.mode == "accept_edits",
                                 what="the mode set there and announced here")
                assert await remote.add_rule("Bash(ls:*)", "allow", "session") == "Bash(ls:*)"
                await wait_until(lambda: any(r.rule == "Bash(ls:*)" for r in remote.rules()), what="the rule here")
                assert (await remote.verify()).ok
    run(main())


def test_a_dropped_link_is_attached_again_and_its_timeline_read_anew_with_the_call_that_waits_meanwhile(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            _served(console)
            reach = Reach.of(str(ws))
            reach.pause_s = 0.05
            async with RemoteConsole(reach) as remote:
                before, events = remote.attach()
                agent = await console.start_agent("writer", "scripted")
                assert remote._link is not None
                await remote._link.close()  # the link drops
                dropped = await _next(events, LinkChanged)
                assert isinstance(dropped, LinkChanged) and dropped.state == "reattaching"
                waiting = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "b.txt"),
                                                                              "content": "two\n"}))
                back = await _next(events, LinkChanged)
                assert isinstance(back, LinkChanged) and back.state == "attached" and remote.attached
                await wait_until(lambda: bool(remote.pending_approvals()), what="the call that waits")
                [request] = remote.pending_approvals()
                assert remote.timeline is not before and request.call_id in remote.timeline.runs
                assert remote.deny(request.call_id, "not now")
                assert (await waiting).status == RunStatus.DENIED and not (ws / "b.txt").exists()
                finished = await _next(events, CallFinished)
                assert isinstance(finished, CallFinished) and remote.timeline.runs[request.call_id].status \
                    == RunStatus.DENIED
    run(main())


def test_a_console_that_goes_away_is_given_up_on_and_commands_say_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        console = Console(ws)
        await console.open()
        _served(console)
        reach = Reach.of(str(ws))
        reach.pause_s = 0.01
        async with RemoteConsole(reach) as remote:
            events = remote.subscribe()
            await console.close()
            lost: object = None
            while not (isinstance(lost, LinkChanged) and lost.state == "lost"):
                lost = await _next(events, LinkChanged, 30)
            assert isinstance(lost, LinkChanged) and "gave up attaching" in lost.detail
            said: list[str] = []
            remote.on_error = said.append
            remote.cancel("c1")
            assert said and "not attached" in said[0]
    run(main())
