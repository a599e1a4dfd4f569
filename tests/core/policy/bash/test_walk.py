"""The walk: every simple command Bash would run is found, with where it sits and the directory it starts in."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy.bash.nodes import Cwd, RawCommand
from core.policy.bash.walk import Walker


def _walk(command: str, ws: Path, home: Path) -> tuple[list[RawCommand], Walker]:
    walker = Walker(str(home))
    walker.add_source(command, None, None, Cwd(ws.resolve()))
    return walker.run(), walker


def _argv(raw: RawCommand) -> str:
    return " ".join(w.text for w in raw.words)


def test_commands_are_found_in_the_order_they_run_wherever_they_hide(ws: Path, home: Path) -> None:
    found, walker = _walk("echo $(whoami) | grep x; (cd src; ls); f() { rm x; }; if true; then pwd; fi", ws, home)
    assert [(_argv(c), c.context) for c in found] == [
        ("echo $(whoami)", "pipeline"),
        ("whoami", "pipeline › command substitution"),
        ("grep x", "pipeline"),
        ("cd src", "subshell"),
        ("ls", "subshell"),
        ("rm x", "function › group"),
        ("true", "if"),
        ("pwd", "if"),
    ]
    assert [c.piped for c in found[:3]] == [False, False, True]
    assert walker.errors == []


@pytest.mark.parametrize(("command", "inner", "context"), [
    ("cat <(rm x)", "rm x", "process substitution"),
    ("ls > >(rm x)", "rm x", "process substitution"),
    ("echo \"a $(rm x) b\"", "rm x", "command substitution"),
    ("echo `rm x`", "rm x", "command substitution"),
    ("cat <<EOF\n$(rm x)\nEOF", "rm x", "command substitution"),
    ("echo ${v:-$(rm x)}", "rm x", "command substitution"),
    ("while true; do rm x; done", "rm x", "while"),
    ("until false; do rm x; done", "rm x", "until"),
    ("case y in y) rm x;; esac", "rm x", "case › case item"),
    ("{ rm x; }", "rm x", "group"),
    ("! rm x", "rm x", ""),
])
def test_a_command_inside_any_construct_is_found_with_its_context(ws: Path, home: Path, command: str, inner: str,
                                                                 context: str) -> None:
    found, _ = _walk(command, ws, home)
    assert (inner, context) in [(_argv(c), c.context) for c in found]


@pytest.mark.parametrize(("command", "where"), [
    ("cd src && ls", "src"),
    ("cd src; cd ..; ls", "."),
    ("(cd src); ls", "."),                   # a subshell's cd stays inside it
    ("cd src | cat; ls", "."),               # so does a pipeline stage's
    ("echo $(cd src); ls", "."),
    ("cd nowhere; ls", None),                # the cd fails: the directory is unknown
    ("cd $D; ls", None),
    ("cd $D; cd /; ls", "/"),                # an absolute cd makes it known again
])
def test_the_working_directory_is_tracked_through_static_cds(ws: Path, home: Path, command: str,
                                                             where: str | None) -> None:
    found, _ = _walk(command, ws, home)
    last = found[-1]
    assert _argv(last) == "ls"
    expected = None if where is None else Path("/") if where == "/" else (ws / where).resolve()
    assert last.cwd_before == expected


@pytest.mark.parametrize("command", ["echo 'unterminated", "if then fi", "cat <<EOF"])
def test_text_that_cannot_be_parsed_is_reported_with_where_it_goes_wrong(ws: Path, home: Path, command: str) -> None:
    _, walker = _walk(command, ws, home)
    assert walker.errors and walker.errors[0].startswith("Bash syntax Belay cannot parse")
    assert "line 1" in walker.errors[0]


def test_a_deep_chain_is_walked_without_recursion(ws: Path, home: Path) -> None:
    found, walker = _walk("( " * 3000 + "rm x" + " )" * 3000 + " && " + " && ".join(["true"] * 3000), ws, home)
    assert len(found) == 3001
    assert _argv(found[0]) == "rm x" and found[0].context == "subshell ×3000"
    assert walker.errors == []
