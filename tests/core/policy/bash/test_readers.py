"""Read-only commands: what they read, and the options and operands that make them write, run or set variables."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from core.policy.bash.findings import Env, Judgement
from core.policy.bash.readers import judge_reader
from core.policy.bash.words import WordValue

from .harness import Bash, env_at, fill

Reader = Callable[[str], Judgement]


def _kinds(text: str) -> frozenset[str]:
    if text.startswith("$(("):
        return frozenset({"arithmetic"})
    if text.startswith("$("):
        return frozenset({"substitution"})
    return frozenset({"variable"}) if text.startswith("$") else frozenset()


@pytest.fixture
def reader(ws: Path, home: Path, outside: Path) -> Reader:
    """Judges a command line with `judge_reader`, `{OUT}` and `{HOME}` filled in, in the workspace root."""
    env = env_at(ws, home)

    def judged(line: str) -> Judgement:
        text = fill(line, outside, home)
        name, *rest = shlex.split(text)
        j = Judgement()
        assert judge_reader(name, [WordValue(t, t, 0, 0, _kinds(t)) for t in rest], env, j, text)
        return j
    return judged


@pytest.mark.parametrize("name", ["make", "npm", "rm", "less", "shuf", "curl"])
def test_a_program_not_known_to_be_read_only_is_left_to_the_rest_of_the_judge(ws: Path, home: Path,
                                                                            name: str) -> None:
    j = Judgement()
    assert judge_reader(name, [WordValue("x", "x", 0, 0)], Env(ws, str(home), ws), j, f"{name} x") is False
    assert j.effect == "read" and not j.reads


@pytest.mark.parametrize(("line", "effect", "why"), [
    ("echo $X $(pwd)", "read", "only reads"),                        # output only: a variable changes nothing
    ("printf '%s\\n' $X", "read", "only reads"),
    ("cat notes.txt src/app.py", "read", "only reads"),
    ("head -n 3 src/app.py", "read", "only reads"),
    ("cat $X", "run", "a path only known at run time"),              # a computed operand could name any file
    ("wc -l $(ls)", "run", "a path only known at run time"),
    ("echo $((x))", "ask", "only known at run time (arithmetic)"),  # arithmetic can run code hidden in x
    ("cat {OUT}/secret.txt", "run", "outside the workspace"),
    ("cat {HOME}/.ssh/id_rsa", "deny", "reads a secret"),
    ("diff --from-file={HOME}/.ssh/id_rsa notes.txt", "deny", "reads a secret"),
    ("wc --files0-from {HOME}/.ssh/id_rsa", "deny", "reads a secret"),
    ("cat /proc/self/environ", "deny", "reads a secret"),
])
def test_file_readers_are_judged_by_the_files_their_operands_name(reader: Reader, line: str, effect: str,
                                                                  why: str) -> None:
    j = reader(line)
    assert j.effect == effect and why in j.why, j.why


@pytest.mark.parametrize(("line", "effect", "why"), [
    ("sort -o sorted.txt notes.txt", "edit", "in the workspace"),
    ("sort --output={OUT}/x notes.txt", "deny", "writes outside the workspace"),
    ("sort --compress-program=sh notes.txt", "ask", "runs a program"),
    ("sort $X notes.txt", "ask", "could be an option"),
    ("uniq notes.txt {OUT}/u", "deny", "writes outside the workspace"),   # uniq IN OUT writes OUT
    ("xxd -r dump bin", "edit", "in the workspace"),
    ("history -w {OUT}/h", "deny", "writes outside the workspace"),
    ("history -w", "run", "writes the history file"),
    ("history -r {HOME}/.ssh/id_rsa", "deny", "reads a secret"),
    ("tree -o {OUT}/t", "ask", "writes or reads a file list"),
    ("file -m magic notes.txt", "ask", "magic files"),
    ("hash -p /bin/rm ls", "ask", "maps a command name to another program"),
    ("date -s tomorrow", "run", "sets the system clock"),
    ("hostname evil", "run", "sets the host name"),
])
def test_options_that_write_or_run_are_found_on_otherwise_read_only_commands(reader: Reader, line: str,
                                                                             effect: str, why: str) -> None:
    j = reader(line)
    assert j.effect == effect and why in j.why, j.why


@pytest.mark.parametrize(("line", "effect"), [
    ("read -r line", "read"),
    ("read PATH", "ask"),
    ("read -ra LD_PRELOAD", "ask"),
    ("read 'a[i]'", "ask"),                 # the subscript is arithmetic on a run-time value
    ("mapfile -t lines", "read"),
    ("mapfile -C callback lines", "ask"),
    ("printf -v out %s x", "read"),
    ("printf -v PATH %s /tmp", "ask"),
    ("printf -vPATH %s /tmp", "ask"),
    ("printf $FMT x", "ask"),               # a computed first word could be -v
    ("getopts ab BASH_ENV", "ask"),
])
def test_builtins_that_set_a_variable_ask_when_it_changes_what_runs(reader: Reader, line: str, effect: str) -> None:
    assert reader(line).effect == effect


@pytest.mark.parametrize("command", ["tree -ao {OUT}/t", "tree -aofoo", "tree --fromf=list", "hash -rp /bin/rm ls",
                                     "sed --in-pl=.bak s/a/b/ notes.txt", "sed -ni s/a/b/ notes.txt"])
def test_an_option_bundled_or_abbreviated_is_read_as_the_program_reads_it(bash: Bash, command: str) -> None:
    """tree reads `-ao FILE` as -a and -o FILE; sed takes `--in-pl` for --in-place."""
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask", analysis.reason
    assert bash(command).action in ("ask", "deny")
