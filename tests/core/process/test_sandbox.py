"""The sandbox: bubblewrap found and proven, the argv it builds, and what a command inside can do."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.process.sandbox import SandboxInfo, describe, detect_sandbox, signal_pids, tree_pids, wrap

NONE = SandboxInfo(available=False, kind="none", detail="none here")


@pytest.fixture
def info() -> SandboxInfo:
    found = detect_sandbox()
    assert found.available, f"bubblewrap must work where the tests run (make system-deps): {found.detail}"
    return found


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, tmp = tmp_path / "ws", tmp_path / "private-tmp"
    ws.mkdir()
    tmp.mkdir()
    return ws, tmp


def sandboxed(info: SandboxInfo, dirs: tuple[Path, Path], script: str, *, network: bool = False,
              env: dict[str, str] | None = None, hide: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    argv = wrap(["bash", "--noprofile", "--norc", "-c", script], workspace=dirs[0], tmp=dirs[1],
                network=network, info=info, hide=hide)
    return subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
                          env=env or {"PATH": "/usr/bin:/bin"})


def test_detection_is_cached_and_describes_itself(info: SandboxInfo) -> None:
    assert info.kind == "bubblewrap" and info.executable.endswith("bwrap")
    assert info.detail.startswith("bubblewrap ") and "PID namespace" in info.detail
    assert detect_sandbox() is info


def test_argv_mounts_private_tmp_before_the_workspace(info: SandboxInfo, dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    argv = wrap(["true"], workspace=ws, tmp=tmp, network=False, info=info)
    assert argv[0] == info.executable and argv[-2:] == ["--", "true"]
    joined = " ".join(argv)
    assert joined.index(f"--bind {tmp} /tmp") < joined.index(f"--bind {ws} {ws}")
    for option in ("--ro-bind / /", "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session",
                   "--cap-drop ALL", f"--chdir {ws}"):
        assert option in joined
    assert "--unshare-net" not in wrap(["true"], workspace=ws, tmp=tmp, network=True, info=info)


def test_the_description_says_what_a_command_can_reach_and_how_many_processes_it_may_have() -> None:
    on = SandboxInfo(available=True, kind="bubblewrap", detail="bubblewrap 0.8.0: PID namespace",
                     processes="at most 256 processes (pids cgroup)")
    assert describe(on, network=False) == ("bubblewrap sandbox (network off), at most 256 processes (pids cgroup): "
                                           "bubblewrap 0.8.0: PID namespace")
    off = SandboxInfo(available=False, kind="none", processes="no process limit (no cgroup)",
                      detail="bubblewrap not found: commands run unsandboxed in their own process group")
    assert describe(off, network=True) == ("sandbox off: commands can read and write anything your user can, "
                                           "including files outside the workspace (bubblewrap not found), "
                                           "no process limit (no cgroup)")


def test_its_own_user_namespace_on_request(info: SandboxInfo, dirs: tuple[Path, Path]) -> None:
    assert "--unshare-user" not in wrap(["true"], workspace=dirs[0], tmp=dirs[1], network=False, info=info)
    argv = wrap(["cat", "/proc/self/uid_map"], workspace=dirs[0], tmp=dirs[1], network=False, info=info,
                own_users=True)
    mapped = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL).stdout
    assert mapped.split() != ["0", "0", "4294967295"]  # not the initial namespace's identity map


def test_without_a_sandbox_the_argv_is_unchanged(dirs: tuple[Path, Path]) -> None:
    assert wrap(["echo", "x"], workspace=dirs[0], tmp=dirs[1], network=False, info=NONE) == ["echo", "x"]


def test_root_is_read_only_and_workspace_and_tmp_are_writable(info: SandboxInfo, dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    result = sandboxed(info, dirs, "touch /usr/belay-x; echo rc=$?; touch x /tmp/y && pwd")
    assert "Read-only file system" in result.stderr and "rc=1" in result.stdout
    assert not Path("/usr/belay-x").exists()
    assert str(ws) in result.stdout and (ws / "x").exists() and (tmp / "y").exists()


def test_no_capabilities_and_only_its_own_processes(info: SandboxInfo, dirs: tuple[Path, Path]) -> None:
    result = sandboxed(info, dirs, f"grep CapEff /proc/self/status; ls /proc/{os.getpid()} 2>&1; ls -d /proc/[0-9]*")
    assert "CapEff:\t0000000000000000" in result.stdout
    assert "No such file or directory" in result.stdout
    assert len(result.stdout.split("\n/proc/")) <= 4  # bwrap's init, bash, ls


def test_console_environ_is_out_of_reach(info: SandboxInfo, dirs: tuple[Path, Path]) -> None:
    """The PID namespace hides the console; the sandbox's own init carries only the filtered environment."""
    script = f"tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/{os.getpid()}/environ; true"
    result = sandboxed(info, dirs, script, env={"PATH": "/usr/bin:/bin", "SAFE": "1"})
    assert result.stdout.split() == ["PATH=/usr/bin:/bin", "SAFE=1"]


def test_hidden_directories_look_empty(info: SandboxInfo, dirs: tuple[Path, Path]) -> None:
    assert sandboxed(info, dirs, "ls /usr/share | wc -l", hide=(Path("/usr/share"),)).stdout.strip() == "0"
    argv = wrap(["true"], workspace=dirs[0], tmp=dirs[1], network=False, info=info, hide=(dirs[0], Path("/tmp/x")))
    assert "--tmpfs" not in argv  # never the workspace, nor what the private /tmp already hides


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    yield server
    server.close()


@pytest.mark.parametrize("network", [False, True])
def test_network_off_cannot_reach_the_host(info: SandboxInfo, dirs: tuple[Path, Path], listener: socket.socket,
                                           network: bool) -> None:
    port = listener.getsockname()[1]
    result = sandboxed(info, dirs, f"echo hello > /dev/tcp/127.0.0.1/{port} && echo sent", network=network)
    if network:
        conn, _ = listener.accept()
        with conn:
            assert conn.recv(100) == b"hello\n"
        assert result.stdout == "sent\n"
    else:
        assert result.returncode != 0 and "sent" not in result.stdout


def test_tree_pids_finds_group_members_and_setsid_descendants() -> None:
    tag = os.getpid()
    script = f"sleep 98770.{tag} & setsid sleep 98771.{tag} & wait"
    shell = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    try:
        wanted = [f"bash -c {script}".encode(), f"sleep 98770.{tag}".encode(), f"sleep 98771.{tag}".encode()]
        deadline = time.monotonic() + 5
        names: list[bytes] = []
        while names != wanted and time.monotonic() < deadline:  # a child is "setsid ..." until it execs sleep
            time.sleep(0.02)
            names = sorted(_cmdline(pid) for pid in tree_pids(shell.pid))
        assert names == wanted
    finally:
        signal_pids(tree_pids(shell.pid), signal.SIGKILL)
        shell.wait(5)
    deadline = time.monotonic() + 5
    while tree_pids(shell.pid) and time.monotonic() < deadline:  # SIGKILL takes a moment to finish a process
        time.sleep(0.02)
    assert tree_pids(shell.pid) == {}


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip()
    except OSError:
        return b""  # it ended between the listing and the read
