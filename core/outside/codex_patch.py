"""Codex's `apply_patch` as Belay sees it: the files a patch changes, each with its content before and after.

Codex edits files with one freeform tool whose input is a patch in its own
format (`*** Begin Patch`, then per file `*** Add File:`, `*** Delete File:`
or `*** Update File:` with an optional `*** Move to:` and `@@` hunks of
context, `-` and `+` lines, then `*** End Patch`).  Its PreToolUse hook sends
that text as `{"command": patch}`.  `ApplyPatch` is a write tool over it, so
the Interceptor treats a patch like Write or Edit: the approval shows a diff
per file, each file's before-content is kept for undo, and the files are held
while Codex applies it.  Paths are relative to Codex's working directory,
which the adapter adds to the arguments (`cwd`).

Hunks are located as Codex locates them: in order, after the `@@` context
line when one is given, comparing lines exactly, then ignoring trailing
whitespace, then ignoring surrounding whitespace; `*** End of File` anchors a
hunk at the end.  A patch that does not parse or apply gets no diff (the
person is still asked) and is captured by comparing the workspace instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.tools.base import FileWrite, ToolArgs, ToolContext, WritePlan, WriteTool
from core.tools.names import ToolName
from core.tools.write import load_current

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
END_OF_FILE = "*** End of File"


@dataclass(frozen=True)
class PatchHunk:
    """One `@@` section of an update: the lines it expects and the lines it puts there."""

    context: str | None
    """The text after `@@` (a line to find first), or None."""
    old: tuple[str, ...]
    new: tuple[str, ...]
    at_end: bool = False
    """`*** End of File`: the old lines are the file's last."""


@dataclass
class FilePatch:
    """What a patch does to one file."""

    action: str
    """"add", "delete" or "update"."""
    path: str
    """As the patch names it (relative to Codex's working directory, or absolute)."""
    move_to: str | None = None
    added: list[str] = field(default_factory=list)
    """An added file's lines."""
    body: list[str] = field(default_factory=list)
    """An update's lines after its header (and move), as written."""
    hunks: list[PatchHunk] = field(default_factory=list)
    """The body grouped into hunks."""


def _invalid(message: str) -> ToolError:
    return ToolError(ErrorKind.INVALID_ARGS, f"apply_patch: {message}", "Send a patch in Codex's format.")


def parse(patch: str) -> list[FilePatch]:
    """The file operations of a patch, in order; ToolError when it is not one."""
    lines = patch.strip().split("\n")
    if len(lines) < 2 or lines[0].strip() != BEGIN or lines[-1].strip() != END:
        raise _invalid("a patch begins with '*** Begin Patch' and ends with '*** End Patch'")
    files: list[FilePatch] = []
    for line in lines[1:-1]:
        header = next(((action, line[len(mark):].strip()) for action, mark in
                       (("add", ADD), ("delete", DELETE), ("update", UPDATE)) if line.startswith(mark)), None)
        if header is not None:
            files.append(FilePatch(*header))
        elif not files:
            raise _invalid(f"expected a file header, found {line!r}")
        else:
            _body_line(files[-1], line)
    for patched in files:
        if not patched.path:
            raise _invalid("a file header without a path")
        if patched.action == "update":
            patched.hunks = _hunks(patched.body)
    if not files:
        raise _invalid("the patch changes no file")
    return files


def _body_line(patched: FilePatch, line: str) -> None:
    """One line under a file header; an update's are grouped into hunks once the patch is read."""
    if patched.action == "add":
        if not line.startswith("+"):
            raise _invalid(f"a line of an added file must start with '+': {line!r}")
        patched.added.append(line[1:])
    elif patched.action == "delete":
        if line.strip():
            raise _invalid(f"unexpected line under '*** Delete File: {patched.path}'")
    elif line.startswith(MOVE) and not patched.body:
        patched.move_to = line[len(MOVE):].strip()
    else:
        patched.body.append(line)


def _hunks(body: list[str]) -> list[PatchHunk]:
    """Group an update's raw lines into hunks at each `@@` line."""
    hunks: list[PatchHunk] = []
    context: str | None = None
    old: list[str] = []
    new: list[str] = []
    started = False

    def close(at_end: bool = False) -> None:
        if started and (old or new or context is not None):
            hunks.append(PatchHunk(context, tuple(old), tuple(new), at_end))

    for line in body:
        if line.startswith("@@"):
            close()
            context, old, new, started = (line[2:].strip() or None), [], [], True
        elif line.strip() == END_OF_FILE:
            close(at_end=True)
            context, old, new, started = None, [], [], False
        elif line[:1] in (" ", "-", "+") or line == "":
            started = True
            text = line[1:]
            if line[:1] != "+":
                old.append(text)
            if line[:1] != "-":
                new.append(text)
        else:
            raise _invalid(f"unexpected line in an update: {line!r}")
    close()
    return hunks


def apply(text: str, hunks: list[PatchHunk], path: str) -> str:
    """`text` with the hunks applied in order, as Codex applies them (the result ends with a newline)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    at = 0
    for hunk in hunks:
        if hunk.context is not None:
            found = _find(lines, (hunk.context,), at)
            if found is None:
                raise _invalid(f"{path}: cannot find the context line {hunk.context!r}")
            at = found + 1
        if not hunk.old:
            index = len(lines) if hunk.at_end or hunk.context is None else at
        else:
            start = len(lines) - len(hunk.old) if hunk.at_end else at
            found = _find(lines, hunk.old, max(start, 0))
            if found is None:
                raise _invalid(f"{path}: the lines to change are not there:\n" + "\n".join(hunk.old))
            index = found
        lines[index:index + len(hunk.old)] = hunk.new
        at = index + len(hunk.new)
    return "\n".join(lines) + "\n"


def _find(lines: list[str], wanted: tuple[str, ...], start: int) -> int | None:
    """Where `wanted` occurs at or after `start`: exactly, then without trailing, then any surrounding space."""
    for norm in (lambda s: s, str.rstrip, str.strip):
        target = [norm(w) for w in wanted]
        for i in range(start, len(lines) - len(wanted) + 1):
            if [norm(x) for x in lines[i:i + len(wanted)]] == target:
                return i
    return None


class ApplyPatchArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    command: str
    """The patch, in Codex's `*** Begin Patch` format (Codex's hook sends it under this name)."""
    cwd: str | None = None
    """Codex's working directory, which the patch's relative paths start from (added by Belay's adapter)."""


class ApplyPatch(WriteTool[ApplyPatchArgs]):
    """Codex's own patch tool, modelled so its calls are judged, shown and undone like Belay's file tools.

    It is never offered to an agent: Codex runs the patch itself, Belay only plans it for the diff and
    names its files so their before-contents are kept."""

    name = ToolName.APPLY_PATCH
    description = "Codex's apply_patch: add, delete, update or move files with one patch."
    Args = ApplyPatchArgs

    def summary(self, args: ApplyPatchArgs, workspace: Workspace) -> str:
        try:
            files = parse(args.command)
        except ToolError:
            return "apply_patch (a patch Belay cannot read)"
        names = [workspace.describe(self._absolute(args, f.path)) for f in files]
        return "patch " + ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")

    def writes(self, args: ApplyPatchArgs, workspace: Workspace) -> frozenset[str] | None:
        """Every file the patch adds, deletes, updates or moves to; anything when it cannot be read."""
        try:
            files = parse(args.command)
            paths = [workspace.resolve(self._absolute(args, name), "path")
                     for f in files for name in (f.path, f.move_to) if name]
        except ToolError:
            return frozenset({""})
        return frozenset(workspace.relative(p) for p in paths)

    def plan(self, args: ApplyPatchArgs, ctx: ToolContext) -> WritePlan:
        writes: dict[Path, FileWrite] = {}  # one per file, from its first content to its last
        for patched in parse(args.command):
            path = ctx.workspace.resolve(self._absolute(args, patched.path), "path")
            now = writes[path].after if path in writes else load_current(ctx, path)
            for write in _writes(patched, path, now, ctx.workspace, self._absolute(args, patched.move_to)):
                first = writes[write.path].before if write.path in writes else (
                    now if write.path == path else load_current(ctx, write.path))
                writes[write.path] = FileWrite(write.path, first, write.after)
        changed = tuple(w for w in writes.values() if w.before != w.after)
        names = ", ".join(ctx.workspace.relative(w.path) for w in changed)
        return WritePlan(writes=changed, message=f"Patched {names}." if names else "The patch changes nothing.")

    def edited_input(self, tool_input: dict[str, Any], plan: WritePlan, edited: dict[str, str],
                     workspace: Workspace) -> dict[str, Any] | None:
        """The patch rewritten to write what the person approved (their edit, or the hunks they accepted):
        each file whole, as Add, Delete or an Update replacing every line.  None when Codex's format cannot
        say it (an empty new file, content without a final newline, bytes that are not UTF-8)."""
        cwd = tool_input.get("cwd")
        lines = [BEGIN]
        for write in plan.writes:
            rel = workspace.relative(write.path)
            after = edited[rel].encode("utf-8") if rel in edited else write.after
            name = os.path.relpath(write.path, cwd) if isinstance(cwd, str) and _inside(write.path, cwd) \
                else str(write.path)
            new = _patch_lines(after)
            old = _patch_lines(write.before)
            if after is None:
                lines.append(DELETE + name)
            elif not new or old is None and write.before is not None:
                return None
            elif write.before is None:
                lines += [ADD + name, *("+" + line for line in new)]
            else:
                lines += [UPDATE + name, "@@", *("-" + line for line in old or ()), *("+" + line for line in new)]
        return {"command": "\n".join([*lines, END]) + "\n"}

    @staticmethod
    def _absolute(args: ApplyPatchArgs, name: str | None) -> str:
        if not name:
            return ""
        return name if os.path.isabs(name) or not args.cwd else os.path.join(args.cwd, name)


def _patch_lines(content: bytes | None) -> list[str] | None:
    """A file's lines as a patch carries them; None when a patch cannot (not UTF-8, no final newline)."""
    if content is None:
        return None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text and not text.endswith("\n"):
        return None
    return text.split("\n")[:-1]


def _inside(path: Path, directory: str) -> bool:
    return os.path.commonpath([os.path.abspath(directory), os.path.abspath(path)]) == os.path.abspath(directory)


def _writes(patched: FilePatch, path: Path, before: bytes | None, workspace: Workspace,
            move_to: str) -> list[FileWrite]:
    """The files one file operation changes (a move changes two)."""
    rel = workspace.relative(path)
    if patched.action == "add":
        return [FileWrite(path, before, ("\n".join(patched.added) + "\n").encode("utf-8"))]
    if before is None:
        raise ToolError(ErrorKind.NOT_FOUND, f"apply_patch: {rel} does not exist", "Patch a file that exists.")
    if patched.action == "delete":
        return [FileWrite(path, before, None)]
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(ErrorKind.INVALID_ARGS, f"apply_patch: {rel} is not UTF-8 text", "") from None
    after = apply(text, patched.hunks, rel).encode("utf-8")
    if not move_to:
        return [FileWrite(path, before, after)]
    target = workspace.resolve(move_to, "path")
    return [FileWrite(path, before, None), FileWrite(target, None, after)]
