"""The bridge: a window that falls behind rebuilds from a snapshot, losing nothing."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex

from core import ApprovalRequested, CallQueued, Console, spawn
from gui.window.bridge import Bridge
from gui.window.tasks import TaskSet
from gui.window.timeline_model import TimelineModel
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
            for i in range(200):  # published in one go: the bridge cannot keep up
                console.bus.publish(CallQueued(call_id=f"c{i}", agent_id=agent.agent_id, tool="Read",
                                               args={}, summary=f"file{i}"))
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
