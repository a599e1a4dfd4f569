"""What the policy is asked (PolicyRequest) and what it answers (Verdict): frozen records callers pass around."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.models.bash import Impact
from core.policy.bash import analyse
from core.policy.verdicts import PolicyRequest, Verdict


def test_a_request_is_frozen_and_requests_never_share_their_arguments(tmp_path: Path) -> None:
    first, second = PolicyRequest("Read"), PolicyRequest("Write")
    first.args["file_path"] = "/x"
    assert second.args == {}  # each request gets its own dict
    assert (second.workspace, second.paths, second.annotations.read_only) == (Path("."), (), False)
    request = PolicyRequest("Bash", {"command": "ls"}, tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.tool = "Read"  # type: ignore[misc]


def test_a_verdict_is_frozen_and_a_changed_copy_leaves_the_original_alone() -> None:
    verdict = Verdict(action="allow", reason="only reads")
    with pytest.raises(ValidationError):
        verdict.action = "deny"  # type: ignore[misc]
    asked = verdict.model_copy(update={"action": "ask", "suggested_rule": "Bash(make:*)"})
    assert (verdict.action, verdict.suggested_rule) == ("allow", None)
    assert (asked.action, asked.reason, asked.suggested_rule) == ("ask", "only reads", "Bash(make:*)")


def test_a_verdict_defaults_to_waiting_forever_and_denying_on_timeout() -> None:
    verdict = Verdict(action="ask", reason="make is not known to be read-only")
    assert (verdict.rule, verdict.timeout_s, verdict.on_timeout) == (None, None, "deny")
    assert (verdict.impact.level, verdict.analysis, verdict.suggested_rule) == ("low", None, None)


@pytest.mark.parametrize("fields", [{"action": "maybe", "reason": "x"}, {"action": "ask", "reason": "x",
                                                                         "on_timeout": "ask"},
                                    {"action": "allow"}])
def test_a_verdict_refuses_what_no_caller_could_act_on(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Verdict(**fields)  # type: ignore[arg-type]


def test_a_verdict_with_its_analysis_survives_a_round_trip_through_json(tmp_path: Path) -> None:
    analysis = analyse("git status && make build", tmp_path)
    verdict = Verdict(action="ask", reason="make is not known to be read-only", rule="Bash(make:*) [user]", by="rule",
                      impact=Impact(level="medium", reasons=("runs make",)), timeout_s=30.0, on_timeout="allow",
                      analysis=analysis, suggested_rule="Bash(make build:*)")
    again = Verdict.model_validate_json(verdict.model_dump_json())
    assert again == verdict
    assert again.analysis is not None and [c.argv for c in again.analysis.commands] == [("git", "status"),
                                                                                         ("make", "build")]


@pytest.mark.parametrize("fields", [{"by": "rule"}, {"rule": "Bash(ls:*) [user]"},
                                    {"rule": "Bash(ls:*) [user]", "by": "mode"}, {"by": "person"}])
def test_a_verdict_names_a_rule_exactly_when_a_rule_made_it(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Verdict(action="allow", reason="x", **fields)  # type: ignore[arg-type]
    assert Verdict(action="allow", reason="x", rule="Bash(ls:*) [user]", by="rule").by == "rule"
    assert Verdict(action="allow", reason="x").by == "policy"
