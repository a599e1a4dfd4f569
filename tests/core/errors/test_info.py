"""Errors as data: a kind fills in its category, code and retry advice unless the caller says otherwise."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import ErrorKind
from core.errors.info import ErrorInfo


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
