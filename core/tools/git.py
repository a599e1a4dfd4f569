"""The git tools: git_status, git_diff and git_commit on the workspace's own repository.

Git runs as Belay runs it everywhere (`core.changes.gitproc`: /usr/bin/git, no
system or global config, a scrubbed environment), in the workspace root and
only when that root is a repository's top level (a workspace inside a larger
repository could otherwise commit files outside it).  The repository's
config is agent-written, so nothing it names may run: hooks, fsmonitor,
pagers, external diff and textconv programs are switched off, and every
clean/smudge filter the config defines is overridden to nothing (git would
otherwise run a filter on `status`, `diff` and `add`).  Submodule work trees
are not entered (`--ignore-submodules=dirty`), so their config never applies.

Each call shares one deadline (`GIT_TIMEOUT_S`) across its git runs and
keeps it itself, as Bash does (`timeout_s = None`): git_commit is a
capturing tool, which the pipeline runs without a timeout of its own.  A
run that times out or is cancelled has its process group killed before the
call ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ConfigDict, Field, field_validator

from core.changes.gitproc import GIT, NO_PROGRAMS, git_env
from core.changes.gitstate import find_git_dir
from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.process.output import OutputCapture, sanitize
from core.tasks import shielded
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.names import ToolName
from core.tools.write import encode_text

GIT_TIMEOUT_S = 30.0
MAX_READ_BYTES = 8 * 1024 * 1024
"""Machine-readable output (status, numstat) kept per run; past it the rest is dropped and said so."""
MAX_LISTED = 100
"""Files listed per section of the status text (the data has them all, up to MAX_READ_BYTES)."""
AGENT_NAME, AGENT_EMAIL = "Belay agent", "agent@belay.invalid"
_OPTIONS = (*NO_PROGRAMS, "-c", "color.ui=never", "-c", "diff.ignoreSubmodules=dirty", "--literal-pathspecs")
_CONFIG_KEYS = r"^(filter\..+\.(clean|smudge|process)|user\.(name|email))$"
_NOT_A_REPO = "Run `git init` with Bash to make it one, or work without the git tools."


class GitStatusArgs(ToolArgs):
    """git_status takes no arguments."""


class GitDiffArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    staged: bool = False
    """Show what is staged for the next commit (git diff --staged) instead of unstaged changes."""
    paths: list[str] = []
    """Only these files or directories (absolute, or relative to the workspace root)."""
    ref: str | None = None
    """Compare with this commit, branch or tag instead of the index (with staged: instead of HEAD)."""

    @field_validator("ref")
    @classmethod
    def _not_an_option(cls, ref: str | None) -> str | None:
        if ref is not None and (not ref or ref.startswith("-") or "\0" in ref):
            raise ValueError("ref must name a commit, branch or tag (not empty, not starting with '-')")
        return ref


class GitCommitArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    message: str = Field(min_length=1)
    """The commit message: a short first line, then a blank line and details if needed."""
    paths: list[str] = []
    """Files or directories to stage first (new, changed or deleted), absolute or relative to the workspace."""
    all: bool = False
    """Also stage every change to tracked files, like git commit -a."""

    @field_validator("message")
    @classmethod
    def _has_text(cls, message: str) -> str:
        if not message.strip():
            raise ValueError("the commit message is empty")
        if "\0" in message:
            raise ValueError("the commit message contains a NUL character")
        return message


@dataclass(frozen=True)
class _Run:
    """What one git run produced."""

    code: int
    out: bytes
    err: str
    cut: bool = False
    """stdout went past MAX_READ_BYTES and its end was dropped."""


@dataclass
class _Repo:
    """One call's access to the workspace's repository: the options every run gets, and one deadline."""

    root: Path
    deadline: float
    options: tuple[str, ...] = ()
    identity: dict[str, str] = field(default_factory=dict)
    """user.name and user.email as configured (the repository's config over the person's own)."""

    async def run(self, *args: str, config: tuple[str, ...] = (), stdin: bytes | None = None,
                  sink: OutputCapture | None = None) -> _Run:
        """Run `git <args>` with `config` ("-c", "key=value" pairs) added for this run only."""
        env = {**git_env(), "GIT_CEILING_DIRECTORIES": str(self.root.parent)}
        return await _spawn([GIT, *_OPTIONS, *self.options, *config, *args], self.root, env, self.deadline,
                            args[0], stdin, sink)

    async def check(self, *args: str, sink: OutputCapture | None = None, suggestion: str = "") -> _Run:
        """Run git; a failure becomes a ToolError carrying git's own message."""
        result = await self.run(*args, sink=sink)
        if result.code != 0:
            raise _failure(args[0], result, self.root, suggestion)
        return result


async def open_repo(workspace: Workspace) -> _Repo:
    """The workspace's repository, its config's filters neutralised; NOT_FOUND when the root is not one."""
    root = workspace.root
    if not os.access(GIT, os.X_OK):
        raise ToolError(ErrorKind.SYSTEM, f"git is not installed ({GIT} is missing)",
                        "Install git to use the git tools.")
    if find_git_dir(root) is None:
        raise ToolError(ErrorKind.NOT_FOUND, f"the workspace {root} is not a git repository", _NOT_A_REPO)
    repo = _Repo(root, time.monotonic() + GIT_TIMEOUT_S)
    env = {k: v for k, v in git_env().items() if k != "GIT_CONFIG_GLOBAL"}  # the person's identity counts
    env["GIT_CEILING_DIRECTORIES"] = str(root.parent)
    found = await _spawn([GIT, "config", "--null", "--get-regexp", _CONFIG_KEYS], root, env, repo.deadline,
                         "config")
    options: list[str] = []
    for entry in found.out.decode("utf-8", "replace").split("\0") if found.code == 0 else []:
        key, _, value = entry.partition("\n")
        if key.startswith("user."):
            repo.identity[key] = value
        elif key.startswith("filter."):
            name = key[len("filter."):].rsplit(".", 1)[0]
            options += ["-c", f"filter.{name}.clean=", "-c", f"filter.{name}.smudge=",
                        "-c", f"filter.{name}.process=", "-c", f"filter.{name}.required=false"]
    repo.options = tuple(options)
    return repo


async def _spawn(argv: list[str], cwd: Path, env: dict[str, str], deadline: float, command: str,
                 stdin: bytes | None = None, sink: OutputCapture | None = None) -> _Run:
    """Run git to its end, or kill its process group on timeout or cancellation before passing that on."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        raise ToolError(ErrorKind.SYSTEM, f"could not run git {command}: {e.strerror or e}",
                        "Check that git works on this machine.") from None
    try:
        async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
            return await _collect(proc, stdin, sink)
    except TimeoutError:
        await shielded(_kill(proc))
        raise ToolError(ErrorKind.TIMEOUT, f"git {command} took longer than {GIT_TIMEOUT_S:g} s and was stopped",
                        "The repository may be very large or locked by another git process; try again.") from None
    except BaseException:
        await shielded(_kill(proc))
        raise


async def _collect(proc: asyncio.subprocess.Process, stdin: bytes | None, sink: OutputCapture | None) -> _Run:
    assert proc.stdout is not None and proc.stderr is not None
    if stdin is not None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # git exited without reading it all: its exit status and stderr say why
        proc.stdin.close()
    out, err = bytearray(), bytearray()
    total, _ = await asyncio.gather(_read(proc.stdout, out, 0 if sink is not None else MAX_READ_BYTES, sink),
                                    _read(proc.stderr, err, 8192))
    code = await proc.wait()
    return _Run(code, bytes(out), sanitize(err.decode("utf-8", "replace")).strip(), sink is None and total > len(out))


async def _read(stream: asyncio.StreamReader, into: bytearray, limit: int, sink: OutputCapture | None = None) -> int:
    """Read `stream` to its end, keeping its first `limit` bytes in `into` (and all of it in `sink`); the total."""
    total = 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        into.extend(chunk[: max(0, limit - len(into))])
        if sink is not None:
            sink.feed(chunk)
    return total


async def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    await proc.wait()


def _failure(command: str, result: _Run, root: Path, suggestion: str = "") -> ToolError:
    said = "\n".join(line for line in result.err.splitlines() if not line.startswith("hint:"))
    message = said.removeprefix("fatal: ").removeprefix("error: ") or f"exit status {result.code}"
    if "not a git repository" in result.err:
        return ToolError(ErrorKind.NOT_FOUND, f"the workspace {root} is not a git repository ({message})",
                         _NOT_A_REPO)
    if "dubious ownership" in result.err:
        return ToolError(ErrorKind.PERMISSION, f"git refuses to work in {root}: {message}",
                         "The repository belongs to another user; the person can mark it safe in their git config.")
    if ".lock" in result.err and "exists" in result.err:
        return ToolError(ErrorKind.BUSY, f"git {command} failed: {message}",
                         "Another git process is working in this repository; try again when it is done.")
    return ToolError(ErrorKind.INVALID_ARGS, f"git {command} failed: {message}", suggestion or "Check the arguments.")


def pathspecs(workspace: Workspace, raw_paths: list[str]) -> list[str]:
    """Workspace-relative paths for git, each checked to lie inside the workspace (`Workspace.resolve`).

    Git is given the path as named, not resolved, so a symlink is staged as
    the link it is; only a path reaching the workspace through a link to it
    is given resolved.
    """
    specs = []
    for i, raw in enumerate(raw_paths):
        if not raw:
            raise ToolError(ErrorKind.INVALID_ARGS, f"paths[{i}] is empty", "Name a file or directory, or pass '.'.")
        text = raw if os.path.isabs(raw) else os.path.join(workspace.root, raw)
        real = workspace.resolve(text, f"paths[{i}]")
        rel = os.path.relpath(os.path.normpath(text), workspace.root)
        specs.append(os.path.relpath(real, workspace.root) if rel == ".." or rel.startswith("../") else rel)
    return specs


def _shown_paths(raw_paths: list[str], workspace: Workspace) -> list[str]:
    shown = [workspace.describe(p) if os.path.isabs(p) else p for p in raw_paths[:3]]
    return shown + (["…"] if len(raw_paths) > 3 else [])


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


_READ_ONLY = Annotations(read_only=True, destructive=False, idempotent=True)
_XY = {"M": "modified", "T": "type changed", "A": "added", "D": "deleted", "R": "renamed", "C": "copied"}


@dataclass
class _Status:
    """`git status --porcelain=v2 --branch -z`, parsed."""

    branch: str | None = None
    """None when HEAD is detached."""
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    unborn: bool = False
    staged: list[tuple[str, str]] = field(default_factory=list)
    """(path, line) pairs, e.g. ("b.py", "renamed: a.py -> b.py")."""
    unstaged: list[tuple[str, str]] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    conflicted: list[str] = field(default_factory=list)


def parse_status(out: bytes) -> _Status:
    status = _Status()
    records = out.decode("utf-8", "replace").split("\0")
    records.reverse()
    while records:
        record = records.pop()
        kind = record[:2]
        if kind == "# ":
            _branch_line(status, record[2:])
        elif kind in ("1 ", "2 "):
            fields = record.split(" ", 9 if kind == "2 " else 8)
            old = records.pop() if kind == "2 " and records else None
            _changed(status, fields[1], fields[-1], old)
        elif kind == "u ":
            status.conflicted.append(record.split(" ", 10)[-1])
        elif kind == "? ":
            status.untracked.append(record[2:])
    return status


def _branch_line(status: _Status, line: str) -> None:
    key, _, value = line.partition(" ")
    if key == "branch.head":
        status.branch = None if value == "(detached)" else value
    elif key == "branch.oid":
        status.unborn = value == "(initial)"
    elif key == "branch.upstream":
        status.upstream = value
    elif key == "branch.ab":
        ahead, _, behind = value.partition(" ")
        status.ahead, status.behind = int(ahead.lstrip("+")), int(behind.lstrip("-"))


def _changed(status: _Status, xy: str, path: str, old: str | None) -> None:
    for code, entries in ((xy[0], status.staged), (xy[1], status.unstaged)):
        if code != ".":
            what, shown = _XY.get(code, code), f"{old} -> {path}" if old is not None and code in "RC" else path
            entries.append((path, f"{what}: {shown}"))


def status_text(status: _Status) -> str:
    lines = [_where(status)]
    sections = (("Staged", [line for _, line in status.staged]),
                ("Not staged", [line for _, line in status.unstaged]),
                ("Conflicted (unmerged)", status.conflicted), ("Untracked", status.untracked))
    for title, entries in sections:
        if entries:
            lines.append(f"{title} ({len(entries)}):")
            lines += [f"  {sanitize(entry)}" for entry in entries[:MAX_LISTED]]
            if len(entries) > MAX_LISTED:
                lines.append(f"  ... and {len(entries) - MAX_LISTED:,} more")
    if len(lines) == 1:
        lines.append("Nothing to commit, working tree clean.")
    return "\n".join(lines)


def _where(status: _Status) -> str:
    where = f"On branch {sanitize(status.branch)}" if status.branch is not None else "HEAD detached"
    if status.unborn:
        return where + ", no commits yet"
    if status.upstream is None:
        return where
    moved = [f"{label} {n}" for label, n in (("ahead", status.ahead), ("behind", status.behind)) if n]
    return where + (f", {' and '.join(moved)} of" if moved else ", up to date with") + f" {status.upstream}"


class GitStatus(RunTool[GitStatusArgs]):
    name = ToolName.GIT_STATUS
    description = (
        "Show the git status of the workspace: the branch, how far it is ahead of or behind its upstream, "
        "and which files are staged, changed but not staged, and untracked. Takes no arguments."
    )
    Args = GitStatusArgs
    annotations = _READ_ONLY
    timeout_s = None  # the tool keeps its own deadline (GIT_TIMEOUT_S)

    def summary(self, args: GitStatusArgs, workspace: Workspace) -> str:
        return "status"

    async def run(self, args: GitStatusArgs, ctx: ToolContext) -> ToolOutput:
        repo = await open_repo(ctx.workspace)
        result = await repo.check("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal",
                                  "--ignore-submodules=dirty")
        status = parse_status(result.out)
        text = status_text(status) + ("\n(git's output was too long and was cut.)" if result.cut else "")
        data = {"branch": status.branch, "upstream": status.upstream, "ahead": status.ahead,
                "behind": status.behind, "staged": [p for p, _ in status.staged],
                "unstaged": [p for p, _ in status.unstaged], "untracked": status.untracked,
                "conflicted": status.conflicted}
        return ToolOutput(text, data)


def parse_numstat(out: bytes) -> tuple[list[str], int, int]:
    """Files, lines added and lines removed from `git diff --numstat -z` (binary files count no lines)."""
    records = out.decode("utf-8", "replace").split("\0")
    records.reverse()
    files, added, removed = [], 0, 0
    while records:
        fields = records.pop().split("\t", 2)
        if len(fields) != 3:
            continue
        path = fields[2]
        if not path and len(records) >= 2:  # a rename: the old and the new path follow
            records.pop()
            path = records.pop()
        files.append(path)
        added += int(fields[0]) if fields[0].isdigit() else 0
        removed += int(fields[1]) if fields[1].isdigit() else 0
    return files, added, removed


class GitDiff(RunTool[GitDiffArgs]):
    name = ToolName.GIT_DIFF
    description = (
        "Show changes in the workspace as a unified diff: by default what is changed but not staged; with "
        "staged=true what is staged for the next commit; with ref, the changes since that commit, branch or "
        "tag. paths limits it to files or directories (absolute or relative to the workspace). Untracked "
        "files are not shown (git_status lists them). Long diffs are cut in the middle."
    )
    Args = GitDiffArgs
    annotations = _READ_ONLY
    timeout_s = None  # the tool keeps its own deadline (GIT_TIMEOUT_S)

    def summary(self, args: GitDiffArgs, workspace: Workspace) -> str:
        words = ["diff", *(["--staged"] if args.staged else []), *([args.ref] if args.ref else [])]
        return " ".join(words + _shown_paths(args.paths, workspace))

    async def run(self, args: GitDiffArgs, ctx: ToolContext) -> ToolOutput:
        specs = pathspecs(ctx.workspace, args.paths)
        repo = await open_repo(ctx.workspace)
        which = [*(["--cached"] if args.staged else []), "--end-of-options", *([args.ref] if args.ref else []),
                 "--", *specs]
        options = ["--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty"]
        stat = await repo.check("diff", *options, "--numstat", "-z", *which,
                                suggestion="Check that ref names an existing commit, branch or tag.")
        files, added, removed = parse_numstat(stat.out)
        capture = OutputCapture()
        await repo.check("diff", *options, *which, sink=capture)
        data = {"files": files, "added": added, "removed": removed, "truncated": capture.truncated}
        if not files:
            return ToolOutput(_no_changes(args), data)
        head = f"{count(len(files), 'file')} changed, {count(added, 'insertion')}(+), {count(removed, 'deletion')}(-)"
        return ToolOutput(f"{head}\n\n{capture.text_for_agent().rstrip()}", data)


def _no_changes(args: GitDiffArgs) -> str:
    what = "No staged changes" if args.staged else "No unstaged changes"
    if args.ref:
        what += f" against {args.ref}"
    if args.paths:
        what += " in " + ", ".join(args.paths)
    return what + ("." if args.staged else " (untracked files are not shown; git_status lists them).")


_NOTHING = {  # the last line git prints, to what the agent is told
    "no changes added to commit": (
        "changes to tracked files are not staged",
        "Pass all=true to commit every change to tracked files, or name the files in paths."),
    "nothing added to commit": ("only untracked files changed", "Name the new files in paths to add them."),
    "nothing to commit": ("the working tree is clean", "Make a change first; git_status shows what changed."),
}


class GitCommit(RunTool[GitCommitArgs]):
    name = ToolName.GIT_COMMIT
    description = (
        "Commit to the workspace's git repository. message is the commit message. paths are staged first "
        "(new, changed or deleted files and directories, absolute or relative to the workspace); all=true "
        "also stages every change to tracked files (git commit -a); otherwise what is already staged is "
        "committed. Hooks do not run. Fails when there is nothing to commit."
    )
    Args = GitCommitArgs
    annotations = Annotations(read_only=False, destructive=False, idempotent=False)
    timeout_s = None  # the tool keeps its own deadline: the pipeline runs capturing tools without one
    captures_workspace = True

    def summary(self, args: GitCommitArgs, workspace: Workspace) -> str:
        subject = " ".join(args.message.strip().splitlines()[0].split())
        return f"commit: {subject if len(subject) <= 72 else subject[:71] + '…'}"

    def writes(self, args: GitCommitArgs, workspace: Workspace) -> frozenset[str] | None:
        return frozenset({""})

    async def run(self, args: GitCommitArgs, ctx: ToolContext) -> ToolOutput:
        specs, message = pathspecs(ctx.workspace, args.paths), encode_text(args.message, "message")
        repo = await open_repo(ctx.workspace)
        if specs:
            await repo.check("add", "--all", "--", *specs,
                             suggestion="Name files that exist or that git tracks; git_status lists what changed.")
        name = repo.identity.get("user.name") or AGENT_NAME
        email = repo.identity.get("user.email") or AGENT_EMAIL
        config = ("-c", f"user.name={name}", "-c", f"user.email={email}", "-c", "commit.gpgsign=false")
        result = await repo.run("commit", "--no-verify", "--cleanup=whitespace", *(["--all"] if args.all else []),
                                "--file=-", config=config, stdin=message)
        if result.code != 0:
            raise _not_committed(result, ctx.workspace.root)
        head = (await repo.check("rev-parse", "HEAD")).out.decode().strip()
        files = (await repo.check("diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", "HEAD")).out
        lines = [sanitize(result.out.decode("utf-8", "replace").strip())]
        missing = [key for key in ("user.name", "user.email") if not repo.identity.get(key)]
        if missing:
            lines.append(f"No git {' or '.join(missing)} is configured, so the commit is by {name} <{email}>.")
        data = {"commit": head, "files": [f for f in files.decode("utf-8", "replace").split("\0") if f],
                "author": f"{name} <{email}>"}
        return ToolOutput("\n".join(lines), data)


def _not_committed(result: _Run, root: Path) -> ToolError:
    said = result.out.decode("utf-8", "replace").strip().splitlines()
    last = said[-1] if said else ""
    for start, (why, suggestion) in _NOTHING.items():
        if result.code == 1 and last.startswith(start):
            return ToolError(ErrorKind.INVALID_ARGS, f"nothing to commit: {why}", suggestion)
    return _failure("commit", result, root)
