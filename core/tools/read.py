"""The Read tool: a text file with line numbers, as `cat -n` shows it.

Files over `fsio.DEFAULT_MAX_BYTES` (10 MB) are refused as too large even
when offset/limit are given: reading stays one bounded, atomic snapshot
(content and stat from the same descriptor) instead of a stream, and Grep is
the better tool for finding the part of a huge file that matters.

What reaches the agent and the window is as safe as a command's output: a
control character in the file (ESC, CR, OSC 52's BEL) is shown as an escape
such as `\\x1b` (`core.process.output.visible`), never sent live, and a line
over 2,000 characters is cut with a marker naming how much was left out.
"""

from __future__ import annotations

import asyncio

from pydantic import ConfigDict, Field

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.process.output import cut_line, looks_binary, summarize_binary, visible
from core.store import fsio
from core.tools.base import Annotations, RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput, read_places
from core.tools.names import ToolName

DEFAULT_LIMIT = 2000
MAX_OUTPUT_CHARS = 25_000
"""Below the pipeline's output cap, so Read cuts at a line and says where to go on."""


class ReadArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    file_path: str
    """The absolute path of the file to read."""
    offset: int | None = Field(default=None, ge=0)
    """The line number to start reading from (1-based; 0 means 1). Only needed for long files."""
    limit: int | None = Field(default=None, ge=1)
    """The number of lines to read (default 2000)."""


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them: split on \\n only, no phantom line after a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class Read(RunTool[ReadArgs]):
    name = ToolName.READ
    description = (
        "Read a text file from the workspace. file_path must be an absolute path. Lines are returned "
        "numbered like `cat -n` (number, tab, text), starting at line 1; by default up to 2000 lines, "
        "use offset and limit to read a long file in parts. Lines over 2000 characters are cut; control "
        "characters are shown as escapes such as \\x1b. Binary files are reported, not shown. Read a file "
        "before you Edit it."
    )
    Args = ReadArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)
    timeout_s = 30.0
    cacheable = True
    retry = RetryPolicy()

    def reads(self, args: ReadArgs, workspace: Workspace) -> frozenset[str] | None:
        return read_places(workspace, args.file_path, tree=False)

    def on_cache_hit(self, args: ReadArgs, ctx: ToolContext) -> None:
        """The agent has now read the file as it is (unchanged since the cached read): Edit may follow."""
        path = ctx.workspace.resolve(args.file_path)
        st = fsio.stat_path(ctx.workspace, path)
        if st is not None:
            ctx.read_state.seen[path] = (st.st_mtime_ns, st.st_size)

    def summary(self, args: ReadArgs, workspace: Workspace) -> str:
        shown = visible(workspace.describe(args.file_path), multiline=False)  # a terminal front end prints it
        return f"{shown} from line {args.offset}" if args.offset and args.offset > 1 else shown

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        path = ctx.workspace.resolve(args.file_path)
        data, st = await asyncio.to_thread(fsio.read_with_stat, ctx.workspace, path)
        ctx.read_state.seen[path] = (st.st_mtime_ns, st.st_size)
        rel = visible(ctx.workspace.relative(path), multiline=False)
        if not data:
            return ToolOutput(f"{rel} exists but is empty.", {"path": str(path), "lines": 0, "total_lines": 0})
        if looks_binary(data):
            text = summarize_binary(len(data), data[:64], noun="file")
            return ToolOutput(text, {"path": str(path), "lines": 0, "total_lines": 0, "binary": True})
        return _numbered(rel, path_text=str(path), text=data.decode("utf-8", errors="replace"),
                         offset=args.offset, limit=args.limit)


def _numbered(rel: str, path_text: str, text: str, offset: int | None, limit: int | None) -> ToolOutput:
    lines = split_lines(text)
    total = len(lines)
    start = max(offset or 1, 1)
    if start > total:
        raise ToolError(ErrorKind.INVALID_ARGS, f"offset {start} is past the end of {rel}, which has {total:,} lines",
                        f"Use an offset between 1 and {total}.")
    wanted = lines[start - 1 : start - 1 + (limit or DEFAULT_LIMIT)]
    rendered: list[str] = []
    size = 0
    for number, line in enumerate(wanted, start):
        row = f"{number:>6}\t{cut_line(visible(line.removesuffix(chr(13))))}"
        if rendered and size + len(row) + 1 > MAX_OUTPUT_CHARS:
            break
        rendered.append(row)
        size += len(row) + 1
    last = start + len(rendered) - 1
    notes = []
    if last < total:
        notes.append(f"(Showing lines {start}-{last} of {total:,} in {rel}. Use offset={last + 1} to read on.)")
    if "\r\n" in text:
        notes.append("(This file has CRLF line endings, not shown above; an Edit old_string must use \\r\\n.)")
    body = "\n".join(rendered + notes)
    return ToolOutput(body, {"path": path_text, "lines": len(rendered), "total_lines": total})
