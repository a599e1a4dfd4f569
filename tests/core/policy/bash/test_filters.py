"""grep, rg, jq, sed and awk: patterns and programs are not paths, files are, and scripts that write or run ask."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from core.policy.bash.filters import judge_awk, judge_grep, judge_jq, judge_sed
from core.policy.bash.findings import Judgement

from .harness import env_at, fill, word

Filter = Callable[[str], Judgement]


@pytest.fixture
def run(ws: Path, home: Path, outside: Path) -> Filter:
    """Judges a grep/rg/jq/sed/awk command line, with `{OUT}` and `{HOME}` filled in, in the workspace root."""
    env = env_at(ws, home)

    def judged(line: str) -> Judgement:
        text = fill(line, outside, home)
        name, *rest = shlex.split(text)
        args = [word(t) for t in rest]
        j = Judgement()
        if name in ("grep", "rg"):
            judge_grep(name, args, env, j, text)
        elif name == "jq":
            judge_jq(args, env, j, text)
        elif name == "sed":
            judge_sed(args, env, j, text)
        else:
            judge_awk(args, env, j, text)
        return j
    return judged


@pytest.mark.parametrize(("line", "read"), [
    ("grep -r /api/ src", ["src"]),                  # /api/ is the pattern, not a path outside
    ("grep -e /etc/passwd notes.txt", ["notes.txt"]),
    ("rg -g '*.py' import src", ["src"]),
    ("jq .name notes.txt", ["notes.txt"]),
    ("sed -n 1,5p notes.txt", ["notes.txt"]),
    ("awk '{print $1}' notes.txt", ["notes.txt"]),
    ("awk '{print}' n=1 notes.txt", ["notes.txt"]),   # n=1 is an assignment, not a file
])
def test_patterns_and_programs_are_not_read_as_files(run: Filter, ws: Path, line: str, read: list[str]) -> None:
    j = run(line)
    assert j.effect == "read", j.why
    assert j.reads == [str(ws.resolve() / name) for name in read]


@pytest.mark.parametrize("line", [
    "grep x {HOME}/.ssh/id_rsa",
    "grep -e x {HOME}/.ssh/id_rsa",
    "grep -f {HOME}/.ssh/id_rsa src",                # the pattern file is read too
    "grep --exclude-from={HOME}/.ssh/id_rsa x .",
    "rg -epattern {HOME}/.ssh/id_rsa",
    "rg --ignore-file {HOME}/.ssh/id_rsa x",
    "jq --rawfile k {HOME}/.ssh/id_rsa -n '$k'",
    "jq -f {HOME}/.ssh/id_rsa notes.txt",
    "sed -n 1p {HOME}/.ssh/id_rsa",
    "awk '{print}' {HOME}/.ssh/id_rsa",
])
def test_a_file_named_anywhere_among_the_options_is_checked_for_secrets(run: Filter, line: str) -> None:
    j = run(line)
    assert j.effect == "deny" and "reads a secret" in j.why, j.why


@pytest.mark.parametrize(("line", "why"), [
    ("rg --pre 'sh -c id' x", "runs other programs"),
    ("rg --pre=id x", "runs other programs"),
    ("rg -z x", "runs other programs"),
    ("sed 's/a/b/e' notes.txt", "may write files or run commands"),
    ("sed 's/a/b/w out' notes.txt", "may write files or run commands"),
    ("sed '1r /etc/passwd' notes.txt", "may write files or run commands"),
    ("sed -e 1p -e 'e id' notes.txt", "may write files or run commands"),
    ("sed -f script.sed notes.txt", "does not check"),
    ("sed -n $X notes.txt", "could be an option"),
    ("awk 'BEGIN{system(\"id\")}'", "can run commands"),
    ("awk 'BEGIN{\"id\" | getline}'", "can run commands"),
    ("awk '{print > \"x\"}' notes.txt", "can run commands"),
    ("awk 'BEGIN{f=\"system\"; @f(\"id\")}'", "can run commands"),
    ("awk -f prog.awk notes.txt", "does not check"),
    ("awk -e 'BEGIN{}' -e 'BEGIN{system(1)}'", "can run commands"),
])
def test_programs_and_options_that_write_or_run_commands_ask(run: Filter, line: str, why: str) -> None:
    j = run(line)
    assert j.effect == "ask" and why in j.why, j.why


@pytest.mark.parametrize(("line", "effect"), [
    ("sed -i 's/a/b/' notes.txt", "edit"),
    ("sed --in-place=.bak 's/a/b/' notes.txt", "edit"),
    ("sed -i 's/a/b/' {OUT}/secret.txt", "deny"),
])
def test_sed_in_place_writes_its_files(run: Filter, ws: Path, line: str, effect: str) -> None:
    j = run(line)
    assert j.effect == effect
    assert j.writes == ([str(ws.resolve() / "notes.txt")] if effect == "edit" else [])
    assert any("edits files in place" in reason for _, reason in j.impact)
