"""Recorder: every fact is in the journal (as Journal reads it back) before its event is published."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.bus import EventBus, Subscription
from core.errors import ErrorInfo, ErrorKind
from core.events import ApprovalRequested, Event
from core.ids import new_agent_id, new_batch_id, new_call_id, new_session_id
from core.models.batches import PlanInfo
from core.models.conversation import Message, TokenUse, Usage
from core.models.records import AgentStatus, ChangeKind, Decision, FileChange, GitChange, RunStatus
from core.recorder import Recorder
from core.store.journal import Journal
from core.store.journal_reads import JournalReads
from tests.conftest import run

CHANGE = FileChange(path="a.py", kind=ChangeKind.MODIFY, before_hash="b" * 64, after_hash="a" * 64)
COMMIT = GitChange(ref="refs/heads/main", kind="commit", before="1" * 40, after="2" * 40, what="commit 2222222")


class Witness:
    """Looks at the journal through its own connection at the moment each event is published."""

    def __init__(self, path: Path) -> None:
        self.journal, self.db = Journal(path), sqlite3.connect(path)
        self.seen: list[tuple[str, Any]] = []

    def __call__(self, event: Event) -> None:
        self.seen.append((event.kind, self.view(event)))

    def view(self, event: Event) -> Any:
        j, fields = self.journal, event.model_dump()
        if event.kind == "session_started":
            return self.db.execute("SELECT workspace FROM sessions WHERE id=?", (fields["session_id"],)).fetchall()
        if event.kind in ("agent_started", "agent_linked", "agent_finished"):
            return [(a.name, a.status, a.spawned_by) for a in j.agents() if a.agent_id == fields["agent_id"]]
        if event.kind == "approval_resolved":
            return self.db.execute("SELECT decision, reason, decided_by FROM decisions WHERE call_id=?",
                                   (fields["call_id"],)).fetchall()
        if "call_id" in fields:
            return [(c.status, c.started_at is not None, c.output, c.changes, c.git_changes, c.cached)
                    for c in j.calls(fields["call_id"])]
        if event.kind in ("batch_started", "batch_finished"):
            return [(b.name, b.summary) for b in j.batches() if b.batch_id == fields["batch_id"]]
        if event.kind == "conversation_recorded":
            return [(m.kind, m.text) for m in j.conversation()[0]], len(j.conversation()[1])
        if event.kind == "external_changes_recorded":
            return [(x.note, x.changes) for x in j.externals() if x.op_id == fields["op_id"]]
        raise AssertionError(f"unexpected event {event.kind}")

    def close(self) -> None:
        self.db.close()
        self.journal.close()


@asynccontextmanager
async def recording(tmp_path: Path) -> AsyncIterator[tuple[Recorder, Subscription, Witness]]:
    path, bus = tmp_path / "journal.sqlite3", EventBus()
    recorder = await Recorder.open(path, bus, new_session_id(), tmp_path / "ws")
    witness = Witness(path)
    bus.listen(witness)
    subscription = bus.subscribe()
    try:
        yield recorder, subscription, witness
    finally:
        await recorder.close()
        witness.close()


def _kinds(subscription: Subscription) -> list[str]:
    return [event.kind for event in subscription.drain()]


def test_each_step_of_a_call_is_journaled_before_its_event_is_published(tmp_path: Path) -> None:
    agent, call = new_agent_id(), new_call_id()

    async def scenario() -> None:
        async with recording(tmp_path) as (rec, subscription, witness):
            await rec.session()
            await rec.agent_started(agent, "agent", "scripted", tools=["Write", "Read"])
            await rec.call_queued(call, agent, "Write", {"file_path": "/ws/a.py"}, "a.py")
            await rec.approval_requested(ApprovalRequested(call_id=call, agent_id=agent, tool="Write",
                                                           summary="a.py", reason="asks", args={}))
            await rec.approval_resolved(call, Decision.APPROVED, "looks right", "person")
            await rec.call_started(call)
            await rec.changes_captured(call, [CHANGE], [COMMIT])
            await rec.call_finished(call, RunStatus.DONE, "wrote a.py", None, 0.5, changes=(CHANGE,), git=(COMMIT,))
            await rec.agent_finished(agent, AgentStatus.DONE, "all done")
            assert _kinds(subscription) == [kind for kind, _ in witness.seen]
            assert witness.seen == [
                ("session_started", [(str(tmp_path / "ws"),)]),
                ("agent_started", [("agent", AgentStatus.RUNNING, None)]),
                ("call_queued", [(RunStatus.QUEUED, False, "", (), (), False)]),
                ("approval_requested", [(RunStatus.BLOCKED_ON_USER, False, "", (), (), False)]),
                ("approval_resolved", [("approved", "looks right", "person")]),
                ("call_started", [(RunStatus.RUNNING, True, "", (), (), False)]),
                ("call_finished", [(RunStatus.DONE, True, "wrote a.py", (CHANGE,), (COMMIT,), False)]),
                ("agent_finished", [("agent", AgentStatus.DONE, None)]),
            ]
            [record] = await rec.read(JournalReads.calls)
            assert record.args == {"file_path": "/ws/a.py"} and record.duration_s == 0.5

    run(scenario())


def test_the_session_is_recorded_once_and_its_end_on_close(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with recording(tmp_path) as (rec, subscription, _):
            await rec.session()
            await rec.session()
            assert _kinds(subscription) == ["session_started"]

    run(scenario())
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    try:
        rows = db.execute("SELECT ended_at FROM sessions").fetchall()
    finally:
        db.close()
    assert len(rows) == 1 and rows[0][0] is not None


def test_a_cached_answer_starts_in_the_window_but_the_journal_only_sees_its_end(tmp_path: Path) -> None:
    agent, call = new_agent_id(), new_call_id()

    async def scenario() -> None:
        async with recording(tmp_path) as (rec, subscription, witness):
            await rec.session()
            await rec.agent_started(agent, "agent", "scripted")
            await rec.call_queued(call, agent, "Read", {"file_path": "/ws/a.py"}, "a.py")
            rec.answered_from_cache(call)
            assert witness.seen[-1] == ("call_started", [(RunStatus.QUEUED, False, "", (), (), False)])
            await rec.call_finished(call, RunStatus.DONE, "1\ta = 1", None, 0.0, cached=True)
            assert witness.seen[-1] == ("call_finished", [(RunStatus.DONE, False, "1\ta = 1", (), (), True)])
            assert _kinds(subscription)[-2:] == ["call_started", "call_finished"]

    run(scenario())


def test_the_full_output_is_kept_only_when_the_agent_was_shown_less(tmp_path: Path) -> None:
    agent, shortened, whole, plain = new_agent_id(), new_call_id(), new_call_id(), new_call_id()
    error = ErrorInfo(kind=ErrorKind.SYSTEM, message="exit status 1")

    async def scenario() -> None:
        async with recording(tmp_path) as (rec, _, _):
            await rec.session()
            await rec.agent_started(agent, "agent", "scripted")
            for call in (shortened, whole, plain):
                await rec.call_queued(call, agent, "Bash", {"command": "make"}, "make")
            await rec.call_finished(shortened, RunStatus.FAILED, "line 1\n[cut]", error, 2.0,
                                    full_output="line 1\nline 2\n")
            await rec.call_finished(whole, RunStatus.DONE, "short", None, 0.1, full_output="short")
            await rec.call_finished(plain, RunStatus.DONE, "short", None, 0.1)
            assert await rec.read(JournalReads.full_output, shortened) == "line 1\nline 2\n"
            assert await rec.read(JournalReads.full_output, whole) is None
            assert await rec.read(JournalReads.full_output, plain) is None
            assert (await rec.read(JournalReads.calls, shortened))[0].error == error

    run(scenario())


def test_batches_links_and_outside_changes_are_journaled_before_they_are_announced(tmp_path: Path) -> None:
    agent, child, task = new_agent_id(), new_agent_id(), new_call_id()
    batch = new_batch_id()
    plan = PlanInfo(levels=(("read",), ("edit",)), critical_path=("read", "edit"), max_parallelism=1)

    async def scenario() -> None:
        async with recording(tmp_path) as (rec, subscription, witness):
            await rec.session()
            await rec.agent_started(agent, "agent", "batch")
            await rec.batch_started(batch, agent, "tidy", plan, size=2)
            await rec.call_queued(task, agent, "Task", {}, "spawn", batch=(batch, "read"))
            await rec.agent_started(child, "helper", "subagent", parent_id=agent)
            await rec.agent_linked(child, task)
            await rec.batch_finished(batch, succeeded=1, failed=0, skipped=1, cache_hits=0, duration_s=1.5,
                                     max_running=1)
            await rec.external_changes([CHANGE], "before call x")
            summary = {"succeeded": 1, "failed": 0, "skipped": 1, "cache_hits": 0, "duration_s": 1.5,
                       "max_running": 1}
            assert witness.seen[2:] == [
                ("batch_started", [("tidy", None)]),
                ("call_queued", [(RunStatus.QUEUED, False, "", (), (), False)]),
                ("agent_started", [("helper", AgentStatus.RUNNING, None)]),
                ("agent_linked", [("helper", AgentStatus.RUNNING, task)]),
                ("batch_finished", [("tidy", summary)]),
                ("external_changes_recorded", [("before call x", (CHANGE,))]),
            ]
            queued = [e.model_dump() for e in subscription.drain() if e.kind == "call_queued"]
            assert [(e["batch_id"], e["batch_key"]) for e in queued] == [(batch, "read")]
            [record] = await rec.read(JournalReads.calls, task)
            assert (record.batch_id, record.batch_key) == (batch, "read")
            assert await rec.runs_interrupted() == [task]  # what a crashed console would have left

    run(scenario())


def test_a_read_that_ends_within_its_group_writes_its_run_once_and_reads_back_whole(tmp_path: Path) -> None:
    """The hot path of a tool that only reads: queued, allowed and started without waiting, then its end."""
    agent, folded, half, plain = new_agent_id(), new_call_id(), new_call_id(), new_call_id()

    async def steps(rec: Recorder, call: str, *, taken_after: str | None = None) -> int:
        """The call's rows the journal wrote: `taken_after` a step, the journal's thread takes what waits."""
        db = rec._journal._db  # noqa: SLF001 - counts the rows the journal's connection writes
        before = await rec.read(lambda _journal: db.total_changes)
        await rec.call_queued(call, agent, "Read", {"file_path": "/ws/a.py"}, "a.py", wait=False)
        if taken_after == "queued":
            await rec.read(lambda _journal: None)
        await rec.approval_resolved(call, Decision.APPROVED, "only reads", "policy", durable=False, wait=False)
        await rec.call_started(call, wait=False)
        if taken_after == "started":
            await rec.read(lambda _journal: None)
        await rec.call_finished(call, RunStatus.DONE, "1\ta = 1", None, 0.25)
        return await rec.read(lambda _journal: db.total_changes) - before

    async def scenario() -> None:
        async with recording(tmp_path) as (rec, subscription, witness):
            await rec.session()
            await rec.agent_started(agent, "agent", "scripted")
            _kinds(subscription)
            written = {folded: await steps(rec, folded)}
            seen_folded = witness.seen[-4:]
            written |= {call: await steps(rec, call, taken_after=after) for call, after in ((half, "queued"),
                                                                                          (plain, "started"))}
            # a row each in calls, runs, decisions and seals, the run's row written once; a seal more for each
            # further group, and the run's row once more for its end (its start folded in) or twice
            assert written == {folded: 4, half: 6, plain: 7}
            assert _kinds(subscription) == ["call_queued", "approval_resolved", "call_started", "call_finished"] * 3
            # every event of the folded call went out once its whole row was committed
            assert [view for kind, view in seen_folded if kind != "approval_resolved"] == \
                [[(RunStatus.DONE, True, "1\ta = 1", (), (), False)]] * 3
            for call in (folded, half, plain):
                [record] = await rec.read(JournalReads.calls, call)
                assert (record.status, record.output, record.duration_s) == (RunStatus.DONE, "1\ta = 1", 0.25)
                assert record.started_at is not None and record.ended_at is not None
                assert record.decision is not None and record.decision.decision == Decision.APPROVED

    run(scenario())


def test_the_journal_is_the_recorders_own_read_through_it_and_written_off_the_loop_by_one_named_way(
        tmp_path: Path) -> None:
    agent, call = new_agent_id(), new_call_id()

    def change_set(rec: Recorder) -> None:  # as a write tool records its change set, between blobs and files
        rec.write_from_worker(Journal.add_changes, call, [CHANGE])

    async def scenario() -> None:
        import asyncio

        import pytest
        async with recording(tmp_path) as (rec, subscription, witness):
            assert not hasattr(rec, "journal")  # no way around the recorder
            await rec.session()
            await rec.agent_started(agent, "agent", "scripted")
            await rec.call_queued(call, agent, "Write", {"file_path": "/ws/a.py"}, "a.py")
            await rec.call_started(call)
            with pytest.raises(RuntimeError, match="worker thread"):  # it blocks: never on the loop
                change_set(rec)
            await asyncio.to_thread(change_set, rec)
            [record] = await rec.read(JournalReads.calls, call)
            assert record.changes == (CHANGE,)
            assert await rec.read(lambda journal, wanted: journal.call_tool(wanted), call) == "Write"

    run(scenario())


def test_what_an_agent_said_is_journaled_before_it_is_announced_and_heard_for_the_card(tmp_path: Path) -> None:
    agent = new_agent_id()
    at = datetime(2026, 12, 8, tzinfo=timezone.utc)
    words = [Message(message_id="m1", agent_id=agent, kind="prompt", text="fix it", at=at),
             Message(message_id="m2", agent_id=agent, kind="text", text="Editing a.py.", at=at)]
    used = [TokenUse(response_id="r1", agent_id=agent, at=at, model="m", usage=Usage(input=3, output=4))]

    async def scenario() -> None:
        async with recording(tmp_path) as (rec, subscription, witness):
            await rec.session()
            await rec.agent_started(agent, "claude-code 1234", "claude-code")
            await rec.conversation(agent, words, used)
            await rec.conversation(agent, words, used)  # read again (a rotated file): kept once
            await rec.conversation(agent, [], [], skipped=2, note="skipped: 2 × damaged line")
            assert witness.seen[2:] == [("conversation_recorded", ([("prompt", "fix it"), ("text", "Editing a.py.")], 1))] * 3
            *_, last = subscription.drain()
            assert last.kind == "conversation_recorded" and last.skipped == 2 and last.messages == ()
            intent = rec.said.intent(agent)
            assert intent is not None and (intent.said, intent.prompt) == ("Editing a.py.", "fix it")

    run(scenario())
