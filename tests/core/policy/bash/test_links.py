"""Recursive readers over a folder holding a symlink that leaves the workspace: asked, or refused for a secret."""

from __future__ import annotations

import os

import pytest

from .harness import Bash


@pytest.fixture
def linked(bash: Bash) -> Bash:
    """A cloned repository may hold `keys -> ~/.ssh` and `up -> {OUT}`."""
    (bash.ws / "repo").mkdir()
    (bash.ws / "repo" / "a.txt").write_text("a\n")
    (bash.ws / "out").mkdir()
    os.symlink(bash.outside, bash.ws / "out" / "up")
    return bash


@pytest.mark.parametrize("command", ["grep -R KEY .", "grep -r KEY", "rg KEY", "rg -L KEY .", "rg KEY repo/..",
                                     "ls -RL", "du -L", "tar cf - .", "grep -R KEY repo/.."])
def test_a_recursive_reader_over_a_link_to_a_secret_is_refused(linked: Bash, command: str) -> None:
    os.symlink(linked.home / ".ssh", linked.ws / "repo" / "keys")
    verdict = linked(command)
    assert verdict.action == "deny" and "secret" in verdict.reason, verdict.reason


@pytest.mark.parametrize("command", ["grep -R KEY out", "rg KEY out", "grep -rn KEY .", "rg --follow x"])
def test_a_recursive_reader_over_a_link_leaving_the_workspace_asks(linked: Bash, command: str) -> None:
    verdict = linked(command)
    assert verdict.action == "ask" and "outside the workspace" in verdict.reason, verdict.reason


@pytest.mark.parametrize("command", ["grep -R KEY repo", "rg KEY repo", "ls -R repo", "cat repo/a.txt", "ls out"])
def test_a_reader_over_folders_whose_links_stay_inside_is_allowed(linked: Bash, command: str) -> None:
    os.symlink(linked.ws / "repo" / "a.txt", linked.ws / "repo" / "b.txt")
    assert linked(command).action == "allow", linked(command).reason


def test_an_archive_written_inside_the_workspace_does_not_take_a_linked_secret_along(linked: Bash) -> None:
    os.symlink(linked.home / ".ssh", linked.ws / "repo" / "keys")
    linked.engine.set_mode("accept_edits")
    assert linked("tar chf backup.tar repo").action == "deny"
