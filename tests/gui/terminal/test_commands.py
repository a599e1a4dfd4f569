"""Terminal commands without a window (gui.terminal.commands): `belay calls`, `belay undo|redo` and `belay hooks`,
run in this process on a real journal and real files."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from core import CallOutcome, Console, RunStatus
from gui.terminal.commands import WorkspaceMissing, hooks_command, list_calls, undo_call
from tests.conftest import run, wait_until

OUTSIDE_NOTE = ("core.undo.recovery: 1 file(s) changed while Belay was not running; they are recorded as changes "
                "made outside Belay.")


def _calls(ws: Path, state_dir: Path) -> dict[str, str]:
    """A workspace whose journal holds a Write (allowed by a rule), a Read and a denied Write; their ids."""
    ws.mkdir(exist_ok=True)
    (ws / "a.py").write_text("one\ntwo\nthree\n")

    async def make() -> dict[str, str]:
        async with Console(ws, state_dir=state_dir) as console:
            console.register_approver("test")
            await console.add_rule("Write(a.py)", "allow", "session")
            agent = await console.start_agent("the agent that fixes the cart totals", "scripted")
            write = await console.call(agent, "Write", {"file_path": str(ws / "a.py"), "content": "one\n2\nthree\n"})
            read = await console.call(agent, "Read", {"file_path": str(ws / "a.py")})
            answered = await _denied_when_asked(
                console, console.call(agent, "Write", {"file_path": str(ws / "b.py"), "content": "b\n"}))
            assert (write.status, read.status, answered.status) == (RunStatus.DONE, RunStatus.DONE, RunStatus.DENIED)
            return {"write": write.call_id, "read": read.call_id, "denied": answered.call_id}

    return run(make())


async def _denied_when_asked(console: Console, call: Coroutine[Any, Any, CallOutcome]) -> CallOutcome:
    """Deny the call as soon as it asks, as a person at the window would."""
    task = asyncio.ensure_future(call)
    await wait_until(console.pending_approvals, what="the question")
    console.deny(console.pending_approvals()[0].call_id, "not b.py")
    return await task


def test_calls_lists_each_call_with_its_status_and_files(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ids = _calls(ws, state_dir)
    out = io.StringIO()
    assert list_calls(str(ws), str(state_dir), as_json=False, out=out) == 0
    header, *rows = out.getvalue().splitlines()
    assert header.split() == ["ID", "AGENT", "TOOL", "STATUS", "FILES", "CHANGED"]
    assert [row.split()[0] for row in rows] == [ids["write"], ids["read"], ids["denied"]]
    assert rows[0][34:].startswith("the agent that fixes the cart totals  ")  # whole, after the id's column
    assert rows[0].split()[-3:] == ["Write", "done", "a.py"]
    assert rows[2].split()[-2:] == ["denied", "-"]


def test_calls_json_says_who_decided_each_call(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ids = _calls(ws, state_dir)
    out = io.StringIO()
    list_calls(str(ws), str(state_dir), as_json=True, out=out)
    rows = {row["id"]: row for row in json.loads(out.getvalue())}
    assert rows[ids["write"]]["decision"] == {"decision": "approved", "decided_by": "rule",
                                              "rule": "Write(a.py) [session]",
                                              "reason": "allowed by Write(a.py) [session]"}
    assert rows[ids["denied"]]["decision"]["reason"] == "not b.py"  # type: ignore[index]
    assert rows[ids["write"]]["agent"] == "the agent that fixes the cart totals"  # whole, not cut
    assert rows[ids["write"]]["files_changed"] == ["a.py"] and rows[ids["read"]]["files_changed"] == []


def test_a_workspace_without_calls_says_so(tmp_path: Path, state_dir: Path) -> None:
    out = io.StringIO()
    assert list_calls(str(tmp_path), str(state_dir), as_json=False, out=out) == 0
    assert out.getvalue() == f"No calls journaled for {tmp_path} yet.\n"


def test_a_missing_workspace_is_named_before_anything_opens(tmp_path: Path, state_dir: Path) -> None:
    with pytest.raises(WorkspaceMissing) as raised:
        list_calls(str(tmp_path / "gone"), str(state_dir), as_json=False)
    assert f"the workspace {tmp_path / 'gone'} does not exist" in raised.value.info.message
    assert not (tmp_path / "gone").exists()


def test_undo_then_redo_from_the_terminal(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ids = _calls(ws, state_dir)
    out = io.StringIO()
    assert undo_call(str(ws), ids["write"], str(state_dir), force=False, as_json=False, out=out) == 0
    assert out.getvalue().startswith(f"Undone {ids['write']}: ") and (ws / "a.py").read_text() == "one\ntwo\nthree\n"
    assert undo_call(str(ws), ids["write"], str(state_dir), force=False, as_json=True, out=out) == 1  # done already
    assert undo_call(str(ws), ids["write"], str(state_dir), force=False, as_json=False, redo=True, out=out) == 0
    assert f"Redone {ids['write']}: " in out.getvalue() and (ws / "a.py").read_text() == "one\n2\nthree\n"


@pytest.mark.allow_warning_logs(OUTSIDE_NOTE)
def test_an_undo_over_a_later_edit_of_the_same_lines_is_refused_unless_forced(tmp_path: Path,
                                                                              state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ids = _calls(ws, state_dir)
    (ws / "a.py").write_text("one\n2, and mine\nthree\n")  # the person's edit over the agent's line
    out = io.StringIO()
    assert undo_call(str(ws), ids["write"], str(state_dir), force=False, as_json=False, out=out) == 1
    note, refused, *_ = out.getvalue().splitlines()
    assert note == "Note: " + OUTSIDE_NOTE.split(": ", 1)[1]  # the edit, found when the journal was opened
    assert refused.startswith("Not undone: ")
    assert "They can be merged by hand in the window (Undo on the call); --force overwrites them." in out.getvalue()
    assert (ws / "a.py").read_text() == "one\n2, and mine\nthree\n"
    assert undo_call(str(ws), ids["write"], str(state_dir), force=True, as_json=False, out=io.StringIO()) == 0
    assert (ws / "a.py").read_text() == "one\ntwo\nthree\n"


def test_a_file_given_by_its_absolute_path_is_the_journals_relative_one(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ids = _calls(ws, state_dir)
    out = io.StringIO()
    code = undo_call(str(ws), ids["write"], str(state_dir), force=False, as_json=False, files=[str(ws / "a.py")],
                     out=out)
    assert code == 0, out.getvalue()
    assert (ws / "a.py").read_text() == "one\ntwo\nthree\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository that ignores nothing, with git's own settings kept out of the test."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = tmp_path / "proj"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=os.environ.copy())
    return repo


def test_hooks_install_in_a_project_says_where_and_that_git_does_not_ignore_the_file_yet(
        project: Path, state_dir: Path) -> None:
    out = io.StringIO()
    assert hooks_command("install", str(project), False, str(state_dir), out=out) == 0
    settings = project / ".claude" / "settings.local.json"
    said = out.getvalue()
    assert "Installed Belay's hooks (" in said and f") in {settings}." in said
    assert f"Claude Code now asks Belay before every tool call in {project.resolve()}" in said
    assert "git does not ignore it yet: add `.claude/settings.local.json`" in said
    assert "PreToolUse" in json.loads(settings.read_text())["hooks"]
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    again = io.StringIO()
    hooks_command("install", str(project), False, str(state_dir), out=again)
    assert again.getvalue().startswith(f"Belay's hooks were already installed in {settings}.")
    assert "git does not ignore it yet" not in again.getvalue()


def test_hooks_uninstall_takes_out_only_belays_entries_and_a_file_it_made(project: Path, state_dir: Path) -> None:
    hooks_command("install", str(project), False, str(state_dir), out=io.StringIO())
    out = io.StringIO()
    assert hooks_command("uninstall", str(project), False, str(state_dir), out=out) == 0
    settings = project / ".claude" / "settings.local.json"
    assert out.getvalue() == f"Removed Belay's hooks from {settings} (the file, which Belay had created, is removed).\n"
    assert not settings.exists()
    none = io.StringIO()
    hooks_command("uninstall", str(project), False, str(state_dir), out=none)
    assert none.getvalue() == f"No Belay hooks in {settings}; nothing changed.\n"


def test_hooks_in_a_settings_file_that_is_not_json_are_refused_and_the_file_kept(
        project: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    assert hooks_command("install", str(project), False, str(state_dir), out=io.StringIO()) == 2
    assert capsys.readouterr().err.startswith("belay hooks: ")
    assert settings.read_text() == "{ not json"


def test_hooks_install_for_the_user_says_every_project_not_one_workspace(tmp_path: Path, state_dir: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    out = io.StringIO()
    assert hooks_command("install", None, True, str(state_dir), out=out, agent="gemini") == 0
    said = out.getvalue()
    assert "Gemini CLI now asks Belay before every tool call in every project" in said, said
    assert "this workspace" not in said
