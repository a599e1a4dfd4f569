"""How a front end starts Belay again as a new process, from source and from the bundle."""

from __future__ import annotations

import sys

import pytest

from gui import belay_command


def test_belay_runs_again_as_this_python_or_as_the_bundles_own_program(monkeypatch: pytest.MonkeyPatch) -> None:
    assert belay_command("serve", "--workspace", "/w") == [sys.executable, "-m", "gui.terminal.cli", "serve",
                                                           "--workspace", "/w"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # as PyInstaller's bootloader sets it
    monkeypatch.setattr(sys, "executable", "/opt/belay/belay")
    assert belay_command("serve", "--workspace", "/w") == ["/opt/belay/belay", "serve", "--workspace", "/w"]
