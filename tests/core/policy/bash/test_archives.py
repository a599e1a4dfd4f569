"""tar: which archive it writes or reads, where it extracts, and the options that make it run programs."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from core.policy.bash.archives import judge_tar
from core.policy.bash.findings import Judgement

from .harness import env_at, fill, word

Tar = Callable[[str], Judgement]


@pytest.fixture
def tar(ws: Path, home: Path, outside: Path) -> Tar:
    """Judges `tar ARGS`, with `{OUT}` and `{HOME}` filled in, started in the workspace root."""
    env = env_at(ws, home)

    def judged(line: str) -> Judgement:
        text = fill(line, outside, home)
        words = [word(t)
                 for t in shlex.split(text)]
        j = Judgement()
        judge_tar(words, env, j, f"tar {text}")
        return j
    return judged


@pytest.mark.parametrize(("args", "archive"), [
    ("czf x.tgz src", "x.tgz"),                       # old-style bundle: f takes the next word
    ("-cf x.tar src", "x.tar"),
    ("--create --file=x.tar src", "x.tar"),
    ("rf x.tar notes.txt", "x.tar"),                  # appending writes the archive too
])
def test_creating_an_archive_is_an_edit_of_the_archive_only(tar: Tar, ws: Path, args: str, archive: str) -> None:
    j = tar(args)
    assert j.effect == "edit"
    assert j.writes == [str(ws.resolve() / archive)]
    assert any("writes an archive" in reason for _, reason in j.impact)


@pytest.mark.parametrize(("args", "effect", "why"), [
    ("czf {OUT}/x.tgz src", "deny", "writes outside the workspace"),
    ("-c --file={OUT}/x.tar src", "deny", "writes outside the workspace"),
    ("-g {OUT}/snapshot -cf x.tar src", "deny", "writes outside the workspace"),
    ("czf keys.tgz {HOME}/.ssh", "deny", "reads a secret"),
    ("-C {HOME} -czf keys.tgz .ssh", "deny", "reads a secret"),   # operands are read from the -C directory
    ("-cf x.tar -T {HOME}/.ssh/id_rsa", "deny", "reads a secret"),
    ("-cf x.tar {OUT}", "run", "outside the workspace"),
    ("tf {OUT}/backup.tar", "run", "outside the workspace"),     # listing reads the archive, writes nothing
])
def test_archives_and_members_outside_the_workspace_are_judged_where_they_are(tar: Tar, args: str, effect: str,
                                                                             why: str) -> None:
    j = tar(args)
    assert j.effect == effect and why in j.why, j.why


@pytest.mark.parametrize(("args", "effect", "why"), [
    ("xf x.tar", "run", "extracts files Belay cannot see"),
    ("-xf x.tar -C src", "run", "extracts files Belay cannot see"),
    ("xf x.tar -C {OUT}", "deny", "writes outside the workspace"),
    ("-xf x.tar --directory=/", "deny", "writes outside the workspace"),
    ("-xPf x.tar", "ask", "absolute names"),
    ("xOf x.tar", "read", "only reads"),                         # to standard output: nothing lands on disk
    ("tf x.tar", "read", "only reads"),
])
def test_extracting_is_judged_by_the_directory_it_extracts_into(tar: Tar, args: str, effect: str, why: str) -> None:
    j = tar(args)
    assert j.effect == effect and why in j.why, j.why


def test_extracting_into_a_protected_directory_is_flagged(tar: Tar) -> None:
    j = tar("-xf x.tar -C .git/hooks")
    assert j.protected is not None and ".git" in j.protected


@pytest.mark.parametrize("args", [
    "-xf x.tar --to-command=sh",
    "-cf x.tar --use-compress-program=sh src",
    "-I gzip -cf x.tgz src",
    "-Igzip -cf x.tgz src",
    "-cf x.tar --checkpoint-action=exec=id src",
    "-cf x.tar --checkpoint-action exec=id src",
    "-F next.sh -cf x.tar src",
    "--rsh-command=/bin/sh -cf host:x.tar src",
    "-cf x.tar --info-script=x.sh src",
    "-xf x.tar -C $D",                                 # a computed word could be any of these options
])
def test_options_that_make_tar_run_a_program_ask(tar: Tar, args: str) -> None:
    j = tar(args)
    assert j.effect == "ask"
    assert "run a command" in j.why
