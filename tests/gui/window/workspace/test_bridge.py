"""The bridge: a window that falls behind rebuilds from a snapshot, losing nothing."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex

from core import ApprovalRequested, CallFinished, CallOutput, CallQueued, CallStarted, Console, RunStatus, spawn
from gui.window.runtime.tasks import TaskSet
from gui.window.timeline.model import TimelineModel
from gui.window.workspace import bridge as bridge_module
from gui.window.workspace.bridge import Bridge
from tests.conftest import wait_until

MB = 1024 * 1024


@pytest.mark.allow_warning_logs  # the bridge says it fell behind
def test_a_lagging_window_resyncs_to_the_consoles_timeline(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks, backlog=20)
            resynced: list[bool] = []
            bridge.resynced.connect(lambda: resynced.append(True))
            bridge.start()
            agent = await console.start_agent("flood", "scripted")
            for i in range(200):  # published in one go: the bridge cannot keep up with their output
                console.bus.publish(CallQueued(call_id=f"c{i}", agent_id=agent.agent_id, tool="Read",
                                               args={}, summary=f"file{i}"))
                console.bus.publish(CallOutput(call_id=f"c{i}", text="reading\n"))
            await wait_until(lambda: resynced, what="a resync")
            root = model.index(0, 0, QModelIndex())
            assert model.rowCount(root) == 200
            assert model.index(199, 1, root).data() == "file199"
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())


def test_the_window_keeps_no_event_carrying_a_calls_whole_arguments(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks)
            asked: list[str] = []
            bridge.approval_requested.connect(lambda request: asked.append(request.call_id))
            ended: list[str] = []
            bridge.run_changed.connect(lambda call_id: model.timeline.runs[call_id].status.final and ended.append(call_id))
            bridge.start()
            agent = await console.start_agent("agent", "scripted")
            call = spawn(console.call(agent, "Write", {"file_path": str(workspace / "big.txt"), "content": "x" * MB}),
                         "the write")
            await wait_until(lambda: asked, what="the approval request")
            console.approve(asked[0])
            assert (await call).status.value == "done"
            await wait_until(lambda: ended, what="the call's end to reach the window")
            gc.collect()
            kept = [o for o in gc.get_objects() if isinstance(o, (CallQueued, ApprovalRequested))]
            assert kept == [] or all(len(json.dumps(o.args)) < 10_000 for o in kept)
            assert model.timeline.runs[asked[0]].args_cut  # the window shows the excerpt
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())


def test_a_batchs_events_are_let_go_once_told_not_held_until_the_next_batch(qtbot: Any, loop: Any,
                                                                           workspace: Path) -> None:
    """A flood's batch is some 5,000 events, and freeing them takes 5 to 7 ms: done in the turn that told them, not
    in the next batch's, where it added to the stall of its rows.  A quiet window holds none either."""
    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks)
            told: list[bool] = []
            bridge.batch_applied.connect(lambda: told.append(True))
            bridge.start()
            agent = await console.start_agent("agent", "scripted")
            await wait_until(lambda: told, what="the agent's batch")
            told.clear()
            event = CallQueued(call_id="c1", agent_id=agent.agent_id, tool="Write", args={"content": "x" * MB},
                               summary="big.txt")
            held = weakref.ref(event)
            console.bus.publish(event)
            del event
            await wait_until(lambda: told, what="the call's batch")
            await wait_until(lambda: held() is None, timeout=1.0, what="the batch's events to be let go")
            assert model.rowCount(model.index(0, 0)) == 1  # its row is shown all the same
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())


def test_a_calls_own_events_are_never_held_by_the_window_their_rows_say_them(qtbot: Any, loop: Any,
                                                                               workspace: Path) -> None:
    """A flood is mostly CallQueued, CallStarted and CallFinished: the window reads what they say from the timeline,
    so the bus only counts them for it (they wake it), and they are freed as soon as they are published."""
    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks)
            told: list[list[str]] = []
            bridge.runs_changed.connect(told.append)
            bridge.start()
            agent = (await console.start_agent("agent", "scripted")).agent_id
            events = [CallQueued(call_id="c1", agent_id=agent, tool="Write", args={"content": "x" * MB},
                                 summary="big.txt"),
                      CallStarted(call_id="c1"), CallFinished(call_id="c1", status=RunStatus.DONE)]
            held = [weakref.ref(event) for event in events]
            for event in events:
                console.bus.publish(event)
            del events, event
            assert [ref() for ref in held] == [None, None, None]  # published, and already let go
            root = await _agent_row(model)
            await wait_until(lambda: model.rowCount(root) == 1, what="the call's row")
            await wait_until(lambda: told, what="the run told")
            assert told == [["c1"]] and model.index(0, 2, root).data() == "✓ done"
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())


async def _agent_row(model: TimelineModel) -> QModelIndex:
    """The index of the one agent's row, once the model shows it (an index asked for before is the root's)."""
    await wait_until(lambda: model.rowCount() == 1, what="the agent's row")
    return model.index(0, 0, QModelIndex())


async def _flood(console: Console, agents: list[str], calls: int) -> None:
    """`calls` calls queued, started and finished, 100 a turn of the loop, as a busy pipeline publishes them."""
    for i in range(calls):
        console.bus.publish(CallQueued(call_id=f"c{i}", agent_id=agents[i % len(agents)], tool="Read", args={},
                                       summary=f"file{i}"))
        console.bus.publish(CallStarted(call_id=f"c{i}"))
        console.bus.publish(CallFinished(call_id=f"c{i}", status=RunStatus.DONE, duration_s=0.01))
        if i % 100 == 99:
            await asyncio.sleep(0)


def test_a_flood_through_the_bus_reaches_the_model_a_frame_at_a_time_each_run_announced_once_a_batch(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks)
            inserts: list[int] = []
            model.rowsInserted.connect(lambda parent, first, last: inserts.append(last - first + 1))
            announced: list[str] = []
            bridge.run_changed.connect(announced.append)
            resynced: list[bool] = []
            bridge.resynced.connect(lambda: resynced.append(True))
            bridge.start()
            agents = [(await console.start_agent(f"agent {n}", "scripted")).agent_id for n in range(3)]
            await wait_until(lambda: sum(inserts) == 3, what="the agents")
            inserts.clear()
            chunks = 50
            await _flood(console, agents, chunks * 100)
            await wait_until(lambda: sum(inserts) == 5000, what="every call's row")
            # One range insert per agent and frame, never one per turn of the loop (3 x 50 here).
            assert len(inserts) < 3 * chunks / 2, inserts
            # Each call started and ended within one batch: announced once, not twice.
            await wait_until(lambda: len(set(announced)) == 5000, what="every call announced")
            assert len(announced) == 5000 and not resynced
            root = model.index(0, 0, QModelIndex())
            assert model.rowCount(root) == 1667 and model.index(1666, 2, root).data() == "✓ done"
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())


def test_the_runs_a_batch_changed_are_told_once_a_batch_and_one_by_one_only_to_a_listener(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    """The window follows runs a batch at a time: under a flood a signal per run cost a third of each batch."""
    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks)
            told: list[list[str]] = []
            bridge.runs_changed.connect(told.append)
            batches: list[bool] = []
            bridge.batch_applied.connect(lambda: batches.append(True))
            bridge.start()
            agent = (await console.start_agent("agent", "scripted")).agent_id
            await _flood(console, [agent], 600)
            await wait_until(lambda: sum(len(ids) for ids in told) >= 600, what="every run told")
            assert sorted(id for ids in told for id in ids) == sorted(f"c{i}" for i in range(600))
            assert all(len(set(ids)) == len(ids) for ids in told)
            assert len(told) <= len(batches) and len(told) <= 20  # a signal a batch, not one a run (600)
            one_by_one: list[str] = []
            bridge.run_changed.connect(one_by_one.append)
            console.bus.publish(CallStarted(call_id="c0"))
            await wait_until(lambda: one_by_one == ["c0"], what="the run told to its listener")
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())


def test_a_source_held_at_the_high_water_mark_is_not_kept_waiting_through_the_windows_pause(
        qtbot: Any, loop: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window rests after each batch (under a flood at least FLOOD_PAUSE_S), and a source that awaits room is
    held while a batch's worth waits: the rest ends when that much waits, or the source would idle through it."""
    monkeypatch.setattr(bridge_module, "FLOOD_EVENTS", 100)
    monkeypatch.setattr(bridge_module, "FLOOD_PAUSE_S", 2.0)  # 20 batches held through it: 40 s
    monkeypatch.setattr(bridge_module, "MAX_PAUSE_S", 2.0)

    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks, backlog=600)  # its high-water mark: 300 events
            bridge.start()
            agent = (await console.start_agent("agent", "scripted")).agent_id
            for i in range(2000):  # 6,000 events, twenty batches' worth
                await console.bus.room()
                console.bus.publish(CallQueued(call_id=f"c{i}", agent_id=agent, tool="Read", args={},
                                               summary=f"file{i}"))
                console.bus.publish(CallStarted(call_id=f"c{i}"))
                console.bus.publish(CallFinished(call_id=f"c{i}", status=RunStatus.DONE, duration_s=0.01))
            root = await _agent_row(model)
            await wait_until(lambda: model.rowCount(root) == 2000, timeout=10, what="every call's row")
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(asyncio.wait_for(scenario(), timeout=15))


def test_what_waits_while_rows_are_shown_runs_before_the_panels_hear_of_them(qtbot: Any, loop: Any,
                                                                              workspace: Path) -> None:
    """A batch is shown in two turns of the loop: the rows, then the panels' news.  A key pressed (here: a callback
    queued) while the rows go in is handled between the two, not after both: under a flood each half is some
    20 ms, together a stall a person feels."""
    async def scenario() -> None:
        async with Console(workspace) as console:
            model, tasks = TimelineModel(), TaskSet()
            bridge = Bridge(console, model, tasks)
            order: list[str] = []
            model.rowsInserted.connect(lambda *_: (order.append("rows"),
                                                   asyncio.get_running_loop().call_soon(order.append, "key")))
            bridge.approval_requested.connect(lambda request: order.append("panel"))
            bridge.start()
            agent = await console.start_agent("agent", "scripted")
            console.bus.publish(CallQueued(call_id="c1", agent_id=agent.agent_id, tool="Write", args={},
                                           summary="a.txt"))
            console.bus.publish(ApprovalRequested(call_id="c1", agent_id=agent.agent_id, tool="Write", args={},
                                                  summary="a.txt", reason="writes a file"))
            await wait_until(lambda: "panel" in order, what="the panel told")
            assert order.index("rows") < order.index("key") < order.index("panel")
            bridge.stop()
            await tasks.aclose()

    loop.run_until_complete(scenario())
