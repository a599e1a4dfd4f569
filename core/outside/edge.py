"""The workspace's edge for an outside agent's file tools: the checks Belay's own tools make, made before the
agent's tool runs.

Belay's own Read, Write, Edit, LS and the others refuse a path outside the workspace (named with `..`, or
reached through a link inside it that leads out), a path that is not absolute, a pipe or a device read as a
file, and a directory written as one; they replace a file rather than write into it, so a hard link to it
from outside the workspace keeps its content.  Claude Code's own tools, run by the agent itself, do none of
that: a person asked "Write to notes.txt?" would approve a write that lands beside the workspace.  So:

- `path_problem` gives the error Belay's own tool would give (the same words), and the call is refused with
  it, unless an allow rule that names the tool decided it (the person's own word for that path);
- `separate` gives a file with other names (hard links) an inode of its own before the agent writes it in
  place, with the same content and mode: the workspace's name then changes alone.

Only tools Belay has a model of are checked, and only where their arguments fit it.
"""

from __future__ import annotations

import os
import stat

from core.errors import ErrorInfo, ErrorKind, ToolError
from core.paths import Workspace
from core.store import fsio
from core.store.fsio import MAX_CAPTURE_BYTES
from core.store.restore import Put, apply_all
from core.tools.base import Tool, ToolArgs, WriteTool
from core.tools.names import ToolName

PATH_FIELDS = ("file_path", "notebook_path", "path")
"""The arguments in which Belay's file tools name the path they use."""
FILE_READERS = frozenset({ToolName.READ, ToolName.NOTEBOOK_READ})


def path_problem(tool: Tool, args: ToolArgs, workspace: Workspace) -> ErrorInfo | None:
    """Why Belay's own tool would refuse this call's path (None: it would not).  A realpath and a stat per path
    it names: cheap, and inside the caller's `one_look` each path is resolved once."""
    for field in PATH_FIELDS:
        raw = getattr(args, field, None)
        if not isinstance(raw, str):
            continue
        try:
            real = workspace.resolve(raw, field)
        except ToolError as e:
            return e.info
        try:
            mode = os.stat(real).st_mode
        except OSError:
            continue  # absent: a write makes it, a read is the agent's tool's to report
        if stat.S_ISDIR(mode) and (tool.name in FILE_READERS or isinstance(tool, WriteTool)):
            return ErrorInfo(kind=ErrorKind.IS_DIRECTORY, message=f"{field} {raw!r} is a directory",
                             suggestion="Name a file in it (LS lists them).")
        if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
            return ErrorInfo(kind=ErrorKind.NOT_REGULAR_FILE, message=f"{field} {raw!r} is not a regular file "
                             "(a pipe, a device or a socket)", suggestion="Only regular files can be read or written.")
    return None


def separate(workspace: Workspace, rel: str) -> bool:
    """Blocking: give the file at `rel` an inode of its own if it has other names (hard links), its content and
    mode unchanged; whether it did."""
    path = workspace.root / rel
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
        return False
    data = fsio.read_if_exists(workspace, path, MAX_CAPTURE_BYTES)
    if data is None:
        return False
    apply_all(workspace, [Put(rel, data, stat.S_IMODE(st.st_mode))], [None])
    return True
