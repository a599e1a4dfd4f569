"""Events: every event and field says what it means, unknown fields are refused, ids and decisions are typed."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from core import events, questions
from core.events import EVENT_ADAPTER, ApprovalResolved, CallQueued
from core.models import fact
from core.models.records import Decision

SOURCE = "\n".join(Path(module.__file__).read_text(encoding="utf-8") for module in (events, questions, fact))
"""Every event's class: those of core.events, of core.questions (part of the union), and their base."""


def _documented(cls: ast.ClassDef) -> tuple[bool, list[str]]:
    """Whether the class has a docstring, and its annotated fields that have none after them."""
    body = cls.body
    undocumented = []
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id != "model_config":
            after = body[i + 1] if i + 1 < len(body) else None
            if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                undocumented.append(node.target.id)
    return ast.get_docstring(cls) is not None, undocumented


def test_every_event_and_every_field_is_documented() -> None:
    classes = [n for n in ast.parse(SOURCE).body if isinstance(n, ast.ClassDef)]
    missing = []
    for cls in classes:
        has_doc, fields = _documented(cls)
        if not has_doc and not cls.name.startswith("_"):
            missing.append(cls.name)
        missing += [f"{cls.name}.{f}" for f in fields]
    assert len(classes) == 30 and missing == []


def test_every_event_kind_is_in_the_union_once() -> None:
    members = typing.get_args(typing.get_args(events.Event)[0])
    kinds = [m.model_fields["kind"].default for m in members]
    assert len(kinds) == len(set(kinds)) == 28


def test_unknown_fields_are_refused_rather_than_dropped() -> None:
    with pytest.raises(ValidationError, match="extra_forbidden"):
        CallQueued(call_id="call_1", agent_id="agt_1", tool="Read", args={}, summary="", colour="red")  # type: ignore[call-arg]


def test_an_event_round_trips_through_json_by_its_kind() -> None:
    event = ApprovalResolved(call_id="call_1", decision=Decision.APPROVED, by="timeout", seq=7)
    decoded = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event))
    assert decoded == event and isinstance(decoded, ApprovalResolved)
