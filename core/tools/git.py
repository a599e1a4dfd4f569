"""The git tools: git_status, git_diff and git_commit on the workspace's own repository.

Git runs as Belay runs it everywhere (`core.gitproc`: /usr/bin/git, no
system or global config, a scrubbed environment), in the workspace root and
only when that root is a repository's top level (a workspace inside a larger
repository could otherwise commit files outside it).  The repository's
config is agent-written, so nothing it names may run: hooks, fsmonitor,
pagers, external diff and textconv programs are switched off, and every
clean/smudge filter the config defines is overridden to nothing (git would
otherwise run a filter on `status`, `diff` and `add`).  Submodule work trees
are not entered (`--ignore-submodules=dirty`), so their config never applies.

Each call shares one deadline (`GIT_TIMEOUT_S`) across its git runs and
keeps it itself, as Bash does: git_commit is a capturing tool, which the
pipeline runs without a timeout.  A run that times out or is cancelled has
its process group killed before the call ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict, Field, field_validator

from core.errors import ErrorKind, ToolError
from core.gitproc import GIT, git_env
from core.gitstate import find_git_dir
from core.output import OutputCapture, sanitize
from core.paths import Workspace
from core.shells import finish_shielded
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput

GIT_TIMEOUT_S = 30.0
MAX_READ_BYTES = 8 * 1024 * 1024
"""Machine-readable output (status, numstat) kept per run; past it the rest is dropped and said so."""
MAX_LISTED = 100
"""Files listed per section of the status text (the data has them all, up to MAX_READ_BYTES)."""
AGENT_NAME, AGENT_EMAIL = "Belay agent", "agent@belay.invalid"
_OPTIONS = ("-c", "core.pager=cat", "-c", "color.ui=never", "-c", "core.fsmonitor=false",
            "-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never", "-c", "gc.auto=0",
            "-c", "maintenance.auto=false", "-c", "diff.ignoreSubmodules=dirty", "--literal-pathspecs")
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

    async def run(self, *args: str, stdin: bytes | None = None, sink: OutputCapture | None = None) -> _Run:
        env = {**git_env(), "GIT_CEILING_DIRECTORIES": str(self.root.parent)}
        return await _spawn([GIT, *_OPTIONS, *self.options, *args], self.root, env, self.deadline, stdin, sink)

    async def check(self, *args: str, stdin: bytes | None = None, sink: OutputCapture | None = None) -> _Run:
        """Run git; a failure becomes a ToolError carrying git's own message."""
        result = await self.run(*args, stdin=stdin, sink=sink)
        if result.code != 0:
            raise _failure(args[0], result, self.root)
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
    found = await _spawn([GIT, "config", "--null", "--get-regexp", _CONFIG_KEYS], root, env, repo.deadline)
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


async def _spawn(argv: list[str], cwd: Path, env: dict[str, str], deadline: float,
                 stdin: bytes | None = None, sink: OutputCapture | None = None) -> _Run:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
            return await _collect(proc, stdin, sink)
    except TimeoutError:
        await finish_shielded(_kill(proc))
        raise ToolError(ErrorKind.TIMEOUT, f"git {argv[len(_OPTIONS) + 1] if len(argv) > 2 else ''} took longer"
                        f" than {GIT_TIMEOUT_S:g} s and was stopped",
                        "The repository may be very large or locked by another git process; try again.") from None
    except BaseException:
        await finish_shielded(_kill(proc))
        raise


async def _collect(proc: asyncio.subprocess.Process, stdin: bytes | None, sink: OutputCapture | None) -> _Run:
    assert proc.stdout is not None and proc.stderr is not None
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        await proc.stdin.drain()
        proc.stdin.close()
    out, err = bytearray(), bytearray()
    cut = False

    async def read_out() -> None:
        nonlocal cut
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            if sink is not None:
                sink.feed(chunk)
            elif len(out) + len(chunk) <= MAX_READ_BYTES:
                out.extend(chunk)
            else:
                cut = True

    async def read_err() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            err.extend(chunk[: max(0, 8192 - len(err))])

    await asyncio.gather(read_out(), read_err())
    code = await proc.wait()
    return _Run(code, bytes(out), sanitize(err.decode("utf-8", "replace")).strip(), cut)


async def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    await proc.wait()


def _failure(command: str, result: _Run, root: Path) -> ToolError:
    message = result.err.removeprefix("fatal: ").removeprefix("error: ") or f"exit status {result.code}"
    if "not a git repository" in result.err:
        return ToolError(ErrorKind.NOT_FOUND, f"the workspace {root} is not a git repository ({message})",
                         _NOT_A_REPO)
    if "dubious ownership" in result.err:
        return ToolError(ErrorKind.PERMISSION, f"git refuses to work in {root}: {message}",
                         "The repository belongs to another user; the person can mark it safe in their git config.")
    if ".lock" in result.err and "exists" in result.err:
        return ToolError(ErrorKind.BUSY, f"git {command} failed: {message}",
                         "Another git process is working in this repository; try again when it is done.")
    return ToolError(ErrorKind.INVALID_ARGS, f"git {command} failed: {message}", "Check the arguments.")


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

