"""The NotebookEdit tool: replace, insert or delete one cell of a Jupyter notebook.

Like every write tool it only plans.  The notebook is parsed as plain JSON
(no schema upgrade), validated against nbformat's schema before and after
the edit (an invalid notebook is never written), and written back the way
Jupyter writes it: indent 1, non-ASCII kept, a trailing newline, keys in the
order the file had them.  A notebook Jupyter saved therefore comes back byte
for byte except for the cell that changed.  The person approving sees the
cells, not the JSON (`FileWrite.shown`, rendered by `nbcells.render`), so
the diff shows that cell and nothing else.  Cells are named by their
nbformat 4.5 `id` or, as in Claude Code, by position ("cell-3" or "3") for
notebooks without ids.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.store import fsio
from core.tools.base import FileWrite, ToolArgs, ToolContext, WritePlan, WriteTool
from core.tools.names import ToolName
from core.tools.nbcells import MAX_NOTEBOOK_BYTES, Cell, check_schema, count, find, invalid, label, load, render
from core.tools.write import check_not_stale, encode_text


class NotebookEditArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    notebook_path: str
    """The absolute path of the Jupyter notebook (.ipynb) to edit."""
    cell_id: str | None = None
    """The id of the cell to replace or delete ("cell-N" counts from 0 when cells have no ids).
    For insert, the new cell goes after this one, or first when omitted."""
    new_source: str
    """The new source of the cell (ignored for delete)."""
    cell_type: Literal["code", "markdown"] | None = None
    """The type of the cell; required for insert. For replace, omitting it keeps the cell's type."""
    edit_mode: Literal["replace", "insert", "delete"] = "replace"
    """replace the cell's source (the default), insert a new cell, or delete the cell."""


class NotebookEdit(WriteTool[NotebookEditArgs]):
    name = ToolName.NOTEBOOK_EDIT
    description = (
        "Replace, insert or delete one cell of a Jupyter notebook (.ipynb). notebook_path must be an "
        "absolute path. Name the cell by cell_id: its id, or \"cell-N\" (counting from 0) in notebooks "
        "whose cells have no ids. edit_mode replace (the default) sets the cell's source and clears a code "
        "cell's outputs; insert adds a new cell of cell_type after cell_id, or at the top when cell_id is "
        "omitted; delete removes the cell. The notebook's metadata and other cells are kept as they are. "
        "Use NotebookRead first to see the cells and their ids."
    )
    Args = NotebookEditArgs
    timeout_s = 30.0

    def summary(self, args: NotebookEditArgs, workspace: Workspace) -> str:
        if args.edit_mode == "insert":
            where = f"after {args.cell_id}" if args.cell_id is not None else "at the top"
            what = f"insert {args.cell_type or 'new'} cell {where}"
        else:
            what = f"{args.edit_mode} cell {args.cell_id}" if args.cell_id is not None else args.edit_mode
        return f"{workspace.describe(args.notebook_path)} ({what})"

    def plan(self, args: NotebookEditArgs, ctx: ToolContext) -> WritePlan:
        _check_args(args)
        path = ctx.workspace.resolve(args.notebook_path, "notebook_path")
        rel = ctx.workspace.relative(path)
        before = _load(ctx, path, rel)
        text, notebook = load(before, rel)
        shown_before = render(notebook)
        message = _edit(notebook, args, rel)
        check_schema(notebook, rel, edited=True)
        after = _dump(notebook, text, rel)
        return WritePlan(writes=(FileWrite(path=path, before=before, after=after,
                                           shown=(shown_before, render(notebook))),), message=message)


def _check_args(args: NotebookEditArgs) -> None:
    """Mistakes in the arguments alone, refused before the disk is touched."""
    if not args.notebook_path.endswith(".ipynb"):
        raise ToolError(ErrorKind.INVALID_ARGS, f"notebook_path must be a Jupyter notebook (.ipynb), got"
                        f" {args.notebook_path!r}", "Use Edit or Write for other files.")
    if args.edit_mode == "insert" and args.cell_type is None:
        raise ToolError(ErrorKind.INVALID_ARGS, "cell_type is required when edit_mode is insert",
                        'Pass cell_type "code" or "markdown".')
    if args.edit_mode != "insert" and args.cell_id is None:
        raise ToolError(ErrorKind.INVALID_ARGS, f"cell_id is required when edit_mode is {args.edit_mode}",
                        "Pass the id of the cell; NotebookRead shows the ids.")
    encode_text(args.new_source, "new_source")


def _edit(notebook: dict[str, Any], args: NotebookEditArgs, rel: str) -> str:
    """Change `notebook` in place as asked; what the agent is told."""
    cells: list[Cell] = notebook["cells"]
    if args.edit_mode == "insert":
        return _insert(notebook, args, rel)
    assert args.cell_id is not None
    index = find(cells, args.cell_id, rel)
    if args.edit_mode == "replace":
        return _replace(cells, index, args, rel)
    message = f"Deleted cell {label(cells[index], index)} from {rel} ({count(len(cells) - 1, 'cell')} left)."
    del cells[index]
    return message


def _load(ctx: ToolContext, path: Path, rel: str) -> bytes:
    """The notebook's bytes, after the stale-read check; a missing notebook is not created."""
    try:
        data, st = fsio.read_with_stat(ctx.workspace, path, MAX_NOTEBOOK_BYTES)
    except ToolError as e:
        if e.kind is ErrorKind.NOT_FOUND:
            raise ToolError(ErrorKind.NOT_FOUND, f"{rel} does not exist",
                            "NotebookEdit changes existing notebooks; create one with Write first.") from None
        raise
    check_not_stale(ctx, path, st)
    return data


def _replace(cells: list[Cell], index: int, args: NotebookEditArgs, rel: str) -> str:
    old = cells[index]
    cell_type = args.cell_type or old["cell_type"]
    cell = {**old, "cell_type": cell_type, "source": _lines(args.new_source)}
    if cell_type == "code":
        cell.pop("attachments", None)  # only markdown and raw cells may carry attachments
        cell.update(execution_count=None, outputs=[])
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
    cells[index] = dict(sorted(cell.items())) if list(old) == sorted(old) else cell
    notes = [f"it is now a {cell_type} cell"] if cell_type != old["cell_type"] else []
    if cell_type == "code" and old.get("outputs"):
        notes.append("its outputs were cleared")
    return f"Replaced cell {label(old, index)} in {rel}" + (f"; {' and '.join(notes)}." if notes else ".")


def _insert(notebook: dict[str, Any], args: NotebookEditArgs, rel: str) -> str:
    cells: list[Cell] = notebook["cells"]
    index = 0 if args.cell_id is None else find(cells, args.cell_id, rel) + 1
    assert args.cell_type is not None
    cell: Cell = {"cell_type": args.cell_type, "metadata": {}, "source": _lines(args.new_source)}
    if args.cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    if (notebook["nbformat"], notebook.get("nbformat_minor", 0)) >= (4, 5):
        cell["id"] = _fresh_id(cells)
    cells.insert(index, dict(sorted(cell.items())))
    where = f"after cell {label(cells[index - 1], index - 1)} in" if index else "at the top of"
    return f"Inserted {args.cell_type} cell {label(cells[index], index)} {where} {rel}."


def _fresh_id(cells: list[Cell]) -> str:
    """A new cell id shaped like Jupyter's (8 hex digits), unused in this notebook."""
    taken = {cell.get("id") for cell in cells}
    while (cell_id := secrets.token_hex(4)) in taken:
        pass
    return cell_id


def _lines(source: str) -> list[str]:
    """Source as Jupyter stores it: lines with their newlines kept, split on \\n only."""
    return re.findall(r"[^\n]*\n|[^\n]+", source)


def _dump(notebook: dict[str, Any], original: str, rel: str) -> bytes:
    """The notebook as JSON in the file's own indentation and line endings (Jupyter's by default)."""
    indent = re.match(r"\{\r?\n( +)\S", original)
    try:
        text = json.dumps(notebook, indent=len(indent.group(1)) if indent else 1, ensure_ascii=False) + "\n"
    except RecursionError:
        raise invalid(f"{rel} is nested too deeply to be a Jupyter notebook") from None
    if re.match(r"[^\n]*\r\n", original):
        text = text.replace("\n", "\r\n")  # JSON strings never hold a raw newline, so only line ends change
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(f"{rel} contains an unpaired surrogate escape (\\ud800-\\udfff) that cannot be"
                       " written as UTF-8") from None
