"""The wall around an outside agent's command: the rewritten command, run as an agent's shell runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.outside.wall import walled
from core.process.limits import ProcessLimit, detect_limit
from core.process.sandbox import SandboxInfo, detect_sandbox
from core.tools.bash import BashSettings

NONE = SandboxInfo(available=False, kind="none", detail="bubblewrap not found: commands run unsandboxed")


def _sandbox() -> SandboxInfo:
    info = detect_sandbox()
    if not info.available:
        pytest.skip(f"no working bubblewrap here: {info.detail}")
    return info


def _as_the_agent_runs(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**os.environ, **env})


def test_without_bubblewrap_there_is_no_wall_and_the_command_runs_as_written(tmp_path: Path) -> None:
    limit = ProcessLimit(kind="none", maximum=256, why="no sandbox")
    assert walled("ls", workspace=tmp_path, info=NONE, limit=limit, settings=BashSettings(), hide=()) is None


def test_the_command_keeps_its_output_exit_code_and_directory_and_writes_only_the_workspace(tmp_path: Path) -> None:
    info = _sandbox()
    ws, beside, secrets = tmp_path / "ws", Path.home() / f".belay-test-beside-{os.getpid()}", tmp_path / "keys"
    (ws / "src").mkdir(parents=True)
    secrets.mkdir()
    (secrets / "id").write_text("KEY")
    limit = detect_limit(64, bwrap=info.executable)
    command = f"pwd; echo out > here.txt; cat {secrets}/id; mkdir {beside} && echo made; printf '%s\\n' \"it's\"; exit 7"
    made = walled(command, workspace=ws, info=info, limit=limit, settings=BashSettings(), hide=[secrets])
    assert made is not None
    try:
        done = _as_the_agent_runs(made.command, ws / "src")
    finally:
        if made.group is not None:
            made.group.remove()
        if beside.exists():
            beside.rmdir()
            pytest.fail("the command made a directory beside the workspace")
    assert done.returncode == 7, done.stderr
    assert done.stdout.splitlines()[0] == str(ws / "src")  # where the agent ran it
    assert (ws / "src" / "here.txt").read_text() == "out\n"
    assert "KEY" not in done.stdout and "made" not in done.stdout
    assert "it's" in done.stdout  # the command reaches bash exactly as written


def test_inside_the_environment_is_the_allow_list_taken_from_the_agents_own(tmp_path: Path) -> None:
    info = _sandbox()
    (tmp_path / "bin").mkdir()
    limit = detect_limit(64, bwrap=info.executable)
    made = walled("env", workspace=tmp_path, info=info, limit=limit, settings=BashSettings(), hide=())
    assert made is not None
    try:
        done = _as_the_agent_runs(made.command, tmp_path, API_TOKEN="tok-1", LANG="C.UTF-8",
                                  PATH=f"{tmp_path / 'bin'}:relative:/usr/bin:/bin")
    finally:
        if made.group is not None:
            made.group.remove()
    env = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert "API_TOKEN" not in env and "tok-1" not in done.stdout
    assert env["PATH"] == "/usr/bin:/bin"  # no entry inside the workspace, no relative one
    assert env["LANG"] == "C.UTF-8" and env["PAGER"] == "cat" and env["TMPDIR"] == "/tmp"
    assert "BELAY_WS" not in env


def test_what_the_command_prints_reaches_the_agent_capped_cut_and_harmless_with_its_exit_code(tmp_path: Path) -> None:
    """The agent's shell hands the output straight to the model: the wall caps, cuts and cleans it itself."""
    info = _sandbox()
    command = ("head -c 50000000 /dev/zero | tr '\\0' a; echo; seq 1 300000; "
               "printf 'done\\r\\033[2K\\033]52;c;eA==\\007ok \\342\\200\\256 end\\n'; "
               "head -c 3000000 /dev/zero >&2; echo; echo to-stderr >&2; exit 7")
    made = walled(command, workspace=tmp_path, info=info, limit=detect_limit(64, bwrap=info.executable),
                  settings=BashSettings(), hide=())
    assert made is not None
    try:
        done = subprocess.run(["bash", "-c", made.command], cwd=tmp_path, capture_output=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    finally:
        if made.group is not None:
            made.group.remove()
    assert done.returncode == 7
    out, err = done.stdout.decode(), done.stderr.decode()
    assert len(out) + len(err) < 30_000
    assert max(len(line) for line in (out + err).splitlines()) <= 2000
    assert "a... [line cut: " in out and "more bytes not shown]" in out  # one line of 50 MB, cut and said so
    assert out.rstrip().endswith("bytes cut ...]") and "bytes cut ...]" in err  # then the rest, counted
    assert not any(c in out + err for c in "\x00\x1b\x07\r\u202e")


def test_the_filter_keeps_a_short_output_as_it_was(tmp_path: Path) -> None:
    info = _sandbox()
    made = walled("printf 'caf\\303\\251\\tok\\n'; echo warn >&2", workspace=tmp_path, info=info,
                  limit=detect_limit(64, bwrap=info.executable), settings=BashSettings(), hide=())
    assert made is not None
    try:
        done = _as_the_agent_runs(made.command, tmp_path)
    finally:
        if made.group is not None:
            made.group.remove()
    assert (done.returncode, done.stdout, done.stderr) == (0, "café\tok\n", "warn\n")
