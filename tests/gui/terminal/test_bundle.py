"""The one-folder bundle `make package` builds runs on its own: no venv, no Python on PATH, no display.

Building takes a minute or more, so `make test` does not; these tests run when dist/belay/belay exists
(`make package` first) and skip saying so otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUNDLE = ROOT / "dist" / "belay" / "belay"

pytestmark = pytest.mark.skipif(not BUNDLE.exists(), reason="no bundle: `make package` builds dist/belay/belay")


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
