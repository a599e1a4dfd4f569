"""The window's tasks (gui.window.runtime.tasks): a failure is shown, not lost; closing ends every task."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from core import RemoteError
from gui.window.runtime.tasks import TaskSet
from tests.conftest import run


async def _fail(message: str) -> None:
    await asyncio.sleep(0)
    raise ValueError(message)


async def _settle(tasks: TaskSet) -> None:
    """Let the tasks end and their done callbacks run."""
    while len(tasks):
        await asyncio.sleep(0)


@pytest.mark.allow_warning_logs("gui.window.runtime.tasks: task save the rule failed")
def test_a_failing_task_is_shown_by_its_name_and_logged_as_an_error(caplog: pytest.LogCaptureFixture) -> None:
    shown: list[str] = []

    async def scenario() -> None:
        tasks = TaskSet(on_error=shown.append)
        tasks.spawn(_fail("the settings file is read-only"), "save the rule")
        gc.collect()  # nobody else holds the task: the set does, until it ends
        await _settle(tasks)

    run(scenario())
    assert shown == ["save the rule failed: the settings file is read-only"]
    [record] = [r for r in caplog.records if r.name == "gui.window.runtime.tasks"]
    assert record.levelno == logging.ERROR and record.exc_info is not None  # with its traceback, for a report


def test_a_console_out_of_reach_is_shown_but_not_logged_as_a_fault(caplog: pytest.LogCaptureFixture) -> None:
    shown: list[str] = []

    async def unreachable() -> None:
        raise RemoteError("the console on build-box does not answer")

    async def scenario() -> None:
        tasks = TaskSet(on_error=shown.append)
        tasks.spawn(unreachable(), "approve c1")
        await _settle(tasks)

    caplog.set_level(logging.INFO, logger="gui.window.runtime.tasks")
    run(scenario())
    assert shown == ["approve c1 failed: the console on build-box does not answer"]
    assert [r.levelno for r in caplog.records if r.name == "gui.window.runtime.tasks"] == [logging.INFO]


def test_closing_cancels_every_task_and_waits_for_them_without_calling_it_a_failure() -> None:
    shown: list[str] = []
    ended: list[str] = []

    async def waits(name: str) -> None:
        try:
            await asyncio.sleep(600)
        finally:
            ended.append(name)

    async def scenario() -> None:
        tasks = TaskSet(on_error=shown.append)
        for name in ("follow the journal", "preview a command"):
            tasks.spawn(waits(name), name)
        tasks.spawn(asyncio.sleep(0), "done at once")
        await asyncio.sleep(0.01)
        assert len(tasks) == 2 and repr(tasks) == "<TaskSet ['follow the journal', 'preview a command']>"
        await tasks.aclose()
        assert len(tasks) == 0

    run(scenario())
    assert sorted(ended) == ["follow the journal", "preview a command"]
    assert shown == []
