"""The events of what a console asks a person, and of the answers (part of the one union of events)."""

from __future__ import annotations

import typing

import pytest
from pydantic import ValidationError

from core.events import EVENT_ADAPTER
from core.models.records import DecidedBy, Decision
from core.questions import ApprovalResolved


def test_who_decided_is_one_of_the_named_answerers() -> None:
    assert set(typing.get_args(DecidedBy)) == {"person", "rule", "mode", "policy", "auto-approver", "timeout",
                                               "headless", "console"}
    with pytest.raises(ValidationError):
        ApprovalResolved(call_id="call_1", decision=Decision.DENIED, by="somebody")  # type: ignore[arg-type]


def test_an_old_events_user_reads_as_a_person() -> None:
    old = '{"kind": "approval_resolved", "call_id": "call_1", "decision": "approved", "by": "user"}'
    decoded = EVENT_ADAPTER.validate_json(old)
    assert isinstance(decoded, ApprovalResolved) and decoded.by == "person" and decoded.rule is None
