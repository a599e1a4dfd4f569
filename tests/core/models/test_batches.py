"""Batch records: a call is read in Belay's words or the seed material's, and a report's totals add up."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from core.errors import ErrorInfo, ErrorKind
from core.models.batches import BatchCall, BatchReport, BatchResult, CallState, PlanInfo


def test_a_call_in_the_seed_materials_words_equals_the_same_call_in_belays() -> None:
    seed = BatchCall.model_validate({"id": "read", "toolName": "Read", "parameters": {"path": "a.txt"},
                                     "dependsOn": ["ls"], "timeoutS": 5, "requiresApproval": True})
    belay = BatchCall(id="read", tool="Read", args={"path": "a.txt"}, depends_on=("ls",), timeout_s=5,
                      requires_approval=True)
    assert seed == belay
    assert BatchCall.model_validate_json(belay.model_dump_json()) == belay


@pytest.mark.parametrize("call", [
    {"id": "2nd", "tool": "Read"},  # an id must not start with a digit: `${2nd...}` would not parse
    {"id": "a b", "tool": "Read"},
    {"id": "", "tool": "Read"},
    {"id": "x", "tool": "Read", "colour": "red"},
    {"id": "x", "tool": "Read", "timeout": 0},
])
def test_a_malformed_call_is_refused_rather_than_guessed(call: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BatchCall.model_validate(call)


def _result(key: str, status: CallState, cached: bool = False) -> BatchResult:
    error = None if status == "done" else ErrorInfo(kind=ErrorKind.SYSTEM, message=f"{key} {status}")
    return BatchResult(id=key, tool="Read", status=status, error=error, cached=cached)


def test_a_report_counts_every_kind_of_failure_and_is_ok_only_when_all_calls_succeeded() -> None:
    plan = PlanInfo(levels=(("a", "b", "c", "d", "e", "f"),), critical_path=("a",), max_parallelism=6)
    results = (_result("a", "done", cached=True), _result("b", "done"), _result("c", "failed"),
               _result("d", "denied"), _result("e", "timed_out"), _result("f", "cancelled"))
    report = BatchReport(batch_id="batch_1", plan=plan, results=results, duration_s=1.0)
    assert (report.succeeded, report.failed, report.skipped, report.cache_hits) == (2, 4, 0, 1)
    assert not report.ok
    clean = report.model_copy(update={"results": results[:2]})
    assert clean.ok


def test_a_batch_with_a_skipped_call_is_not_ok_even_with_no_failure() -> None:
    plan = PlanInfo(levels=(("a",), ("b",)), critical_path=("a", "b"), max_parallelism=1)
    report = BatchReport(batch_id="batch_1", plan=plan, results=(_result("a", "done"), _result("b", "skipped")),
                         duration_s=0.5)
    assert report.failed == 0 and report.skipped == 1 and not report.ok
