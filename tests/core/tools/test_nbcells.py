"""What NotebookRead and NotebookEdit share: loading and checking a notebook, naming its cells, the cell view."""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest
from nbformat import v4

from core.errors import ErrorKind, ToolError
from core.tools import nbcells

FIX = "Fix that part of the notebook (or open and save it in Jupyter), then try again."
CHECK = "Check that the file is a Jupyter notebook."


def code(cell_id: str | None, source: str | list[str], **extra: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "code", "metadata": {}, "source": source, "execution_count": None,
                            "outputs": [], **extra}
    if cell_id is not None:
        cell["id"] = cell_id
    return cell


def notebook_bytes(cells: list[dict[str, Any]], minor: int = 5) -> bytes:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}).encode()


def test_a_notebook_jupyter_saved_loads_as_its_own_text_and_json() -> None:
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# Café ✓", id="intro"),
                                v4.new_code_cell("x = 1\nx", id="calc", execution_count=1, outputs=[
                                    v4.new_output("execute_result", execution_count=1, data={"text/plain": "1"})])])
    written = nbformat.writes(nb) + "\n"
    text, loaded = nbcells.load(written.encode(), "nb.ipynb")
    assert text == written  # NotebookEdit writes the rest back exactly as it was
    assert loaded == json.loads(written)
    assert nbcells.load(b"\xef\xbb\xbf" + written.encode(), "nb.ipynb")[1] == loaded  # a BOM is not an error

    _, no_ids = nbcells.load(notebook_bytes([code(None, "x = 1")]), "old.ipynb")  # nbformat only warns about it
    assert "id" not in no_ids["cells"][0]  # tolerated, and not repaired behind the agent's back


@pytest.mark.parametrize(("data", "message", "suggestion"), [
    ("café".encode("latin-1"), "nb.ipynb is not UTF-8 text (byte 3), so not a Jupyter notebook", CHECK),
    (b'{"cells": [}', "nb.ipynb is not valid JSON: Expecting value at line 1 column 12", CHECK),
    (b"[" * 100_000, "nb.ipynb is nested too deeply to be a Jupyter notebook", CHECK),
    (b"[1, 2]", "nb.ipynb is not a Jupyter notebook: its JSON is a list, not an object", CHECK),
    (b'{"cells": [], "nbformat": true}', "nb.ipynb is not a Jupyter notebook: it has no nbformat version", CHECK),
    (b'{"worksheets": [], "nbformat": 3, "nbformat_minor": 0}',
     "nb.ipynb is an nbformat 3 notebook; only nbformat 4 notebooks can be read and edited",
     "Convert it with `jupyter nbconvert --to notebook --inplace`, or use Read and Edit."),
    (b'{"cells": {}, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
     "nb.ipynb is not a Jupyter notebook: it has no list of cells", CHECK),
    (notebook_bytes([code("a", "x"), {"source": "y"}]),
     "nb.ipynb has an invalid cell at position 1: not an object with a cell_type", CHECK),
    (notebook_bytes([code("a", "x"), code("b2", "y", execution_count="three")]),
     "nb.ipynb is not a valid Jupyter notebook: cell 1 (id b2), execution_count: 'three' is not of type 'integer', "
     "'null'", FIX),
    (notebook_bytes([code("a", "x", outputs=[{"output_type": "stream", "name": "stdout"}])]),
     "nb.ipynb is not a valid Jupyter notebook: cell 0 (id a), outputs[0]: 'text' is a required property", FIX),
    (notebook_bytes([{"cell_type": "sql", "id": "q", "metadata": {}, "source": "select 1"}]),
     "nb.ipynb is not a valid Jupyter notebook: cell 0 (id q): cell_type 'sql' is not one of raw, markdown, code", FIX),
    (notebook_bytes([], minor=-1), "nb.ipynb claims nbformat 4.-1, which is not a notebook format version", CHECK),
], ids=["latin-1", "bad-json", "deep", "list", "no-version", "nbformat-3", "no-cells", "cell-without-type",
        "bad-field", "bad-output", "unknown-cell-type", "bad-minor"])
def test_a_broken_notebook_is_refused_saying_what_is_wrong_and_where(data: bytes, message: str,
                                                                     suggestion: str) -> None:
    with pytest.raises(ToolError) as refused:
        nbcells.load(data, "nb.ipynb")
    assert refused.value.kind == ErrorKind.INVALID_NOTEBOOK
    assert refused.value.info.message == message
    assert refused.value.info.suggestion == suggestion


def test_a_cell_is_found_by_its_id_or_position_and_a_missing_one_lists_the_cells_there_are() -> None:
    cells = [code("intro", "a"), code("3", "b"), code(None, "c"), code("load", "d"), code("plot", "e"),
             code("fit", "f"), code("save", "g")]
    assert nbcells.find(cells, "intro", "nb.ipynb") == 0
    assert nbcells.find(cells, "3", "nb.ipynb") == 1  # an id wins over a position
    assert nbcells.find(cells, "cell-2", "nb.ipynb") == 2
    assert nbcells.find(cells, "4", "nb.ipynb") == 4
    assert [nbcells.label(cell, i) for i, cell in enumerate(cells)][:3] == ["intro", "3", "cell-2"]

    with pytest.raises(ToolError) as missing:
        nbcells.find(cells, "cell-7", "nb.ipynb")
    assert missing.value.kind == ErrorKind.NOT_FOUND
    assert missing.value.info.message == "cell 'cell-7' not found in nb.ipynb (7 cells)"
    assert missing.value.info.suggestion == "Its cells are intro, 3, cell-2, load, plot and 2 more."
    with pytest.raises(ToolError) as empty:
        nbcells.find([], "cell-0", "empty.ipynb")
    assert empty.value.info.message == "cell 'cell-0' not found: empty.ipynb has no cells"
    assert "insert" in empty.value.info.suggestion


def test_the_approval_view_shows_each_cell_by_name_with_its_source_and_outputs_folded() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    notebook = {"cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Intro"]},
        code(None, "print(1)", outputs=[stream, stream]),
        code("empty", ""),
    ]}
    assert nbcells.render(notebook).decode() == (
        "# ── cell intro · markdown ──\n# Title\nIntro\n"
        "\n"
        "# ── cell-1 · code ──\nprint(1)\n# [2 outputs folded]\n"
        "\n"
        "# ── cell empty · code ──\n"
    )


def test_cell_ids_with_control_characters_are_named_with_escapes_in_errors() -> None:
    cells = [code("a\x1b]52;c;eA==\x07", "x"), code("b\x1b[2J", "y", execution_count="three")]
    with pytest.raises(ToolError) as info:
        nbcells.load(notebook_bytes(cells, minor=4), "nb.ipynb")
    assert "\x1b" not in info.value.info.message and "cell 0 (id a\\x1b]52;c;eA==\\x07)" in info.value.info.message
    with pytest.raises(ToolError) as missing:
        nbcells.find(json.loads(notebook_bytes(cells, minor=4))["cells"], "nope", "nb.ipynb")
    assert missing.value.info.suggestion == "Its cells are a\\x1b]52;c;eA==\\x07, b\\x1b[2J."
