"""Redirections: which open a file for writing or reading, and what a heredoc makes Bash run."""

from __future__ import annotations

import pytest

from core.policy.bash.nodes import RawRedirect
from core.policy.bash.redirects import classify
from core.policy.bash.words import WordValue

from .harness import Bash


def _redirect(op: str, target: str | None) -> RawRedirect:
    kinds = frozenset({"variable"}) if target is not None and target.startswith("$") else frozenset()
    word = WordValue(target, target, 0, 0, kinds) if target is not None else None
    return RawRedirect(op, word, 0, 0)


@pytest.mark.parametrize(("op", "target", "kind"), [
    (">", "out.txt", "write"),
    (">>", "out.txt", "write"),
    (">|", "out.txt", "write"),
    ("&>", "out.txt", "write"),
    ("&>>", "out.txt", "write"),
    ("2>", "err.txt", "write"),
    ("3>>", "log.txt", "write"),
    (">&", "out.txt", "write"),       # `>& file` is `&> file`
    (">", "$F", "dynamic-write"),
    ("<", "notes.txt", "read"),
    ("0<", "notes.txt", "read"),
    ("<", "$F", "read"),
    (">", "/dev/null", "none"),
    ("2>", "/dev/stderr", "none"),
    (">", "/dev/fd/3", "none"),
    (">&", "2", "none"),              # duplicating a descriptor opens nothing
    ("2>&", "1", "none"),
    (">&", "-", "none"),              # closing one neither
    ("<&", "3", "none"),
    ("<<", "<heredoc>", "none"),
    ("<<<", "text", "none"),
    (">", None, "none"),
])
def test_each_redirection_is_classified_by_what_it_opens(op: str, target: str | None, kind: str) -> None:
    assert classify(_redirect(op, target)) == kind


def test_a_word_after_a_redirection_target_is_an_argument_of_the_command(bash: Bash) -> None:
    analysis = bash.analysis("echo a > {OUT}/f ~/.bashrc")
    echo = analysis.commands[0]
    assert echo.argv == ("echo", "a", str(bash.home / ".bashrc"))
    assert [(r.op, r.target, r.writes_file) for r in echo.redirects] == [(">", bash.text("{OUT}/f"), True)]
    assert echo.effect == "deny" and "writes outside the workspace" in echo.why


@pytest.mark.parametrize(("command", "hint"), [
    ("cat <<EOF\n$(rm -rf ~)\nEOF", "deny"),        # an unquoted body is expanded: its substitutions run
    ("cat <<'EOF'\n$(rm -rf ~)\nEOF", "allow"),     # a quoted delimiter keeps the body as text
    ("cat <<\"EOF\"\n`rm -rf ~`\nEOF", "allow"),
    ("cat <<EOF\n`id`\nEOF", "ask"),                # backticks in a body are not analysed
    ("cat <<EOF\n${a[i]}\nEOF", "ask"),             # arithmetic on a run-time value
    ("cat <<-EOF\n\t$(id)\n\tEOF", "ask"),          # tree-sitter leaves a <<- body unparsed
    ("cat <<EOF\nplain text\nEOF", "allow"),
])
def test_a_heredoc_body_runs_what_bash_expands_in_it(bash: Bash, command: str, hint: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == hint, analysis.reason


def test_a_pipeline_continuing_a_heredoc_line_is_analysed(bash: Bash) -> None:
    analysis = bash.analysis("cat <<EOF | sh\nrm -rf ~\nEOF")
    assert [c.argv[0] for c in analysis.commands] == ["cat", "sh"]
    assert analysis.verdict_hint == "ask" and "reads commands from its input" in analysis.reason
    assert bash.analysis("cat <<EOF > {OUT}/x\nhi\nEOF").verdict_hint == "deny"
