"""A policy rule as the settings hold it: its action, layer and timeout answer are checked, its source is a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from core.models.policy import RuleEntry


def test_a_rule_from_a_settings_file_keeps_its_source_as_a_path(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    entry = RuleEntry(rule="Bash(npm test:*)", action="allow", scope="workspace",
                      source=str(settings))  # type: ignore[arg-type]
    assert entry.source == settings and isinstance(entry.source, Path)
    assert RuleEntry(rule="Read", action="allow", scope="session").source is None


def test_equal_rules_are_one_rule_in_a_set() -> None:
    a = RuleEntry(rule="Edit", action="ask", scope="user", timeout_s=30, on_timeout="deny")
    b = RuleEntry(rule="Edit", action="ask", scope="user", timeout_s=30, on_timeout="deny")
    c = RuleEntry(rule="Edit", action="deny", scope="user")
    assert len({a, b, c}) == 2


@pytest.mark.parametrize("fields", [
    {"action": "maybe", "scope": "user"},
    {"action": "allow", "scope": "project"},
    {"action": "ask", "scope": "user", "on_timeout": "ask"},
])
def test_an_unknown_action_scope_or_timeout_answer_is_refused(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        RuleEntry(rule="Edit", **fields)  # type: ignore[arg-type]
