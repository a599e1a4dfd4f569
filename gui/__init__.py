"""Belay's front ends: the window (gui.window) and the terminal (gui.terminal), two rooms that share only this."""

from __future__ import annotations

import sys


def belay_command(*args: str) -> list[str]:
    """Belay's command line as a new process: the bundle's own program (packaging/launcher.py), or this Python
    running `gui.terminal.cli`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "gui.terminal.cli", *args]
