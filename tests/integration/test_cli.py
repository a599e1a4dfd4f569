"""The `belay` command line as a person runs it: real subprocesses, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from tests.conftest import ROOT


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
    assert "Restored 1 file" in undone.stdout
    assert not (ws / "src" / "shop" / "receipt.py").exists()
    again = _belay("undo", str(receipt["id"]), "--workspace", str(ws), "--state-dir", str(state_dir), "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["ok"] is False
    redone = _belay("redo", str(receipt["id"]), "--workspace", str(ws), "--state-dir", str(state_dir))
    assert redone.returncode == 0 and "Redone" in redone.stdout, redone.stdout + redone.stderr
    assert (ws / "src" / "shop" / "receipt.py").exists()

    table = _belay("calls", "--workspace", str(ws), "--state-dir", str(state_dir))
    assert "docs-writer" in table.stdout and "src/shop/receipt.py" in table.stdout


def test_demo_refuses_a_non_empty_directory_it_did_not_create(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    result = _belay("demo", "--workspace", str(tmp_path), "--quit-when-done")
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
