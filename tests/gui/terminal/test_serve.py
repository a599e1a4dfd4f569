"""`belay serve --ensure` as ssh runs it on the host: starts the workspace's console once, then finds it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core import PROTOCOL_VERSION
from tests.conftest import ROOT


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui.terminal.cli", "serve", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=90)


def test_ensure_starts_the_console_once_and_then_finds_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = _serve("--ensure", "--workspace", str(ws))
    assert first.returncode == 0, first.stderr
    line = json.loads(first.stdout)
    try:
        assert line["workspace"] == str(ws) and line["version"] == PROTOCOL_VERSION and len(line["token"]) == 64
        assert Path(line["socket"]).exists()
        again = _serve("--ensure", "--workspace", str(ws))
        assert again.returncode == 0 and json.loads(again.stdout)["pid"] == line["pid"]  # the same console
    finally:
        os.kill(line["pid"], signal.SIGTERM)
    deadline = time.monotonic() + 20
    while Path(line["socket"]).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(line["socket"]).exists()  # stopped cleanly: its socket removed


def test_a_workspace_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    result = _serve("--workspace", str(tmp_path / "missing"))
    assert result.returncode == 2 and "is not a directory" in result.stderr
