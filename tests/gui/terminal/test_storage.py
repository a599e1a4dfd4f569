"""`belay gc` as a person runs it (the command line's entry point, in this process: a subprocess would only add an
interpreter's start), on a state that real console sessions wrote."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from core import Console, config_dir
from core.settings import workspace_state_dir
from core.store import gc
from gui.terminal.cli import main
from gui.terminal.storage import SETTINGS_FILE
from tests.conftest import run
from tests.core.store.test_gc import _age, _history, _session, ws  # noqa: F401 - ws is a fixture
from tests.gui.terminal.test_calls import heavy_imports


def test_gc_says_what_undo_history_it_ends_before_it_does_then_what_it_freed(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    old = _session(ws, {f"f{i:02}.txt": f"january {i}\n" * 50 for i in range(10)})
    new = _session(ws, {"f00.txt": "today\n"})
    state = workspace_state_dir(ws)
    _age(state, old)
    size = gc.state_size(state)

    assert main(["gc", "--workspace", str(ws), "--dry-run"]) == 0
    dry = capsys.readouterr().out
    assert "This ends the undo history of 1 session (10 calls), from 2026-01-05" in dry
    assert "Still undoable: 1 call, back to" in dry and "(Write f00.txt)" in dry
    assert "Dry run: nothing was removed." in dry
    assert gc.state_size(state) == size and set(old) <= set(_history(ws))

    async def while_open(*extra: str) -> int:
        async with Console(ws):
            return main(["gc", "--workspace", str(ws), *extra])
    assert run(while_open("--dry-run")) == 0
    assert "A window has this workspace open now: close it before running `belay gc`." in capsys.readouterr().out
    assert run(while_open()) == 2
    assert "Nothing was removed: a Belay window (or `belay run`) has this workspace open" in capsys.readouterr().out
    assert set(old) <= set(_history(ws))

    assert main(["gc", "--workspace", str(ws), "--yes"]) == 0  # --yes: never a question, even under pytest -s
    done = capsys.readouterr().out
    assert done.index("This ends the undo history") < done.index("Removed 1 session (10 calls)")
    assert "Freed " in done and gc.state_size(state) < size
    assert _history(ws) == new


def test_storage_settings_decide_the_horizon(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    old = _session(ws, {"f01.txt": "january\n"})
    _session(ws, {"f02.txt": "today\n"})
    _age(workspace_state_dir(ws), old)
    settings = Path(os.environ["BELAY_CONFIG_DIR"]) / "settings.toml"
    settings.write_text("[storage]\nkeep_days = 3650\nmax_gb = 0.5\n")
    assert main(["gc", "--workspace", str(ws), "--dry-run"]) == 0
    kept = capsys.readouterr().out
    assert "3650 days of undo history, at most 512.0 MB" in kept
    assert "No undo history is past the horizon." in kept
    settings.write_text("[storage]\nkeep_days = -1\n")
    assert main(["gc", "--workspace", str(ws), "--dry-run"]) == 0
    wrong = capsys.readouterr().out
    assert "[storage] keep_days must be a number above 0; the default applies" in wrong
    assert "30 days of undo history" in wrong and "ends the undo history of 1 session" in wrong
    (ws / ".belay").mkdir()
    (ws / ".belay" / "settings.toml").write_text("[storage]\nkeep_days = 1\n")  # a workspace cannot shorten it
    settings.write_text("[storage]\nkeep_days = 3650\n")
    assert main(["gc", "--workspace", str(ws), "--dry-run"]) == 0
    assert "No undo history is past the horizon." in capsys.readouterr().out


def test_verify_after_gc_checks_the_new_head_and_says_an_older_one_can_no_longer_be(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    _session(ws, {"f01.txt": "one\n"})
    _session(ws, {"f02.txt": "two\n"})
    assert main(["verify", "--workspace", str(ws)]) == 0
    first = capsys.readouterr().out
    assert "verifies" in first
    old_head = first.split("Head: ")[1].split()[0]
    assert main(["gc", "--workspace", str(ws), "--yes"]) == 0
    assert "seals were kept" not in capsys.readouterr().out  # it verified: compacted
    assert main(["verify", "--workspace", str(ws), "--expect", old_head]) == 0  # the chain goes on from it
    capsys.readouterr()
    _session(ws, {"f03.txt": "three\n"})
    assert main(["gc", "--workspace", str(ws), "--yes"]) == 0
    capsys.readouterr()
    assert main(["verify", "--workspace", str(ws), "--expect", old_head]) == 1
    assert "is older than the last `belay gc`" in capsys.readouterr().out


def test_gc_keeps_the_seals_of_a_journal_changed_by_hand_and_says_so(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    [call_id] = _session(ws, {"f01.txt": "one\n"})
    with sqlite3.connect(workspace_state_dir(ws) / gc.JOURNAL) as db:  # by hand
        db.execute("UPDATE calls SET summary='something else' WHERE id=?", (call_id,))
    db.close()
    assert main(["gc", "--workspace", str(ws), "--yes"]) == 0
    assert "the journal's seals were kept as they are: the journal does not verify" in capsys.readouterr().out
    assert main(["verify", "--workspace", str(ws)]) == 1
    assert "changed outside Belay" in capsys.readouterr().out


def test_gc_compacts_a_journal_without_loading_the_console_pydantic_or_asyncio(ws: Path) -> None:  # noqa: F811
    """`belay gc` as a shell runs it: what it loads decides most of its time against the VACUUM it runs."""
    old = _session(ws, {"f01.txt": "january\n"})
    _session(ws, {"f02.txt": "today\n"})
    _age(workspace_state_dir(ws), old)
    done, heavy = heavy_imports("gc", "--workspace", str(ws), "--yes")
    assert done.returncode == 0, done.stderr
    assert "Removed 1 session (1 call)" in done.stdout
    assert heavy == [], f"`belay gc` imported {', '.join(heavy)}: import them where they are used"


def test_the_settings_file_gc_looks_for_is_the_policys() -> None:
    from core.policy.settings import settings_path

    assert settings_path("user", None) == config_dir() / SETTINGS_FILE
