"""What NotebookRead and NotebookEdit share: loading and validating a notebook, naming its cells, a cell view.

A notebook is parsed as plain JSON (so NotebookEdit can write it back the
way it was) and then checked against nbformat's own JSON schema for its
version.  The schema runs through nbformat's jsonschema validator rather
than `nbformat.validate`: that one warns and repairs as it goes (missing
ids, duplicate ids), and its errors name a `oneOf` rather than the field
that is wrong.  A cell without an id in an nbformat 4.5 notebook is
tolerated, as nbformat itself only warns about it; anything else the schema
refuses is an `invalid-notebook` error naming the cell and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.errors import ErrorKind, ToolError
from core.process.output import visible
from core.store.fsio import MAX_CAPTURE_BYTES

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

MAX_NOTEBOOK_BYTES = MAX_CAPTURE_BYTES
"""Notebooks carry their outputs (plots, tables) and often exceed Read's 10 MB; undo can capture this much."""
SHOWN_IDS = 5
MAX_PROBLEM_CHARS = 200
PLACEHOLDER_ID = "id-missing"
"""Stands in for a missing cell id while validating (nbformat only warns about one)."""
_POSITION = re.compile(r"(?:cell-)?([0-9]{1,9})")
_FIX = "Fix that part of the notebook (or open and save it in Jupyter), then try again."

Cell = dict[str, Any]
Notebook = dict[str, Any]


def load(data: bytes, rel: str) -> tuple[str, Notebook]:
    """The notebook's text and its JSON, checked to be a valid nbformat 4 notebook."""
    text = _decode(data, rel)
    notebook = parse(text, rel)
    check_schema(notebook, rel)
    return text, notebook


def _decode(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise invalid(f"{rel} is not UTF-8 text (byte {e.start}), so not a Jupyter notebook") from None


def parse(text: str, rel: str) -> Notebook:
    """The notebook as JSON, checked to be nbformat 4 with a list of cell objects (the schema comes after)."""
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as e:
        raise invalid(f"{rel} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise invalid(f"{rel} is nested too deeply to be a Jupyter notebook") from None
    if not isinstance(notebook, dict):
        raise invalid(f"{rel} is not a Jupyter notebook: its JSON is a {type(notebook).__name__}, not an object")
    major, minor = notebook.get("nbformat"), notebook.get("nbformat_minor", 0)
    if not _is_int(major) or not _is_int(minor):
        raise invalid(f"{rel} is not a Jupyter notebook: it has no nbformat version")
    if major != 4:
        raise invalid(f"{rel} is an nbformat {major} notebook; only nbformat 4 notebooks can be read and edited",
                      "Convert it with `jupyter nbconvert --to notebook --inplace`, or use Read and Edit.")
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise invalid(f"{rel} is not a Jupyter notebook: it has no list of cells")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise invalid(f"{rel} has an invalid cell at position {index}: not an object with a cell_type")
    return notebook


def check_schema(notebook: Notebook, rel: str, edited: bool = False) -> None:
    """Refuse a notebook nbformat's schema for its version refuses, naming the first problem and where."""
    from nbformat.validator import get_validator  # a third of a second to import: when a notebook is checked

    minor = notebook.get("nbformat_minor", 0)
    validator = get_validator(4, minor, name="jsonschema") if minor >= 0 else None
    if validator is None:
        raise invalid(f"{rel} claims nbformat 4.{minor}, which is not a notebook format version")
    try:
        error = next(iter(validator.iter_errors(_with_ids(notebook))), None)
    except RecursionError:
        raise invalid(f"{rel} is nested too deeply to be a Jupyter notebook") from None
    if error is None:
        return
    where, problem = _describe(_narrow(error), notebook)
    subject = f"the edit would make {rel} an invalid notebook" if edited else f"{rel} is not a valid Jupyter notebook"
    raise invalid(f"{subject}: {where + ': ' if where else ''}{problem}", _FIX)


def _with_ids(notebook: Notebook) -> Notebook:
    """The notebook with a placeholder id on cells missing one, from 4.5 on (shallow copies, never mutated)."""
    if notebook.get("nbformat_minor", 0) < 5 or all("id" in cell for cell in notebook["cells"]):
        return notebook
    cells = [cell if "id" in cell else {**cell, "id": PLACEHOLDER_ID} for cell in notebook["cells"]]
    return {**notebook, "cells": cells}


def _narrow(error: ValidationError) -> ValidationError:
    """The most precise cause: inside a cell's (or output's) `oneOf`, the branch for its own type."""
    while error.validator == "oneOf" and error.context:
        branch = _branch_for(error)
        causes = [e for e in error.context if e.relative_schema_path and e.relative_schema_path[0] == branch]
        if not causes:
            return error
        error = max(causes, key=lambda e: len(e.absolute_path))  # the deepest: a field, not the whole cell
    return error


def _branch_for(error: ValidationError) -> int | None:
    names = _branch_names(error)
    instance = error.instance
    if not isinstance(instance, dict):
        return None
    cell_type = instance.get("cell_type")
    wanted = f"{cell_type}_cell" if isinstance(cell_type, str) else instance.get("output_type")
    return names.index(wanted) if wanted in names else None


def _branch_names(error: ValidationError) -> list[str]:
    """The definition each `oneOf` branch refers to: "code_cell", "stream"..."""
    options = error.validator_value if isinstance(error.validator_value, list) else []
    return [str(o.get("$ref", "")).rsplit("/", 1)[-1] if isinstance(o, dict) else "" for o in options]


def _describe(error: ValidationError, notebook: Notebook) -> tuple[str, str]:
    """Where the problem is ("cell 2 (id a1b2), outputs[0]") and what it is, in a sentence."""
    path = list(error.absolute_path)
    problem = error.message
    if error.validator == "oneOf" and isinstance(error.instance, dict):  # a type no branch is for
        key = "cell_type" if "cell_type" in error.instance else "output_type"
        known = ", ".join(n.removesuffix("_cell") for n in _branch_names(error))
        value = error.instance.get(key)
        problem = f"{key} {value!r} is not one of {known}" if value is not None else f"it has no {key}"
    if len(problem) > MAX_PROBLEM_CHARS:
        problem = problem[:MAX_PROBLEM_CHARS] + "…"
    return _where(path, notebook), problem


def _where(path: Sequence[object], notebook: Notebook) -> str:
    head, rest = "", list(path)
    if len(rest) >= 2 and rest[0] == "cells" and isinstance(rest[1], int):
        index = rest[1]
        cell_id = notebook["cells"][index].get("id")
        head = f"cell {index}" + (f" (id {visible(cell_id, multiline=False)})" if isinstance(cell_id, str) and cell_id
                                  else "")
        rest = rest[2:]
    tail = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest).lstrip(".")
    return ", ".join(part for part in (head, tail) if part)


def find(cells: list[Cell], cell_id: str, rel: str) -> int:
    """The index of the cell with this id, or at this position ("cell-N" or "N") as Claude Code accepts."""
    for index, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return index
    position = _POSITION.fullmatch(cell_id)
    if position and int(position.group(1)) < len(cells):
        return int(position.group(1))
    if not cells:
        raise ToolError(ErrorKind.NOT_FOUND, f"cell {cell_id!r} not found: {rel} has no cells",
                        "Use NotebookEdit with edit_mode insert to add one.")
    labels = [visible(label(cell, index), multiline=False) for index, cell in enumerate(cells)]
    more = f" and {len(labels) - SHOWN_IDS} more" if len(labels) > SHOWN_IDS else ""
    raise ToolError(ErrorKind.NOT_FOUND, f"cell {cell_id!r} not found in {rel} ({count(len(cells), 'cell')})",
                    f"Its cells are {', '.join(labels[:SHOWN_IDS])}{more}.")


def label(cell: Cell, index: int) -> str:
    """How a cell is named in cell_id: its id, or "cell-N" when it has none."""
    cell_id = cell.get("id")
    return cell_id if isinstance(cell_id, str) and cell_id else f"cell-{index}"


def source(cell: Cell) -> str:
    """A cell's source as one string (stored as a string or as a list of lines)."""
    value = cell.get("source", "")
    return "".join(value) if isinstance(value, list) else str(value)


def render(notebook: Notebook) -> bytes:
    """The cells as text for the approval diff: a heading, the source, outputs folded to one line.

    Headings name cells as cell_id does (the id, else "cell-N"), not by
    position: inserting a cell then changes no other cell's heading.
    """
    blocks = []
    for index, cell in enumerate(notebook["cells"]):
        name = label(cell, index)
        lines = [f"# ── {name if name.startswith('cell-') else 'cell ' + name} · {cell['cell_type']} ──\n"]
        text = source(cell)
        lines.append(text if not text or text.endswith("\n") else text + "\n")
        outputs = cell.get("outputs")
        if cell["cell_type"] == "code" and isinstance(outputs, list) and outputs:
            lines.append(f"# [{count(len(outputs), 'output')} folded]\n")
        blocks.append("".join(lines))
    return "\n".join(blocks).encode("utf-8", "backslashreplace")


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def invalid(message: str, suggestion: str = "Check that the file is a Jupyter notebook.") -> ToolError:
    return ToolError(ErrorKind.INVALID_NOTEBOOK, message, suggestion)
