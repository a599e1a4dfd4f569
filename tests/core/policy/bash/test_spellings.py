"""Spellings that once slipped past the judge: bundled and abbreviated options, options that read files,
variables that make readers run programs, and `unset PATH`.  Each is judged as what it does."""

from __future__ import annotations

import pytest

from .harness import Bash


@pytest.mark.parametrize(("command", "action", "why"), [
    # options that read a file: a secret is refused, a file outside the workspace asks
    ("date -f {HOME}/.ssh/id_rsa", "deny", "credential store"),
    ("date --file={OUT}/x", "ask", "outside the workspace"),
    ("sort --files0-from={OUT}/x", "ask", "outside the workspace"),
    ("sort --files0={OUT}/x", "ask", "outside the workspace"),  # a GNU abbreviation
    ("find . -files0-from {HOME}/.ssh/id_rsa", "deny", "credential store"),
    ("tar rf x.tar {HOME}/.ssh/id_rsa", "deny", "credential store"),  # appending reads what it appends
    # options that run a program, bundled or abbreviated
    ("sort --compress-p=sh notes.txt", "ask", "runs a program"),
    ("tar -cIsh -f x.tar src", "ask", "run a command"),
    ("tar cIf sh x.tar src", "ask", "run a command"),
    ("tar --to-com=sh -xf x.tar", "ask", "run a command"),
    ("tar cf host:/x.tar src", "ask", "another host"),
    # variables read by readers that make them run programs
    ("TAR_OPTIONS=--to-command=sh tar tf x.tar", "ask", "TAR_OPTIONS"),
    ("RIPGREP_CONFIG_PATH={OUT}/rc rg foo", "ask", "RIPGREP_CONFIG_PATH"),
    # find following links out of the workspace
    ("find -L . -name x", "ask", "follows symbolic links"),
    ("find . -follow -name x", "ask", "follows symbolic links"),
    # unsetting PATH makes the working directory the place commands are found
    ("unset PATH; ls", "ask", "unsets PATH"),
    # a bundled target directory is the next word, not the rest of the bundle
    ("cp -rt {OUT} src", "deny", "outside the workspace"),
    ("cp -t{OUT} src", "deny", "outside the workspace"),
])
def test_each_spelling_is_judged_as_what_it_does(bash: Bash, command: str, action: str, why: str) -> None:
    verdict = bash(command)
    assert verdict.action == action, verdict.reason
    assert why in verdict.reason


@pytest.mark.parametrize("command", ["date +%s", "unset FOO", "unset -f ls", "find -O2 . -name x",
                                     "sort notes.txt", "tar tf x.tar"])
def test_the_plain_forms_still_only_read(bash: Bash, command: str) -> None:
    assert bash(command).action == "allow"


def test_tar_remove_files_deletes_what_it_archives(bash: Bash) -> None:
    analysis = bash.analysis("tar --remove-files -cf x.tar src")
    assert any("deletes the files it archives" in r for r in analysis.impact.reasons)
    assert analysis.impact.level == "high"
