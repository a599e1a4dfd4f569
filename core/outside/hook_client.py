"""The hook command Claude Code runs: hand the event to the running Belay console, print its answer.

Every tool call runs this twice (before and after), so it must start fast: standard library only, run
as `python -I -S hook_client.py --state-root DIR --config-dir DIR [--wait S] [--max-wait S] [--start-wait S]`
(nothing on PYTHONPATH or in site-packages can change what it does), and not even a JSON parser: the event is passed
on as the bytes Claude Code wrote, and the console answers in a length-prefixed frame (see
core/outside/endpoint.py).  The console is the one that owns the nearest workspace at or above the
project directory (`$CLAUDE_PROJECT_DIR`, else the working directory): its socket's path is a plain-text
file in that workspace's state directory.  A project with no console of its own asks the console for every
workspace (`belay watch`, core/hub.py), when one runs, saying which directory it works in.

A PreToolUse may wait as long as a person takes to approve, so the client does not time the answer, it
times the console's *silence*: while the console handles the event it sends a keepalive line every few
seconds, and each one restarts the clock.  A console that accepted the connection and then says nothing
for `--wait` seconds (default 30; `$BELAY_HOOK_WAIT` when the command line does not say) is hung (its
loop is blocked, or it is stopped in a debugger), and the call is blocked at once rather than after
Claude Code's own hour.  `--max-wait` (default 3,000 s, `$BELAY_HOOK_MAX_WAIT`) caps the whole wait,
keepalives or not, under the hour Claude Code gives the hook (core.outside.install.HOOK_TIMEOUT_S).
A workspace whose console is still starting (it holds the workspace's lock, its socket not served yet) is
waited for, its socket looked for every tenth of a second, up to `--start-wait` (default 60 s,
`$BELAY_HOOK_START_WAIT`); a console that stops before it serves refuses the call with the reason it left.

With no console running, Claude Code in a person's terminal falls back to its own prompt: the PreToolUse
is answered "ask" (with why), which Claude Code puts before that person in every permission mode.  Run
headless or by an SDK host, and for Codex and Gemini CLI, which have no prompt a person must answer, the
call is refused as below.

Otherwise it fails closed, and only ever exits in ways Claude Code honours: an event that can still be stopped
(PreToolUse, PermissionRequest, UserPromptSubmit) is refused whenever the console cannot give an answer
(none running, unreachable, silent, a garbled answer, a bug in this script), in the event's own
structured form on stdout with exit 0: a PreToolUse `permissionDecision` "deny" with Belay's reason, a
PermissionRequest `decision` "deny" with it as the message, a UserPromptSubmit `decision` "block".  The
model then reads Belay's reason alone; exit 2 with the reason on stderr would show it the hook's command
line too (tests/integration/CLAUDE_CODE_HOOKS.md, 6.1).  Exit 2 remains where JSON cannot serve: an event
whose name cannot be read, a stdout that cannot be written, and the console's own refusal of a request (a
wrong token, a malformed event), passed on as it answered.  Any other exit code would be a "non-blocking
error" to Claude Code and the call would run.  The other events report what already happened: for them a
failure exits 0 quietly, as there is nothing left to stop.  Belay installs its hooks with
`"onFailure": "block"` as well, so a crash of the interpreter itself blocks too.
"""

from __future__ import annotations

import os
import sys

try:
    from _sha256 import sha256  # type: ignore[import-not-found]  # built in, avoids OpenSSL; typeshed has no stub
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import sha256

import _socket
from time import monotonic, sleep

BLOCK, QUIET = 2, 0
SOCKET_FILE = "endpoint.sock"
HUB_DIR = "console"
"""Where, under the state root, the console for every workspace keeps its socket's path (core.hub.HUB_DIR)."""
AGENTS = ("claude", "codex", "gemini")
"""The agent CLIs whose hooks this client serves (`--agent`, default claude): each has its own event names
and its own way of being told no."""
REFUSALS: dict[str, dict[bytes, bytes]] = {
    "claude": {
        b"PreToolUse": b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
                       b'"permissionDecisionReason": %s}}\n',
        b"PermissionRequest": b'{"hookSpecificOutput": {"hookEventName": "PermissionRequest", '
                              b'"decision": {"behavior": "deny", "message": %s}}}\n',
        b"UserPromptSubmit": b'{"decision": "block", "reason": %s}\n',
    },
    "codex": {  # Codex reads a hook that exits other than 0 or 2 (or times out) as failed, and runs the call
        b"PreToolUse": b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
                       b'"permissionDecisionReason": %s}}\n',
        b"PermissionRequest": b'{"hookSpecificOutput": {"hookEventName": "PermissionRequest", '
                              b'"decision": {"behavior": "deny", "message": %s}}}\n',
    },
    "gemini": {  # Gemini CLI runs the call when its hook exits 1 or times out; exit 2 would block it too
        b"BeforeTool": b'{"decision": "deny", "reason": %s}\n',
    },
}
"""Per agent, each stoppable event's refusal as the agent reads it (its reason goes where %s is, as a JSON
string).  An agent's stoppable events are exactly the keys here."""
BLOCKING: dict[str, tuple[bytes, ...]] = {agent: tuple(events) for agent, events in REFUSALS.items()}
ASK = (b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", '
       b'"permissionDecisionReason": %s}}\n')
"""Claude Code's PreToolUse "ask": its own permission prompt, with the reason shown above it."""
ASKS_INSTEAD = (b"PreToolUse", b"PermissionRequest", b"UserPromptSubmit")
ENTRYPOINT_ENV = "CLAUDE_CODE_ENTRYPOINT"
"""How Claude Code was started, in its hooks' environment: "cli" in a terminal, "sdk-cli" for `-p`."""
PROJECT_ENV = {"claude": "CLAUDE_PROJECT_DIR", "codex": "CODEX_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR"}
"""The variable in which each agent names the project it works in (else the working directory)."""
KEEPALIVE = b"WAIT"
"""The console's keepalive line (core.outside.endpoint.KEEPALIVE): still working on it, keep waiting."""
LAUNCHED_ENV = "BELAY_LAUNCHED_SESSION"
"""Set by the console in the environment of a Claude Code it launched (`belay claude`): that session's calls
are already decided through the Agent SDK's callbacks, so a hook command it runs (a project that also has
Belay's hooks installed) is answered "no opinion" instead of deciding every call twice."""
WAIT_S, MAX_WAIT_S = 30.0, 3000.0
WAIT_ENV, MAX_WAIT_ENV = "BELAY_HOOK_WAIT", "BELAY_HOOK_MAX_WAIT"
START_WAIT_S, START_WAIT_ENV = 60.0, "BELAY_HOOK_START_WAIT"
"""How long a call waits for a console that holds its workspace but serves no socket yet (it is starting):
`--start-wait`, else $BELAY_HOOK_START_WAIT, else this.  Polled every START_POLL_S."""
START_POLL_S = 0.1
LOCK_FILE = "console.lock"
"""The workspace's owner lock (core.store.lock.LOCK), an flock a console holds from the start of its opening."""
START_FAILED_FILE = "start-failed"
"""Why the console that last tried to open the workspace could not (core.console writes it, its endpoint's
start removes it)."""


class Silent(Exception):
    """The console stopped talking: no keepalive or answer within the silence limit (or the overall cap)."""


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


def starting_console(state_root: str, directory: str) -> str | None:
    """The state directory of a console that owns the workspace of `directory` (or of its nearest ancestor that
    has one) and serves no socket yet: one still starting.  Seen in /proc/locks, never by taking the lock (a
    probe holding it for a moment would make the starting console believe another one has the workspace)."""
    held = flocked_inodes()
    if not held:
        return None
    path = os.path.realpath(directory)
    while True:
        state = workspace_state_dir(state_root, path)
        try:
            st = os.stat(os.path.join(state, LOCK_FILE))
        except OSError:
            pass
        else:
            if (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in held:
                return state
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def flocked_inodes() -> set[tuple[int, int, int]]:
    """(device major, minor, inode) of every file some process holds an flock on (empty where /proc says not)."""
    try:
        with open("/proc/locks", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return set()
    held = set()
    for line in lines:
        words = line.split()
        if len(words) >= 6 and words[1] == "FLOCK" and words[5].count(":") == 2:  # "->": waiting, not holding
            major, minor, inode = words[5].split(":")
            try:
                held.add((int(major, 16), int(minor, 16), int(inode)))
            except ValueError:
                continue
    return held


def await_start(state_root: str, directory: str, state: str, start_wait_s: float) -> str:
    """The socket of the console starting in `state`, once it serves one; raises Silent saying why when it
    stops without serving (its reason, when it left one) or is still starting after `start_wait_s`."""
    deadline = monotonic() + start_wait_s
    lock = os.path.join(state, LOCK_FILE)
    while True:
        path = find_socket(state_root, directory)
        if path is not None:
            return path
        try:
            st = os.stat(lock)
            starting = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in flocked_inodes()
        except OSError:
            starting = False
        if not starting:
            raise Silent(f"the Belay console for {directory} stopped before it could answer: "
                         f"{start_failure(state)}; the call is refused.")
        if monotonic() > deadline:
            raise Silent(f"the Belay console for {directory} is still starting after {start_wait_s:g} s (the "
                         f"hook command's --start-wait, or ${START_WAIT_ENV}); the call is refused. Retry once "
                         f"its window shows.")
        sleep(START_POLL_S)


def start_failure(state: str) -> str:
    """Why the console that last tried to start in `state` could not, as it wrote it."""
    try:
        with open(os.path.join(state, START_FAILED_FILE), encoding="utf-8") as f:
            said = f.read().strip()
    except OSError:
        said = ""
    return said or "it did not say why (see its window or terminal)"


def last_start_failure(state_root: str, directory: str) -> str:
    """Why the last console to start for `directory` (or its nearest ancestor that left a word) could not, if
    it could not and none has served since: "" otherwise."""
    path = os.path.realpath(directory)
    while True:
        try:
            with open(os.path.join(workspace_state_dir(state_root, path), START_FAILED_FILE), encoding="utf-8") as f:
                return f.read().strip()
        except OSError:
            pass
        parent = os.path.dirname(path)
        if parent == path:
            return ""
        path = parent


def hub_socket(state_root: str) -> str | None:
    """The socket of the console for every workspace (core.hub), when one runs: a project without a console
    of its own asks it, saying where it works."""
    try:
        with open(os.path.join(state_root, HUB_DIR, SOCKET_FILE), encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def answers(path: str | os.PathLike[str], timeout: float = 2.0) -> bool:
    """Whether something accepts connections on the Unix socket at `path` (a stale file of a process that died
    does not)."""
    probe = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        probe.settimeout(timeout)
        probe.connect(os.fspath(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def find_endpoint(state_root: str, directory: str) -> dict[str, str] | None:
    """`find_socket` as a mapping ({"socket": path}), for callers that also read other endpoint fields."""
    path = find_socket(state_root, directory)
    return {"socket": path} if path is not None else None


def ask_console(socket_path: str, token: str, event: bytes, wait_s: float = WAIT_S,
                max_wait_s: float = MAX_WAIT_S, agent: str = "claude", where: str = "") -> tuple[int, bytes, bytes]:
    """Send the event and read (exit code, stdout, stderr), skipping keepalives.

    Raises Silent when the console goes quiet for `wait_s` or the whole wait passes `max_wait_s`, and
    OSError or ValueError when it cannot be reached or its answer is not a hook answer."""
    deadline = monotonic() + max_wait_s
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(min(wait_s, max_wait_s))
        launched = "".join(c for c in os.environ.get(LAUNCHED_ENV, "") if c in "0123456789abcdef")[:64]
        header = b'{"token": "%s", "kind": "hook", "agent": "%s", "length": %d, "launched": "%s", "where": %s}\n' % (
            token.encode("ascii"), agent.encode("ascii"), len(event), launched.encode("ascii"),
            json_string(where).encode("ascii"))
        try:
            sock.connect(socket_path)
            sock.sendall(header + event)
        except TimeoutError:
            raise Silent(silence(wait_s)) from None
        return read_answer(sock, wait_s, deadline, max_wait_s)
    finally:
        sock.close()


def read_answer(sock: _socket.socket, wait_s: float, deadline: float, max_wait_s: float) -> tuple[int, bytes, bytes]:
    """`HOOK <exit> <stdout bytes> <stderr bytes>` and the two texts, after any number of keepalive lines."""
    buffer = bytearray()  # grown in place: an answer may carry a whole file (updatedInput)
    while True:
        head, newline, rest = buffer.partition(b"\n")
        if newline and head == KEEPALIVE:
            buffer = bytearray(rest)
        elif newline or len(buffer) > 200:
            break
        else:
            buffer += receive(sock, wait_s, deadline, max_wait_s)
    words = head.split()
    if not newline or len(words) != 4 or words[0] != b"HOOK":
        raise ValueError("the console's answer is not a hook answer")
    code, out_len, err_len = (int(w) for w in words[1:])
    while len(rest) < out_len + err_len:
        rest += receive(sock, wait_s, deadline, max_wait_s)
    return code, bytes(rest[:out_len]), bytes(rest[out_len:out_len + err_len])


def receive(sock: _socket.socket, wait_s: float, deadline: float, max_wait_s: float) -> bytes:
    """The next bytes from the console; its silence is timed afresh for each."""
    left = deadline - monotonic()
    if left <= 0:
        raise Silent(too_long(max_wait_s))
    sock.settimeout(min(wait_s, left))
    try:
        chunk = sock.recv(65536)
    except TimeoutError:
        raise Silent(too_long(max_wait_s) if left <= wait_s else silence(wait_s)) from None
    if not chunk:
        raise ValueError("the console closed the connection without answering")
    return chunk


def silence(wait_s: float) -> str:
    return (f"Belay's console did not answer within {wait_s:g} s; the call was blocked. Is the Belay window hung? "
            f"(The limit is the hook command's --wait, or ${WAIT_ENV}.)")


def too_long(max_wait_s: float) -> str:
    return (f"Belay's console kept this call waiting for more than {max_wait_s:g} s, the longest a hook may wait "
            f"(--max-wait, or ${MAX_WAIT_ENV}); the call was blocked.")


def event_name(event: bytes) -> bytes | None:
    """The event's `hook_event_name`, read without a JSON parser: the first such key, which Claude Code writes
    before the tool's input (a quote inside a JSON string is escaped, so text in the input cannot match)."""
    at = event.find(b'"hook_event_name"')
    if at < 0:
        return None
    rest = event[at + len(b'"hook_event_name"'):].lstrip()
    if not rest.startswith(b":"):
        return None
    rest = rest[1:].lstrip()
    end = rest.find(b'"', 1)
    return rest[1:end] if rest.startswith(b'"') and end > 0 else None


def gates(event: bytes, agent: str = "claude") -> bool:
    """Whether the event can still stop something; an event whose name cannot be read is assumed to."""
    name = event_name(event)
    return name is None or name in BLOCKING.get(agent, ())


def fail(event: bytes, message: str, agent: str = "claude") -> int:
    """Refused, saying why, for events that can still be stopped; quiet for the rest (nothing left to stop)."""
    if not gates(event, agent):
        return QUIET
    return refuse(event_name(event), f"Belay: {message}", agent)


def refuse(name: bytes | None, reason: str, agent: str = "claude") -> int:
    """The event's structured refusal on stdout (exit 0), or exit 2 with the reason on stderr where there is
    none (the name is unknown) or stdout cannot take it: either way the agent does not go ahead."""
    template = REFUSALS.get(agent, {}).get(name) if name is not None else None
    if template is not None and sys.stdout is not None:  # None: started with no stdout at all
        try:
            sys.stdout.buffer.write(template % json_string(reason).encode("ascii"))
            sys.stdout.buffer.flush()
            return QUIET
        except (OSError, ValueError):  # a broken pipe, or a closed file
            pass
    sys.stderr.write(f"{reason}\n")
    return BLOCK


def person_asked_instead(event: bytes, agent: str) -> bool:
    """Whether, with no console running, the agent's own prompt can take the decision: Claude Code run by a
    person in a terminal (CLAUDE_CODE_ENTRYPOINT "cli") shows a PreToolUse "ask" to that person, in every
    permission mode, bypass included; run headless (`-p`: "sdk-cli") or by an SDK host, whose callback need not
    be a person, it is refused instead (tests/integration/test_claude_no_console.py checks both with the CLI)."""
    return agent == "claude" and os.environ.get(ENTRYPOINT_ENV) == "cli" and event_name(event) in ASKS_INSTEAD


def ask_instead(event: bytes, reason: str) -> int:
    """Claude Code's own prompt takes the call: "ask" for a PreToolUse, and no opinion on the events around it
    (its PermissionRequest is the prompt itself; a prompt the person typed is theirs to send)."""
    if event_name(event) == b"PreToolUse" and sys.stdout is not None:
        try:
            sys.stdout.buffer.write(ASK % json_string(f"Belay: {reason}").encode("ascii"))
            sys.stdout.buffer.flush()
        except (OSError, ValueError):
            return refuse(b"PreToolUse", f"Belay: {reason}")
    return QUIET


def json_string(text: str) -> str:
    """`text` as a JSON string literal in ASCII, without loading a JSON encoder (see the module's docstring)."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code > 0xFFFF:  # a surrogate pair, as JSON spells characters beyond the first plane
            code -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)))
        else:
            out.append("\\u%04x" % code)
    out.append('"')
    return "".join(out)


def seconds(options: dict[str, str], flag: str, env: str, default: float) -> float:
    """A limit from the command line, else the environment, else the default; nonsense is an error."""
    text = options.get(flag) or os.environ.get(env, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise ValueError(f"{flag} (or ${env}) must be a positive number of seconds, not {text!r}")
    return value


def no_console(event: bytes, state_root: str, where: str, agent: str) -> int:
    """No console serves `where`: refused, saying how to start one (and why the last one stopped, if it left
    word); Claude Code in a person's terminal asks that person instead."""
    failed = last_start_failure(state_root, where)
    if failed:
        return fail(event, f"no Belay console is running for {where}, so this call is refused: the last one to "
                           f"start there stopped before it could answer ({failed}). Fix that, then start it "
                           f"again with `belay watch --workspace {where}`.", agent)
    if person_asked_instead(event, agent):
        return ask_instead(event, f"Belay is not running for {where}, so Claude Code asks you instead. Start "
                                  "Belay (`belay`) to supervise this project again.")
    return fail(event, f"no Belay console is running for {where}, so this call is refused. Start one with "
                       f"`belay watch --workspace {where}`, or `belay watch` to supervise every project from one "
                       f"window (or remove Belay's hooks: `belay hooks uninstall"
                       f"{'' if agent == 'claude' else ' --agent ' + agent}`).", agent)


def answer(argv: list[str], event: bytes) -> int:
    """Ask the console about `event`, print its answer and return the exit code Claude Code acts on."""
    options = dict(zip(argv[0::2], argv[1::2]))
    state_root, config_dir = options.get("--state-root", ""), options.get("--config-dir", "")
    agent = options.get("--agent", "claude")
    if agent not in AGENTS:
        return fail(event, f"--agent must be one of {', '.join(AGENTS)}, not {agent!r}; the call is refused.")
    try:
        wait_s = seconds(options, "--wait", WAIT_ENV, WAIT_S)
        max_wait_s = seconds(options, "--max-wait", MAX_WAIT_ENV, MAX_WAIT_S)
        start_wait_s = seconds(options, "--start-wait", START_WAIT_ENV, START_WAIT_S)
    except ValueError as e:
        return fail(event, f"{e}; the call is refused until that is fixed.", agent)
    where = os.environ.get(PROJECT_ENV[agent]) or os.getcwd()
    socket_path, hub = find_socket(state_root, where), ""
    starting = starting_console(state_root, where) if socket_path is None else None
    if starting is not None:  # its console is opening: answered as soon as it serves
        try:
            socket_path = await_start(state_root, where, starting, start_wait_s)
        except Silent as e:
            return fail(event, str(e), agent)
    if socket_path is None:
        socket_path, hub = hub_socket(state_root), where  # the console for every workspace, told where
    if socket_path is None:
        return no_console(event, state_root, where, agent)
    try:
        with open(os.path.join(config_dir, "token"), encoding="ascii") as f:
            token = f.read().strip()
        code, out, err = ask_console(socket_path, token, event, wait_s, max_wait_s, agent, hub)
    except Silent as e:
        return fail(event, str(e), agent)
    except (OSError, ValueError) as e:
        return fail(event, f"the Belay console for {where} cannot be reached ({e}); the call is refused. "
                           f"Restart it with `belay watch --workspace {where}`.", agent)
    if code not in (QUIET, BLOCK):  # the agent would run the call on any other code
        return fail(event, f"the console answered with exit code {code}, which would not stop the call; "
                           f"it was blocked instead.", agent)
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return code


def main(argv: list[str]) -> int:
    event = b""
    try:
        event = sys.stdin.buffer.read()
        return answer(argv, event)
    except Exception as e:  # noqa: BLE001 - a bug here must not exit 1, which Claude Code treats as "go ahead"
        agent = dict(zip(argv[0::2], argv[1::2])).get("--agent", "claude")
        return fail(event, f"Belay's hook client failed ({type(e).__name__}: {e}); the call was blocked.", agent)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
