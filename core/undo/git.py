"""Undoing the git references a call moved: a commit taken back, a reset put forward, a branch made or removed.

Only the reference moves, as `git reset --soft` would: the files and the
index are left as they are, so the work of an undone commit is still there,
staged, and nothing uncommitted is lost.  Each move is a compare-and-swap
(`git update-ref <ref> <new> <expected old>`): a reference that moved again
since the call is left alone and reported.  Git runs with the repository's
hooks and other programs switched off (`NO_PROGRAMS`): the repository is
agent-written, and the undo runs in the console's own process.  HEAD switching branch (a
checkout) is not undone: that would change which files are checked out,
which is the person's decision, not an undo's.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.changes.gitproc import GIT, NO_PROGRAMS, git_env
from core.changes.gitstate import GitState, find_git_dir, read_git_state
from core.errors import ErrorKind, ToolError
from core.models.records import GitChange, GitMove

GIT_TIMEOUT_S = 10.0
ZERO = "0" * 40


@dataclass(frozen=True)
class RefStep:
    """One reference move of the call and what undoing it needs."""

    seq: int
    change: GitChange
    action: Literal["restore", "already", "conflict", "unrestorable"]
    reason: str = ""


def plan_refs(root: Path, changes: Sequence[tuple[int, GitChange]]) -> list[RefStep]:
    """Where each reference stands now against what the call left (newest move first)."""
    state = read_git_state(root)
    steps = []
    for seq, change in reversed(changes):
        if change.kind in ("checkout",) or (change.ref == "HEAD" and change.kind in ("created", "deleted")):
            steps.append(RefStep(seq, change, "unrestorable", "a checkout or a whole repository is not undone"))
            continue
        now = _value(state, change.ref) if state is not None else None
        if now == change.before:
            steps.append(RefStep(seq, change, "already"))
        elif now == change.after:
            steps.append(RefStep(seq, change, "restore"))
        else:
            steps.append(RefStep(seq, change, "conflict", f"{change.ref} moved again since (it is now "
                                                          f"{(now or 'gone')[:12]})"))
    return steps


_INVERSE: dict[GitMove, GitMove] = {"created": "deleted", "deleted": "created", "commit": "reset", "reset": "moved"}
"""The kind of the move that undoes a move of each kind (any other: "moved")."""


def inverse(change: GitChange) -> GitChange:
    """The move that undoes `change` (what an undo records, so that it can be undone in turn)."""
    return GitChange(ref=change.ref, kind=_INVERSE.get(change.kind, "moved"), before=change.after, after=change.before,
                     what=f"undo: {change.what}")


def apply_refs(root: Path, steps: Sequence[RefStep]) -> None:
    """Move each reference back; raises ToolError on the first that cannot (the ones before it stay moved)."""
    git_dir = find_git_dir(root)
    if git_dir is None:
        raise ToolError(ErrorKind.NOT_FOUND, "the workspace is no longer a git repository; its refs cannot be undone")
    for step in steps:
        change = step.change
        if change.before is None:
            argv = ["update-ref", "-d", change.ref, change.after or ""]
        elif change.ref == "HEAD":
            argv = ["update-ref", "--no-deref", "HEAD", change.before, change.after or ZERO]
        else:
            argv = ["update-ref", change.ref, change.before, change.after or ZERO]
        _git(git_dir, root, argv, change)


def _git(git_dir: str, root: Path, argv: list[str], change: GitChange) -> None:
    try:
        done = subprocess.run([GIT, *NO_PROGRAMS, f"--git-dir={git_dir}", *argv], cwd=root, env=git_env(),
                              capture_output=True, text=True, timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(ErrorKind.SYSTEM, f"could not move {change.ref} back: {e}") from None
    if done.returncode != 0:
        raise ToolError(ErrorKind.CONFLICT, f"could not move {change.ref} back: {done.stderr.strip()}",
                        "The reference moved again since; look at it with git log.")


def _value(state: GitState, ref: str) -> str | None:
    return state.head if ref == "HEAD" else state.refs.get(ref)
