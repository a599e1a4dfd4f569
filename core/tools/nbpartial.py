"""A NotebookEdit approved in part: the notebook whose cells read as the accepted hunks of its approval's diff.

The approval shows a notebook as its cells (`nbcells.render`), not its JSON,
so the person's hunks are hunks of that rendering.  Approved in part, the
rendering with only the accepted hunks applied (`core.changes.partial`) is
turned back into a notebook: the edited cell's source is read out of it
(with its outputs kept when the hunk that cleared them was rejected), put
into the notebook the tool would write, and the result is checked to render
exactly as that partial rendering.  A rendering no single cell's source can
give (a type change kept apart from its source, a cell inserted or deleted
in part) is refused rather than guessed.  All hunks accepted gives the
tool's notebook, none the notebook as it was.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from core.changes.partial import PartialError, apply_hunks
from core.errors import ToolError
from core.models.diffs import FileDiff
from core.tools.base import FileWrite
from core.tools.nbcells import Cell, count, load, render, source
from core.tools.notebook import _dump, _lines  # the tool's own way of storing a source and writing the file


def notebook_in_part(write: FileWrite, diff: FileDiff, accepted: Collection[int], rel: str) -> bytes:
    """The notebook to write for `write` (a NotebookEdit's) with only the `accepted` hunks of `diff`."""
    if write.shown is None or write.before is None or write.after is None:
        raise PartialError(f"{rel} is not a notebook edit that can be approved in part")
    shown_before, shown_after = write.shown
    if shown_before is None or shown_after is None:
        raise PartialError(f"{rel} is created or deleted whole by this call, so it cannot be approved in part")
    wanted = apply_hunks(shown_before, diff, accepted)
    if wanted == shown_after:
        return write.after
    if wanted == shown_before:
        return write.before
    try:
        _, before = load(write.before, rel)
        text, after = load(write.after, rel)
        index = _edited_cell(before["cells"], after["cells"], rel)
        after["cells"][index] = _cell_as_shown(before["cells"][index], after["cells"], index, wanted, rel)
        if render(after) != wanted:
            raise PartialError(f"no content of the edited cell of {rel} reads as the approved part")
        return _dump(after, text, rel)
    except ToolError as e:  # the notebook itself (checked when the call was planned), or its writing
        raise PartialError(e.info.message) from None


def _edited_cell(before: list[Cell], after: list[Cell], rel: str) -> int:
    if len(before) != len(after):
        raise PartialError(f"a cell inserted into or deleted from {rel} is approved whole or not at all")
    changed = [k for k, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
    if len(changed) != 1:
        raise PartialError(f"{rel} changes in {len(changed)} cells, so it cannot be approved in part")
    return changed[0]


def _cell_as_shown(old: Cell, cells: list[Cell], index: int, wanted: bytes, rel: str) -> Cell:
    """The edited cell whose block in the rendering is the one in `wanted`."""
    head = render({"cells": cells[:index]}) + (b"\n" if index else b"")
    through = render({"cells": cells[:index + 1]})
    tail = render({"cells": cells})[len(through):]
    if not wanted.startswith(head) or not wanted.endswith(tail) or len(wanted) < len(head) + len(tail):
        raise PartialError(f"the approved part of {rel} changes more than the edited cell")
    block = wanted[len(head):len(wanted) - len(tail)].decode("utf-8").splitlines(keepends=True)
    new = cells[index]
    heading = through[len(head):].decode("utf-8").splitlines(keepends=True)[0]
    if not block or block[0] != heading:
        raise PartialError(f"the edited cell of {rel} changes its type, which goes with its source, not apart")
    body, cell = block[1:], dict(new)
    marker = _outputs_line(old)
    if marker and body and body[-1] == marker and not _outputs_line(new):  # the clearing of outputs was rejected
        body = body[:-1]
        cell.update(outputs=old["outputs"], execution_count=old.get("execution_count"))
    cell["source"] = _stored(_source_from("".join(body), source(old), source(new)), new)
    return cell


def _source_from(shown: str, old: str, new: str) -> str:
    """The source a rendering shows (which adds a final newline when the source has none)."""
    if shown == _with_newline(old):
        return old
    if shown == _with_newline(new):
        return new
    return shown[:-1] if shown.endswith("\n") and not new.endswith("\n") else shown


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _stored(text: str, like: Cell) -> list[str] | str:
    return _lines(text) if isinstance(like.get("source"), list) else text


def _outputs_line(cell: Cell) -> str:
    outputs = cell.get("outputs")
    if cell.get("cell_type") == "code" and isinstance(outputs, list) and outputs:
        return f"# [{count(len(outputs), 'output')} folded]\n"
    return ""


def notebook_edit_input(tool_input: dict[str, Any], write: FileWrite, edited: str) -> dict[str, Any] | None:
    """An agent's own NotebookEdit input that writes the person's version (`edited`, a notebook from
    `notebook_in_part`) of a one-cell replace: the same call with that cell's source; None when the version
    differs in more than the source (outputs kept, another cell), which the agent's tool cannot be told."""
    if tool_input.get("edit_mode", "replace") != "replace" or write.after is None:
        return None
    try:
        after = json.loads(write.after)["cells"]
        wanted = json.loads(edited)["cells"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(after, list) or not isinstance(wanted, list) or len(after) != len(wanted):
        return None
    differing = [k for k, (a, w) in enumerate(zip(after, wanted, strict=True)) if a != w]
    if not differing:
        return dict(tool_input)
    if len(differing) != 1:
        return None
    cell, mine = after[differing[0]], wanted[differing[0]]
    if {k: v for k, v in cell.items() if k != "source"} != {k: v for k, v in mine.items() if k != "source"}:
        return None
    return {**tool_input, "new_source": source(mine)}
