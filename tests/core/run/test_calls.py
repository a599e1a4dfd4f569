"""The steps every call takes (open, decide, permit, capture, finish) over a real journal, policy and broker."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.bus import EventBus, Subscription
from core.errors import ErrorKind
from core.events import ApprovalRequested, ApprovalResolved, CallFinished, CallQueued, Event
from core.ids import new_agent_id, new_call_id, new_session_id
from core.models.records import ChangeKind, Decision, FileChange, RunStatus
from core.paths import Workspace
from core.policy.engine import PolicyEngine
from core.policy.verdicts import PolicyRequest, Verdict
from core.recorder import Recorder
from core.run.approvals import Answer, ApprovalBroker
from core.run.calls import MAX_OUTPUT_CHARS, AgentHandle, Allowed, Calls, OpenCall, Permission, Refused
from core.store.journal_reads import JournalReads
from core.tools.base import Annotations, FileWrite, WritePlan
from tests.conftest import run


@dataclass
class Rig:
    """One console's worth of the shared steps, without the console."""

    calls: Calls
    agent: AgentHandle
    events: Subscription
    recorder: Recorder
    kept_rules: list[tuple[str, str]] = field(default_factory=list)

    def seen(self) -> list[Event]:
        return self.events.drain()

    async def open(self, tool: str = "Write", args: dict[str, object] | None = None) -> OpenCall:
        return await self.calls.open(new_call_id(), self.agent, tool, args or {"file_path": "notes.txt"}, "notes.txt")


@asynccontextmanager
async def rig(workspace: Path, state_dir: Path, *, approver: bool = True) -> AsyncIterator[Rig]:
    bus = EventBus()
    session = new_session_id()
    recorder = await Recorder.open(state_dir / "journal.sqlite3", bus, session, workspace)
    try:
        await recorder.session()
        agent = AgentHandle(new_agent_id(), "agent", session)
        await recorder.agent_started(agent.agent_id, "agent", "scripted")
        policy = PolicyEngine()
        policy.load(workspace)
        approvals = ApprovalBroker()
        if approver:
            approvals.register_approver("test")
        kept: list[tuple[str, str]] = []

        async def always_allow(rule: str, scope: str) -> None:
            if scope == "user":
                raise ValueError("the user settings file is read-only here")
            kept.append((rule, scope))

        calls = Calls(workspace=Workspace(workspace), policy=policy, approvals=approvals, recorder=recorder,
                      always_allow=always_allow)
        yield Rig(calls, agent, bus.subscribe(), recorder, kept)
    finally:
        await recorder.close()


def _request(workspace: Path, tool: str, **args: object) -> PolicyRequest:
    read_only = Annotations(read_only=True, destructive=False)
    return PolicyRequest(tool=tool, args=dict(args), workspace=workspace,
                         annotations=read_only if tool == "Read" else Annotations())


async def _answer(r: Rig, call: OpenCall, verdict: Verdict, answer: Answer, plan: WritePlan | None = None
                  ) -> tuple[Permission, ApprovalRequested]:
    """Ask, and answer as the person would once the request shows up."""
    permission = asyncio.ensure_future(r.calls.permit(call, verdict, plan))
    while not r.calls.approvals.pending():
        await asyncio.sleep(0.005)
    [request] = r.calls.approvals.pending()
    assert r.calls.approvals.resolve(request.call_id, answer)
    return await permission, request


def test_open_journals_the_call_and_announces_it_queued_before_anything_is_decided(workspace: Path,
                                                                                 state_dir: Path) -> None:
    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            call = await r.calls.open(new_call_id(), r.agent, "Read", {"file_path": "README.md"}, "README.md",
                                      batch=("batch_1", "look"))
            [record] = await r.recorder.read(JournalReads.calls)
            assert (record.call_id, record.status, record.tool) == (call.call_id, RunStatus.QUEUED, "Read")
            assert record.args == {"file_path": "README.md"} and (record.batch_id, record.batch_key) == (
                "batch_1", "look")
            [queued] = [e for e in r.seen() if isinstance(e, CallQueued)]
            assert queued.call_id == call.call_id and queued.batch_key == "look"
            assert call.changes == () and call.agent is r.agent

    run(scenario())


def test_asking_turns_the_policys_allow_into_a_question_but_never_softens_a_deny(workspace: Path,
                                                                               state_dir: Path) -> None:
    readme = str(workspace / "README.md")

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            plain = await r.calls.decide(lambda: _request(workspace, "Read", file_path=readme))
            asked = await r.calls.decide(lambda: _request(workspace, "Read", file_path=readme), ask=True)
            assert plain.action == "allow" and asked.action == "ask"
            assert "asks for a person's approval" in asked.reason and plain.reason in asked.reason
            r.calls.policy.add_rule("Read(./README.md)", "deny", "session")
            denied = await r.calls.decide(lambda: _request(workspace, "Read", file_path=readme), ask=True)
            assert denied.action == "deny" and "Read(./README.md)" in denied.reason

    run(scenario())


def test_a_deny_is_refused_with_the_policys_reason_and_an_allow_runs_without_asking(workspace: Path,
                                                                                  state_dir: Path) -> None:
    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            call = await r.open()
            refused = await r.calls.permit(call, Verdict(action="deny", reason="Write matches the deny rule Write"))
            assert isinstance(refused, Refused) and refused.status == RunStatus.DENIED
            assert refused.text == "Denied by Belay's policy: Write matches the deny rule Write."
            assert refused.error.kind == ErrorKind.DENIED and refused.error.message == "Write matches the deny rule Write"
            assert await r.calls.permit(call, Verdict(action="allow", reason="bypass mode", by="mode")) == Allowed()
            events = r.seen()
            assert not [e for e in events if isinstance(e, ApprovalRequested)]  # nobody asked
            decided = [(e.decision, e.by) for e in events if isinstance(e, ApprovalResolved)]
            assert decided == [(Decision.DENIED, "policy"), (Decision.APPROVED, "mode")]  # but who decided is said

    run(scenario())


def test_a_verdict_given_without_asking_journals_who_made_it_a_rule_with_its_text(workspace: Path,
                                                                                  state_dir: Path) -> None:
    by_rule = Verdict(action="allow", reason="allowed by the rule Bash(ls:*)", rule="Bash(ls:*) [workspace]",
                      by="rule")
    plan_mode = Verdict(action="deny", reason="plan mode: read-only; Write changes things", by="mode")
    read_only = Verdict(action="allow", reason="Read only reads")

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            for verdict in (by_rule, plan_mode, read_only):
                await r.calls.permit(await r.open(), verdict)
            [rule_event, *_] = [e for e in r.seen() if isinstance(e, ApprovalResolved)]
            assert (rule_event.by, rule_event.rule) == ("rule", "Bash(ls:*) [workspace]")
            records = await r.recorder.read(JournalReads.calls)
            return [(c.decision.decision, c.decision.by, c.decision.rule) for c in records if c.decision]

    assert run(scenario()) == [(Decision.APPROVED, "rule", "Bash(ls:*) [workspace]"), (Decision.DENIED, "mode", None),
                               (Decision.APPROVED, "policy", None)]


def test_a_persons_answer_becomes_the_calls_permission(workspace: Path, state_dir: Path) -> None:
    target = workspace / "notes.txt"
    plan = WritePlan(writes=(FileWrite(target, None, b"agent\n"),), message="Created notes.txt")
    ask = Verdict(action="ask", reason="Write changes files in the workspace")

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            yes, request = await _answer(r, await r.open(), ask, Answer(decision=Decision.APPROVED), plan)
            assert yes == Allowed() and request.diffs[0].path == "notes.txt"
            assert request.proposed[0].content == "agent\n"

            edited = Answer(decision=Decision.APPROVED_EDITED, edited={"notes.txt": "person\n"})
            assert (await _answer(r, await r.open(), ask, edited, plan))[0] == Allowed({"notes.txt": "person\n"})
            assert (await _answer(r, await r.open(), ask, edited))[0] == Allowed()  # no plan: nothing to edit

            no = Answer(decision=Decision.DENIED, reason="keep the notes")
            call = await r.open()
            refused, _ = await _answer(r, call, ask, no, plan)
            assert isinstance(refused, Refused) and refused.status == RunStatus.DENIED
            assert refused.text == "The user denied this Write call. Reason: keep the notes"
            assert refused.error.message == "keep the notes"
            resolved = [e for e in r.seen() if isinstance(e, ApprovalResolved) and e.call_id == call.call_id]
            assert [(e.decision, e.reason, e.by) for e in resolved] == [(Decision.DENIED, "keep the notes", "person")]

            once = Answer(decision=Decision.ALWAYS_ALLOWED, scope="once")
            always = Answer(decision=Decision.ALWAYS_ALLOWED, scope="workspace")
            suggesting = ask.model_copy(update={"suggested_rule": "Edit(./notes.txt)"})
            assert (await _answer(r, await r.open(), suggesting, once, plan))[0] == Allowed()
            assert (await _answer(r, await r.open(), suggesting, always, plan))[0] == Allowed()
            assert r.kept_rules == [("Edit(./notes.txt)", "workspace")]  # "once" adds no rule

    run(scenario())
    assert not target.exists()  # permitting is not writing


@pytest.mark.allow_warning_logs
def test_an_always_allow_rule_that_cannot_be_kept_still_lets_the_call_run(workspace: Path, state_dir: Path) -> None:
    ask = Verdict(action="ask", reason="Bash is not known to be read-only", suggested_rule="Bash(touch:*)")

    async def scenario() -> Permission:
        async with rig(workspace, state_dir) as r:
            answer = Answer(decision=Decision.ALWAYS_ALLOWED, scope="user")
            permission, _ = await _answer(r, await r.open("Bash", {"command": "touch x"}), ask, answer)
            assert r.kept_rules == []
            return permission

    assert run(scenario()) == Allowed()


def test_nobody_answering_in_time_is_a_timeout_unless_the_rule_allows_then(workspace: Path, state_dir: Path) -> None:
    ask = Verdict(action="ask", reason="Write matches the ask rule Write", timeout_s=0.05)

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            timed_out = await r.calls.permit(await r.open(), ask)
            assert isinstance(timed_out, Refused) and timed_out.status == RunStatus.TIMED_OUT
            assert "Nobody approved this Write call in time" in timed_out.text and "it was not run" in timed_out.text
            assert timed_out.error.kind == ErrorKind.TIMEOUT and timed_out.error.recoverable
            call = await r.open()
            allowed = await r.calls.permit(call, ask.model_copy(update={"on_timeout": "allow"}))
            assert allowed == Allowed()
            [resolved] = [e for e in r.seen() if isinstance(e, ApprovalResolved) and e.call_id == call.call_id]
            assert resolved.decision == Decision.APPROVED and "the rule allows it then" in resolved.reason
            assert resolved.by == "timeout"
            assert r.calls.approvals.pending() == []
            records = {c.call_id: c.decision for c in await r.recorder.read(JournalReads.calls)}
            assert records[call.call_id] is not None and records[call.call_id].by == "timeout"  # journaled so

    run(scenario())


def test_with_no_approver_asking_is_denied_at_once_by_headless(workspace: Path, state_dir: Path) -> None:
    async def scenario() -> None:
        async with rig(workspace, state_dir, approver=False) as r:
            call = await r.open()
            refused = await r.calls.permit(call, Verdict(action="ask", reason="Write changes files"))
            assert isinstance(refused, Refused) and refused.status == RunStatus.DENIED
            assert refused.text.startswith("Belay denied this Write call.") and "no window is attached" in refused.text
            events = r.seen()
            assert not [e for e in events if isinstance(e, ApprovalRequested)]  # never shown as waiting
            [resolved] = [e for e in events if isinstance(e, ApprovalResolved)]
            assert (resolved.call_id, resolved.by, resolved.decision) == (call.call_id, "headless", Decision.DENIED)
            [record] = await r.recorder.read(JournalReads.calls)
            assert record.status == RunStatus.QUEUED  # it never waited on anyone

    run(scenario())


def test_captured_changes_are_journaled_at_once_and_finish_reports_them(workspace: Path, state_dir: Path) -> None:
    made = FileChange(path="made.txt", kind=ChangeKind.CREATE, before_hash=None, after_hash="a" * 64)

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            call = await r.open("Bash", {"command": "touch made.txt"})
            await r.calls.start(call)
            await r.calls.captured(call, (made,))
            [running] = await r.recorder.read(JournalReads.calls)
            assert running.status == RunStatus.RUNNING and running.changes == (made,)  # before the call ends
            assert call.changes == (made,)
            outcome = await r.calls.finish(call, RunStatus.DONE, "done", data={"exit_code": 0})
            assert (outcome.status, outcome.text, outcome.data) == (RunStatus.DONE, "done", {"exit_code": 0})
            [finished] = [e for e in r.seen() if isinstance(e, CallFinished)]
            assert finished.changes == (made,) and finished.status == RunStatus.DONE
            [record] = await r.recorder.read(JournalReads.calls)
            assert record.status == RunStatus.DONE and record.changes == (made,)

    run(scenario())


def test_a_second_capture_adds_to_the_first_in_the_journal_as_in_the_event(workspace: Path, state_dir: Path) -> None:
    first = FileChange(path="a.txt", kind=ChangeKind.CREATE, before_hash=None, after_hash="a" * 64)
    second = FileChange(path="b.txt", kind=ChangeKind.CREATE, before_hash=None, after_hash="b" * 64)

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            call = await r.open("Bash", {"command": "touch a.txt b.txt"})
            await r.calls.start(call)
            await r.calls.captured(call, (first,))
            await r.calls.captured(call, (second,))
            await r.calls.finish(call, RunStatus.DONE, "done")
            [finished] = [e for e in r.seen() if isinstance(e, CallFinished)]
            [record] = await r.recorder.read(JournalReads.calls)
            assert finished.changes == record.changes == (first, second)  # what a restart and undo will see

    run(scenario())


def test_long_output_is_cut_in_the_middle_with_a_marker_saying_how_much(workspace: Path, state_dir: Path) -> None:
    long = "HEAD" + "x" * (3 * MAX_OUTPUT_CHARS) + "TAIL"
    exact = "y" * MAX_OUTPUT_CHARS

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            outcome = await r.calls.finish(await r.open("Bash"), RunStatus.DONE, long)
            cut = len(long) - MAX_OUTPUT_CHARS
            assert outcome.text.startswith("HEAD") and outcome.text.endswith("TAIL")
            assert f"\n[... {cut:,} characters cut ...]\n" in outcome.text
            assert len(outcome.text) < MAX_OUTPUT_CHARS + 100
            untouched = await r.calls.finish(await r.open("Bash"), RunStatus.DONE, exact)
            assert untouched.text == exact
            records = {c.call_id: c for c in await r.recorder.read(JournalReads.calls)}
            assert records[outcome.call_id].output == outcome.text  # the journal keeps what the agent got

    run(scenario())


def test_quick_verdicts_are_given_on_the_loop_and_a_bash_line_is_analysed_in_a_thread(
        workspace: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threaded: list[str] = []
    to_thread = asyncio.to_thread

    async def counted(fn: object, *args: object, **kwargs: object) -> object:
        threaded.append(args[0].tool if args and isinstance(args[0], PolicyRequest) else "?")
        return await to_thread(fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio, "to_thread", counted)

    async def scenario() -> None:
        async with rig(workspace, state_dir) as r:
            readme = str(workspace / "README.md")
            assert (await r.calls.decide(lambda: _request(workspace, "Read", file_path=readme))).action == "allow"
            r.calls.policy.add_rule("Write", "allow", "session")
            allowed = await r.calls.decide(lambda: _request(workspace, "Write", file_path=str(workspace / "n.txt")))
            assert allowed.action == "allow" and allowed.rule == "Write [session]"
            assert threaded == []  # a read-only tool and an allow rule: no thread hop
            assert (await r.calls.decide(lambda: _request(workspace, "Bash", command="ls"))).action == "allow"
            outside = dataclasses.replace(_request(workspace, "Grep", pattern="x"), outside_agent=True)
            await r.calls.decide(lambda: outside)
            assert threaded == ["Bash", "Grep"]  # the line parsed, the folder walked: off the loop

    run(scenario())
