"""Fork bombs are refused with a reason before anything starts, in every spelling and even in bypass mode."""

from __future__ import annotations

import pytest

from .harness import Bash

BOMBS = [
    ":(){ :|:& };:",
    ":() { : | : & }; :",
    "bomb() { bomb | bomb & }; bomb",
    "function b { b & b; }; b",
    "f(){ f|f& }; f",
    "f(){ echo $(f); }; f",
    "f(){ (f) }; f",
    "a(){ b & }; b(){ a & }; a",  # through another function
    "bash -c ':(){ :|:& };:'",  # in a string run as code
    "ls && :(){ :|:& };:",
]


@pytest.mark.parametrize("command", BOMBS)
def test_a_function_calling_itself_in_a_new_process_is_denied_as_a_fork_bomb(bash: Bash, command: str) -> None:
    verdict = bash(command)
    assert verdict.action == "deny"
    assert "fork bomb" in verdict.reason
    assert verdict.impact.level == "high"


def test_a_fork_bomb_is_denied_in_bypass_mode_and_against_an_allow_rule(bash: Bash) -> None:
    bash.engine.set_mode("bypass")
    assert bash(":(){ :|:& };:").action == "deny"
    bash.engine.set_mode("default")
    assert bash.rules(allow=("Bash",))("bomb() { bomb | bomb & }; bomb").action == "deny"


@pytest.mark.parametrize("command", [
    "f(){ echo hi; }; f | f",  # a function piped, not calling itself
    "f(){ f; }; f",  # recursion without a new process: one shell's stack, which Bash ends itself
    "g(){ ls; }; f(){ g & }; f",
])
def test_functions_that_do_not_fork_themselves_are_not_called_bombs(bash: Bash, command: str) -> None:
    verdict = bash(command)
    assert "fork bomb" not in verdict.reason
