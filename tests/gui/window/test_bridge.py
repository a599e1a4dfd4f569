"""The bridge: a window that falls behind rebuilds from a snapshot, losing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex

from core import CallQueued, Console
from gui.window.bridge import Bridge
from gui.window.tasks import TaskSet
from gui.window.timeline_model import TimelineModel
from tests.conftest import wait_until


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
