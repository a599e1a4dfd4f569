"""Bash analysis records: what counts as a read-only command line and how a simple command reads to rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.models.bash import BashAnalysis, Effect, Impact, SimpleCommand


def _command(argv: tuple[str, ...], effect: Effect = "read", dynamic: tuple[int, ...] = ()) -> SimpleCommand:
    text = " ".join(argv)
    return SimpleCommand(argv=argv, dynamic=dynamic, text=text, start=0, end=len(text), effect=effect, why="")


def _analysis(*commands: SimpleCommand, **extra: str) -> BashAnalysis:
    line = " | ".join(c.text for c in commands)
    return BashAnalysis(command=line, commands=commands, verdict_hint="allow", reason="", **extra)


def test_a_line_is_read_only_only_when_every_command_only_reads() -> None:
    cat, grep, rm = _command(("cat", "a.txt")), _command(("grep", "x")), _command(("rm", "a.txt"), "edit")
    assert _analysis(cat, grep).read_only
    assert not _analysis(cat, rm).read_only
    assert not _analysis().read_only  # nothing understood is nothing known to be safe


def test_a_hidden_character_or_a_syntax_error_is_never_read_only() -> None:
    cat = _command(("cat", "a.txt"))
    assert not _analysis(cat, hidden_character="U+200B").read_only
    assert not _analysis(cat, syntax_error="unexpected token `)'").read_only


def test_rules_match_the_words_joined_and_a_run_time_word_makes_a_command_dynamic() -> None:
    known = _command(("git", "log", "--oneline"))
    computed = _command(("rm", "$TARGET"), "run", dynamic=(1,))
    assert known.line == "git log --oneline" and known.static
    assert computed.line == "rm $TARGET" and not computed.static


def test_an_analysis_is_frozen_and_refuses_an_unknown_impact_level() -> None:
    analysis = _analysis(_command(("ls",)))
    with pytest.raises(ValidationError):
        analysis.reason = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Impact(level="catastrophic")  # type: ignore[arg-type]
