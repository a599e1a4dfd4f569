"""The hook command Claude Code runs: hand the event to the running Belay console, print its answer.

Standard library only, run as `python -I -S client.py --state-root DIR --config-dir DIR`, so it starts
in tens of milliseconds and nothing on the person's PYTHONPATH or site-packages can change what it does.
It finds the console that owns the nearest workspace at or above the event's `cwd` (its endpoint file),
sends the event over the console's Unix socket with the install's token, and waits for the answer: a
PreToolUse may wait as long as a person takes to approve.

Fails closed: when no console is running for the workspace, or the console cannot be reached, a
PreToolUse (or PermissionRequest) is blocked with exit code 2 and a message saying how to start Belay;
other events only warn, since what they report has already happened.  Belay installs its hooks with
`"onFailure": "block"` as well, so a crash of this client blocks too.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys

BLOCKING_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "UserPromptSubmit"})
BLOCK, WARN = 2, 1
ENDPOINT_FILE = "endpoint.json"


def workspace_state_dir(state_root: str, workspace: str) -> str:
    """Where the console keeps a workspace's state (as core.settings.workspace_state_dir computes it)."""
    real = os.path.realpath(workspace)
    digest = hashlib.sha256(real.encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real)) or "root"
    return os.path.join(state_root, "workspaces", f"{name}-{digest}")


def find_endpoint(state_root: str, cwd: str) -> dict[str, object] | None:
    """The endpoint of a running console for `cwd` or its nearest ancestor that has one."""
    path = os.path.realpath(cwd)
    while True:
        try:
            with open(os.path.join(workspace_state_dir(state_root, path), ENDPOINT_FILE), encoding="utf-8") as f:
                found = json.load(f)
            if isinstance(found, dict):
                return found
        except (OSError, ValueError):
            pass
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def ask_console(endpoint: dict[str, object], token: str, event: dict[str, object]) -> dict[str, object]:
    """Send the event and wait for the console's answer (no timeout: Claude Code's own hook timeout rules)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(endpoint["socket"]))
        sock.sendall(json.dumps({"token": token, "kind": "hook", "event": event}).encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    answer = json.loads(b"".join(chunks) or b"null")
    if not isinstance(answer, dict):
        raise ValueError("the console answered nothing")
    return answer


def fail(event_name: str, message: str) -> int:
    """Closed for events that can still be stopped; a warning for the rest."""
    sys.stderr.write(f"Belay: {message}\n")
    return BLOCK if event_name in BLOCKING_EVENTS else WARN


def main(argv: list[str]) -> int:
    options = dict(zip(argv[0::2], argv[1::2]))
    state_root, config_dir = options.get("--state-root", ""), options.get("--config-dir", "")
    try:
        event = json.loads(sys.stdin.buffer.read() or b"{}")
    except ValueError:
        return fail("PreToolUse", "the hook's input is not JSON; refusing the call.")
    if not isinstance(event, dict):
        return fail("PreToolUse", "the hook's input is not a JSON object; refusing the call.")
    name = str(event.get("hook_event_name", ""))
    cwd = str(event.get("cwd") or os.getcwd())
    endpoint = find_endpoint(state_root, cwd)
    if endpoint is None:
        return fail(name, f"no Belay console is running for {cwd}, so this call is refused. Start one with "
                          f"`belay watch --workspace {cwd}` (or remove Belay's hooks: `belay hooks uninstall`).")
    try:
        with open(os.path.join(config_dir, "token"), encoding="ascii") as f:
            token = f.read().strip()
        answer = ask_console(endpoint, token, event)
    except (OSError, ValueError) as e:
        return fail(name, f"the Belay console for {cwd} cannot be reached ({e}); the call is refused. "
                          f"Restart it with `belay watch --workspace {cwd}`.")
    if not answer.get("ok"):
        return fail(name, f"the console refused the event: {answer.get('error')}")
    if answer.get("stdout") is not None:
        sys.stdout.write(json.dumps(answer["stdout"]))
    if answer.get("stderr"):
        sys.stderr.write(str(answer["stderr"]))
    return int(answer.get("exit", 0))  # type: ignore[call-overload]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
