"""Lists, pipelines and their redirections grouped as Bash groups them, not as tree-sitter nests them."""

from __future__ import annotations

import pytest

from .harness import Bash


def _redirected(bash: Bash, command: str) -> dict[str, list[str]]:
    """Each command's first word and the targets of its redirections."""
    return {c.argv[0]: [r.target for r in c.redirects] for c in bash.analysis(command).commands}


@pytest.mark.parametrize(("command", "expected"), [
    ("ls && echo x > f", {"ls": [], "echo": ["f"]}),
    ("ls || echo x 2> f", {"ls": [], "echo": ["f"]}),
    ("ls; echo x > f", {"ls": [], "echo": ["f"]}),
    ("ls | sort > f", {"ls": [], "sort": ["f"]}),
    ("ls && echo x > f | cat", {"ls": [], "echo": ["f"], "cat": []}),
    ("ls > a && echo x > b | cat > c", {"ls": ["a"], "echo": ["b"], "cat": ["c"]}),
    ("! ls > f", {"ls": ["f"]}),
])
def test_a_redirection_belongs_to_the_command_it_follows(bash: Bash, command: str,
                                                         expected: dict[str, list[str]]) -> None:
    assert _redirected(bash, command) == expected


def test_a_pipe_binds_tighter_than_and_and_or(bash: Bash) -> None:
    analysis = bash.analysis("a && b > f | c && d")
    context = {c.argv[0]: c.context for c in analysis.commands}
    assert context == {"a": "", "b": "pipeline", "c": "pipeline", "d": ""}
    piped = bash.analysis("a | b && c | d")
    assert [c.context for c in piped.commands] == ["pipeline"] * 4
    assert len([n for n in piped.nodes if n.kind == "pipeline"]) == 2


@pytest.mark.parametrize(("command", "written"), [
    ("cd src && echo x > f", "src/f"),                 # the cd runs before `> f` is opened
    ("cd src && ls | sort > f", "src/f"),
    ("cd src; echo x > f", "src/f"),
    ("(cd src) && echo x > f", "f"),                   # a subshell's cd stays inside it
    ("cd src | cat && echo x > f", "f"),               # so does a pipeline stage's
])
def test_a_redirection_opens_in_the_directory_its_command_runs_in(bash: Bash, command: str, written: str) -> None:
    echo = next(c for c in bash.analysis(command).commands if c.redirects)
    assert echo.writes == (str(bash.ws.resolve() / written),)


def test_a_redirection_after_a_list_that_leaves_the_workspace_is_refused(bash: Bash) -> None:
    analysis = bash.analysis("cd .. && echo x > f")
    echo = analysis.commands[-1]
    assert echo.effect == "deny" and str(bash.ws.resolve().parent / "f") in echo.why
    assert analysis.verdict_hint == "deny"


def test_each_operand_knows_the_operator_before_it() -> None:
    """An operand after `||` runs when the one before failed: a `cd` there may not have happened."""
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    from core.policy.bash.regroup import regroup

    node = Parser(Language(tree_sitter_bash.language())).parse(b"a && b | c || d").root_node.named_children[0]
    assert [[s.after for s in stages] for stages in regroup(node)] == [[""], ["&&", ""], ["||"]]
