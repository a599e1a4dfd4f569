"""Undoing the git references a call moved: a commit taken back, a reset put forward, a branch made or removed.

Only the reference moves, as `git reset --soft` would: the files and the
index are left as they are, so the work of an undone commit is still there,
staged, and nothing uncommitted is lost.  Each move is a compare-and-swap
(`git update-ref <ref> <new> <expected old>`): a reference that moved again
since the call is left alone and reported.  Git runs with the repository's
hooks and other programs switched off (`NO_PROGRAMS`): the repository is
agent-written, and the undo runs in the console's own process.

HEAD switching branch (a checkout) is undone when switching back changes
no file (the branch it was on points at the commit HEAD is on, as after
`git switch -c topic`), or when the undo puts back every file the checkout
changed (an MCP server's `git_checkout`, a `git checkout other`): HEAD then
goes back with them, and the index takes the old branch's entries for those
files.  Otherwise which files are checked out is the person's decision, not
an undo's.  Then a branch the call made and HEAD is
still on is kept too: undo never leaves HEAD on a branch that is gone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
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
    index_from: str | None = None
    """For a checkout undone with the files it changed: the commit whose entries for `index_paths` the index
    takes back (the checkout wrote the other branch's there)."""
    index_paths: tuple[str, ...] = ()


def plan_refs(root: Path, changes: Sequence[tuple[int, GitChange]], files_back: Sequence[str] = ()) -> list[RefStep]:
    """Where each reference stands now against what the call left (newest move first).  `files_back`: every
    file the call changed, when the same undo puts each of them back as it was (else empty)."""
    state = read_git_state(root)
    steps = [_step(state, seq, change) for seq, change in reversed(changes)]
    if state is None:
        return steps
    later = dict(state.refs) | {s.change.ref: s.change.before for s in steps if s.action == "restore"}
    steps = [_checkout_step(state, later, s, tuple(files_back)) for s in steps]
    if any(s.change.ref == "HEAD" and s.action == "restore" for s in steps):
        return steps
    return [_keep_branch_of_head(state, s) for s in steps]


def _step(state: GitState | None, seq: int, change: GitChange) -> RefStep:
    if change.ref == "HEAD" and change.kind in ("created", "deleted"):
        return RefStep(seq, change, "unrestorable", "a whole repository is not undone")
    now = _value(state, change.ref) if state is not None else None
    if now == change.before:
        return RefStep(seq, change, "already")
    if now == change.after:
        return RefStep(seq, change, "restore")
    return RefStep(seq, change, "conflict", f"{change.ref} moved again since (it is now {(now or 'gone')[:12]})")


def _checkout_step(state: GitState, later: dict[str, str | None], step: RefStep, files_back: tuple[str, ...]
                   ) -> RefStep:
    """A checkout is undone when HEAD goes back to the commit it is on (the other moves undone), or when the files
    it changed are all put back by the same undo: the work tree is then the old branch's again, and so is the
    index, for those files (`index_from`).  A HEAD left on the new branch over the old branch's files would be a
    state that never existed."""
    if step.change.kind != "checkout" or step.action != "restore":
        return step
    back = _commit(later, step.change.before) if step.change.before is not None else None
    if back is not None and back == _commit(state.refs, state.head):
        return step
    if back is not None and files_back:
        return RefStep(step.seq, step.change, "restore", index_from=back, index_paths=files_back)
    return RefStep(step.seq, step.change, "unrestorable",
                   "switching back would change the checked-out files; switch branch yourself")


def _keep_branch_of_head(state: GitState, step: RefStep) -> RefStep:
    """HEAD stays where it is: the branch it is on must stay too."""
    if step.action == "restore" and step.change.before is None and state.head == f"ref: {step.change.ref}":
        return RefStep(step.seq, step.change, "unrestorable",
                       "HEAD is on it; switch to another branch, then undo again")
    return step


def _commit(refs: Mapping[str, str | None], head: str) -> str | None:
    """The commit a HEAD value ("ref: <name>" or a commit id) stands for in `refs`."""
    return refs.get(head.removeprefix("ref: ")) if head.startswith("ref: ") else head


_INVERSE: dict[GitMove, GitMove] = {"created": "deleted", "deleted": "created", "commit": "reset", "reset": "moved",
                                     "checkout": "checkout"}
"""The kind of the move that undoes a move of each kind (any other: "moved")."""


def inverse(change: GitChange) -> GitChange:
    """The move that undoes `change` (what an undo records, so that it can be undone in turn)."""
    return GitChange(ref=change.ref, kind=_INVERSE.get(change.kind, "moved"), before=change.after, after=change.before,
                     what=f"undo: {change.what}")


def apply_refs(root: Path, steps: Sequence[RefStep]) -> None:
    """Move each reference back; raises ToolError on the first that cannot (the ones before it stay moved).

    Branches are made and moved first, then HEAD, then branches removed: HEAD
    never points at a branch that is not there.
    """
    git_dir = find_git_dir(root)
    if git_dir is None:
        raise ToolError(ErrorKind.NOT_FOUND, "the workspace is no longer a git repository; its refs cannot be undone")
    for step in sorted(steps, key=lambda s: 1 if s.change.ref == "HEAD" else 2 if s.change.before is None else 0):
        change = step.change
        if change.before is None:
            argv = ["update-ref", "-d", change.ref, change.after or ""]
        elif change.ref == "HEAD" and change.before.startswith("ref: "):
            argv = ["symbolic-ref", "HEAD", change.before.removeprefix("ref: ")]
        elif change.ref == "HEAD" and (change.after or "").startswith("ref: "):
            argv = ["update-ref", "--no-deref", "HEAD", change.before]
        elif change.ref == "HEAD":
            argv = ["update-ref", "--no-deref", "HEAD", change.before, change.after or ZERO]
        else:
            argv = ["update-ref", change.ref, change.before, change.after or ZERO]
        _git(git_dir, root, argv, change)
    for step in steps:
        if step.index_from is not None and step.index_paths:  # the index's entries for them, as the commit has
            _git(git_dir, root, ["--literal-pathspecs", "reset", "-q", "--no-refresh", step.index_from,
                                 "--pathspec-from-file=-", "--pathspec-file-nul"], step.change,
                 "\0".join(step.index_paths))


def _git(git_dir: str, root: Path, argv: list[str], change: GitChange, given: str | None = None) -> None:
    """`given`: what git reads on its standard input (nothing when None)."""
    try:
        done = subprocess.run([GIT, *NO_PROGRAMS, f"--git-dir={git_dir}", f"--work-tree={root}", *argv], cwd=root,
                              env=git_env(), capture_output=True, text=True, timeout=GIT_TIMEOUT_S, input=given,
                              stdin=subprocess.DEVNULL if given is None else None, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(ErrorKind.SYSTEM, f"could not move {change.ref} back: {e}") from None
    if done.returncode != 0:
        raise ToolError(ErrorKind.CONFLICT, f"could not move {change.ref} back: {done.stderr.strip()}",
                        "The reference moved again since; look at it with git log.")


def _value(state: GitState, ref: str) -> str | None:
    return state.head if ref == "HEAD" else state.refs.get(ref)
