"""Diff records: a file's hunks travel through JSON intact, and only the three line kinds and endings are valid."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.models.diffs import DiffLine, FileDiff, Hunk


def _crlf_change() -> FileDiff:
    lines = (DiffLine(kind=" ", old_no=1, new_no=1, text="a", ending="\r\n"),
             DiffLine(kind="-", old_no=2, new_no=None, text="b", ending="\r\n"),
             DiffLine(kind="+", old_no=None, new_no=2, text="B", ending=""))
    return FileDiff(path="notes.txt", status="modify", old_size=6, new_size=4, added=1, removed=1,
                    hunks=(Hunk(old_start=1, old_len=2, new_start=1, new_len=2, lines=lines),))


def test_a_diff_round_trips_through_json_with_its_line_numbers_and_endings() -> None:
    diff = _crlf_change()
    again = FileDiff.model_validate_json(diff.model_dump_json())
    assert again == diff
    line = again.hunks[0].lines
    assert [(x.old_no, x.new_no) for x in line] == [(1, 1), (2, None), (None, 2)]
    assert [x.ending for x in line] == ["\r\n", "\r\n", ""]


@pytest.mark.parametrize("kind, ending", [("?", "\n"), ("+", "\r"), ("+", "\n\n")])
def test_a_line_of_an_unknown_kind_or_ending_is_refused(kind: str, ending: str) -> None:
    with pytest.raises(ValidationError):
        DiffLine(kind=kind, old_no=None, new_no=1, text="x", ending=ending)  # type: ignore[arg-type]


def test_a_diff_is_frozen_so_an_event_carrying_it_cannot_be_changed_by_a_reader() -> None:
    diff = _crlf_change()
    with pytest.raises(ValidationError):
        diff.status = "delete"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        FileDiff(path="x", status="renamed", old_size=None, new_size=None)  # type: ignore[arg-type]
