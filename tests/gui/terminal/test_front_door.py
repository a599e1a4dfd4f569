"""The front door: `belay` alone, `--version`, and no display said in one line instead of SIGABRT."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui.terminal.cli import _parser, bare_console, no_display

ROOT = Path(__file__).resolve().parents[3]


def _belay(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui.terminal.cli", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=timeout)


def _headless_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland display servers are a Linux matter")
@pytest.mark.parametrize("args", [(), ("demo",), ("watch",)])
def test_without_a_display_a_window_command_says_so_in_one_line(args: tuple[str, ...]) -> None:
    done = _belay(*args, env=_headless_env())
    assert done.returncode == 2, done.stderr  # not 134 (Qt's abort)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display" in lines[0] and "--screenshot" in lines[0]
    assert lines[0].startswith("belay: " if not args else f"belay {args[0]}: ")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland display servers are a Linux matter")
def test_without_a_display_a_screenshot_runs_offscreen(tmp_path: Path) -> None:
    shot = tmp_path / "demo.png"
    done = _belay("demo", "--auto-approve", "--quit-when-done", "--workspace", str(tmp_path / "ws"),
                  "--screenshot", str(shot), env=_headless_env(), timeout=90)
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 10_000


def test_the_display_check_leaves_a_desktop_and_a_chosen_platform_alone() -> None:
    assert no_display("watch", None, {"DISPLAY": ":0"}) is None
    assert no_display("watch", None, {"WAYLAND_DISPLAY": "wayland-0"}) is None
    assert no_display("watch", None, {"QT_QPA_PLATFORM": "offscreen"}) is None
    if sys.platform.startswith("linux"):
        assert no_display("watch", None, {"QT_QPA_PLATFORM": "xcb"}) is not None


def test_version_names_the_installed_release() -> None:
    done = _belay("--version", env=dict(os.environ))
    assert done.returncode == 0
    from importlib.metadata import version
    assert done.stdout.strip() == f"belay {version('belay-console')}"


def test_belay_alone_is_the_console_with_its_welcome_and_at_login_without() -> None:
    assert _parser().parse_args([]).command is None
    assert _parser().parse_args(["--tray"]).tray is True
    assert (bare_console(False).command, bare_console(False).first_run) == ("watch", True)
    assert (bare_console(True).tray, bare_console(True).first_run) == (True, False)
    help_text = " ".join(_parser().format_help().split())
    assert "Without a command: open the console" in help_text and "--tray" in help_text


def test_the_console_starts_without_importing_the_heavy_parts() -> None:
    """The Agent SDK, the MCP package (under it too) and nbformat took over a second of every start (issue 15):
    they are imported where they are used (a Claude session, an MCP server, a notebook), not to open a window."""
    probe = ("import sys, gui.terminal.cli, gui.window.app, gui.window.hub.window, core; "
             "print(' '.join(m for m in ('claude_agent_sdk', 'mcp', 'mcp_types', 'nbformat', 'jsonschema', 'httpx2')"
             " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
