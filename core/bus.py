"""The in-process event bus: publishing never blocks, slow readers lag and resync.

`publish` is synchronous and cheap.  Every subscriber owns a bounded queue;
one that falls behind loses its backlog and receives a single `Lagged`
event instead, after which it rebuilds its state from a snapshot (see
`Console.attach`).  The publisher never waits for anyone.

A reader that has an event's effect elsewhere (the window reads the rows of
a call's events from the console's timeline, which the bus fed as they were
published) subscribes with those kinds `counted`: they wake it and count
toward its backlog, but it holds none of them.  Under a flood of calls that
is most events, never queued, never walked by the cycle collector, and freed
as soon as they are published.

Backpressure, for publishers that can wait: `await bus.room()` returns at
once while every subscriber has fewer than its `high_water` events waiting
(queued or counted), and otherwise when the readers have drained below it;
a reader that paces itself (the window rests between batches) ends its rest
when the mark is reached (`Subscription.filled`), so a held source never
waits on an idle reader.  A source of many calls that awaits it between
calls holds a flood at its source, a batch's worth at a time, instead of
overflowing a slow reader into a resync; today only bench/timeline.py's
producer does (the pipeline does not yet).  `publish` itself still never
waits.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable

from core.events import Event, Lagged

HIGH_WATER = 6_000
"""The default high-water mark: the most a window takes in one batch while a publisher waits for room, some 2,000
calls' rows, which it shows within the 50 ms a stall may take.  Under a flood a window shows some eight batches a
second (gui.window.workspace.bridge.FLOOD_PAUSE_S) and takes a batch early when the mark is reached: a publisher held
here waits for the window's work, never for its rest.  (When it waited through the rest as well, the mark was the
limit: bench/timeline.py's flood went through at 9,500-10,200 calls a second at 5,000, at 10,600-11,000 at 6,000.)"""


class Subscription:
    """One reader's bounded view of the stream."""

    def __init__(self, bus: EventBus, maxsize: int, counted: frozenset[type[Event]] = frozenset()) -> None:
        self._bus = bus
        self._maxsize = maxsize
        self.high_water = min(maxsize // 2, HIGH_WATER)
        """Waiting events above which `EventBus.room` makes its callers wait for this reader."""
        self._counted_kinds = counted
        self.counted = 0
        """Events of the `counted` kinds published since the last `drain`: they wake the reader, and are not kept."""
        self._queue: deque[Event] = deque()
        self._waiter: asyncio.Event = asyncio.Event()
        self._room: asyncio.Event = asyncio.Event()
        self._room.set()
        self._full: asyncio.Event = asyncio.Event()
        """Set while the high-water mark is reached: `room` holds its callers (the opposite of `_room`)."""
        self._missed = 0
        self.closed = False

    @property
    def waiting(self) -> int:
        """Events published since the last `drain`: those queued and those counted."""
        return len(self._queue) + self.counted

    def _offer(self, event: Event) -> None:
        if self.closed:
            return
        if type(event) in self._counted_kinds:
            self.counted = counted = self.counted + 1
            if counted == 1 and not self._queue:  # the first news since the reader looked: it may be waiting
                self._waiter.set()
            if counted + len(self._queue) >= self.high_water:
                self._fill()
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
        if queued + self.counted >= self.high_water:
            self._fill()

    def _fill(self) -> None:
        self._room.clear()
        self._full.set()

    def drain(self, limit: int = 1000) -> list[Event]:
        """Take up to `limit` queued events without waiting (and forget the count of the counted ones)."""
        self.counted = 0
        if self._missed:
            lagged = Lagged(missed=self._missed, seq=self._bus.last_seq)
            self._missed = 0
            return [lagged]
        batch = [self._queue.popleft() for _ in range(min(limit, len(self._queue)))]
        if not self._queue:
            self._waiter.clear()
        if len(self._queue) < self.high_water:
            self._room.set()
            self._full.clear()
        return batch

    async def wait(self) -> None:
        """Until an event was published since the last `drain` (queued or counted), or the subscription closed."""
        while not self.closed and not self.waiting and not self._missed:
            self._waiter.clear()
            await self._waiter.wait()

    async def filled(self) -> None:
        """Until the high-water mark is reached (a publisher awaiting `EventBus.room` is held: a reader that
        paces itself takes its batch now rather than keep it waiting), or the subscription closed."""
        await self._full.wait()

    async def next_batch(self, limit: int = 1000) -> list[Event]:
        """Wait until something is queued, then take up to `limit` events ([] once closed)."""
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
        self._full.set()

    def __repr__(self) -> str:
        return f"<Subscription queued={len(self._queue)} missed={self._missed} closed={self.closed}>"


class EventBus:
    """Fan-out of events to subscribers and synchronous listeners."""

    def __init__(self) -> None:
        self._subs: tuple[Subscription, ...] = ()
        """Replaced, never changed in place: `publish` walks it while a reader may close (no copy an event)."""
        self._listeners: list[Callable[[Event], object]] = []
        self._counter = itertools.count(1)
        self.last_seq = 0

    def subscribe(self, maxsize: int = 10_000, counted: frozenset[type[Event]] = frozenset()) -> Subscription:
        """A reader's queue of at most `maxsize` events; the `counted` kinds are counted, not queued."""
        sub = Subscription(self, maxsize, counted)
        self._subs = (*self._subs, sub)
        return sub

    def listen(self, callback: Callable[[Event], object]) -> None:
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
        for sub in self._subs:
            sub._offer(stamped)
        return stamped

    async def room(self) -> None:
        """Wait until every subscriber's queue is under its high-water mark (at once when it is)."""
        for sub in self._subs:
            while not sub._room.is_set() and not sub.closed:
                await sub._room.wait()

    def _remove(self, sub: Subscription) -> None:
        self._subs = tuple(kept for kept in self._subs if kept is not sub)

    def __repr__(self) -> str:
        return f"<EventBus seq={self.last_seq} subscribers={len(self._subs)}>"
