"""Characters a person cannot see are refused before anything is parsed."""

from __future__ import annotations

import pytest

from core.policy.bash import hidden_character

from .harness import Bash


@pytest.mark.parametrize(("text", "named"), [
    ("l\u200bs -la", "U+200B"),          # zero-width space: looks like `ls`
    ("echo ok\rrm -rf ~", "carriage return"),
    ("ls\x00; rm x", "NUL"),
    ("echo \u202egnp.exe", "U+202E"),    # right-to-left override
    ("echo \u2066x\u2069", "U+2066"),    # bidi isolate
    ("ls\u00a0-la", "U+00A0"),           # no-break space: one word to Bash
    ("\ufeffls", "U+FEFF"),
    ("echo \x1b[2J", "escape"),
    ("echo \x7f", "delete"),
    ("echo \u2028x", "U+2028"),
    ("echo \u00adx", "U+00AD"),          # soft hyphen, a format character
])
def test_invisible_and_control_characters_are_named(text: str, named: str) -> None:
    reason = hidden_character(text)
    assert reason is not None and named in reason


@pytest.mark.parametrize("text", ["ls -la", "ls\t-la", "git status\nls", "echo 'héllo wörld ✓'", "grep 日本 x"])
def test_visible_text_passes(text: str) -> None:
    assert hidden_character(text) is None


def test_the_reason_says_where_the_character_is() -> None:
    reason = hidden_character("ls\necho a\u200bb")
    assert reason is not None and "line 2, column 7" in reason


@pytest.mark.parametrize("command", ["l\u200bs -la", "git status\r", "ls\u00a0-la", "echo \u202eevil"])
def test_a_hidden_character_is_denied_even_in_bypass_and_with_allow_all(bash: Bash, command: str) -> None:
    bash.engine.add_rule("Bash", "allow", "session")
    bash.engine.set_mode("bypass")
    verdict = bash(command)
    assert verdict.action == "deny"
    assert verdict.analysis is not None and verdict.analysis.hidden_character is not None
    assert verdict.impact.level == "high"
