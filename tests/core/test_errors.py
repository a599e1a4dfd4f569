"""The core's errors: raised with a kind, a message and a suggestion, read as data (core.errors.info) when shown."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from core.errors import BelayError, ErrorInfo, ErrorKind, ToolError, UndoConflict
from tests.conftest import ROOT


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


def test_raising_and_catching_an_error_loads_no_pydantic_until_its_info_is_read() -> None:
    """`belay calls` and `belay gc` raise and catch BelayErrors (a missing workspace, a damaged journal) and
    start without pydantic; the model loads when the error is shown."""
    code = ("import sys\n"
            "from core.errors import BelayError, ErrorKind\n"
            "try:\n    raise BelayError(ErrorKind.NOT_FOUND, 'gone', 'look elsewhere')\n"
            "except BelayError as e:\n    caught = e\n"
            "print('pydantic' in sys.modules, caught.kind.value, repr(caught))\n"
            "print(caught.info.suggestion, 'pydantic' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False not-found BelayError(not-found: 'gone')", "look elsewhere True"]


def test_the_info_is_one_model_made_once_and_named_from_core_errors() -> None:
    error = BelayError(ErrorKind.TIMEOUT, "too slow", recoverable=False)
    assert error.info is error.info and isinstance(error.info, ErrorInfo)
    assert (error.info.code, error.info.recoverable, error.info.category) == ("timeout", False, "timeout")
