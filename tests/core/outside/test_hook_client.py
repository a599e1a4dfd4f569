"""The hook command Claude Code runs, run as Claude Code runs it: which console it asks, and failing closed.

A console that accepts the connection and then goes silent is played by a real socket in a thread
(`_fake_console`): the client must give up on it after its silence limit, yet keep waiting as long as
keepalives come (a person deciding).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core import Console, install_token
from core.outside import hook_client, install
from core.policy.settings import config_dir
from core.settings import state_root, workspace_state_dir
from tests.conftest import run, wait_until

BLOCKING = ("PreToolUse", "PermissionRequest", "UserPromptSubmit")
AFTER_THE_FACT = ("PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd", "SubagentStop", "Stop",
                  "Notification")


def _hook(name: str, cwd: Path, project: Path | None = None, session: str = "sess-1234abcd",
          env_extra: dict[str, str] | None = None, command: str | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command (or `command`) with one event on stdin, from `cwd`; `project` is Claude Code's
    $CLAUDE_PROJECT_DIR, `env_extra` more of its environment."""
    event: dict[str, Any] = {"session_id": session, "hook_event_name": name, "cwd": str(cwd),
                             "tool_name": "Write", "tool_use_id": "toolu_1",
                             "tool_input": {"file_path": str(cwd / "x.txt"), "content": "x"}}
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_PROJECT_DIR", "BELAY_HOOK_WAIT", "BELAY_HOOK_MAX_WAIT", "CLAUDE_CODE_ENTRYPOINT")}
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    env.update(env_extra or {})
    return subprocess.run(command or install.hook_command(state_root(), config_dir()), shell=True,
                          input=json.dumps(event), capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


async def _hook_async(name: str, cwd: Path, project: Path | None = None, session: str = "sess-1234abcd"
                      ) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_hook, name, cwd, project, session)


def _refusal(done: subprocess.CompletedProcess[str], name: str) -> str:
    """The reason in the client's refusal of a `name` event: exit 0 and the event's own structured answer on
    stdout, so Claude Code shows the model Belay's reason as a decision rather than a failed hook."""
    assert (done.returncode, done.stderr) == (0, ""), (name, done.returncode, done.stderr)
    answer = json.loads(done.stdout)
    if name == "PreToolUse":
        specific = answer["hookSpecificOutput"]
        assert (specific["hookEventName"], specific["permissionDecision"]) == (name, "deny"), answer
        return str(specific["permissionDecisionReason"])
    if name == "PermissionRequest":
        specific = answer["hookSpecificOutput"]
        assert (specific["hookEventName"], specific["decision"]["behavior"]) == (name, "deny"), answer
        return str(specific["decision"]["message"])
    assert answer["decision"] == "block", answer
    return str(answer["reason"])


def _sessions(console: Console) -> list[str]:
    return sorted(a.name for a in console.timeline.agents.values())


def test_with_no_console_calls_that_can_still_be_stopped_are_blocked_and_the_rest_pass_quietly(tmp_path: Path) -> None:
    for name in BLOCKING:
        reason = _refusal(_hook(name, tmp_path), name)
        assert reason.startswith(f"Belay: no Belay console is running for {tmp_path}")
        assert f"belay watch --workspace {tmp_path}" in reason
    for name in AFTER_THE_FACT:  # the tool already ran: an error exit would only be noise
        done = _hook(name, tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), name


def test_with_no_console_claude_code_in_a_terminal_asks_its_person_and_headless_it_is_refused(tmp_path: Path) -> None:
    """Belay not running: Claude Code in a person's terminal shows its own prompt (PreToolUse "ask", saying
    why; no opinion on the prompt itself or the person's own prompt); run with -p it is refused."""
    terminal = {"CLAUDE_CODE_ENTRYPOINT": "cli"}
    asked = json.loads(_hook("PreToolUse", tmp_path, env_extra=terminal).stdout)["hookSpecificOutput"]
    assert asked["permissionDecision"] == "ask"
    assert asked["permissionDecisionReason"].startswith(f"Belay: Belay is not running for {tmp_path}, so Claude "
                                                        "Code asks you instead")
    for name in ("PermissionRequest", "UserPromptSubmit"):
        done = _hook(name, tmp_path, env_extra=terminal)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), name
    headless = _refusal(_hook("PreToolUse", tmp_path, env_extra={"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}), "PreToolUse")
    assert headless.startswith(f"Belay: no Belay console is running for {tmp_path}")


def test_a_stale_socket_of_a_console_that_died_fails_closed_saying_to_restart_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())  # the install's token is there: only the console is not
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # bound, never listening: connecting is refused
    dead.bind(str(tmp_path / "dead.sock"))
    try:
        for address, why in ((tmp_path / "dead.sock", "Connection refused"), (tmp_path / "gone.sock", "No such file")):
            (state / "endpoint.sock").write_text(str(address))
            pre, post = _hook("PreToolUse", workspace), _hook("PostToolUse", workspace)
            reason = _refusal(pre, "PreToolUse")
            assert (post.returncode, post.stdout, post.stderr) == (0, "", "")
            assert f"the Belay console for {workspace} cannot be reached" in reason and why in reason
            assert f"Restart it with `belay watch --workspace {workspace}`" in reason
    finally:
        dead.close()


def test_an_answer_that_is_not_the_consoles_fails_closed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())

    async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        header = json.loads(await reader.readline())
        await reader.readexactly(header["length"])  # all of it: closing on unread bytes would reset the client
        writer.write(b'{"ok": true}\n')  # some other server's idea of an answer
        await writer.drain()
        writer.close()

    async def scenario() -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
        server = await asyncio.start_unix_server(impostor, path=str(tmp_path / "other.sock"))
        try:
            (state / "endpoint.sock").write_text(str(tmp_path / "other.sock"))
            return await _hook_async("PermissionRequest", workspace), await _hook_async("SubagentStop", workspace)
        finally:
            server.close()
            await server.wait_closed()

    blocked, warned = run(scenario())
    assert "cannot be reached (the console's answer is not a hook answer)" in _refusal(blocked, "PermissionRequest")
    assert (warned.returncode, warned.stdout) == (0, "")


def test_the_console_of_the_nearest_workspace_at_or_above_the_project_answers(workspace: Path, tmp_path: Path) -> None:
    inner = workspace / "src"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def scenario() -> None:
        async with Console(workspace) as outer_console, Console(inner) as inner_console:
            answers = [await _hook_async("SessionStart", workspace / "src" / "shop", session="inner-from-deep"),
                       await _hook_async("SessionStart", inner, session="inner-itself"),
                       await _hook_async("SessionStart", workspace / "docs", session="outer-from-docs"),
                       await _hook_async("SessionStart", workspace, session="outer-itself"),
                       # Claude Code's project directory, not where the hook happens to run, says which
                       await _hook_async("SessionStart", elsewhere, project=workspace / "docs", session="outer-by-env")]
            assert [a.returncode for a in answers] == [0] * 5, [a.stderr for a in answers]
            assert _sessions(inner_console) == ["claude-code inner-fr", "claude-code inner-it"]
            assert _sessions(outer_console) == ["claude-code outer-by", "claude-code outer-fr", "claude-code outer-it"]

    run(scenario())


Behaviour = Callable[[socket.socket, threading.Event], None]
"""What the fake console does once it has read the hook's request: its connection, and an event set at teardown."""


def _workspace_with_token(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())
    return workspace, state


def _read_request(conn: socket.socket) -> None:
    """The header line and all the event's bytes (closing on unread bytes would reset the client)."""
    data = b""
    while b"\n" not in data:
        data += conn.recv(65536)
    head, _, rest = data.partition(b"\n")
    length = json.loads(head)["length"]
    while len(rest) < length:
        rest += conn.recv(65536)


@contextmanager
def _fake_console(state: Path, behave: Behaviour) -> Iterator[None]:
    """A real Unix socket, named in the workspace's state as the console's, that reads each request and then
    does what `behave` says, one thread per connection."""
    stop = threading.Event()
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a socket path must fit in 108 bytes
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(f"{short}/c.sock")
        listener.listen()
        (state / "endpoint.sock").write_text(f"{short}/c.sock")
        threads: list[threading.Thread] = []

        def serve(conn: socket.socket) -> None:
            with conn:
                _read_request(conn)
                behave(conn, stop)

        def accept() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return  # closed at teardown
                thread = threading.Thread(target=serve, args=(conn,))
                threads.append(thread)
                thread.start()

        acceptor = threading.Thread(target=accept)
        acceptor.start()
        try:
            yield
        finally:
            stop.set()
            listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            acceptor.join(5)
            for thread in threads:
                thread.join(5)


def _hung(conn: socket.socket, stop: threading.Event) -> None:
    stop.wait()  # accepted, read, and never a word: a window whose loop is blocked


def _keepalives_then(seconds: float, every: float, frame: bytes) -> Behaviour:
    def behave(conn: socket.socket, stop: threading.Event) -> None:
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline and not stop.wait(every):
                conn.sendall(b"WAIT\n")
            if not stop.is_set():
                conn.sendall(frame)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up and hung up, as it should past its limit
    return behave


def _frame(code: int, out: dict[str, Any] | None = None, err: str = "") -> bytes:
    stdout, stderr = (json.dumps(out).encode() if out else b""), err.encode()
    return f"HOOK {code} {len(stdout)} {len(stderr)}\n".encode() + stdout + stderr


def _timed(name: str, workspace: Path, **kwargs: Any) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = _hook(name, workspace, **kwargs)
    return done, time.monotonic() - started


def test_a_console_that_accepts_and_never_answers_is_given_up_on_after_the_silence_limit(tmp_path: Path) -> None:
    workspace, state = _workspace_with_token(tmp_path)
    with _fake_console(state, _hung):
        pre, pre_took = _timed("PreToolUse", workspace, env_extra={"BELAY_HOOK_WAIT": "1.5"})
        post, post_took = _timed("PostToolUse", workspace, env_extra={"BELAY_HOOK_WAIT": "1.5"})
        flag = install.hook_command(state_root(), config_dir(), wait_s=1)  # the command line beats the environment
        by_flag, flag_took = _timed("PermissionRequest", workspace, env_extra={"BELAY_HOOK_WAIT": "50"}, command=flag)
    assert ("Belay: Belay's console did not answer within 1.5 s; the call was blocked. Is the Belay window hung?"
            in _refusal(pre, "PreToolUse"))
    # Given up on by the silence limit, as each says, and not before it; not Claude Code's hour (each hook runs
    # under _hook's 60 s deadline, which a wait for the console would reach: it never answers).
    assert 1.5 <= pre_took, pre_took
    assert (post.returncode, post.stdout, post.stderr) == (0, "", "") and 1.5 <= post_took  # nothing to stop
    assert "did not answer within 1 s" in _refusal(by_flag, "PermissionRequest") and 1 <= flag_took


def test_a_console_that_keeps_sending_keepalives_past_the_silence_limit_is_waited_for(tmp_path: Path) -> None:
    workspace, state = _workspace_with_token(tmp_path)
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                    "permissionDecisionReason": "approved by a person",
                                    "updatedInput": {"content": "as the person wrote it\n" * 200_000}}}
    with _fake_console(state, _keepalives_then(3.5, every=0.3, frame=_frame(0, allow))):
        done, took = _timed("PreToolUse", workspace, env_extra={"BELAY_HOOK_WAIT": "1"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == allow and took >= 3.5  # over three silence limits, and still answered


def test_keepalives_do_not_stretch_a_call_past_the_overall_cap(tmp_path: Path) -> None:
    workspace, state = _workspace_with_token(tmp_path)
    with _fake_console(state, _keepalives_then(60, every=0.2, frame=_frame(0))):
        done, took = _timed("PreToolUse", workspace, env_extra={"BELAY_HOOK_WAIT": "1", "BELAY_HOOK_MAX_WAIT": "2"})
    reason = _refusal(done, "PreToolUse")
    assert "kept this call waiting for more than 2 s" in reason and "the call was blocked" in reason
    assert 2 <= took, took  # and not the 60 s of keepalives: _hook's deadline is 60 s


def test_only_exit_codes_that_claude_code_honours_leave_the_client(tmp_path: Path) -> None:
    """Exit 1 from the console, or a limit that is not a number, would let the call run: the client blocks."""
    workspace, state = _workspace_with_token(tmp_path)
    with _fake_console(state, _keepalives_then(0, every=0.1, frame=_frame(1, err="odd"))):
        odd = _hook("PreToolUse", workspace)
        after = _hook("PostToolUse", workspace)
        nonsense = _hook("PreToolUse", workspace, env_extra={"BELAY_HOOK_WAIT": "soon"})
    assert "answered with exit code 1, which would not stop the call" in _refusal(odd, "PreToolUse")
    assert (after.returncode, after.stderr) == (0, "")
    assert ("--wait (or $BELAY_HOOK_WAIT) must be a positive number of seconds, not 'soon'"
            in _refusal(nonsense, "PreToolUse"))


def test_where_no_structured_answer_can_be_given_exit_2_still_blocks(tmp_path: Path) -> None:
    """A stdout that cannot be written, or an event whose name cannot be read: exit 2, the reason on stderr."""
    closed = _hook("PreToolUse", tmp_path, command=install.hook_command(state_root(), config_dir()) + " >&-")
    assert closed.returncode == 2 and closed.stderr.startswith(f"Belay: no Belay console is running for {tmp_path}")
    nameless = subprocess.run(install.hook_command(state_root(), config_dir()), shell=True, input='{"tool_name": 1}',
                              capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (nameless.returncode, nameless.stdout) == (2, "") and "no Belay console is running" in nameless.stderr


def test_a_reason_of_any_text_is_valid_json_in_the_refusal() -> None:
    tricky = 'quote " backslash \\ newline \n tab \t nul \0 é 中 🧗 lone \udcff end'
    assert json.loads(hook_client.json_string(tricky)) == tricky
    assert hook_client.json_string(tricky).isascii()
    for name, template in hook_client.REFUSALS["claude"].items():
        printed = (template % hook_client.json_string(tricky).encode("ascii")).decode("ascii")
        assert _refusal(subprocess.CompletedProcess([], 0, printed, ""), name.decode()) == tricky


def test_a_person_taking_longer_than_the_silence_limit_to_approve_is_waited_for(workspace: Path) -> None:
    async def scenario() -> tuple[subprocess.CompletedProcess[str], float]:
        async with Console(workspace) as console:
            assert console.endpoint is not None
            console.endpoint.keepalive_s = 0.3  # the real console's keepalives, under this test's 1 s limit
            console.register_approver("test")
            started = time.monotonic()
            hook = asyncio.ensure_future(asyncio.to_thread(_hook, "PreToolUse", workspace,
                                                           env_extra={"BELAY_HOOK_WAIT": "1"}))
            await wait_until(console.pending_approvals, timeout=30, what="the write to ask the person")
            await asyncio.sleep(3)  # the person reads the diff for three silence limits
            console.approve(console.pending_approvals()[0].call_id)
            return await hook, time.monotonic() - started

    done, took = run(scenario())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow" and took >= 3


def test_the_client_looks_for_a_starting_console_where_the_console_leaves_its_traces(tmp_path: Path) -> None:
    """The client imports nothing of Belay's: the lock's and the start failure's names are copies, kept equal;
    and a lock held on a workspace with no socket yet reads as a console starting, a free one as none."""
    from core.outside import endpoint
    from core.store.lock import LOCK, OwnerLock

    assert hook_client.LOCK_FILE == LOCK and hook_client.START_FAILED_FILE == endpoint.START_FAILED_FILE
    workspace, root = tmp_path / "ws", str(state_root())
    (workspace / "sub").mkdir(parents=True)
    state = Path(workspace_state_dir(workspace))
    state.mkdir(parents=True)
    assert hook_client.starting_console(root, str(workspace / "sub")) is None
    lock = OwnerLock.try_acquire(state / LOCK, "a test")
    assert lock is not None
    try:
        assert hook_client.starting_console(root, str(workspace / "sub")) == str(state)
    finally:
        lock.release()
    assert hook_client.starting_console(root, str(workspace / "sub")) is None
    endpoint.start_failed(state, OSError("no space left on device"))
    assert "no space left on device" in hook_client.last_start_failure(root, str(workspace / "sub"))
