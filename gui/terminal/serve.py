"""`belay serve`: a workspace's console without a window, for a person to attach to from elsewhere.

Run on the host where the files are (installed there with pipx), it opens the workspace's console as the
window would (the journal, change capture, undo, the socket the agents' hooks use) and lets front ends
attach through that socket (core.remote.server).  Calls that need a person wait for one to attach, or for
their rule's timeout, as they wait for a window locally.  It prints one line of JSON when it is ready:
the socket's path, the install's token, the protocol version and its pid; then it runs until it is told to
stop (SIGTERM, SIGINT, SIGHUP).

`--ensure` is what `belay attach ssh://host/path` runs over ssh: it prints the line of the console that
already serves the workspace, or starts one in the background (its log in the state directory) and prints
its line once it is ready.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core import (
    PROTOCOL_VERSION,
    AttachServer,
    Console,
    config_dir,
    install_token,
    socket_answers,
    workspace_state_dir,
)
from gui import belay_command

START_TIMEOUT_S = 60.0
"""How long `--ensure` waits for a console it started to be ready (a first snapshot of a large workspace)."""
LOG_FILE = "serve.log"


def serve(workspace: str, state_dir: str | None, ensure: bool) -> int:
    root = Path(workspace).expanduser().resolve()
    if not root.is_dir():
        print(f"belay serve: {root} is not a directory", file=sys.stderr)
        return 2
    if ensure:
        return _ensure(root, state_dir)
    return asyncio.run(_serve(root, state_dir))


async def _serve(root: Path, state_dir: str | None) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    async with Console(root, state_dir=Path(state_dir) if state_dir else None, holder="belay serve") as console:
        if console.endpoint is None:
            print(f"belay serve: another console has {root} open (a window, `belay run`): attach to it, or close "
                  "it first", file=sys.stderr)
            return 2
        AttachServer(console).install(console.endpoint)
        console.register_approver("attached front ends")  # a call waits for a person to attach, as for a window
        print(json.dumps(_line(console.endpoint.path, os.getpid(), root)), flush=True)
        await stop.wait()
    return 0


def _line(socket_path: Path, pid: int, root: Path) -> dict[str, object]:
    return {"socket": str(socket_path), "token": install_token(config_dir()), "version": PROTOCOL_VERSION,
            "pid": pid, "workspace": str(root)}


def _running(state: Path) -> dict[str, object] | None:
    """The endpoint of the console that serves this state directory now, when one answers on its socket."""
    try:
        info = json.loads((state / "endpoint.json").read_text(encoding="utf-8"))
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if socket_answers(str(info["socket"])) else None


def _ensure(root: Path, state_dir: str | None) -> int:
    state = workspace_state_dir(root, state_dir)
    info = _running(state)
    if info is None:
        state.mkdir(parents=True, exist_ok=True)
        command = belay_command("serve", "--workspace", str(root))  # (the bundle's program too)
        command += ["--state-dir", state_dir] if state_dir else []
        with open(state / LOG_FILE, "ab") as log:
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True)  # outlives this ssh session
        deadline = time.monotonic() + START_TIMEOUT_S
        while (info := _running(state)) is None or info.get("pid") != child.pid:
            if child.poll() is not None:
                print(f"belay serve: the console for {root} stopped as it started (exit {child.returncode}); "
                      f"see {state / LOG_FILE}", file=sys.stderr)
                return 1
            if time.monotonic() > deadline:
                print(f"belay serve: the console for {root} was not ready after {START_TIMEOUT_S:.0f} s; see "
                      f"{state / LOG_FILE}", file=sys.stderr)
                return 1
            time.sleep(0.1)
    print(json.dumps(_line(Path(str(info["socket"])), int(str(info["pid"])), root)), flush=True)
    return 0
