"""The one place the journal and the bus are kept in step: write the fact, then announce it.

Every fact that must outlive the process (a session, an agent and how it
ended, each step of a call, what a call changed, a person's decision, a
batch, changes found outside Belay, an undo) is written to the journal on
the journal's own thread and only then published as an event, here and
nowhere else.  So a front end never shows what the journal would not show
after a restart.  Facts that matter only while the console runs (live
output, heartbeats, retries) are announced here without a journal row;
background shells, the policy in force and MCP server states are announced
on the bus by the part that owns them.

The journal is the recorder's own.  Others read it with `read` (a read of
`JournalReads`, run on the journal's thread), and write it only through
the recorder: here, or, for the three writes that must land on a worker
thread between blocking steps that cannot be split, through
`write_from_worker`.  Those three are the change set a write tool records
after storing blobs and before writing files (`core.run.pipeline` through
`core.run.apply`), the pending undo recorded before an undo writes and its
failure if writing fails (`core.undo.service`), and an undo a crash cut
short, finished when the console opens (`core.undo.recovery`).  The events
that follow them come through here.

A call's own steps are grouped (core.store.group_commit): its queued row,
a verdict given without asking and, for a tool that only reads, its start
are handed to the journal's thread without waiting (`wait=False`) and
committed with the next step that waits (the call's start before a tool
that changes anything runs, its end before the agent hears of it), so a
call costs one commit, and under load several calls share one.  Where
the call ends before its group is taken (a tool that only reads, done
quickly), its run's row is written once: the end rides on its queued row
and its start is folded in (`GroupWriter.amend`).  Their events are still
published only once their rows are committed, in order; so are the events
without rows (output, progress) that follow them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from core.bus import EventBus
from core.errors import ErrorInfo
from core.events import (
    AgentFinished,
    AgentLinked,
    AgentStarted,
    ApprovalRequested,
    ApprovalResolved,
    BatchFinished,
    BatchStarted,
    CallFinished,
    CallOutput,
    CallProgress,
    CallQueued,
    CallRetrying,
    CallStarted,
    ConversationRecorded,
    DecidedBy,
    DecidedVia,
    Event,
    ExternalChangesRecorded,
    RollbackFinished,
    RollbackRefused,
    SessionStarted,
)
from core.ids import AgentId, BatchId, CallId, SessionId, new_external_id
from core.models.batches import PlanInfo
from core.models.conversation import Message, TokenUse
from core.models.records import AgentStatus, Decision, FileChange, GitChange, RunStatus
from core.store.group_commit import DeferredWrite, GroupWriter
from core.store.journal import Journal, RunEnd
from core.store.journal_reads import JournalReads
from core.transcripts.said import LastWords

P = ParamSpec("P")
T = TypeVar("T")


class Recorder:
    """The journal of one workspace (on its own thread) and the bus of one console, kept in step."""

    def __init__(self, journal: Journal, bus: EventBus, executor: ThreadPoolExecutor, session_id: SessionId,
                 workspace: Path) -> None:
        self._journal, self.bus = journal, bus
        self.session_id, self.workspace = session_id, workspace
        self._executor = executor
        self._session_open = False
        self.writer = GroupWriter(journal, executor, asyncio.get_running_loop())
        """The call steps' writes, committed in groups on the journal's thread."""
        self._unwritten: dict[CallId, tuple[DeferredWrite, partial[None]]] = {}
        """A call's queued row handed over without waiting (its write and what it writes), until the call ends."""
        self._unstarted: dict[CallId, DeferredWrite] = {}
        """A call's start handed over without waiting, until the call ends."""
        self.said = LastWords()
        """Each agent's latest words and prompt, as recorded: what an approval card shows of its intent."""

    @classmethod
    async def open(cls, path: Path, bus: EventBus, session_id: SessionId, workspace: Path) -> Recorder:
        """Open (or create) the journal at `path` on a thread of its own."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="belay-journal")
        try:
            journal = await asyncio.get_running_loop().run_in_executor(executor, Journal, path)
        except BaseException:
            executor.shutdown(wait=False)  # no journal (a state dir that cannot be made): no thread left waiting
            raise
        return cls(journal, bus, executor, session_id, workspace)

    async def read(self, fn: Callable[Concatenate[JournalReads, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(journal, *args)` on the journal's thread, after every write handed to the group writer before it:
        a read of the journal (`JournalReads.calls`, or a function of its reads that makes several in one hop)."""
        return await self._on_thread(partial(fn, self._journal, *args, **kwargs))

    def write_from_worker(self, fn: Callable[Concatenate[Journal, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Blocking, on a worker thread, never the loop's: `fn(journal, *args)`, a journal write that must land
        between two blocking steps that cannot be split (see the module's docstring).  The journal's lock orders
        it with the journal's own thread; its event, if any, is published afterwards through the recorder."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return fn(self._journal, *args, **kwargs)
        raise RuntimeError("write_from_worker blocks: call it from a worker thread, not the event loop's")

    async def _on_thread(self, op: Callable[[], T]) -> T:
        """One journal operation on the journal's thread, after the writes handed to the group writer before it."""
        self.writer.kick()
        return await asyncio.get_running_loop().run_in_executor(self._executor, op)

    async def close(self) -> None:
        """Record the session's end (if it began), close the journal, end its thread."""
        try:
            if self._session_open:
                await self._on_thread(partial(self._journal.end_session, self.session_id))
            await self._on_thread(self._journal.close)
        finally:
            self.writer.close()
            self._executor.shutdown(wait=True)

    # -- the session and its agents ---------------------------------------------------------

    async def session(self) -> None:
        """Record this session the first time anything happens in it."""
        if self._session_open:
            return
        self._session_open = True
        await self._on_thread(partial(self._journal.start_session, self.session_id, str(self.workspace)))
        self.bus.publish(SessionStarted(session_id=self.session_id, workspace=str(self.workspace)))

    async def agent_started(self, agent_id: AgentId, name: str, kind: str, *, parent_id: AgentId | None = None,
                            spawned_by: CallId | None = None, tools: Collection[str] | None = None) -> None:
        await self._on_thread(partial(self._journal.add_agent, agent_id, self.session_id, name, kind, parent_id,
                                      spawned_by, sorted(tools) if tools else None))
        self.bus.publish(AgentStarted(agent_id=agent_id, session_id=self.session_id, name=name, agent_kind=kind,
                                      parent_id=parent_id, spawned_by=spawned_by,
                                      tools=tuple(sorted(tools)) if tools else None))

    async def agent_linked(self, agent_id: AgentId, spawned_by: CallId) -> None:
        """A sub-agent's spawning call became known after it started."""
        await self._on_thread(partial(self._journal.link_agent, agent_id, spawned_by))
        self.bus.publish(AgentLinked(agent_id=agent_id, spawned_by=spawned_by))

    async def agent_finished(self, agent_id: AgentId, status: AgentStatus, message: str = "") -> None:
        await self._on_thread(partial(self._journal.finish_agent, agent_id, status))
        self.bus.publish(AgentFinished(agent_id=agent_id, status=status, message=message))

    # -- one call ------------------------------------------------------------------------------

    async def call_queued(self, call_id: CallId, agent_id: AgentId, tool: str, args: dict[str, Any], summary: str,
                          batch: tuple[BatchId, str] | None = None, *, wait: bool = True,
                          use_id: str | None = None) -> None:
        """A call exists: journaled with its arguments before anything is decided about it.  `wait=False`:
        committed with the call's next step that waits (see the module's docstring).  `use_id`: the outside
        agent's own id for it."""
        event = partial(CallQueued, call_id=call_id, agent_id=agent_id, tool=tool, args=args, summary=summary,
                        batch_id=batch[0] if batch else None, batch_key=batch[1] if batch else None, use_id=use_id)
        op = partial(self._journal.add_call, call_id, self.session_id, agent_id, tool, args, summary, batch,
                     use_id=use_id)
        write = await self._write(call_id, op, event, wait=wait)
        if write is not None:
            self._unwritten[call_id] = (write, op)

    async def approval_requested(self, request: ApprovalRequested) -> None:
        """The call waits for a person."""
        await self._write(request.call_id, partial(self._journal.set_status, request.call_id,
                                                   RunStatus.BLOCKED_ON_USER), lambda: request)

    async def approval_resolved(self, call_id: CallId, decision: Decision, reason: str, by: DecidedBy,
                                rule: str | None = None, *, via: DecidedVia | None = None, durable: bool = True,
                                wait: bool = True) -> None:
        """Who decided whether a call runs (a person, an auto-approver, a rule, the mode, the policy, a
        timeout, Belay itself) and how, journaled first.  An answer is made durable; a verdict given without
        asking need not be (`durable` False): the policy would give it again."""
        await self._write(call_id, partial(self._journal.add_decision, call_id, decision.value, reason, by, rule,
                                           via=via, durable=durable),
                          partial(ApprovalResolved, call_id=call_id, decision=decision, reason=reason, by=by,
                                  rule=rule, via=via),
                          wait=wait, durable=durable)

    async def call_started(self, call_id: CallId, *, wait: bool = True) -> None:
        """The call runs now.  `wait=False` for a tool that only reads: its start need not be committed first."""
        write = await self._write(call_id, partial(self._journal.set_status, call_id, RunStatus.RUNNING),
                                  partial(CallStarted, call_id=call_id), wait=wait)
        if write is not None:
            self._unstarted[call_id] = write

    def answered_from_cache(self, call_id: CallId) -> None:
        """A cached result stands in for the run: the window sees it start, the journal only its end."""
        self.writer.announce(partial(self.bus.publish, CallStarted(call_id=call_id)))

    def output(self, call_id: CallId, text: str) -> None:
        self.writer.announce(partial(self.bus.publish, CallOutput(call_id=call_id, text=text)))

    def progress(self, call_id: CallId, elapsed_s: float) -> None:
        self.writer.announce(partial(self.bus.publish, CallProgress(call_id=call_id, elapsed_s=elapsed_s)))

    def retrying(self, call_id: CallId, attempt: int, delay_s: float, error: ErrorInfo) -> None:
        self.writer.announce(partial(self.bus.publish, CallRetrying(call_id=call_id, attempt=attempt,
                                                                    delay_s=delay_s, error=error)))

    async def _write(self, call_id: CallId, op: Callable[[], object] | None, event: Callable[[], Event], *,
                     wait: bool = True, durable: bool = False) -> DeferredWrite | None:
        """Journal one step of a call, then publish its event: waiting for the commit, or not (`wait`: the write
        handed over is returned).  The event is made when it is published, after the commit: a call the agent
        waits for is answered without it."""
        then = partial(self._publish, event)
        if wait:
            await self.writer.commit(call_id, op, then=then, durable=durable)
            return None
        return self.writer.defer(call_id, op, then=then, durable=durable)

    def _publish(self, event: Callable[[], Event]) -> None:
        self.bus.publish(event())

    async def changes_captured(self, call_id: CallId, changes: Sequence[FileChange],
                               git: Sequence[GitChange] = ()) -> None:
        """What a call changed, journaled as soon as it is known (its event is the call's end)."""
        if changes:
            await self.writer.commit(call_id, partial(self._journal.add_changes, call_id, changes), durable=True)
        if git:
            await self.writer.commit(call_id, partial(self._journal.add_git_changes, call_id, git), durable=True)

    async def call_finished(self, call_id: CallId, status: RunStatus, output: str, error: ErrorInfo | None,
                            duration_s: float, *, changes: tuple[FileChange, ...] = (),
                            git: tuple[GitChange, ...] = (), cached: bool = False, attempts: int = 1,
                            full_output: str | None = None) -> None:
        """How a call ended.  `full_output` is the whole output when the agent was shown less."""
        # A run that changed nothing is committed without an fsync: a power cut may lose its ending
        # (it then reads as interrupted), never a change or a decision, which are fsynced.
        durable = bool(changes or git)
        event = partial(CallFinished, call_id=call_id, status=status, output=output, error=error, changes=changes,
                        git_changes=git, duration_s=duration_s, cached=cached, attempts=attempts)
        # A call whose earlier steps still wait for the journal's thread (a tool that only reads, done within a
        # group) has its run's row written once: its start folded into its end, its end into its queued row.
        unstarted = self._unstarted.pop(call_id, None)
        started = unstarted is not None and self.writer.amend(unstarted, None)
        end = RunEnd(status, output, error, duration_s, cached, attempts, started)
        unwritten = self._unwritten.pop(call_id, None)
        folded = unwritten is not None and self.writer.amend(unwritten[0], partial(unwritten[1], ended=end),
                                                              durable=durable)
        if full_output and full_output != output:  # (after the call's row, which it refers to)
            self.writer.defer(call_id, partial(self._journal.add_full_output, call_id, full_output))
        if folded:
            await self._write(call_id, None, event, durable=durable)
        else:
            await self._write(call_id, partial(self._journal.finish_run, call_id, status, output, error, duration_s,
                                               cached, attempts, durable, started=started), event, durable=durable)

    # -- batches -------------------------------------------------------------------------------

    async def batch_started(self, batch_id: BatchId, agent_id: AgentId, name: str, plan: PlanInfo, size: int) -> None:
        await self._on_thread(partial(self._journal.add_batch, batch_id, self.session_id, agent_id, name, plan))
        self.bus.publish(BatchStarted(batch_id=batch_id, agent_id=agent_id, name=name, plan=plan, size=size))

    async def batch_finished(self, batch_id: BatchId, *, succeeded: int, failed: int, skipped: int, cache_hits: int,
                             duration_s: float, max_running: int) -> None:
        summary = {"succeeded": succeeded, "failed": failed, "skipped": skipped, "cache_hits": cache_hits,
                   "duration_s": duration_s, "max_running": max_running}
        await self._on_thread(partial(self._journal.finish_batch, batch_id, summary))
        self.bus.publish(BatchFinished(batch_id=batch_id, succeeded=succeeded, failed=failed, skipped=skipped,
                                       cache_hits=cache_hits, duration_s=duration_s, max_running=max_running))

    # -- what agents said ----------------------------------------------------------------------

    async def conversation(self, agent_id: AgentId, messages: Sequence[Message], tokens: Sequence[TokenUse],
                           skipped: int = 0, note: str = "") -> None:
        """What an agent's transcript said since it was last read: journaled, heard for the approval card
        (`said`), then announced.  A read that found only what could not be read is announced alone."""
        if messages or tokens:
            await self._on_thread(partial(self._journal.add_conversation, self.session_id, messages, tokens))
            self.said.heard(messages)
        if messages or tokens or skipped:
            self.bus.publish(ConversationRecorded(agent_id=agent_id, messages=tuple(messages), tokens=tuple(tokens),
                                                  skipped=skipped, note=note))

    # -- changes nobody in Belay made, and what opening after a crash repairs ------------------

    async def external_changes(self, changes: Sequence[FileChange], note: str) -> None:
        """Changes found on disk that no call made; shown, never attributed to an agent."""
        op_id = new_external_id()
        await self._on_thread(partial(self._journal.add_external, op_id, self.session_id, changes, note))
        self.bus.publish(ExternalChangesRecorded(op_id=op_id, note=note, changes=tuple(changes)))

    async def runs_interrupted(self) -> list[CallId]:
        """Opening after a crash: runs a dead console left unfinished are marked so (before the timeline loads)."""
        return [CallId(c) for c in await self._on_thread(self._journal.mark_interrupted)]

    async def changes_recovered(self, call_id: CallId, changes: Sequence[FileChange]) -> None:
        """Opening after a crash: what an interrupted command changed, given to it (before the timeline loads)."""
        await self._on_thread(partial(self._journal.add_changes, call_id, changes))

    # -- undo ----------------------------------------------------------------------------------

    async def rollback_done(self, rollback_id: str) -> None:
        """An undo recorded as pending (core.undo.service) has written all its files."""
        await self._on_thread(partial(self._journal.finish_rollback, rollback_id, "done"))

    def rollback_finished(self, event: RollbackFinished) -> None:
        """Announced once the undo is done and the call's undo state reread from the journal."""
        self.bus.publish(event)

    def rollback_refused(self, call_id: CallId, message: str, conflicts: Sequence[str] = ()) -> None:
        """An undo that wrote nothing (conflicts, nothing left to undo): nothing to journal."""
        self.bus.publish(RollbackRefused(call_id=call_id, message=message, conflicts=tuple(conflicts)))

    def __repr__(self) -> str:
        return f"<Recorder {self._journal.path} session={self.session_id} open={self._session_open}>"

