"""The event bus: sequence numbers, batches, and lagging instead of blocking."""

from __future__ import annotations

from core.bus import EventBus
from core.events import EVENT_ADAPTER, CallStarted, Lagged
from tests.conftest import run


def test_publish_stamps_increasing_sequence_numbers() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    first = bus.publish(CallStarted(call_id="c1"))
    second = bus.publish(CallStarted(call_id="c2"))
    assert (first.seq, second.seq) == (1, 2)
    assert [e.seq for e in sub.drain()] == [1, 2]


def test_a_slow_subscriber_gets_one_lagged_event_and_the_publisher_never_waits() -> None:
    bus = EventBus()
    slow = bus.subscribe(maxsize=10)
    fast = bus.subscribe(maxsize=1000)
    for i in range(500):
        bus.publish(CallStarted(call_id=f"c{i}"))
    batch = slow.drain()
    assert len(batch) == 1 and isinstance(batch[0], Lagged)
    assert batch[0].missed == 500
    assert len(fast.drain(limit=1000)) == 500
    bus.publish(CallStarted(call_id="after"))
    assert [e.call_id for e in slow.drain()] == ["after"]  # type: ignore[union-attr]


def test_next_batch_wakes_on_publish_and_ends_when_closed() -> None:
    async def scenario() -> list[str]:
        import asyncio
        bus = EventBus()
        sub = bus.subscribe()
        waiter = asyncio.ensure_future(sub.next_batch())
        await asyncio.sleep(0)
        bus.publish(CallStarted(call_id="x"))
        got = await waiter
        sub.close()
        assert await sub.next_batch() == []
        return [e.call_id for e in got]  # type: ignore[union-attr]

    assert run(scenario()) == ["x"]


def test_an_event_published_again_is_copied_so_what_a_reader_holds_never_changes() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    first = bus.publish(CallStarted(call_id="c1"))
    again = bus.publish(first)
    assert (first.seq, again.seq) == (1, 2)
    assert [e.seq for e in sub.drain()] == [1, 2]


def test_events_round_trip_through_the_union_adapter() -> None:
    event = CallStarted(call_id="c9", seq=4)
    again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event))
    assert again == event and again.kind == "call_started"


def test_a_publisher_that_awaits_room_is_held_at_the_high_water_mark_and_the_reader_never_lags() -> None:
    import asyncio

    async def scenario() -> tuple[int, list[int]]:
        bus = EventBus()
        reader = bus.subscribe(maxsize=1000)
        reader.high_water = 100
        waits = 0

        async def flood() -> None:
            nonlocal waits
            for i in range(2000):
                if reader.high_water <= len(reader._queue):
                    waits += 1
                await bus.room()
                bus.publish(CallStarted(call_id=f"c{i}"))

        source = asyncio.ensure_future(flood())
        batches: list[int] = []
        while sum(batches) < 2000:
            batch = await asyncio.wait_for(reader.next_batch(limit=10_000), timeout=5)
            assert not any(isinstance(e, Lagged) for e in batch)
            batches.append(len(batch))
            await asyncio.sleep(0.001)  # a slow reader
        await asyncio.wait_for(source, timeout=5)
        return waits, batches

    waits, batches = run(scenario())
    assert waits > 0 and max(batches) <= 101 and sum(batches) == 2000  # held at 100 queued, nothing lost
    bus = EventBus()
    bus.subscribe(maxsize=10)  # a reader that never reads does not hold up a publisher that never waits
    for i in range(50):
        bus.publish(CallStarted(call_id=f"c{i}"))


def test_counted_kinds_wake_the_reader_and_hold_a_publisher_but_are_never_kept() -> None:
    """The window takes a call's events from the timeline: they wake it and count toward its backlog, queued
    nowhere (a flood is mostly these), while the kinds it tells are queued as ever."""
    import asyncio
    import gc
    import weakref

    from core.events import CallFinished, CallOutput, CallQueued

    async def scenario() -> None:
        bus = EventBus()
        reader = bus.subscribe(maxsize=1000, counted=frozenset({CallQueued, CallStarted}))
        reader.high_water = 100
        woken = asyncio.ensure_future(reader.wait())
        await asyncio.sleep(0)
        assert not woken.done()
        started = CallStarted(call_id="c1")
        held = weakref.ref(started)
        bus.publish(started)
        del started
        await asyncio.wait_for(woken, timeout=1)  # a counted event wakes the reader
        gc.collect()
        assert held() is None  # and nobody keeps it
        bus.publish(CallOutput(call_id="c1", text="hi"))
        assert reader.waiting == 2
        assert [type(e) for e in reader.drain()] == [CallOutput]  # only what is told is queued
        assert reader.waiting == 0
        for i in range(99):
            bus.publish(CallQueued(call_id=f"q{i}", agent_id="a", tool="Read", args={}, summary="f"))
        held_up = asyncio.ensure_future(bus.room())
        await asyncio.sleep(0.01)
        assert held_up.done()  # 99 waiting: under the mark
        bus.publish(CallStarted(call_id="q0"))
        held_up = asyncio.ensure_future(bus.room())
        await asyncio.sleep(0.01)
        assert not held_up.done()  # 100 waiting, none of them queued: a publisher that awaits room waits
        reader.drain()
        await asyncio.wait_for(held_up, timeout=1)
        bus.publish(CallFinished(call_id="q0", status="done"))  # not counted: queued as ever
        assert [type(e) for e in reader.drain()] == [CallFinished]
        reader.close()
        await asyncio.wait_for(reader.wait(), timeout=1)  # a closed reader is not kept waiting

    run(scenario())
