"""Commands that run other code ask, and hand back the command or string they run so it is judged too."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from core.policy.bash.findings import Judgement
from core.policy.bash.runners import is_runner, judge_runner

from .harness import env_at, word

Runner = Callable[[str], Judgement]


@pytest.fixture
def runner(ws: Path, home: Path, outside: Path) -> Runner:
    """Judges a command line with `judge_runner`, `{OUT}` filled in, in the workspace root."""
    env = env_at(ws, home)

    def judged(line: str) -> Judgement:
        text = line.replace("{OUT}", str(outside))
        name, *rest = shlex.split(text)
        args = [word(t) for t in rest]
        j = Judgement()
        judge_runner(name, args, env, j, text)
        return j
    return judged


@pytest.mark.parametrize(("name", "runs"), [
    ("bash", True), ("sh", True), ("zsh", True), ("python3", True), ("python3.11", True), ("node", True),
    ("perl", True), ("eval", True), ("source", True), (".", True), ("xargs", True), ("timeout", True),
    ("sudo", True), ("env", True), ("find", True), ("watch", True), ("trap", True),
    ("ls", False), ("cat", False), ("git", False), ("make", False), ("rm", False),
])
def test_programs_that_run_other_code_are_known(name: str, runs: bool) -> None:
    assert is_runner(name) is runs


@pytest.mark.parametrize(("line", "label", "inner"), [
    ("timeout 5 rm -rf /", "timeout", "rm -rf /"),
    ("timeout -s 9 5 rm x", "timeout", "rm x"),
    ("sudo -u root rm -rf /", "sudo", "rm -rf /"),
    ("xargs -n1 rm -f", "xargs", "rm -f"),
    ("env X=1 Y=2 rm x", "env", "rm x"),
    ("env -u HOME rm x", "env", "rm x"),
    ("nsenter -t 1 rm x", "nsenter", "rm x"),
    ("flock lock rm x", "flock", "rm x"),
    ("coproc rm x", "coproc", "rm x"),
    ("find . -exec rm {} ;", "find -exec", "rm {}"),
    ("find . -execdir sh -c id {} +", "find -execdir", "sh -c id {}"),
])
def test_a_wrapper_asks_and_hands_back_the_command_it_runs(runner: Runner, line: str, label: str,
                                                           inner: str) -> None:
    j = runner(line)
    assert j.effect == "ask"
    assert [(found, " ".join(w.text for w in words)) for found, words in j.inner] == [(label, inner)]


@pytest.mark.parametrize(("line", "label", "code"), [
    ("bash -c 'rm -rf ~'", "bash -c", "rm -rf ~"),
    ("sh -xc 'ls; id'", "sh -c", "ls; id"),
    ("eval rm -rf '~'", "eval", "rm -rf ~"),
    ("trap 'rm -rf ~' EXIT", "trap", "rm -rf ~"),
    ("su -c 'rm -rf ~'", "su -c", "rm -rf ~"),
    ("flock -c 'rm -rf ~' lock", "flock -c", "rm -rf ~"),
    ("watch -d 'rm -rf ~'", "watch", "rm -rf ~"),
])
def test_a_string_run_as_code_asks_and_is_handed_back_to_be_parsed(runner: Runner, line: str, label: str,
                                                                   code: str) -> None:
    j = runner(line)
    assert j.effect == "ask"
    assert [(found, word.text) for found, word in j.code] == [(label, code)]


@pytest.mark.parametrize(("line", "effect", "why"), [
    ("python3 -c 'print(1)'", "ask", "runs code given on the command line"),
    ("python3 -Ic 1", "ask", "runs code given on the command line"),
    ("node --eval=1", "ask", "runs code given on the command line"),
    ("perl -pe 1 notes.txt", "ask", "runs code given on the command line"),
    ("python3 build.py", "run", "runs a program Belay does not analyse"),
    ("python3 -m pytest", "run", "runs a program Belay does not analyse"),
    ("python3", "ask", "reads a program from its input"),
    ("python3 --version", "read", "only reads"),
    ("bash build.sh", "run", "runs the script build.sh"),
    ("bash -s", "ask", "reads commands from its input"),
    ("bash -c $CMD", "ask", "runs a string as a script"),
    ("eval $CMD", "ask", "runs its arguments as a new command line"),
    ("trap $ACTION EXIT", "ask", "only known at run time"),
    ("trap - EXIT", "read", "only reads"),
    ("trap -p", "read", "only reads"),
    ("env", "run", "prints the environment, where API keys and tokens live"),  # keys and tokens to the model
    ("env -S 'rm x'", "ask", "splits a string into a command"),
])
def test_shells_and_interpreters_ask_for_inline_code_and_need_a_rule_for_scripts(runner: Runner, line: str,
                                                                               effect: str, why: str) -> None:
    j = runner(line)
    assert j.effect == effect and why in j.why, j.why


@pytest.mark.parametrize(("line", "effect", "why"), [
    ("find . -name '*.py'", "read", "only reads"),
    ("find {OUT} -name x", "run", "outside the workspace"),
    ("find . -delete", "ask", "-delete removes every file it finds"),
    ("find {OUT} -delete", "deny", "deletes outside the workspace"),
    ("find . -fprint {OUT}/list", "ask", "writes a file"),
    ("find . -name $X", "ask", "could be -exec"),
])
def test_find_reads_its_start_points_and_asks_for_actions(runner: Runner, line: str, effect: str, why: str) -> None:
    j = runner(line)
    assert j.effect == effect and why in j.why, j.why


def test_running_as_another_user_is_a_high_impact(runner: Runner) -> None:
    for line in ("sudo ls", "doas ls", "su -c id", "pkexec ls", "runuser -u x -- ls"):
        assert ("high", f"runs with other privileges: {line}") in runner(line).impact
    assert not [level for level, _ in runner("timeout 5 ls").impact if level == "high"]
