"""The LS and Glob tools: what is in a directory, and which files match a pattern.

LS lists one level, `.git` included as an entry (it is there), and never
descends.  Glob walks the tree with `os.fwalk` from a descriptor opened by
`core.store.fsio`, never following a symlinked directory, and skips `.git`.  A
symlinked file is reported only when it resolves to a regular file inside
the workspace, so a link cannot lure the agent outside.

Both leave out what `ToolContext.may_read` refuses (a file a Read deny rule
covers, a secret) and say how many entries they left out.  Names are shown
with control characters as escapes (`\\x1b`, `\\n`): a file name can
hold ESC, or a newline that would forge a second entry.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ConfigDict, Field

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.process.output import visible
from core.store import fsio
from core.tools.base import Annotations, RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput, read_places
from core.tools.names import ToolName

MAX_LS_ENTRIES = 1000
MAX_GLOB_RESULTS = 100
MAX_GLOB_SCANNED = 200_000
"""Entries Glob looks at before it stops, so a huge tree cannot pin a worker thread."""
SKIP_DIRS = frozenset({".git"})
_READ_ONLY = Annotations(read_only=True, destructive=False, idempotent=True)
T = TypeVar("T")


class LSArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    path: str
    """The absolute path of the directory to list."""
    ignore: list[str] | None = None
    """Glob patterns of names to leave out, e.g. ["*.pyc", "node_modules"]."""


class GlobArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    pattern: str = Field(min_length=1)
    """The glob to match against paths relative to `path`, e.g. "**/*.py" or "src/*.{ts,tsx}"."""
    path: str | None = None
    """The absolute path of the directory to search; the workspace root when omitted."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob: `**` crosses directories, `*` and `?` do not, plus `[...]` and `{a,b}`."""
    out: list[str] = []
    i, braces = 0, 0
    while i < len(pattern):
        c, step = pattern[i], 1
        closing = pattern.find("]", i + 2) if c == "[" else -1
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            step = 3
        elif pattern.startswith("**", i):
            out.append(".*")
            step = 2
        elif closing != -1:
            body = pattern[i + 1 : closing].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            step = closing + 1 - i
        elif c == "{":
            braces += 1
            out.append("(?:")
        elif c == "}" and braces:
            braces -= 1
            out.append(")")
        else:
            out.append(_simple_token(c, braces))
        i += step
    if braces:
        raise re.error("unbalanced '{'")
    return re.compile("".join(out), re.DOTALL)


def hidden_note(reasons: Sequence[str], noun: str = "file", nouns: str = "files") -> str:
    """What was left out because the Read rules refuse it, as a line for the agent: how many, and why.

    Only the count and the kind of reason: the names themselves are what
    a deny rule keeps from the agent.
    """
    if not reasons:
        return ""
    why = [label for label, found in (("Read deny rules", any("deny rule" in r for r in reasons)),
                                      ("secret protection", any("deny rule" not in r for r in reasons))) if found]
    return f"({len(reasons):,} {noun if len(reasons) == 1 else nouns} hidden by {' and '.join(why)}.)"


def readable(items: Iterable[T], path_of: Callable[[T], str], may_read: Callable[[Path], str | None],
             wanted: int | None = None) -> tuple[list[T], list[str], bool]:
    """The items whose path `may_read` allows, in order, at most `wanted`; the refusals of the paths it does
    not (one per path); and whether `wanted` were kept, so that later items were not looked at.

    `may_read` costs a realpath and the rules per path, so a tool that shows
    only the first few of many matches asks for those only.  Then it must
    not say how many more there are: that count would include files the
    rules hide, and tell the agent they match.  Blocking: call off the loop.
    """
    verdicts: dict[str, str | None] = {}
    kept: list[T] = []
    for item in items:
        if wanted is not None and len(kept) >= wanted:
            break
        path = path_of(item)
        if path not in verdicts:
            verdicts[path] = may_read(Path(path)) if path else None
        if verdicts[path] is None:
            kept.append(item)
    return kept, [why for why in verdicts.values() if why], wanted is not None and len(kept) >= wanted


def _simple_token(c: str, braces: int) -> str:
    if c == "," and braces:
        return "|"
    return {"*": "[^/]*", "?": "[^/]"}.get(c) or re.escape(c)


class LS(RunTool[LSArgs]):
    name = ToolName.LS
    description = (
        "List the files and directories directly inside a directory (one level; directories end with "
        "'/'). path must be an absolute path. ignore takes glob patterns of names to leave out. Prefer "
        "Glob or Grep when you know what you are looking for."
    )
    Args = LSArgs
    annotations = _READ_ONLY
    timeout_s = 30.0
    cacheable = True
    retry = RetryPolicy()

    def reads(self, args: LSArgs, workspace: Workspace) -> frozenset[str] | None:
        return read_places(workspace, args.path, tree=True)

    def summary(self, args: LSArgs, workspace: Workspace) -> str:
        return visible(workspace.describe(args.path), multiline=False)

    async def run(self, args: LSArgs, ctx: ToolContext) -> ToolOutput:
        if any("\0" in pattern for pattern in args.ignore or []):
            raise ToolError(ErrorKind.INVALID_ARGS, "an ignore pattern contains a NUL character, which no name can"
                            " hold", "Remove the NUL character from the ignore patterns.")
        path = ctx.workspace.resolve(args.path, "path")
        listing = await asyncio.to_thread(_listed, ctx.workspace, path, args.ignore or [], ctx.may_read)
        names = [visible(name, multiline=False) for _, name in listing.shown]
        lines = [f"- {visible(str(path), multiline=False)}/"] + [f"  - {name}" for name in names]
        if listing.full:
            lines.append(f"  (Showing the first {MAX_LS_ENTRIES:,} entries; there may be more: use Glob to narrow "
                         "it down.)")
        if not names and not listing.hidden:
            lines.append(f"  (all {listing.ignored} entries ignored)" if listing.ignored else "  (empty directory)")
        if listing.hidden:
            lines.append(f"  {hidden_note(listing.hidden, 'entry', 'entries')}")
        return ToolOutput("\n".join(lines), {"entries": names})


@dataclass(frozen=True)
class _Listing:
    shown: list[tuple[bool, str]]
    """(not a directory, name with "/" for a directory), sorted, at most MAX_LS_ENTRIES."""
    hidden: list[str]
    """Why each entry the Read rules refuse was left out."""
    full: bool
    """MAX_LS_ENTRIES are shown: entries after them were not looked at."""
    ignored: int
    """Entries left out by the call's own ignore patterns."""


def _listed(ws: Workspace, path: Path, ignore: list[str], may_read: Callable[[Path], str | None]) -> _Listing:
    """The entries of a directory, directories first, less the ignored and what the Read rules refuse.  Blocking."""
    entries = fsio.list_dir(ws, path)
    wanted = sorted((not is_dir, name + "/" if is_dir else name) for name, is_dir in entries
                    if not _ignored(name, is_dir, ignore))
    shown, hidden, full = readable(wanted, lambda entry: os.path.join(path, entry[1].removesuffix("/")), may_read,
                                   MAX_LS_ENTRIES)
    return _Listing(shown, hidden, full, len(entries) - len(wanted))


def _ignored(name: str, is_dir: bool, patterns: list[str]) -> bool:
    candidates = (name, name + "/") if is_dir else (name,)
    return any(fnmatch.fnmatchcase(c, p) for p in patterns for c in candidates)


class Glob(RunTool[GlobArgs]):
    name = ToolName.GLOB
    typical_s = 0.2
    """A walk of the tree."""
    description = (
        "Find files by name pattern, e.g. \"**/*.py\" or \"src/**/*.{ts,tsx}\". Patterns match paths "
        "relative to path (default: the workspace root); \"*\" stays within a directory, \"**\" crosses "
        "them. Returns absolute paths, most recently modified first, at most 100. Skips .git."
    )
    Args = GlobArgs
    annotations = _READ_ONLY
    timeout_s = 30.0
    cacheable = True
    retry = RetryPolicy()

    def reads(self, args: GlobArgs, workspace: Workspace) -> frozenset[str] | None:
        return read_places(workspace, args.path, tree=True)

    def summary(self, args: GlobArgs, workspace: Workspace) -> str:
        where = workspace.describe(args.path) if args.path else "."
        return visible(f"{args.pattern} in {where}" if where != "." else args.pattern, multiline=False)

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.workspace.resolve(args.path, "path") if args.path is not None else ctx.workspace.root
        regex = _compiled(_relative_pattern(args.pattern, root))
        shown, hidden, full, complete = await asyncio.to_thread(_find_readable, ctx.workspace, root, regex,
                                                                ctx.may_read)
        files = [visible(p, multiline=False) for _, p in shown]
        lines = [*files] or ["No files found"]
        if full:
            lines.append(f"(Showing the {MAX_GLOB_RESULTS} most recently modified matching files; there may be more: "
                         "use a narrower pattern or path.)")
        if not complete:
            lines.append(f"(The search stopped after {MAX_GLOB_SCANNED:,} entries; narrow the path.)")
        if hidden:
            lines.append(hidden_note(hidden))
        return ToolOutput("\n".join(lines), {"files": files, "truncated": full or not complete})


def _find_readable(ws: Workspace, root: Path, regex: re.Pattern[str], may_read: Callable[[Path], str | None],
                   ) -> tuple[list[tuple[int, str]], list[str], bool, bool]:
    """The newest matches the Read rules let the agent see (up to the cap), why others were hidden, whether the
    cap was reached (later matches not looked at), and whether the walk finished."""
    found, complete = _find(ws, root, regex)
    found.sort(key=lambda hit: (-hit[0], hit[1]))
    shown, hidden, full = readable(found, lambda hit: hit[1], may_read, MAX_GLOB_RESULTS)
    return shown, hidden, full, complete


def _relative_pattern(pattern: str, root: Path) -> str:
    prefix = f"{root}/"
    if pattern.startswith(prefix):
        return pattern[len(prefix):]
    if pattern.startswith("/"):
        raise ToolError(ErrorKind.INVALID_ARGS, f"pattern {pattern!r} is absolute but not under {root}",
                        "Give a pattern relative to path, e.g. \"**/*.py\", and the directory as path.")
    return pattern.removeprefix("./")


def _compiled(pattern: str) -> re.Pattern[str]:
    if "\0" in pattern:
        raise ToolError(ErrorKind.INVALID_ARGS, "pattern contains a NUL character, which no file name can hold",
                        "Remove the NUL character from the pattern.")
    try:
        return glob_regex(pattern)
    except re.error as e:
        raise ToolError(ErrorKind.INVALID_ARGS, f"pattern {pattern!r} is not a valid glob: {e}",
                        "Check brackets and braces, e.g. \"**/*.{py,pyi}\".") from None


def _find(ws: Workspace, root: Path, regex: re.Pattern[str]) -> tuple[list[tuple[int, str]], bool]:
    found: list[tuple[int, str]] = []
    scanned = 0
    with fsio.open_dir(ws, root) as fd:
        for dirpath, dirs, files, dfd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            scanned += len(dirs) + len(files)
            if scanned > MAX_GLOB_SCANNED:
                return found, False
            for name in files:
                rel = os.path.normpath(os.path.join(dirpath, name))
                hit = _match(ws, root, dfd, name, rel) if regex.fullmatch(rel) else None
                if hit is not None:
                    found.append(hit)
    return found, True


def _match(ws: Workspace, root: Path, dfd: int, name: str, rel: str) -> tuple[int, str] | None:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None  # deleted while we walked
    full = os.path.join(root, rel)
    if stat.S_ISREG(st.st_mode):
        return st.st_mtime_ns, full
    if stat.S_ISLNK(st.st_mode) and ws.contains(full) and os.path.isfile(full):  # isfile follows the link
        return st.st_mtime_ns, full
    return None
