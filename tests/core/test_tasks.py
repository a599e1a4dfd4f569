"""Task ownership: named tasks, cleanup that outlives a cancellation, and calls cancelled one at a time."""

from __future__ import annotations

import asyncio

import pytest

from core.tasks import OwnedTasks, shielded, spawn
from tests.conftest import run


def test_a_spawned_task_is_named_and_returns_its_result() -> None:
    async def main() -> tuple[str, int]:
        async def work() -> int:
            return 7
        task = spawn(work(), "agent main")
        return task.get_name(), await task

    assert run(main()) == ("agent main", 7)


def test_shielded_cleanup_runs_to_its_end_and_the_cancellation_still_propagates() -> None:
    steps: list[str] = []

    async def main() -> None:
        entered, release = asyncio.Event(), asyncio.Event()

        async def cleanup() -> None:
            steps.append("cleanup started")
            entered.set()
            await release.wait()
            steps.append("cleanup finished")

        async def caller() -> None:
            await shielded(cleanup())
            steps.append("caller went on")  # must not happen: the caller was cancelled

        task = asyncio.create_task(caller())
        await entered.wait()
        task.cancel()
        await asyncio.sleep(0)
        assert not task.done()  # still waiting for the cleanup
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert steps == ["cleanup started", "cleanup finished"]


def test_cancelling_one_call_tells_the_agent_and_the_agent_goes_on() -> None:
    async def main() -> list[str]:
        owner = OwnedTasks()
        heard: list[str] = []
        started = asyncio.Event()

        async def slow_call() -> str:
            started.set()
            await asyncio.Event().wait()
            return "finished"

        async def fast_call() -> str:
            return "read 3 lines"

        async def agent() -> None:
            heard.append(await owner.call("c1", slow_call(), lambda: "cancelled by the user"))
            heard.append(await owner.call("c2", fast_call(), lambda: "cancelled by the user"))

        task = owner.launch(agent(), "agent main")
        await started.wait()
        assert owner.cancel("c1")
        await task
        assert not owner.cancel("c1")  # over: nothing left to cancel
        assert owner.agents == 0
        return heard

    assert run(main()) == ["cancelled by the user", "read 3 lines"]


def test_cancelling_the_agent_cancels_its_running_call_and_propagates() -> None:
    async def main() -> None:
        owner = OwnedTasks()
        started = asyncio.Event()
        call_saw: list[str] = []

        async def call() -> str:
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                call_saw.append("cancelled")
                raise
            return "finished"

        async def agent() -> str:
            return await owner.call("c1", call(), lambda: "cancelled by the user")

        task = owner.launch(agent(), "agent main")
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert call_saw == ["cancelled"]
        assert not owner.cancel("c1")

    run(main())


@pytest.mark.parametrize("ending", ["returns", "fails"])
def test_a_cancelled_agent_ends_cancelled_whatever_its_call_made_of_the_cancellation(ending: str) -> None:
    async def main() -> list[str]:
        owner = OwnedTasks()
        started = asyncio.Event()
        after: list[str] = []

        async def call() -> str:
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                if ending == "fails":
                    raise RuntimeError("recording the end failed") from None
                return "ended well all the same"  # a call that swallows its cancellation
            return "never"

        async def agent() -> None:
            await owner.call("c1", call(), lambda: "cancelled by the user")
            after.append("the agent went on")

        task = owner.launch(agent(), "agent main")
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return after

    assert run(main()) == []


def test_closing_lets_a_call_finish_within_the_grace_period_and_cancels_one_that_does_not() -> None:
    async def main() -> tuple[str, str, bool]:
        owner = OwnedTasks()
        recording, stuck_started = asyncio.Event(), asyncio.Event()
        release = asyncio.Event()

        async def finishing() -> str:
            recording.set()
            await release.wait()
            return "recorded"

        async def stuck() -> str:
            stuck_started.set()
            await asyncio.Event().wait()
            return "never"

        quick = asyncio.create_task(owner.call("c1", finishing(), lambda: "cancelled"))
        await recording.wait()
        closing = asyncio.create_task(owner.aclose(grace_s=30))
        await asyncio.sleep(0)
        release.set()  # the call ends well within its grace period
        await closing
        first = await quick

        agent = owner.launch(asyncio.Event().wait(), "agent idle")
        slow = asyncio.create_task(owner.call("c2", stuck(), lambda: "cancelled"))
        await stuck_started.wait()
        await owner.aclose(grace_s=0.01)
        return first, await slow, agent.cancelled()

    assert run(main()) == ("recorded", "cancelled", True)
