"""Shell syntax that is not a program (assignments, declarations, tests, arithmetic, for) judged as commands."""

from __future__ import annotations

import pytest

from .harness import Bash


@pytest.mark.parametrize(("command", "why"), [
    ("PATH=/tmp", "sets PATH"),
    ("X=1 LD_PRELOAD=evil.so", "sets LD_PRELOAD"),
    ("export BASH_ENV=x.sh", "sets BASH_ENV"),
    ("declare -x PATH=/tmp", "sets PATH"),
    ("export X=1", "changes the environment every later command sees"),
    ("declare -x X=1", "changes the environment every later command sees"),
    ("declare PATH=/tmp", "sets PATH"),
    ("local PATH=.", "sets PATH"),
    ("readonly PATH=/x", "sets PATH"),
    ("for PATH in /tmp; do ls; done", "sets PATH"),
    ("select IFS in a b; do :; done", "sets IFS"),
    ("a[i]=1", "arithmetic on a run-time value"),
    ("declare a[i]=1", "arithmetic on a run-time value"),
    ("declare -i n", "-i makes every later assignment arithmetic"),
])
def test_setting_a_variable_that_changes_what_runs_asks_in_every_form(bash: Bash, command: str, why: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask" and why in analysis.reason, analysis.reason


@pytest.mark.parametrize("command", [
    "X=1", "x+=1", "a[1]=x", "declare X=1", "local x=$1", "X=1; declare -p X", "unset X",
    "for i in 1 2; do echo $i; done", "for f in *.py; do echo \"$f\"; done",
])
def test_plain_assignments_and_loops_only_read(bash: Bash, command: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "allow", analysis.reason


@pytest.mark.parametrize(("command", "hint"), [
    ("(( 1 + 2 ))", "allow"),
    ("(( x ))", "ask"),                        # x may hold `a[$(cmd)]`, which arithmetic runs
    ("(( x = 1 ))", "ask"),
    ("for ((;;)); do break; done", "allow"),
    ("for ((i = 0; i < 3; i++)); do echo; done", "ask"),
    ("[[ $x == y ]]", "allow"),
    ("[[ -f notes.txt ]]", "allow"),
    ("[[ 1 -eq 1 ]]", "allow"),
    ("[[ $x -eq 1 ]]", "ask"),                 # -eq inside [[ evaluates both sides as arithmetic
    ("[[ a -lt $b ]]", "ask"),
    ("x=2; [ \"$x\" -eq 1 ]", "allow"),        # the [ program compares integers without evaluating them
    ("[ $x -eq 1 ]", "ask"),                   # but unquoted, x='-v a[$(id)] -a 1' splits into a -v test
])
def test_arithmetic_on_a_run_time_value_asks(bash: Bash, command: str, hint: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == hint, analysis.reason


@pytest.mark.parametrize(("command", "context"), [
    ("a[$(rm -rf ~)]=1", "command substitution"),
    ("X=$(rm -rf ~)", "command substitution"),
    ("export X=$(rm -rf ~)", "command substitution"),
    ("[[ -n $(rm -rf ~) ]]", "command substitution"),
    ("(( $(rm -rf ~) ))", "command substitution"),
    ("for x in $(rm -rf ~); do :; done", "command substitution"),
    ("for x in a; do rm -rf ~; done", "for"),
    ("for ((;;)); do rm -rf ~; done", "(("),
])
def test_commands_inside_syntax_are_found_and_judged(bash: Bash, command: str, context: str) -> None:
    analysis = bash.analysis(command)
    rm = next(c for c in analysis.commands if c.argv[:1] == ("rm",))
    assert rm.effect == "deny" and context in rm.context
    assert analysis.verdict_hint == "deny"
