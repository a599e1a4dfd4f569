"""Errors as data: a kind fills in its category, code and retry advice unless the caller says otherwise."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import BelayError, ErrorInfo, ErrorKind, ToolError, UndoConflict


def test_every_kind_is_classified_and_only_transient_failures_are_worth_a_retry() -> None:
    recoverable = {k for k in ErrorKind if ErrorInfo(kind=k, message="x").recoverable}
    assert recoverable == {ErrorKind.TIMEOUT, ErrorKind.NETWORK, ErrorKind.BUSY}
    info = ErrorInfo(kind=ErrorKind.OUTSIDE_WORKSPACE, message="/etc/passwd is outside the workspace")
    assert (info.category, info.code) == ("permission", "outside-workspace")


def test_what_the_caller_says_wins_over_what_the_kind_suggests() -> None:
    info = ErrorInfo(kind=ErrorKind.TIMEOUT, message="x", recoverable=False, code="E_DEADLINE", category="system")
    assert (info.recoverable, info.code, info.category) == (False, "E_DEADLINE", "system")


def test_an_error_read_back_from_an_old_journal_row_is_classified_from_its_kind() -> None:
    info = ErrorInfo.model_validate_json('{"kind": "network", "message": "connection reset"}')
    assert info.kind is ErrorKind.NETWORK and info.category == "network" and info.recoverable
    assert ErrorInfo.model_validate_json(info.model_dump_json()) == info
    with pytest.raises(ValidationError):
        ErrorInfo(kind="exploded", message="x")  # type: ignore[arg-type]


def test_a_raised_tool_error_carries_its_info_and_names_its_kind() -> None:
    with pytest.raises(BelayError) as caught:
        raise ToolError(ErrorKind.SYSTEM, "no space left on device", "Free some disk space.", code="ENOSPC")
    error = caught.value
    assert str(error) == "no space left on device" and error.kind is ErrorKind.SYSTEM
    assert (error.info.code, error.info.suggestion, error.info.category) == ("ENOSPC", "Free some disk space.",
                                                                              "system")
    assert repr(error) == "ToolError(system: 'no space left on device')"


def test_an_undo_conflict_names_the_paths_and_suggests_forcing() -> None:
    conflict = UndoConflict("a.txt changed since the call", ["a.txt", "b/c.txt"])
    assert conflict.kind is ErrorKind.CONFLICT and conflict.paths == ["a.txt", "b/c.txt"]
    assert "force" in conflict.info.suggestion
