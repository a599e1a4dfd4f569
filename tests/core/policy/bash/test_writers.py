"""rm, cp, mv, ln, touch, tee, dd and friends: exactly which paths each writes, deletes or reads."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from core.policy.bash.findings import Judgement
from core.policy.bash.writers import judge_writer

from .harness import env_at, fill, word

Writer = Callable[[str], Judgement]


@pytest.fixture
def writer(ws: Path, home: Path, outside: Path) -> Writer:
    """Judges a file-writing command line, with `{OUT}` and `{HOME}` filled in, in the workspace root."""
    env = env_at(ws, home)

    def judged(line: str) -> Judgement:
        text = fill(line, outside, home)
        name, *rest = shlex.split(text)
        args = [word(t) for t in rest]
        j = Judgement()
        judge_writer(name, args, env, j, text)
        return j
    return judged


@pytest.mark.parametrize(("line", "written"), [
    ("rm notes.txt", ["notes.txt"]),
    ("rm -rf src notes.txt", ["src", "notes.txt"]),
    ("rm -- -f", ["-f"]),
    ("mkdir -m 755 build", ["build"]),              # 755 is the mode, not a directory
    ("touch -d 2020-01-01 stamp", ["stamp"]),
    ("shred -n 3 notes.txt", ["notes.txt"]),
    ("truncate -s 0 notes.txt", ["notes.txt"]),
    ("cp notes.txt copy", ["copy"]),                # cp writes its last operand only
    ("cp -r src notes.txt backup", ["backup"]),
    ("mv notes.txt moved", ["notes.txt", "moved"]),  # mv removes its source too
    ("ln -s src/app.py link", ["link"]),
    ("install -m 755 notes.txt bin", ["bin"]),
    ("chmod 644 notes.txt", ["notes.txt"]),         # the mode is not a path
    ("chmod --reference=notes.txt src", ["src"]),
    ("tee a.log b.log", ["a.log", "b.log"]),
    ("tee /dev/null", []),
    ("dd if=notes.txt of=copy bs=1M", ["copy"]),
])
def test_exactly_the_paths_a_command_writes_are_judged_as_written(writer: Writer, ws: Path, line: str,
                                                                  written: list[str]) -> None:
    j = writer(line)
    assert j.writes == [str(ws.resolve() / name) for name in written]
    assert j.effect == ("edit" if written else "read"), j.why


@pytest.mark.parametrize(("line", "why"), [
    ("rm -rf {OUT}", "deletes outside the workspace"),
    ("rm ../victim", "deletes outside the workspace"),
    ("cp notes.txt {OUT}/", "writes outside the workspace"),
    ("cp -t {OUT} notes.txt", "writes outside the workspace"),
    ("mv --target-directory={OUT} notes.txt", "writes outside the workspace"),
    ("mv {OUT}/secret.txt here", "writes outside the workspace"),      # the source is removed
    ("install -d {OUT}/d", "writes outside the workspace"),
    ("touch {OUT}/x", "writes outside the workspace"),
    ("tee -a {HOME}/.bashrc", "writes outside the workspace"),
    ("dd if=/dev/zero of={OUT}/disk", "writes outside the workspace"),
    ("cp {HOME}/.ssh/id_rsa stolen", "reads a secret"),
    ("dd if={HOME}/.ssh/id_rsa of=k", "reads a secret"),
])
def test_writing_outside_the_workspace_or_copying_a_secret_is_refused(writer: Writer, line: str, why: str) -> None:
    j = writer(line)
    assert j.effect == "deny" and why in j.why, j.why
    assert any(level == "high" for level, _ in j.impact)


@pytest.mark.parametrize(("line", "effect", "why"), [
    ("ln -s {OUT} door", "ask", "writes through the link would land there"),
    ("ln -s {HOME} h", "ask", "writes through the link would land there"),
    ("ln -s .. up", "ask", "writes through the link would land there"),
    ("ln -s ../../x src/up", "ask", "writes through the link would land there"),
    ("ln {OUT}/secret.txt hard", "ask", "writes through the link would land there"),
    ("ln -s ../notes.txt src/n", "edit", "in the workspace"),   # resolved from the link's own directory
    ("ln -s notes.txt src/n", "edit", "in the workspace"),
])
def test_a_link_leading_out_of_the_workspace_asks(writer: Writer, line: str, effect: str, why: str) -> None:
    j = writer(line)
    assert j.effect == effect and why in j.why, j.why


@pytest.mark.parametrize(("line", "effect", "level", "why"), [
    ("rm -rf build", "edit", "high", "deletes recursively"),
    ("rm notes.txt", "edit", "medium", "deletes"),
    ("shred notes.txt", "edit", "high", "deletes recursively"),
    ("chmod u+s tool", "ask", "high", "sets a setuid"),
    ("chmod 4755 tool", "ask", "high", "sets a setuid"),
    ("chmod g=rxs tool", "ask", "high", "sets a setuid"),
    ("chmod 755 tool", "edit", "medium", "writes files"),
    ("chown me notes.txt", "run", "high", "changes ownership"),
    ("touch new", "edit", "medium", "writes files"),
])
def test_how_much_a_write_could_hurt_is_weighed(writer: Writer, line: str, effect: str, level: str, why: str) -> None:
    j = writer(line)
    assert j.effect == effect, j.why
    assert any(lv == level and r.startswith(why) for lv, r in j.impact), j.impact


def test_the_whole_workspace_deleted_asks(writer: Writer, ws: Path) -> None:
    for line in ("rm -rf .", "rm -rf ./", "rm -rf *", f"rm -rf {ws}", "rm -rf src/.."):
        j = writer(line)
        assert j.effect == "ask" and "deletes the whole workspace" in j.why, line
