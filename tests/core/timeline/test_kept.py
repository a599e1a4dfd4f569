"""What the timeline keeps of a call and a batch: bounded excerpts, from events and from the journal."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from core.errors import ErrorInfo, ErrorKind
from core.events import ApprovalRequested, ProposedFile
from core.models.batches import PlanInfo
from core.models.records import BatchRecord, CallDecision, CallRecord, Decision, RunStatus
from core.timeline.excerpts import OUTPUT_HEAD_CHARS, OUTPUT_TAIL_CHARS, STRING_CHARS
from core.timeline.kept import answered, batch_node, kept_result, run_node

T0 = datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc)
PLAN = PlanInfo(levels=(("find", "ls"), ("read",)), critical_path=("find", "read"), max_parallelism=2)
LONG = "x" * (OUTPUT_HEAD_CHARS + OUTPUT_TAIL_CHARS + 10_000)


def test_a_long_output_and_error_message_are_kept_as_excerpts_and_said_to_be_cut() -> None:
    (output, error), cut = kept_result(LONG, ErrorInfo(kind=ErrorKind.SYSTEM, message=LONG))
    assert cut and len(output) < len(LONG) and error is not None and len(error.message) < len(LONG)
    (output, error), cut = kept_result("ok", None)
    assert (output, error, cut) == ("ok", None, False)


def test_a_journaled_call_comes_back_bounded_with_its_decision() -> None:
    record = CallRecord(call_id="c1", session_id="s", agent_id="a", agent_name="main", tool="Write",
                        summary="notes.md", args={"file_path": "/w/notes.md", "content": LONG}, status=RunStatus.DONE,
                        created_at=T0, duration_s=0.5, output=LONG,
                        decision=CallDecision(decision=Decision.APPROVED, reason="looks right", by="person"))
    node = run_node(record)
    assert node.args_cut and len(node.args["content"]) < STRING_CHARS + 100
    assert node.output_cut and len(node.output) < len(LONG)
    assert (node.decision, node.decision_reason, node.decided_by) == (Decision.APPROVED, "looks right", "person")


def test_an_answered_question_drops_its_diffs_and_proposed_contents() -> None:
    request = ApprovalRequested(call_id="c1", agent_id="a", tool="Write", summary="notes.md", reason="writes",
                                args={"content": LONG}, proposed=(ProposedFile(path="notes.md", content=LONG),))
    light = answered(request)
    assert light.proposed == () and light.diffs == () and len(light.args["content"]) < len(LONG)
    assert (light.call_id, light.reason) == ("c1", "writes")


def test_a_finished_batch_keeps_its_totals_and_an_unfinished_one_is_interrupted() -> None:
    done = batch_node(BatchRecord(batch_id="b1", agent_id="a", name="scan", plan=PLAN, created_at=T0,
                                  finished_at=T0 + timedelta(seconds=4),
                                  summary={"succeeded": 3, "failed": 0, "skipped": 0, "cache_hits": 1,
                                           "duration_s": 4.0, "max_running": 2}))
    assert done.size == 3 and done.totals is not None and done.totals.succeeded == 3 and not done.interrupted
    left = batch_node(BatchRecord(batch_id="b2", agent_id="a", name="scan", plan=PLAN, created_at=T0))
    assert left.totals is None and left.interrupted
