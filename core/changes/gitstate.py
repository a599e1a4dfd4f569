"""The git state of a workspace (HEAD and every ref), and what moved between two readings.

The snapshot never copies `.git`; an agent's commits, resets and checkouts
are recorded as `GitChange`s instead, from a reading before and after each
shell command.  Reading uses files, not git, because it runs around every
command: HEAD from the work tree's git dir, refs from the common dir
(`packed-refs`, loose files over it).  Not read: symbolic refs other than
HEAD (`refs/remotes/origin/HEAD` would repeat its target's moves),
per-worktree refs of linked worktrees (`refs/bisect`...), pseudo refs
(`ORIG_HEAD`...), reftable repositories (no refs found), and any `.git`
but the workspace root's own: a workspace inside a repository is not one.

Describing may run git (blocking, bounded; call it off the loop thread).
The repository's own config is agent-written, so git runs with a scrubbed
environment, no global or system config and every transport forbidden:
reading commits must never fetch or execute anything.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from core.changes.gitproc import GIT, NO_PROGRAMS, git_env
from core.models.records import GitChange

log = logging.getLogger(__name__)

GIT_TIMEOUT = 5.0
"""Seconds all the git runs of one `describe_changes` may take together before it falls back to ids."""
UNREADABLE = ""
"""`GitState.head` when the HEAD file is missing or holds neither a ref nor a commit id."""

_CHUNK = 65536
_NOUNS = {"refs/heads/": "branch", "refs/tags/": "tag", "refs/remotes/": "remote branch"}
_Kind = Literal["commit", "reset", "checkout", "created", "deleted", "moved"]
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True)
class GitState:
    """Where HEAD and every ref pointed at one moment; equal states mean git did not move."""

    head: str
    """"ref: refs/heads/main", a 40/64-hex commit id when detached, or `UNREADABLE`."""
    refs: Mapping[str, str]
    """Every ref name ("refs/heads/main", "refs/tags/v1", "refs/stash"...) to the id it holds (read-only)."""


def read_git_state(workspace_root: Path) -> GitState | None:
    """The repository state of the workspace, or None when its root has no `.git` leading to a git dir.

    Never raises: an unreadable HEAD becomes `UNREADABLE`, unreadable or
    half-written refs are skipped.
    """
    git_dir = find_git_dir(workspace_root)
    if git_dir is None:
        return None
    common = _common_dir(git_dir)
    refs = _packed_refs(common)
    _add_loose_refs(os.path.join(common, "refs"), "refs/", refs)
    return GitState(head=_read_head(git_dir), refs=MappingProxyType(refs))


def find_git_dir(workspace_root: Path) -> str | None:
    """The git dir of the work tree at `workspace_root`: `.git` itself or where its `gitdir:` line points."""
    dot_git = os.path.join(workspace_root, ".git")
    try:
        if stat.S_ISDIR(os.stat(dot_git).st_mode):
            return dot_git
    except OSError:
        return None
    text = _read(dot_git)
    target = os.path.join(workspace_root, text[len("gitdir:"):].strip())
    return target if text.startswith("gitdir:") and os.path.isdir(target) else None


def _common_dir(git_dir: str) -> str:
    """Where refs live: the main repository's git dir for a linked worktree, else the git dir itself."""
    text = _read(os.path.join(git_dir, "commondir")).strip()
    common = os.path.join(git_dir, text)
    return common if text and os.path.isdir(common) else git_dir


def _read_head(git_dir: str) -> str:
    text = _read(os.path.join(git_dir, "HEAD")).strip()
    return text if text.startswith("ref: refs/") or _OID.fullmatch(text) else UNREADABLE


def _packed_refs(common: str) -> dict[str, str]:
    refs: dict[str, str] = {}
    for line in _read(os.path.join(common, "packed-refs")).splitlines():
        oid, _, name = line.partition(" ")  # "#" header and "^" peeled lines fail the id check
        if name.startswith("refs/") and _OID.fullmatch(oid):
            refs[name] = oid
    return refs


def _add_loose_refs(directory: str, prefix: str, refs: dict[str, str]) -> None:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _add_loose_refs(entry.path, f"{prefix}{entry.name}/", refs)
        elif not entry.name.endswith(".lock"):
            oid = _read(entry.path).strip()
            if _OID.fullmatch(oid):  # symbolic and half-written refs are skipped
                refs[prefix + entry.name] = oid


def _read(path: str) -> str:
    """A file's text, or "" when it cannot be read; os.open and one read, the common case, for speed."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return ""
    try:
        data = os.read(fd, _CHUNK)
        while len(data) % _CHUNK == 0 and (more := os.read(fd, _CHUNK)):  # a large packed-refs
            data += more
    except OSError:
        return ""
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def describe_changes(before: GitState | None, after: GitState | None, workspace_root: Path) -> list[GitChange]:
    """What moved between two states: HEAD first (only when it switched or moved detached), then refs by name.

    A repository that appeared (`git init`, `git clone`) or vanished is one
    "created" or "deleted" change on "HEAD", not one per ref.  Blocking: may
    run git, at most `GIT_TIMEOUT` seconds in all.
    """
    if before is None or after is None:
        return _repository_change(before, after)
    git = _Git(find_git_dir(workspace_root), time.monotonic() + GIT_TIMEOUT)
    changes = []
    if before.head != after.head:
        kind, what = _head_move(before.head, after.head, git)
        changes.append(GitChange(ref="HEAD", kind=kind, before=before.head, after=after.head, what=what))
    for name in sorted(before.refs.keys() | after.refs.keys()):
        old, new = before.refs.get(name), after.refs.get(name)
        if old != new:
            unborn = before.head == after.head == f"ref: {name}"
            kind, what = _ref_move(name, old, new, unborn, git)
            changes.append(GitChange(ref=name, kind=kind, before=old, after=new, what=what))
    return changes


def _repository_change(before: GitState | None, after: GitState | None) -> list[GitChange]:
    if after is not None:
        refs = f" ({_count(len(after.refs), 'ref')})" if after.refs else ""
        what = f"created git repository on {_head_name(after.head)}{refs}"
        return [GitChange(ref="HEAD", kind="created", before=None, after=after.head, what=what)]
    if before is not None:
        what = f"deleted git repository (was on {_head_name(before.head)})"
        return [GitChange(ref="HEAD", kind="deleted", before=before.head, after=None, what=what)]
    return []


def _head_move(old: str, new: str, git: _Git) -> tuple[_Kind, str]:
    if _OID.fullmatch(old) and _OID.fullmatch(new):
        return _move("detached HEAD", old, new, git)
    if new.startswith("ref: ") and old != UNREADABLE:
        return "checkout", f"checkout {_head_name(new)} (was {_head_name(old)})"
    if _OID.fullmatch(new) and old != UNREADABLE:
        return "checkout", f"detach HEAD at {new[:7]} (was {_head_name(old)})"
    return "moved", f"HEAD is now {_head_name(new)} (was {_head_name(old)})"


def _ref_move(name: str, old: str | None, new: str | None, unborn: bool, git: _Git) -> tuple[_Kind, str]:
    noun, label = _names(name)
    if old is None and new is not None:
        commits = git.count(new) if unborn else None
        if commits:  # the first commits of the branch HEAD was waiting on
            return "commit", _commits(commits, label, new, git)
        return "created", f"created {noun} {label} at {new[:7]}"
    if new is None and old is not None:
        return "deleted", f"deleted {noun} {label} (was {old[:7]})"
    assert old is not None and new is not None
    return _move(label, old, new, git)


def _move(label: str, old: str, new: str, git: _Git) -> tuple[_Kind, str]:
    """Commits on top, a jump back to an ancestor, or anything else (amend, rebase, unrelated)."""
    counts = git.dropped_and_added(old, new)
    if counts is not None and counts[0] == 0 and counts[1] > 0:
        return "commit", _commits(counts[1], label, new, git)
    if counts is not None and counts[1] == 0 and counts[0] > 0:
        return "reset", f"reset {label} back {_count(counts[0], 'commit')} (to {new[:7]})"
    return "moved", f"moved {label} to {new[:7]} (was {old[:7]})"


def _commits(n: int, label: str, tip: str, git: _Git) -> str:
    subject = git.subject(tip)
    text = f"commit {tip[:7]} on {label}" if n == 1 else f"{n} commits on {label}"
    return f"{text}: {subject}" if subject else text


def _head_name(head: str) -> str:
    if head.startswith("ref: "):
        return _names(head[len("ref: "):])[1]
    return f"detached {head[:7]}" if head else "an unreadable HEAD"


def _names(ref: str) -> tuple[str, str]:
    """What a ref is and its short name: ("branch", "main"), ("tag", "v1"), ("ref", "refs/stash")."""
    prefix = next((p for p in _NOUNS if ref.startswith(p)), "")
    return _NOUNS.get(prefix, "ref"), ref[len(prefix):]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass
class _Git:
    """Read-only git queries on one repository, all sharing one deadline; None whenever git cannot answer."""

    git_dir: str | None
    deadline: float
    """A `time.monotonic()` value."""

    def dropped_and_added(self, old: str, new: str) -> tuple[int, int] | None:
        """Commits reachable only from `old`, and only from `new`."""
        out = self._run("rev-list", "--left-right", "--count", f"{old}...{new}", "--")
        fields = out.split() if out else []
        return (int(fields[0]), int(fields[1])) if len(fields) == 2 and all(map(str.isdigit, fields)) else None

    def count(self, tip: str) -> int | None:
        out = (self._run("rev-list", "--count", tip, "--") or "").strip()
        return int(out) if out.isdigit() else None

    def subject(self, commit: str) -> str | None:
        """The first paragraph of the message on one line, like `%s`, from `cat-file` (no log config applies)."""
        out = self._run("cat-file", "commit", commit)
        if out is None or "\n\n" not in out:
            return None
        paragraph = out.split("\n\n", 1)[1].strip().split("\n\n", 1)[0]
        return " ".join(paragraph.split()) or None

    def _run(self, *args: str) -> str | None:
        timeout = self.deadline - time.monotonic()
        if self.git_dir is None or timeout <= 0 or not os.access(GIT, os.X_OK):
            return None
        argv = [GIT, "--no-pager", "--no-replace-objects", *NO_PROGRAMS, f"--git-dir={self.git_dir}", *args]
        try:
            proc = subprocess.run(argv, cwd=self.git_dir, env=git_env(), stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=timeout, check=False)
            if proc.returncode == 0:
                return proc.stdout.decode("utf-8", "replace")
            reason = f"exit status {proc.returncode}: {proc.stderr[-300:]!r}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = str(exc)
        log.info("git %s failed, describing with ids only: %s", args[0], reason)
        return None


