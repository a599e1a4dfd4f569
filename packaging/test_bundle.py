"""The one-folder bundle `make package` builds runs on its own: no venv, no Python on PATH, no display.

Building takes a minute or more, so `make test` does not build it and does not collect these tests (they
live here, outside tests/): `make package` runs them on the bundle it has just built.  Run by hand without
a bundle, they skip saying so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "dist" / "belay" / "belay"


def _stale() -> str | None:
    """The newest source file changed after the bundle was built: it would test old code against new."""
    built = BUNDLE.stat().st_mtime
    newer = [p for top in ("core", "gui", "resources", "packaging") for p in (ROOT / top).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith("test_")
             and p.stat().st_mtime > built]
    return str(newer[0].relative_to(ROOT)) if newer else None


STALE = _stale() if BUNDLE.exists() else None
pytestmark = [
    pytest.mark.skipif(not BUNDLE.exists(), reason="no bundle: `make package` builds dist/belay/belay"),
    pytest.mark.skipif(STALE is not None, reason=f"the bundle is older than {STALE}: `make package` rebuilds it"),
]


def _outside_env(tmp_path: Path) -> dict[str, str]:
    """Nothing of the venv or this checkout: a bare PATH without Python's, a fresh home, no display."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
            "BELAY_STATE_DIR": str(tmp_path / "state"), "BELAY_CONFIG_DIR": str(tmp_path / "config")}


def _run(command: list[str], tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120)


def test_the_bundle_says_its_version_outside_the_venv(tmp_path: Path) -> None:
    from importlib.metadata import version
    done = _run([str(BUNDLE), "--version"], tmp_path, _outside_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"belay {version('belay-console')}"


def test_the_bundles_demo_runs_offscreen_as_the_source_does(tmp_path: Path) -> None:
    shot = tmp_path / "bundle.png"
    args = ["demo", "--auto-approve", "--quit-when-done", "--screenshot"]
    bundle = _run([str(BUNDLE), *args, str(shot), "--workspace", str(tmp_path / "b")], tmp_path,
                  _outside_env(tmp_path))
    assert bundle.returncode == 0, bundle.stderr
    assert shot.stat().st_size > 10_000
    source_env = {**os.environ, "BELAY_STATE_DIR": str(tmp_path / "source-state"), "QT_QPA_PLATFORM": "offscreen"}
    source = subprocess.run([sys.executable, "-m", "gui.terminal.cli", *args, str(tmp_path / "source.png"),
                             "--workspace", str(tmp_path / "s")], cwd=ROOT, env=source_env, text=True,
                            capture_output=True, timeout=120)
    assert source.returncode == 0, source.stderr
    finished = [line for line in bundle.stdout.splitlines() if line.startswith("Agent finished:")]
    assert finished and finished == [line for line in source.stdout.splitlines() if line.startswith("Agent finished:")]


def test_the_hooks_the_bundle_installs_run_without_python(tmp_path: Path) -> None:
    """`belay hooks install` writes `<this program> -I -S hook_client.py ...`: the bundle plays that interpreter."""
    import json
    env = _outside_env(tmp_path)
    (tmp_path / "home").mkdir()
    done = _run([str(BUNDLE), "hooks", "install", "--user"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.startswith(str(BUNDLE))
    project = tmp_path / "project"
    project.mkdir()
    event = {"session_id": "sess-1234abcd", "hook_event_name": "PreToolUse", "cwd": str(project),
             "tool_name": "Write", "tool_use_id": "toolu_1",
             "tool_input": {"file_path": str(project / "x.txt"), "content": "x"}}
    hook = subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True, text=True,
                          cwd=project, env=env, timeout=60)
    assert (hook.returncode, hook.stderr) == (0, ""), hook.stderr
    answer = json.loads(hook.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"].startswith(f"Belay: no Belay console is running for {project}")


def test_the_bundle_serves_a_headless_console_and_verifies_and_exports_its_journal(tmp_path: Path) -> None:
    """What a host without a window runs (`belay serve`, reached over ssh) and the audit commands: modules the
    facade loads by name, which a bundler finds only through their imports."""
    import json
    import signal
    env = _outside_env(tmp_path)
    workspace = tmp_path / "w"
    demo = _run([str(BUNDLE), "demo", "--auto-approve", "--quit-when-done", "--workspace", str(workspace)], tmp_path,
                {**env, "QT_QPA_PLATFORM": "offscreen"})
    assert demo.returncode == 0, demo.stderr
    verified = _run([str(BUNDLE), "verify", "--workspace", str(workspace)], tmp_path, env)
    assert verified.returncode == 0 and "verifies" in verified.stdout, verified.stdout + verified.stderr
    exported = _run([str(BUNDLE), "export", "--workspace", str(workspace), "--format", "jsonl", "--output",
                     str(tmp_path / "audit.jsonl")], tmp_path, env)
    assert exported.returncode == 0, exported.stderr
    kinds = {json.loads(line)["type"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()}
    assert {"session", "agent", "call"} <= kinds
    served = _run([str(BUNDLE), "serve", "--ensure", "--workspace", str(workspace)], tmp_path, env)
    assert served.returncode == 0, served.stderr
    line = json.loads(served.stdout.strip().splitlines()[-1])
    try:
        assert Path(line["socket"]).exists() and len(line["token"]) == 64
    finally:
        os.kill(line["pid"], signal.SIGTERM)
