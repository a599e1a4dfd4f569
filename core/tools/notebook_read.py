"""The NotebookRead tool: a Jupyter notebook's cells with their sources and outputs summarised.

Each cell comes under a heading with its position, type and id (the name
NotebookEdit takes), then its source as stored, then its outputs: text as
text (cut past `MAX_OUTPUT_CHARS`, terminal escapes made visible), images
and other binary data as one line ("[image/png output, 12 KB]"), errors as
their name and value.  The whole answer stays under Read's cap; past it the
agent is told to read one cell at a time.  The notebook must be valid
nbformat 4 (`nbcells.load`); the workspace boundary is enforced as in Read.

Sources are shown as Read shows a file's lines (control characters as
escapes such as `\\x1b`, lines cut at 2,000 characters saying how much was
cut); outputs, which a terminal would have shown, are sanitised as a
command's output is (colours dropped).  A notebook `ToolContext.may_read`
refuses (a Read deny rule, also through a link) is not opened.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.process.output import cut_line, sanitize, visible
from core.store import fsio
from core.tools.base import Annotations, RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.names import ToolName
from core.tools.nbcells import MAX_NOTEBOOK_BYTES, Cell, count, find, label, load, source

MAX_OUTPUT_CHARS = 2000
"""Text of one output shown before it is cut."""
MAX_RESULT_CHARS = 25_000
"""Read's cap: past it the remaining cells are left out and the agent is told how to read them."""
_SHOWN_TEXT = ("text/plain", "text/markdown", "text/latex", "application/json")
"""Mime types shown as text, the first present in an output; every other is summarised by type and size."""


class NotebookReadArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    notebook_path: str
    """The absolute path of the Jupyter notebook (.ipynb) to read."""
    cell_id: str | None = None
    """Read only this cell: its id, or "cell-N" (counting from 0) when cells have no ids."""


class NotebookRead(RunTool[NotebookReadArgs]):
    name = ToolName.NOTEBOOK_READ
    description = (
        "Read a Jupyter notebook (.ipynb): every cell with its position, type, id and source, and its outputs "
        "summarised (text shown and cut when long, images and other binary data as their type and size, "
        "errors as name and message). notebook_path must be an absolute path. Pass cell_id (an id, or "
        "\"cell-N\" counting from 0) to read one cell. Use the ids with NotebookEdit."
    )
    Args = NotebookReadArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)
    timeout_s = 30.0
    cacheable = True
    retry = RetryPolicy()

    def summary(self, args: NotebookReadArgs, workspace: Workspace) -> str:
        shown = workspace.describe(args.notebook_path)
        return visible(f"{shown} (cell {args.cell_id})" if args.cell_id is not None else shown, multiline=False)

    def reads(self, args: NotebookReadArgs, workspace: Workspace) -> frozenset[str] | None:
        try:
            return frozenset({workspace.relative(workspace.resolve(args.notebook_path, "notebook_path"))})
        except ToolError:
            return None

    def on_cache_hit(self, args: NotebookReadArgs, ctx: ToolContext) -> None:
        """Note the notebook as read, as a run would, so a NotebookEdit after it is not refused as stale."""
        path = ctx.workspace.resolve(args.notebook_path, "notebook_path")
        st = fsio.stat_path(ctx.workspace, path)
        if st is not None:
            ctx.read_state.seen[path] = (st.st_mtime_ns, st.st_size)

    async def run(self, args: NotebookReadArgs, ctx: ToolContext) -> ToolOutput:
        if not args.notebook_path.endswith(".ipynb"):
            raise ToolError(ErrorKind.INVALID_ARGS, f"notebook_path must be a Jupyter notebook (.ipynb), got"
                            f" {args.notebook_path!r}", "Use Read for other files.")
        path = ctx.workspace.resolve(args.notebook_path, "notebook_path")
        rel = visible(ctx.workspace.relative(path), multiline=False)
        refused = await asyncio.to_thread(_refusal, ctx, args.notebook_path, path)
        if refused:
            raise ToolError(ErrorKind.DENIED, f"{rel} may not be read: {refused}",
                            "Ask the person to read it, or to change the Read rules.")
        data, st = await asyncio.to_thread(fsio.read_with_stat, ctx.workspace, path, MAX_NOTEBOOK_BYTES)
        _, notebook = await asyncio.to_thread(load, data, rel)
        ctx.read_state.seen[path] = (st.st_mtime_ns, st.st_size)
        cells: list[Cell] = notebook["cells"]
        if args.cell_id is not None:
            index = find(cells, args.cell_id, rel)
            return _rendered(rel, str(path), notebook, [index])
        if not cells:
            return ToolOutput(f"{rel} has no cells.", {"path": str(path), "cells": [], "total_cells": 0})
        return _rendered(rel, str(path), notebook, list(range(len(cells))))


def _refusal(ctx: ToolContext, named: str, resolved: Path) -> str | None:
    """Why the Read rules refuse the notebook, as named or where its links lead; None when they do not."""
    return ctx.may_read(Path(named)) or ctx.may_read(resolved)


def _rendered(rel: str, path_text: str, notebook: dict[str, Any], indices: list[int]) -> ToolOutput:
    cells: list[Cell] = notebook["cells"]
    parts = [_title(rel, notebook)]
    size = len(parts[0])
    shown: list[int] = []
    for index in indices:
        block = _cell_text(cells[index], index)
        if shown and size + len(block) + 2 > MAX_RESULT_CHARS:
            break
        if len(block) > MAX_RESULT_CHARS:
            block = block[:MAX_RESULT_CHARS] + f"\n[... cell cut at {MAX_RESULT_CHARS:,} characters ...]"
        parts.append(block)
        size += len(block) + 2
        shown.append(index)
    if len(shown) < len(indices):
        next_cell = visible(label(cells[indices[len(shown)]], indices[len(shown)]), multiline=False)
        parts.append(f"(Showing cells {shown[0]}-{shown[-1]} of {len(cells)}. Read the rest one cell at a time "
                     f'with cell_id, starting at cell_id="{next_cell}".)')
    data = {"path": path_text, "total_cells": len(cells),
            "cells": [_cell_data(cells[i], i) for i in shown]}
    return ToolOutput("\n\n".join(parts), data)


def _title(rel: str, notebook: dict[str, Any]) -> str:
    metadata = notebook.get("metadata", {})
    language = metadata.get("language_info", {}).get("name") or metadata.get("kernelspec", {}).get("language")
    about = [count(len(notebook["cells"]), "cell"), f"nbformat 4.{notebook.get('nbformat_minor', 0)}"]
    return f"{rel}: {', '.join(about + ([visible(str(language), multiline=False)] if language else []))}"


def _cell_text(cell: Cell, index: int) -> str:
    heading = f"cell {index} · {cell['cell_type']}"
    if isinstance(cell.get("id"), str) and cell["id"]:
        heading += f" · id {cell['id']}"
    if cell.get("execution_count") is not None:
        heading += f" · In [{cell['execution_count']}]"
    text = source(cell).removesuffix("\n")
    lines = [f"# ── {visible(heading, multiline=False)} ──", *_source_lines(text)]
    outputs = cell.get("outputs") or []
    if outputs:
        lines.append(f"# ── {count(len(outputs), 'output')} ──")
        lines.extend(_output_text(output) for output in outputs)
    return "\n".join(lines)


def _source_lines(text: str) -> list[str]:
    """A cell's source as Read shows a file: control characters as escapes, long lines cut."""
    if not text:
        return []
    return [cut_line(visible(line.removesuffix("\r"))) for line in text.split("\n")]


def _cell_data(cell: Cell, index: int) -> dict[str, Any]:
    return {"index": index, "id": label(cell, index), "type": cell["cell_type"],
            "outputs": len(cell.get("outputs") or [])}


def _output_text(output: dict[str, Any]) -> str:
    kind = output["output_type"]
    if kind == "stream":
        return f"[{sanitize(str(output['name']))}]\n{_cut(_joined(output.get('text', '')))}"
    if kind == "error":
        return f"[error] {sanitize(str(output['ename']))}: {_cut(str(output['evalue']))}"
    if kind not in ("execute_result", "display_data"):
        return f"[{kind} output]"  # a type from a newer nbformat than this one knows
    tag = f"[Out {output['execution_count']}]" if kind == "execute_result" else "[display]"
    return "\n".join([tag, *_bundle_lines(output.get("data", {}))])


def _bundle_lines(bundle: dict[str, Any]) -> list[str]:
    """One mime bundle: the first textual form shown, every other form as its type and size."""
    text_type = next((mime for mime in _SHOWN_TEXT if mime in bundle), None)
    lines = []
    if text_type is not None:
        value = bundle[text_type]
        shown = json.dumps(value, ensure_ascii=False) if text_type == "application/json" else _joined(value)
        lines.append(_cut(shown))
    for mime, value in bundle.items():
        if mime != text_type:
            lines.append(f"[{mime} output, {_size(mime, value)}]")
    return lines or ["[empty output]"]


def _size(mime: str, value: Any) -> str:
    """How big the data is: base64 decoded for binary types, as stored for text."""
    text = value if isinstance(value, str) else _joined(value) if isinstance(value, list) else json.dumps(value)
    textual = mime.startswith("text/") or mime.endswith(("json", "+xml", "javascript"))
    n = len(text.encode("utf-8", "replace")) if textual else len("".join(text.split())) * 3 // 4
    return f"{n} bytes" if n < 1024 else f"{n // 1024:,} KB"


def _joined(value: Any) -> str:
    return "".join(map(str, value)) if isinstance(value, list) else str(value)


def _cut(text: str) -> str:
    text = sanitize(text.removesuffix("\n"))
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return f"{text[:MAX_OUTPUT_CHARS]}\n[... output cut: {len(text):,} characters ...]"
