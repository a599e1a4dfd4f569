"""What the timeline keeps of a call and a batch: excerpts, whether they come from events or from the journal.

A live call's output and error (`kept_result`), a question once answered (`answered`: its diffs and
contents dropped), and the nodes of an earlier session's calls and batches read back from the journal
(`run_node`, `batch_node`), each bounded as `core.timeline.excerpts` bounds a live call's arguments.
"""

from __future__ import annotations

from typing import Any

from core.errors import ErrorInfo
from core.events import ApprovalRequested
from core.models.records import BatchRecord, CallRecord
from core.timeline.excerpts import excerpt_args, excerpt_line, excerpt_text
from core.timeline.nodes import BatchNode, BatchTotals, RunNode


def kept_result(output: str, error: ErrorInfo | None) -> tuple[tuple[str, ErrorInfo | None], bool]:
    """A call's output and error as the timeline keeps them (excerpts), and whether either was cut."""
    output, output_cut = excerpt_text(output)
    if error is None:
        return (output, None), output_cut
    message, message_cut = excerpt_text(error.message)
    if message_cut:
        error = error.model_copy(update={"message": message})
    return (output, error), output_cut or message_cut


def answered(request: ApprovalRequested) -> ApprovalRequested:
    """An answered request without its heavy parts: nobody shows its diffs, contents or parsed command again
    (the journal and the blob store keep what the call changed)."""
    return request.model_copy(update={"args": excerpt_args(request.args).args, "summary": excerpt_line(request.summary),
                                      "diffs": (), "proposed": (), "analysis": None})


def _decided(c: CallRecord) -> dict[str, Any]:
    """The RunNode fields of a journaled call's decision (none when nothing was journaled)."""
    d = c.decision
    if d is None:
        return {}
    return {"decision": d.decision, "decision_reason": d.reason, "decided_by": d.by, "decision_rule": d.rule,
            "decided_via": d.via}


def run_node(c: CallRecord) -> RunNode:
    """A journaled call of an earlier session, kept as a live one is (excerpts of its arguments and output)."""
    kept = excerpt_args(c.args)
    (output, error), output_cut = kept_result(c.output, c.error)
    return RunNode(c.call_id, c.agent_id, c.tool, excerpt_line(c.summary), kept.args, c.status, c.created_at,
                   duration_s=c.duration_s, output=output, error=error, args_cut=kept.cut, output_cut=output_cut,
                   changes=c.changes, git_changes=c.git_changes, undone_by=c.undone_by,
                   undone_paths=c.undone_paths, git_undone=c.git_undone, batch_id=c.batch_id,
                   batch_key=c.batch_key, use_id=c.use_id, cached=c.cached, attempts=c.attempts,
                   started_at=c.started_at, ended_at=c.ended_at, **_decided(c))


def batch_node(record: BatchRecord) -> BatchNode:
    totals = None
    if record.finished_at is not None:
        s = record.summary or {}
        totals = BatchTotals(int(s.get("succeeded", 0)), int(s.get("failed", 0)), int(s.get("skipped", 0)),
                             int(s.get("cache_hits", 0)), float(s.get("duration_s", 0.0)),
                             int(s.get("max_running", 0)))
    size = sum(len(level) for level in record.plan.levels)
    return BatchNode(record.batch_id, record.agent_id, record.name, size, record.plan, record.created_at,
                     record.finished_at, totals, interrupted=totals is None)
