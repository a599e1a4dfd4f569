"""The `belay` command line (gui.terminal.cli), the front door: `belay` alone, `--version`, no display said in
one line instead of SIGABRT, options checked as they are read, and whatever goes wrong said in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gui.terminal import commands
from gui.terminal.cli import _parser, bare_console, main, no_display

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


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    """What went to standard error, which must be one line."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_problem_belay_knows_is_one_line_with_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calls", "--workspace", str(tmp_path / "gone")]) == 2
    line = _said(capsys)
    assert line.startswith(f"belay calls: the workspace {tmp_path / 'gone'} does not exist or is not a directory. ")
    assert line.endswith("(recreate it first if it was removed).")


def test_a_state_directory_that_cannot_be_made_is_the_machines_state_not_a_bug(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a file").write_text("")
    state = tmp_path / "a file" / "state"
    assert main(["calls", "--workspace", str(tmp_path), "--state-dir", str(state)]) == 2
    line = _said(capsys)
    assert line.startswith("belay calls: ") and "Traceback" not in line
    assert line.endswith("Belay could not go on and changed nothing more")


def test_a_bug_is_one_line_asking_for_a_report_and_belay_debug_shows_where(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("the journal's cursor went away")

    monkeypatch.setattr(commands, "list_calls", broken)  # a bug, wherever it would be
    monkeypatch.delenv("BELAY_DEBUG", raising=False)
    assert main(["calls", "--workspace", str(tmp_path)]) == 1
    assert _said(capsys) == ("belay calls: unexpected error (RuntimeError: the journal's cursor went away); this is a "
                             "bug in Belay, please report it (BELAY_DEBUG=1 shows where it happened)")
    monkeypatch.setenv("BELAY_DEBUG", "1")
    assert main(["calls", "--workspace", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "in broken" in err and err.rstrip().endswith("shows where it happened)")


@pytest.mark.parametrize(("args", "message"), [
    (["run", "plan.yaml", "--concurrency", "0"], "must be from 1 to 64, not 0"),
    (["run", "plan.yaml", "--concurrency", "many"], "'many' is not a whole number"),
    (["mcp-serve", "--http", "--port", "70000"], "must be from 0 to 65535, not 70000"),
    (["verify", "--workspace", ".", "--expect", "12:abc"], "is not a head as belay verify prints it"),
    (["export", "--workspace", ".", "--since", "last tuesday"], "neither an ISO date or time"),
], ids=["no calls at once", "not a number", "no such port", "a cut head", "no such time"])
def test_a_bad_option_is_refused_as_it_is_read_saying_what_it_takes(
        args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_since_takes_an_age_or_an_iso_time_in_utc_unless_it_says() -> None:
    parse = _parser().parse_args
    before = datetime.now(UTC)
    age = parse(["export", "--workspace", ".", "--since", "90m"]).since
    assert before - timedelta(minutes=90) <= age <= datetime.now(UTC) - timedelta(minutes=90)
    assert parse(["export", "--workspace", ".", "--since", "2026-11-20"]).since == datetime(2026, 11, 20, tzinfo=UTC)
    local = parse(["export", "--workspace", ".", "--since", "2026-11-20T09:30+02:00"]).since
    assert local == datetime(2026, 11, 20, 7, 30, tzinfo=UTC)


def test_stdio_mcp_serve_refuses_a_host_or_port_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp-serve", "--port", "8000"]) == 2
    assert _said(capsys) == "belay mcp-serve: --host and --port go with --http (stdio needs neither)"


def test_an_argument_that_is_not_utf8_is_named_before_anything_opens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["undo", "call_\udcff", "--workspace", str(tmp_path), "--file", "a\udcfe.txt"]) == 2
    line = _said(capsys)
    assert line.startswith("belay undo: the ") and "is not valid UTF-8 text" in line


COMMANDS = ("demo", "calls", "undo", "redo", "export", "verify", "serve", "attach", "gc", "run", "watch", "mcp-serve",
            "claude", "hooks")
INTERNAL = ("Traceback", "argument ", "Namespace", "NoneType", "dest=", "invalid choice", "_parser", "argparse")
"""What the person must never read: a traceback, or argparse's and Python's own words."""


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_says_what_it_does_and_every_option_what_it_is_for(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: belay {command}")
    parser = _parser().commands[command]
    for action in parser._actions:  # noqa: SLF001 - the parser's own list of what it takes
        assert action.help, f"belay {command} {'/'.join(action.option_strings) or action.dest} has no help"
    if "--workspace" in text:
        assert "--workspace DIR" in text


MISTAKES = [
    ["bogus"], ["--wat"], ["calls", "--wat"], ["calls", "extra"], ["undo"], ["redo"], ["undo", "c1", "--file"],
    ["hooks"], ["hooks", "instal"], ["hooks", "install", "--agent", "cursor"], ["hooks", "install", "--project"],
    ["hooks", "install", "--project", "/no/such/folder"], ["hooks", "install", "--user", "--project", "."],
    ["demo", "--pace", "-1"], ["demo", "--pace", "fast"], ["demo", "--quit-when-done"],
    ["demo", "--quit-when-done", "--screenshot", "x.png"], ["watch", "--quit-after", "-3"],
    ["watch", "--quit-after", "soon"], ["watch", "--screenshot", "x.png"], ["export", "--since", "yesterday"],
    ["export", "--format", "csv"], ["verify", "--expect", "nonsense"], ["mcp-serve", "--port", "99999"],
    ["mcp-serve", "--port", "http"], ["mcp-serve", "--port", "8080"], ["mcp-serve", "--host", "0.0.0.0"],
    ["run"], ["run", "plan.yaml", "--concurrency", "0"], ["run", "plan.yaml", "--concurrency", "many"],
    ["run", "plan.yaml", "--auto", "maybe"], ["attach"], ["gc", "--keep", "3"], ["claude", "--model"],
    ["serve", "--ensure", "now"], ["calls", "--workspace"], ["calls", "--state-dir"], ["undo", "--force"],
    ["export", "-o"], ["redo", "c1", "c2"],
]


@pytest.mark.parametrize("argv", MISTAKES, ids=[" ".join(m) for m in MISTAKES])
def test_a_plausible_mistake_is_one_line_naming_it_with_exit_2(
        argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    said = capsys.readouterr().err.strip()
    assert code == 2, (code, said)
    assert len(said.splitlines()) == 1 and said.startswith("belay"), said
    assert not any(word in said for word in INTERNAL), said
