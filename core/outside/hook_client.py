"""The hook command Claude Code runs: hand the event to the running Belay console, print its answer.

Every tool call runs this twice (before and after), so it must start fast: standard library only, run
as `python -I -S hook_client.py --state-root DIR --config-dir DIR` (nothing on PYTHONPATH or in
site-packages can change what it does), and not even a JSON parser: the event is passed on as the bytes
Claude Code wrote, and the console answers in a length-prefixed frame (see core/outside/endpoint.py).  The
console is the one that owns the nearest workspace at or above the project directory
(`$CLAUDE_PROJECT_DIR`, else the working directory): its socket's path is a plain-text file in that
workspace's state directory.  A PreToolUse may wait as long as a person takes to approve.

Fails closed: when no console is running for the workspace, or it cannot be reached, a call that can
still be stopped (PreToolUse, PermissionRequest, UserPromptSubmit) is blocked with exit code 2 and a
message saying how to start Belay; for the other events the message is only a warning (exit 1).  Belay
installs its hooks with `"onFailure": "block"` as well, so a crash of this client blocks too.
"""

from __future__ import annotations

import os
import sys

try:
    from _sha256 import sha256  # built in: avoids loading OpenSSL through hashlib
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import sha256

import _socket

BLOCKING = (b'"PreToolUse"', b'"PermissionRequest"', b'"UserPromptSubmit"')
BLOCK, WARN = 2, 1
SOCKET_FILE = "endpoint.sock"


def workspace_state_dir(state_root: str, workspace: str) -> str:
    """Where the console keeps a workspace's state: core.settings.workspace_state_dir's own lines, copied
    because this script imports nothing of Belay's (tests/core/test_settings.py checks they agree)."""
    real = os.path.realpath(workspace)
    digest = sha256(real.encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real)) or "root"
    return os.path.join(state_root, "workspaces", f"{name}-{digest}")


def find_socket(state_root: str, directory: str) -> str | None:
    """The socket of a running console for `directory` or its nearest ancestor that has one."""
    path = os.path.realpath(directory)
    while True:
        try:
            with open(os.path.join(workspace_state_dir(state_root, path), SOCKET_FILE), encoding="utf-8") as f:
                return f.read().strip()
        except OSError:
            pass
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def find_endpoint(state_root: str, directory: str) -> dict[str, str] | None:
    """`find_socket` as a mapping ({"socket": path}), for callers that also read other endpoint fields."""
    path = find_socket(state_root, directory)
    return {"socket": path} if path is not None else None


def ask_console(socket_path: str, token: str, event: bytes) -> tuple[int, bytes, bytes]:
    """Send the event and wait for (exit code, stdout, stderr); no timeout: Claude Code's own applies."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(socket_path)
        header = b'{"token": "%s", "kind": "hook", "length": %d}\n' % (token.encode("ascii"), len(event))
        sock.sendall(header + event)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    finally:
        sock.close()
    reply = b"".join(chunks)
    head, _, rest = reply.partition(b"\n")
    words = head.split()
    if len(words) != 4 or words[0] != b"HOOK":
        raise ValueError("the console's answer is not a hook answer")
    code, out_len, err_len = (int(w) for w in words[1:])
    return code, rest[:out_len], rest[out_len:out_len + err_len]


def fail(event: bytes, message: str) -> int:
    """Closed for events that can still be stopped; a warning for the rest."""
    sys.stderr.write(f"Belay: {message}\n")
    return BLOCK if any(name in event for name in BLOCKING) else WARN


def main(argv: list[str]) -> int:
    options = dict(zip(argv[0::2], argv[1::2]))
    state_root, config_dir = options.get("--state-root", ""), options.get("--config-dir", "")
    event = sys.stdin.buffer.read()
    where = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    socket_path = find_socket(state_root, where)
    if socket_path is None:
        return fail(event, f"no Belay console is running for {where}, so this call is refused. Start one with "
                           f"`belay watch --workspace {where}` (or remove Belay's hooks: `belay hooks uninstall`).")
    try:
        with open(os.path.join(config_dir, "token"), encoding="ascii") as f:
            token = f.read().strip()
        code, out, err = ask_console(socket_path, token, event)
    except (OSError, ValueError) as e:
        return fail(event, f"the Belay console for {where} cannot be reached ({e}); the call is refused. "
                           f"Restart it with `belay watch --workspace {where}`.")
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
