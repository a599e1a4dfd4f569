"""The Write tool, and the stale-read check every file-changing tool shares.

A write tool only plans: it reads the current bytes (for the diff, the undo
record and the pipeline's conflict check) and returns them with the new
bytes.  The stale-read check stops an agent overwriting changes it never
saw: if it read the file earlier and the file has changed since, it must
read it again.  Writing a file never read is allowed, as in Claude Code.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ConfigDict

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.store import fsio
from core.tools.base import FileWrite, ToolArgs, ToolContext, WritePlan, WriteTool
from core.tools.names import ToolName
from core.tools.read import split_lines


class WriteArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    file_path: str
    """The absolute path of the file to write (created with its directories if missing)."""
    content: str
    """The complete new content of the file."""


def check_not_stale(ctx: ToolContext, path: Path, st: os.stat_result) -> None:
    """Refuse to change a file that changed after the agent last read it."""
    seen = ctx.read_state.seen.get(path)
    if seen is not None and seen != (st.st_mtime_ns, st.st_size):
        raise ToolError(ErrorKind.STALE_READ,
                        f"{ctx.workspace.relative(path)} was modified since you read it; read it again",
                        "Read the file again so your change is based on what is there now.")


def load_current(ctx: ToolContext, path: Path) -> bytes | None:
    """The file's bytes now (None if it does not exist), after the stale-read check."""
    try:
        data, st = fsio.read_with_stat(ctx.workspace, path)
    except ToolError as e:
        if e.kind is ErrorKind.NOT_FOUND:
            return None
        raise
    check_not_stale(ctx, path, st)
    return data


def encode_text(text: str, field: str) -> bytes:
    """UTF-8 bytes of `text`; a lone surrogate from a JSON escape is an argument error, not a crash."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ToolError(ErrorKind.INVALID_ARGS, f"{field} is not valid Unicode text (at character {e.start})",
                        "Send the text as valid Unicode.") from None


def count_lines(text: str) -> str:
    n = len(split_lines(text))
    return f"{n} line" if n == 1 else f"{n} lines"


class Write(WriteTool[WriteArgs]):
    name = ToolName.WRITE
    description = (
        "Write a file in the workspace, replacing it if it exists and creating it (and its parent "
        "directories) if not. file_path must be an absolute path; content is the complete new content. "
        "If you read the file earlier and it changed since, the write is refused: read it again. "
        "Prefer Edit for changing part of an existing file."
    )
    Args = WriteArgs
    timeout_s = 30.0

    def summary(self, args: WriteArgs, workspace: Workspace) -> str:
        return workspace.describe(args.file_path)

    def plan(self, args: WriteArgs, ctx: ToolContext) -> WritePlan:
        path = ctx.workspace.resolve(args.file_path)
        after = encode_text(args.content, "content")
        before = load_current(ctx, path)
        rel = ctx.workspace.relative(path)
        if before is None:
            message = f"Created {rel} ({count_lines(args.content)})."
        else:
            message = f"Wrote {count_lines(args.content)} to {rel}."
        return WritePlan(writes=(FileWrite(path=path, before=before, after=after),), message=message)
