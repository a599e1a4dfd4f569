"""The `belay` command line as a person runs it: real subprocesses, real files."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from PySide6.QtGui import QImage

from core import Console, RunStatus
from core.store.blobs import content_hash
from tests.conftest import ROOT, run


def _belay(*args: str, env_extra: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "gui.terminal.cli", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_unattended_demo_then_list_and_undo_from_the_terminal(tmp_path: Path, state_dir: Path) -> None:
    ws, shot = tmp_path / "demo", tmp_path / "shot.png"
    demo = _belay("demo", "--workspace", str(ws), "--state-dir", str(state_dir), "--auto-approve",
                  "--quit-when-done", "--screenshot", str(shot))
    assert demo.returncode == 0, demo.stderr
    assert f"Demo workspace: {ws}" in demo.stdout and "Undo of step changelog: Restored" in demo.stdout
    image = QImage(str(shot))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500
    assert "item.quantity" in (ws / "src" / "shop" / "cart.py").read_text()
    assert "Changes:" not in (ws / "README.md").read_text()  # the changelog edit was undone
    assert "test_total_counts_quantities" in (ws / "tests" / "test_cart.py").read_text()  # denied

    listed = _belay("calls", "--workspace", str(ws), "--state-dir", str(state_dir), "--json")
    assert listed.returncode == 0, listed.stderr
    calls = json.loads(listed.stdout)
    by_tool: dict[str, list[dict[str, object]]] = {}
    for call in calls:
        by_tool.setdefault(str(call["tool"]), []).append(call)
    assert {"LS", "Read", "Glob", "Grep", "Edit", "MultiEdit", "Write", "Task"} <= set(by_tool)
    assert any(c["agent"] == "docs-writer" and c["files_changed"] == ["docs/usage.md"] for c in by_tool["Edit"])
    assert any(c["status"] == "denied" and c["files_changed"] == [] for c in by_tool["Write"])
    assert any(c["status"] == "undone" for c in by_tool["Edit"])

    receipt = next(c for c in by_tool["Write"] if c["files_changed"] == ["src/shop/receipt.py"])
    undone = _belay("undo", str(receipt["id"]), "--workspace", str(ws), "--state-dir", str(state_dir))
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert "Removed 1 file the call had created: src/shop/receipt.py" in undone.stdout
    assert not (ws / "src" / "shop" / "receipt.py").exists()
    again = _belay("undo", str(receipt["id"]), "--workspace", str(ws), "--state-dir", str(state_dir), "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["ok"] is False
    redone = _belay("redo", str(receipt["id"]), "--workspace", str(ws), "--state-dir", str(state_dir))
    assert redone.returncode == 0 and "Redone" in redone.stdout, redone.stdout + redone.stderr
    assert (ws / "src" / "shop" / "receipt.py").exists()

    table = _belay("calls", "--workspace", str(ws), "--state-dir", str(state_dir))
    assert "docs-writer" in table.stdout and "src/shop/receipt.py" in table.stdout
    _exports_the_demo(ws, state_dir, calls, tmp_path)
    _verifies_the_demo(ws, state_dir, receipt)


def _verifies_the_demo(ws: Path, state_dir: Path, receipt: dict[str, object]) -> None:
    """`belay verify`: the journal the demo, an undo and a redo wrote (three processes) verifies; a decision
    edited with sqlite3 afterwards is named, and the exit status says so."""
    where = ("--workspace", str(ws), "--state-dir", str(state_dir))
    whole = _belay("verify", *where)
    assert whole.returncode == 0 and "verifies" in whole.stdout, whole.stdout + whole.stderr
    head = whole.stdout.split("Head: ")[1].split()[0]
    journal = Console(ws, state_dir=state_dir).state_dir / "journal.sqlite3"
    forged = f"UPDATE decisions SET decided_by='person', via='window' WHERE call_id='{receipt['id']}';"
    if shutil.which("sqlite3"):
        subprocess.run(["sqlite3", str(journal), forged], check=True)
    else:  # the same edit through Python's sqlite3 module
        with sqlite3.connect(journal) as db:
            db.execute(forged)
        db.close()
    edited = _belay("verify", *where, "--expect", head)
    assert edited.returncode == 1 and "does NOT verify" in edited.stdout, edited.stdout + edited.stderr
    assert "decisions row" in edited.stdout and "changed outside Belay" in edited.stdout


def _exports_the_demo(ws: Path, state_dir: Path, calls: list[dict[str, object]], tmp_path: Path) -> None:
    """`belay export` of the demo's journal: every line valid against the shipped schema, every call there with
    who decided it, the undo and the redo, no file contents."""
    out = tmp_path / "demo.jsonl"
    exported = _belay("export", "--workspace", str(ws), "--state-dir", str(state_dir), "--output", str(out))
    assert exported.returncode == 0 and "Exported" in exported.stderr, exported.stderr
    schema = json.loads((ROOT / "resources" / "schemas" / "export.schema.json").read_text())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for record in records:
        jsonschema.validate(record, schema, format_checker=jsonschema.FormatChecker())
    by_type: dict[str, list[dict[str, object]]] = {}
    for record in records:
        by_type.setdefault(str(record["type"]), []).append(record)
    assert {r["id"] for r in by_type["call"]} == {c["id"] for c in calls}
    assert "docs-writer" in {r["name"] for r in by_type["agent"]}
    deciders = {r["decided_by"] for r in by_type["decision"]}
    assert "auto-approver" in deciders and {r["call_id"] for r in by_type["decision"]} >= {
        c["id"] for c in calls if c["status"] == "denied"}
    assert len(by_type["rollback"]) >= 3  # the demo's own undo, then the terminal's undo and redo
    assert "quantities are ignored" not in out.read_text()  # a diff's text, in the Edit's arguments: not exported
    recent = _belay("export", "--workspace", str(ws), "--state-dir", str(state_dir), "--since", "1h")
    assert recent.stdout.count('"type":"call"') == len(calls)
    wrong = _belay("export", "--workspace", str(ws), "--state-dir", str(state_dir), "--since", "last tuesday")
    assert wrong.returncode == 2 and "neither an ISO date" in wrong.stderr


def test_demo_refuses_a_non_empty_directory_it_did_not_create(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    result = _belay("demo", "--workspace", str(tmp_path), "--auto-approve", "--quit-when-done")
    assert result.returncode == 2 and "not empty" in result.stderr
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_one_file_of_a_shell_command_is_undone_from_the_terminal(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"  # the demo copies its workspace here
    script = tmp_path / "agent.yaml"
    script.write_text("name: shell\nsteps:\n  - tool: Bash\n    args: {command: 'echo A > a.txt && echo B > b.txt'}\n")
    run = _belay("demo", "--workspace", str(ws), "--state-dir", str(state_dir), "--script", str(script),
                 "--auto-approve", "--quit-when-done")
    assert run.returncode == 0, run.stderr
    [call] = [c for c in json.loads(_belay("calls", "--workspace", str(ws), "--state-dir", str(state_dir),
                                           "--json").stdout) if c["tool"] == "Bash"]
    assert sorted(call["files_changed"]) == ["a.txt", "b.txt"]
    one = _belay("undo", str(call["id"]), "--workspace", str(ws), "--state-dir", str(state_dir), "--file", "b.txt")
    assert one.returncode == 0, one.stdout + one.stderr
    assert (ws / "a.txt").read_text() == "A\n" and not (ws / "b.txt").exists()
    listed = json.loads(_belay("calls", "--workspace", str(ws), "--state-dir", str(state_dir), "--json").stdout)
    assert [c["status"] for c in listed if c["tool"] == "Bash"] == ["partly undone (1)"]


# -- bad state and bad input: one line naming the problem, never a traceback, nothing changed ------------------


def _one_write(ws: Path, state_dir: Path) -> tuple[str, Path]:
    """A workspace whose journal holds one Write call that changed a.py; returns the call and the journal."""
    ws.mkdir()
    (ws / "a.py").write_text("before\n")

    async def make() -> tuple[str, Path]:
        async with Console(ws, state_dir=state_dir) as console:
            console.register_approver("test")
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Write", {"file_path": str(ws / "a.py"), "content": "after\n"})
            assert outcome.status == RunStatus.DONE, outcome.text
            return outcome.call_id, console.state_dir / "journal.sqlite3"

    return run(make())


def _untouched(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _one_line_error(result: subprocess.CompletedProcess[str], code: int, *fragments: str) -> None:
    assert result.returncode == code, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    text = result.stderr + result.stdout
    for fragment in fragments:
        assert fragment in text, text


@pytest.mark.parametrize("damage", ["garbage", "cut short"])
def test_a_damaged_journal_is_named_and_left_as_it_is_by_calls_undo_run_and_the_window(
        tmp_path: Path, state_dir: Path, damage: str) -> None:
    ws = tmp_path / "ws"
    call_id, journal = _one_write(ws, state_dir)
    journal.write_bytes(os.urandom(5000) if damage == "garbage" else journal.read_bytes()[:6000])
    before = _untouched(journal)
    plan = tmp_path / "plan.yaml"
    plan.write_text("calls:\n  - {id: w, tool: Write, args: {file_path: '{workspace}/b.py', content: 'b'}}\n")
    where = ("--workspace", str(ws), "--state-dir", str(state_dir))
    for command in (("calls", *where), ("undo", call_id, *where), ("run", str(plan), *where, "--auto", "approve"),
                    ("watch", *where, "--quit-after", "1")):
        result = _belay(*command)
        _one_line_error(result, 2, f"belay {command[0]}: the journal {journal} is damaged", "Move it aside")
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert _untouched(journal) == before
    assert (ws / "a.py").read_text() == "after\n" and not (ws / "b.py").exists()


def test_another_programs_database_at_the_journals_place_is_refused_and_not_modified(
        tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    journal = Console(ws, state_dir=state_dir).state_dir / "journal.sqlite3"
    journal.parent.mkdir(parents=True)
    db = sqlite3.connect(journal)
    db.executescript("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL);"
                     "INSERT INTO invoices (total) VALUES (12.5);")
    db.close()
    before, beside = _untouched(journal), sorted(os.listdir(journal.parent))
    for command in ("calls", "undo"):
        result = _belay(command, *(["c-1"] if command == "undo" else []), "--workspace", str(ws),
                        "--state-dir", str(state_dir))
        _one_line_error(result, 2, f"{journal} is not a Belay journal", "table invoices")
    assert _untouched(journal) == before and sorted(os.listdir(journal.parent)) == beside


def test_undo_with_a_missing_workspace_says_so(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    call_id, _ = _one_write(ws, state_dir)
    shutil.rmtree(ws)
    result = _belay("undo", call_id, "--workspace", str(ws), "--state-dir", str(state_dir))
    _one_line_error(result, 2, f"belay undo: the workspace {ws} does not exist")
    assert not ws.exists()


def test_a_damaged_blob_refuses_the_undo_naming_the_file_and_the_blob(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    call_id, journal = _one_write(ws, state_dir)
    digest = content_hash(b"before\n")
    blob = journal.parent / "blobs" / digest[:2] / digest[2:]
    blob.chmod(0o644)
    blob.write_bytes(b"tampered\n")
    result = _belay("undo", call_id, "--workspace", str(ws), "--state-dir", str(state_dir))
    _one_line_error(result, 1, "Not undone: cannot undo: the earlier content of a.py", str(blob), "damaged")
    assert (ws / "a.py").read_text() == "after\n"


def test_undo_of_a_file_the_call_did_not_touch_names_the_files_it_did(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    call_id, _ = _one_write(ws, state_dir)
    result = _belay("undo", call_id, "--workspace", str(ws), "--state-dir", str(state_dir), "--file", "b.py")
    _one_line_error(result, 1, f"call {call_id} did not change b.py; it changed: a.py")
    assert (ws / "a.py").read_text() == "after\n"
    absolute = _belay("undo", call_id, "--workspace", str(ws), "--state-dir", str(state_dir), "--file",
                      str(ws / "a.py"))
    assert absolute.returncode == 0 and (ws / "a.py").read_text() == "before\n", absolute.stdout + absolute.stderr


def test_arguments_that_are_not_utf8_are_named_and_refused(tmp_path: Path, state_dir: Path) -> None:
    odd = tmp_path / "w\udcff"  # the byte 0xff in a directory name, as a terminal passes it on
    odd.mkdir()
    listed = _belay("calls", "--workspace", str(odd), "--state-dir", str(state_dir))
    _one_line_error(listed, 2, "the --workspace", "w\\udcff", "is not valid UTF-8 text")
    undone = _belay("undo", "call_\udcff", "--workspace", str(tmp_path), "--state-dir", str(state_dir))
    _one_line_error(undone, 2, "the call id 'call_\\udcff' is not valid UTF-8 text")


def test_undo_from_the_terminal_goes_through_the_window_that_has_the_workspace(tmp_path: Path,
                                                                              state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("before\n")

    async def scenario() -> tuple[int, str, bool]:
        async with Console(ws, state_dir=state_dir) as console:  # the window's console: it owns the workspace
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            done = await console.call(agent, "Write", {"file_path": str(ws / "a.py"), "content": "after\n"})
            terminal = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "gui.terminal.cli", "undo", done.call_id, "--workspace", str(ws),
                "--state-dir", str(state_dir), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(terminal.communicate(), 120)
            return terminal.returncode or 0, out.decode(), bool(console.timeline.runs[done.call_id].undone_by)

    code, out, shown_undone = run(scenario())
    assert code == 0 and f"Undone {'call_'}" in out, out
    assert (ws / "a.py").read_text() == "before\n"
    assert shown_undone  # the window's own timeline shows it undone


def test_belay_run_beside_a_window_is_refused_naming_it_while_calls_still_lists(tmp_path: Path,
                                                                               state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    plan = tmp_path / "plan.yaml"
    plan.write_text("calls:\n  - {id: w, tool: Write, args: {file_path: '{workspace}/b.py', content: 'b'}}\n")
    where = ("--workspace", str(ws), "--state-dir", str(state_dir))

    async def belay(*args: str) -> tuple[int, str]:
        terminal = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gui.terminal.cli", *args, *where, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(terminal.communicate(), 120)
        return terminal.returncode or 0, out.decode()

    async def scenario() -> tuple[tuple[int, str], tuple[int, str]]:
        async with Console(ws, state_dir=state_dir, holder="window"):
            return await belay("run", str(plan), "--auto", "approve"), await belay("calls")

    (ran, said), (listed, calls) = run(scenario())
    assert ran == 2 and said.strip() == (f"belay run: {ws} is open in another Belay console: window "
                                         f"(pid {os.getpid()}). Work there (`belay calls` and `belay undo` reach "
                                         "it), or close it first."), said
    assert not (ws / "b.py").exists()
    assert listed == 0 and "No calls journaled" in calls, calls


def test_calls_json_ties_a_sub_agents_calls_to_its_parent_with_full_names(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")

    async def make() -> tuple[str, str]:
        async with Console(ws, state_dir=state_dir) as console:
            parent = await console.start_agent("the orchestrating agent of this repository", "scripted")
            child = await console.start_agent("documentation writer", "subagent", parent=parent)
            await console.call(parent, "Read", {"file_path": str(ws / "a.txt")})
            await console.call(child, "Read", {"file_path": str(ws / "a.txt")})
            return parent.agent_id, child.agent_id

    parent_id, child_id = run(make())
    rows = json.loads(_belay("calls", "--workspace", str(ws), "--state-dir", str(state_dir), "--json").stdout)
    by_agent = {r["agent_id"]: r for r in rows}
    assert by_agent[parent_id]["agent"] == "the orchestrating agent of this repository"  # not cut to a column
    assert by_agent[child_id]["parent_agent_id"] == parent_id and by_agent[child_id]["agent_kind"] == "subagent"
    assert by_agent[parent_id]["parent_agent_id"] is None


def test_a_gemini_project_install_says_the_file_is_shared_and_read_only_in_a_trusted_folder(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    installed = _belay("hooks", "install", "--agent", "gemini", "--project", str(project))
    assert installed.returncode == 0, installed.stderr
    settings = project / ".gemini" / "settings.json"
    assert f"in {settings}" in installed.stdout and "Gemini CLI now asks Belay before every tool call" in installed.stdout
    assert "shared .gemini/settings.json, which projects may commit" in installed.stdout
    assert "never under --skip-trust" in installed.stdout
    assert "BeforeTool" in json.loads(settings.read_text())["hooks"]
    removed = _belay("hooks", "uninstall", "--agent", "gemini", "--project", str(project))
    assert removed.returncode == 0 and "Removed Belay's hooks" in removed.stdout, removed.stdout + removed.stderr
    assert list(project.iterdir()) == []  # the .gemini/ folder Belay made goes too


def test_a_codex_install_says_it_recorded_its_trust_and_uninstall_takes_it_out(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model = "gpt-5.5"\n')
    env = {"CODEX_HOME": str(home)}
    installed = _belay("hooks", "install", "--agent", "codex", "--user", env_extra=env)
    assert installed.returncode == 0, installed.stderr
    assert f"in {home / 'hooks.json'}" in installed.stdout and "Codex now asks Belay before every tool call in every project" in installed.stdout
    assert "recorded as trusted in Codex's config.toml" in installed.stdout
    assert "hook_client.py" in (home / "hooks.json").read_text() and "model = " in (home / "config.toml").read_text()
    removed = _belay("hooks", "uninstall", "--agent", "codex", "--user", env_extra=env)
    assert removed.returncode == 0 and "Removed Belay's hooks" in removed.stdout, removed.stdout + removed.stderr
    assert (home / "config.toml").read_text() == 'model = "gpt-5.5"\n'
