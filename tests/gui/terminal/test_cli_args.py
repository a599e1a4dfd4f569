"""What the command line accepts and how it says a mistake (gui.terminal.cli_args)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import workspace_state_dir
from gui.terminal.cli_args import current_workspace, plain


def test_the_workspace_defaults_to_the_one_the_current_folder_is_in(
        tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = tmp_path / "project"
    (workspace / "src" / "deep").mkdir(parents=True)
    (workspace_state_dir(workspace) / "journal.sqlite3").parent.mkdir(parents=True)
    (workspace_state_dir(workspace) / "journal.sqlite3").write_bytes(b"")
    assert current_workspace(None, str(workspace / "src" / "deep")) == str(workspace.resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert current_workspace(None, str(elsewhere)) == str(elsewhere.resolve())  # none above: the folder itself


@pytest.mark.parametrize(("said", "shown"), [
    ("argument COMMAND: invalid choice: 'bogus' (choose from 'demo', 'calls')", "'bogus' is not a command: use one "
                                                                                  "of demo, calls"),
    ("the following arguments are required: CALL_ID", "missing CALL_ID"),
    ("unrecognized arguments: --wat", "--wat: not an option of this command"),
    ("argument --project: not allowed with argument --user", "--project: cannot go with --user"),
])
def test_argparses_words_become_the_persons(said: str, shown: str) -> None:
    assert plain(said) == shown
