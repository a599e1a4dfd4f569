"""The readable log of a headless run (gui.terminal.run_log): one line per call as it starts and ends, named as
the plan names it, and nothing written through a question open at the terminal."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest

from core import (
    AgentFinished,
    AgentStarted,
    AgentStatus,
    ApprovalRequested,
    ApprovalResolved,
    BatchStarted,
    CallFinished,
    CallQueued,
    CallStarted,
    Decision,
    ErrorInfo,
    ErrorKind,
    ExternalChangesRecorded,
    PlanInfo,
    RunStatus,
)
from core.events import CallProgress, CallRetrying, Lagged
from gui.terminal.run_log import LogView, Output, Watch, duration_text

AT = datetime(2026, 5, 4, 12, 3, 4, 512_000, tzinfo=UTC)


def _log(auto: Any = None) -> tuple[LogView, Watch, io.StringIO]:
    stream = io.StringIO()
    watch = Watch()
    return LogView(Output(stream), watch, auto, width=8), watch, stream


def _feed(view: LogView, watch: Watch, *events: Any) -> None:
    for event in events:
        watch.apply(event)
        view.show(event)


def _lines(stream: io.StringIO) -> list[str]:
    """The log's lines without their time stamps."""
    return [line.split("] ", 1)[1] for line in stream.getvalue().splitlines()]


def _agents() -> list[Any]:
    return [AgentStarted(agent_id="lead", session_id="s", name="fixer", agent_kind="scripted", at=AT),
            AgentStarted(agent_id="sub", session_id="s", name="docs-reader", agent_kind="subagent", parent_id="lead",
                         at=AT)]


def test_calls_are_named_as_the_plan_names_them_and_each_start_and_end_is_a_line() -> None:
    view, watch, stream = _log()
    _feed(view, watch, *_agents(),
          CallQueued(call_id="c1", agent_id="lead", tool="Read", args={}, summary="README.md", at=AT),
          CallStarted(call_id="c1", at=AT),
          CallFinished(call_id="c1", status=RunStatus.DONE, duration_s=0.012, cached=True, at=AT),
          CallQueued(call_id="c2", agent_id="sub", tool="Read", args={}, summary="docs/usage.md", at=AT),
          CallStarted(call_id="c2", at=AT),
          CallFinished(call_id="c2", status=RunStatus.FAILED, duration_s=1.5, at=AT,
                       error=ErrorInfo(kind=ErrorKind.NOT_FOUND, message="docs/usage.md does not exist")),
          AgentFinished(agent_id="sub", status=AgentStatus.FAILED, message="1 call failed", at=AT))
    assert _lines(stream) == [
        "● agent fixer started", "● agent docs-reader started",
        "▶ #1        Read README.md", "✓ #1        done in 12 ms (cached)",
        "▶ docs-reader#1  Read docs/usage.md", "✗ docs-reader#1  failed: docs/usage.md does not exist",
        "● agent docs-reader failed: 1 call failed"]
    assert stream.getvalue().startswith(f"[{AT.astimezone().strftime('%H:%M:%S')}.512] ")


def test_a_batch_says_its_shape_and_its_calls_go_by_their_ids() -> None:
    view, watch, stream = _log()
    plan = PlanInfo(levels=(("a", "b"), ("c",)), critical_path=("a", "c"), max_parallelism=2)
    _feed(view, watch, AgentStarted(agent_id="b", session_id="s", name="review", agent_kind="batch", at=AT),
          BatchStarted(batch_id="b1", agent_id="b", name="review", plan=plan, size=3, at=AT),
          *(CallQueued(call_id=f"c{k}", agent_id="b", tool="Read", args={}, summary=f"{k}.md", batch_id="b1",
                       batch_key=k, at=AT) for k in "abc"),
          CallStarted(call_id="ca", at=AT), CallStarted(call_id="cb", at=AT),
          CallFinished(call_id="ca", status=RunStatus.DONE, duration_s=2.2, attempts=3, at=AT),
          CallFinished(call_id="cb", status=RunStatus.DONE, duration_s=0.5, at=AT), CallStarted(call_id="cc", at=AT),
          CallFinished(call_id="cc", status=RunStatus.SKIPPED, at=AT,
                       error=ErrorInfo(kind=ErrorKind.INVALID_ARGS, message="skipped because a did not succeed")))
    assert _lines(stream) == [
        "Batch review: 3 calls in 2 levels, up to 2 at once",  # the batch's own agent is not announced
        "▶ a         Read a.md", "▶ b         Read b.md",
        "✓ a         done in 2.2 s after 3 tries", "✓ b         done in 500 ms", "▶ c         Read c.md",
        "↷ c         skipped because a did not succeed"]
    assert watch.max_running == 2 and watch.label("cc") == "c" and watch.label("unknown") == "unknown"


def test_a_long_call_a_retry_an_outside_edit_and_missed_events_are_said() -> None:
    view, watch, stream = _log()
    _feed(view, watch, *_agents()[:1],
          CallQueued(call_id="c1", agent_id="lead", tool="Bash", args={}, summary="make", at=AT),
          CallProgress(call_id="c1", elapsed_s=75, note="linking", at=AT),
          CallRetrying(call_id="c1", attempt=1, delay_s=2, at=AT,
                       error=ErrorInfo(kind=ErrorKind.TIMEOUT, message="the server did not answer")),
          ExternalChangesRecorded(op_id="x1", note="before call c2", at=AT, changes=()),
          Lagged(missed=12, at=AT))
    assert _lines(stream)[1:] == [
        "… #1        still running after 1 min 15 s: linking",
        "↻ #1        try 1 failed (the server did not answer); trying again in 2.0 s",
        "! 0 file(s) changed outside Belay (before call c2)",
        "! 12 events were missed; a script's summary may undercount"]


@pytest.mark.parametrize(("auto", "resolved", "line"), [
    ("approve", ApprovalResolved(call_id="c1", decision=Decision.APPROVED, by="auto-approver", at=AT),
     "? #1        approved by --auto approve (asked: writes need approval)"),
    ("approve", ApprovalResolved(call_id="c1", decision=Decision.DENIED, by="auto-approver", at=AT),
     "? #1        denied by the script's review (asked: writes need approval)"),
    (None, ApprovalResolved(call_id="c1", decision=Decision.TIMED_OUT, by="timeout", at=AT),
     "? #1        timed out (nobody answered in time) (asked: writes need approval)"),
    (None, ApprovalResolved(call_id="c1", decision=Decision.DENIED, by="headless", at=AT),
     "? #1        denied by headless (asked: writes need approval)"),
    (None, ApprovalResolved(call_id="c1", decision=Decision.APPROVED, by="person", at=AT), None),
    ("approve", ApprovalResolved(call_id="c1", decision=Decision.APPROVED, by="rule", rule="Write [session]", at=AT),
     None),
], ids=["auto approve", "review", "timeout", "stdin closed", "typed at the prompt", "a rule"])
def test_answers_nobody_typed_are_said_with_why_the_policy_asked(auto: Any, resolved: ApprovalResolved,
                                                                 line: str | None) -> None:
    view, watch, stream = _log(auto)
    _feed(view, watch, *_agents()[:1],
          CallQueued(call_id="c1", agent_id="lead", tool="Write", args={}, summary="a.txt", at=AT),
          ApprovalRequested(call_id="c1", agent_id="lead", tool="Write", summary="a.txt", args={}, at=AT,
                            reason="writes need approval"),
          resolved)
    assert _lines(stream)[1:] == ([line] if line else [])


def test_lines_wait_while_a_question_is_open_and_never_cut_through_its_prompt() -> None:
    stream = io.StringIO()
    out = Output(stream)
    out.line("✓ #1  done")
    out.hold()
    out.now("Allow? ", end="")
    out.line("✓ #2  done")  # another call ended meanwhile: held
    assert stream.getvalue() == "✓ #1  done\nAllow? "
    out.finish_line("y")  # the answer, read from a pipe: nothing echoed it
    out.release()
    assert stream.getvalue() == "✓ #1  done\nAllow? y\n✓ #2  done\n"
    out.now("Allow? ", end="")
    out.now("  No longer asking: nobody answered in time.")  # said on a line of its own, not after the prompt
    assert stream.getvalue().endswith("Allow? \n  No longer asking: nobody answered in time.\n")


@pytest.mark.parametrize(("seconds", "text"), [(0.0123, "12 ms"), (4.2, "4.2 s"), (75, "1 min 15 s"),
                                               (3600, "60 min 0 s")])
def test_durations_read_as_a_person_says_them(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text
