"""Group commit: the journal writes the event loop asks for, committed together on the journal's thread.

A call used to wait on each of its journal writes in turn (queued, decided,
started, finished), each its own transaction and its own round trip to the
journal's thread: most of what a call cost Belay.  Here the loop hands
writes over and the journal's thread, whenever it is free, takes every
write waiting and runs them as one transaction (`Journal.run_group`), so
one call's steps share a commit, and under load so do several calls'.

Two kinds of write:
- `commit`: the caller waits until the write (and everything handed over
  before it) is committed;
- `defer`: the caller goes on at once; the write is committed with the
  next group: when someone waits on a commit, when anything else is
  asked of the journal's thread (`kick`), or at the latest `DELAY_S`
  later.  Until the journal's thread takes it, a deferred write may be
  changed (`amend`): a call that ends within its group writes its run's
  row once, with its end, rather than three times.

What keeps it as safe as one commit per write:
- Order.  Writes are committed in the order they were handed over (one
  queue, one thread, groups in sequence), and whatever else the recorder
  runs on the journal's thread (a read, another write) is preceded by a
  drain: nothing overtakes a write handed over before it.  The few
  writes made from other threads (the change set a write tool records
  between its blobs and its files, an undo's rows) concern calls whose
  rows are committed already: a call's start is waited for before a tool
  that changes anything runs, and an undo concerns calls that ended.
- Announcements after the commit.  A write's `then` (its event on the
  bus) runs on the loop only once its group has committed, in order.
  A front end never shows what the journal would not show after a kill.
- Deferring only what may be lost.  A deferred write is not waited for,
  so a kill -9 may lose it (for at most `DELAY_S`, unless something
  waits sooner): it is used only where what follows needs no row yet.  A
  call's end is always waited for before the agent hears of it, and its
  start before a tool that may change anything runs (Belay's own, or an
  outside agent's, which hears the allow only then).  A call whose tool
  only reads may thus vanish from the journal if the console is killed
  while it runs; nothing it did can be lost, since it did nothing but
  read.
- Content before the row that refers to it.  Blobs are written (and
  fsynced) by their writers before they hand over the rows naming them,
  and durable rows (changes, decisions a person made) still commit with
  synchronous=FULL: a group holding one is fsynced whole.
- Failures stay with their write.  Should a write of a group fail, the
  group is rolled back and run again one write at a time
  (`Journal.run_group`): the failing one is undone alone and its error
  reaches whoever waits on it; a deferred write's error is kept under its
  key (the call) and raised by the next `commit` of that key, so a call
  never ends as if its row had been written.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass

from core.store.journal import Journal

log = logging.getLogger(__name__)

DELAY_S = 0.005
"""How long a deferred write may wait for company before its group is committed without a caller waiting."""


@dataclass(eq=False)
class DeferredWrite:
    """One write handed over: what `defer` returns, which `amend` may still change until the journal's thread
    takes it."""

    op: Callable[[], object] | None
    """A call of a journal write method; None: only `then`, in its place in the order (an announcement)."""
    key: str | None
    durable: bool
    then: Callable[[], object] | None
    done: asyncio.Future[None] | None = None
    """Set when the write is committed (or failed): only for `commit`."""
    taken: int = 0
    """The drains done when it was handed over: the next one takes it (`GroupWriter._drains`)."""


class GroupWriter:
    """Hands the loop's journal writes to the journal's (one) thread, which commits whatever waits as one group.

    Loop side: `defer`, `commit`, `announce`, `kick`; all of them must be called on the loop that made it.
    """

    def __init__(self, journal: Journal, executor: Executor, loop: asyncio.AbstractEventLoop,
                 delay_s: float = DELAY_S) -> None:
        self.journal, self._executor, self._loop, self.delay_s = journal, executor, loop, delay_s
        self._lock = threading.Lock()
        self._pending: list[DeferredWrite] = []
        """Handed over, not yet taken by the journal's thread (guarded by `_lock`)."""
        self._drain_queued = False
        """A drain is submitted and has not yet taken the pending writes (guarded by `_lock`)."""
        self._drains = 0
        """Drains that have taken the pending writes so far (guarded by `_lock`)."""
        self._unsettled = 0
        """Writes handed over whose group has not yet been settled on the loop (loop side only)."""
        self._timer: asyncio.TimerHandle | None = None
        self._failed: dict[str, BaseException] = {}
        """A deferred write's error, by key, until the next `commit` of that key raises it."""
        self.commits = 0
        """Transactions committed so far (counted on the journal's thread)."""

    @property
    def idle(self) -> bool:
        """Nothing handed over is waiting to be committed or announced."""
        return self._unsettled == 0

    def defer(self, key: str | None, op: Callable[[], object] | None, *, then: Callable[[], object] | None = None,
              durable: bool = False) -> DeferredWrite:
        """Hand `op` over without waiting; `then` runs on the loop once it is committed."""
        write = DeferredWrite(op, key, durable, then)
        self._hand_over(write)
        self._soon()
        return write

    def amend(self, write: DeferredWrite, op: Callable[[], object] | None, *, durable: bool = False) -> bool:
        """Have `op` (None: nothing) written in place of a deferred `write`, if the journal's thread has not
        taken it yet; True if so.  Its `then` is announced as before, in its place.

        How a call whose steps all wait in one group writes its run's row once: its queued row takes the end
        along (`Journal.add_call`), and its start is folded into it rather than updated in between."""
        with self._lock:
            if write.taken != self._drains:
                return False
            write.op, write.durable = op, durable
        return True

    async def commit(self, key: str | None, op: Callable[[], object] | None, *,
                     then: Callable[[], object] | None = None, durable: bool = False) -> None:
        """Hand `op` over and wait until it is committed, with everything handed over before it.

        Raises its error, or the error of a deferred write of the same `key` (journal before the caller's)."""
        write = DeferredWrite(op, key, durable, then, self._loop.create_future())
        self._hand_over(write)
        self.kick()
        assert write.done is not None
        try:
            await write.done  # cancelled, the caller goes; the write still commits and is announced in order
        finally:
            earlier = self._failed.pop(key, None) if key is not None else None
        if earlier is not None:
            raise earlier

    def announce(self, then: Callable[[], object]) -> None:
        """Run `then` (publish an event with no journal row) after every write handed over before it is
        announced: at once when none waits."""
        if self.idle:
            then()
            return
        self._hand_over(DeferredWrite(None, None, False, then))
        self._soon()

    def kick(self) -> None:
        """Make sure what is handed over is committed before anything submitted to the journal's thread after
        this (a read sees every write made before it).  An armed timer is left to run out (it then finds
        nothing, or what came since): arming and cancelling one per call costs more than it saves (on Qt's loop,
        a timer each)."""
        with self._lock:
            if self._drain_queued or not self._pending:
                return
            self._drain_queued = True
        self._executor.submit(self._drain)

    def close(self) -> None:
        """No more writes: the timer is stopped (what was handed over has been drained by then: see
        `Recorder.close`, whose last read follows a `kick`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _hand_over(self, write: DeferredWrite) -> None:
        self._unsettled += 1
        with self._lock:
            write.taken = self._drains
            self._pending.append(write)

    def _soon(self) -> None:
        if self._timer is None:
            self._timer = self._loop.call_later(self.delay_s, self._due)

    def _due(self) -> None:
        self._timer = None
        self.kick()

    # -- the journal's thread ------------------------------------------------------------------

    def _drain(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, []
            self._drain_queued = False
            self._drains += 1
        ops = [w.op for w in batch if w.op is not None]
        try:
            outcomes = iter(self.journal.run_group(ops, any(w.durable for w in batch)) if ops else [])
        except Exception as e:  # a bug: every write in the group hears of it rather than waiting forever
            log.exception("committing a group of %d journal writes failed", len(ops))
            errors: list[BaseException | None] = [e if w.op is not None else None for w in batch]
        else:
            if ops:
                self.commits += 1
            errors = [next(outcomes) if w.op is not None else None for w in batch]
        self._loop.call_soon_threadsafe(self._settle, batch, errors)

    # -- back on the loop ----------------------------------------------------------------------

    def _settle(self, batch: list[DeferredWrite], errors: list[BaseException | None]) -> None:
        self._unsettled -= len(batch)
        # The callers waiting on the group are woken before its events are published, so that each resumes
        # before any task those events wake (as when a caller published its event itself): an approval is
        # waited for before an auto-approver can answer it.
        for write, error in zip(batch, errors, strict=True):
            if write.done is not None and not write.done.cancelled():
                if error is None:
                    write.done.set_result(None)
                else:
                    write.done.set_exception(error)
            elif error is not None:
                log.warning("a deferred journal write failed: %s", error)
                if write.key is not None:
                    self._failed.setdefault(write.key, error)
        for write, error in zip(batch, errors, strict=True):
            if error is None and write.then is not None:
                try:
                    write.then()
                except Exception:  # an announcement must not keep the writes after it from being announced
                    log.exception("announcing a journal write failed")

    def __repr__(self) -> str:
        return f"<GroupWriter {self.journal.path} unsettled={self._unsettled} commits={self.commits}>"

