"""The in-process event bus: publishing never blocks, slow readers lag and resync.

`publish` is synchronous and cheap.  Every subscriber owns a bounded queue;
one that falls behind loses its backlog and receives a single `Lagged`
event instead, after which it rebuilds its state from a snapshot (see
`Console.attach`).  The publisher never waits for anyone.

Backpressure, for publishers that can wait: `await bus.room()` returns at
once while every subscriber's queue is under its `high_water` mark, and
otherwise when the readers have drained below it.  A source of many calls
that awaits it between calls holds a flood at its source, a batch's worth
at a time, instead of overflowing a slow reader into a resync; today only
bench/timeline.py's producer does (the pipeline does not yet).  `publish`
itself still never waits.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable

from core.events import Event, Lagged

HIGH_WATER = 6_000
"""The default high-water mark: about what a window shows in one batch under a flood.  A window shows some
eight batches a second then (gui.window.bridge.FLOOD_PAUSE_S), fewer when it is slow, and a publisher held at
the mark gets no more than that through: 10,000 calls a second are some 30,000 events, about 3,800 a batch.
At 5,000 the mark itself held bench/timeline.py's flood to 9,500-10,200 calls a second; 6,000 lets 10,600-11,000
through with the longest stall still under 50 ms (at 7,500, one batch's stall reached 50)."""


class Subscription:
    """One reader's bounded view of the stream."""

    def __init__(self, bus: EventBus, maxsize: int) -> None:
        self._bus = bus
        self._maxsize = maxsize
        self.high_water = min(maxsize // 2, HIGH_WATER)
        """Queued events above which `EventBus.room` makes its callers wait for this reader."""
        self._queue: deque[Event] = deque()
        self._waiter: asyncio.Event = asyncio.Event()
        self._room: asyncio.Event = asyncio.Event()
        self._room.set()
        self._missed = 0
        self.closed = False

    def _offer(self, event: Event) -> None:
        if self.closed:
            return
        if self._missed or len(self._queue) >= self._maxsize:
            self._missed += len(self._queue) + 1
            self._queue.clear()
            self._waiter.set()
            return
        queue = self._queue
        queue.append(event)
        queued = len(queue)
        if queued == 1:  # it was empty: the reader may be waiting (otherwise its waiter is set already)
            self._waiter.set()
        if queued >= self.high_water:
            self._room.clear()

    def drain(self, limit: int = 1000) -> list[Event]:
        """Take up to `limit` waiting events without waiting."""
        if self._missed:
            lagged = Lagged(missed=self._missed, seq=self._bus.last_seq)
            self._missed = 0
            return [lagged]
        batch = [self._queue.popleft() for _ in range(min(limit, len(self._queue)))]
        if not self._queue:
            self._waiter.clear()
        if len(self._queue) < self.high_water:
            self._room.set()
        return batch

    async def next_batch(self, limit: int = 1000) -> list[Event]:
        """Wait until something is there, then take up to `limit` events."""
        while not self.closed:
            batch = self.drain(limit)
            if batch:
                return batch
            await self._waiter.wait()
        return []

    def close(self) -> None:
        self.closed = True
        self._bus._remove(self)
        self._waiter.set()
        self._room.set()

    def __repr__(self) -> str:
        return f"<Subscription queued={len(self._queue)} missed={self._missed} closed={self.closed}>"


class EventBus:
    """Fan-out of events to subscribers and synchronous listeners."""

    def __init__(self) -> None:
        self._subs: list[Subscription] = []
        self._listeners: list[Callable[[Event], None]] = []
        self._counter = itertools.count(1)
        self.last_seq = 0

    def subscribe(self, maxsize: int = 10_000) -> Subscription:
        sub = Subscription(self, maxsize)
        self._subs.append(sub)
        return sub

    def listen(self, callback: Callable[[Event], None]) -> None:
        """Call `callback` synchronously for every event (core-internal read models only)."""
        self._listeners.append(callback)

    def publish(self, event: Event) -> Event:
        """Stamp `event` with the next sequence number and hand it to every listener and subscriber.

        A fresh event (seq 0: its publisher made it for this call, nobody else holds it) is stamped where it
        stands, which costs nothing; pydantic's copy was a tenth of a call's cost on the pipeline.  An event
        stamped already (published before, or replayed) is copied, so no reader's event ever changes."""
        self.last_seq = seq = next(self._counter)
        if event.seq == 0:
            event.__dict__["seq"] = seq  # frozen to its readers; its publisher gives up its reference
            stamped = event
        else:
            stamped = event.model_copy(update={"seq": seq})
        for listener in self._listeners:
            listener(stamped)
        for sub in list(self._subs):
            sub._offer(stamped)
        return stamped

    async def room(self) -> None:
        """Wait until every subscriber's queue is under its high-water mark (at once when it is)."""
        for sub in list(self._subs):
            while not sub._room.is_set() and not sub.closed:
                await sub._room.wait()

    def _remove(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    def __repr__(self) -> str:
        return f"<EventBus seq={self.last_seq} subscribers={len(self._subs)}>"
