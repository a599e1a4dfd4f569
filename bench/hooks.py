"""Claude Code's hooks through Belay: what supervision adds to a tool call, against the bare transport.

Figures:
- PreToolUse round trip: an auto-allowed PreToolUse (a Read the policy allows) sent over the console's
  Unix socket and answered (agent lookup, journal, policy, events), against the same request sent to a
  no-op endpoint on the same transport (an asyncio Unix server in the console's process, on its loop, that
  answers at once); both are sent by a client process of its own, as the hook command is; the two sides
  alternate, ROUNDS rounds of ROUND_TRIPS // ROUNDS each, and each figure is the median of all its round
  trips (with the spread of the rounds' medians: the machine is shared);
- hook command: the whole command hook as Claude Code runs it (`python -I -S hook_client.py`, which finds the
  console, sends the event and prints the answer), against starting the same Python with `-c pass`;
- hook per tool call: what supervising one tool call costs the agent, PreToolUse and PostToolUse of an
  auto-allowed Read together, against a no-op command hook (`true`) costing the same two events.  Timed as
  Claude Code pays it, from a client process of its own (CALLER) that stands in for the CLI: a command hook
  is `/bin/sh -c <command>` started with the event on stdin and read to its end (as Claude Code spawns it),
  an http hook a POST on one kept-alive connection (as Claude Code keeps it: seen with the real CLI,
  tests/integration/CLAUDE_CODE_HOOKS.md section 8).  Three setups alternate in rounds: the no-op command
  hook, Belay's http hooks (what `belay hooks install --project` writes for Claude Code) and Belay's
  command hooks (the hook client: what Codex and Gemini CLI, and a user-wide install, still run);
- hung console: how long the hook command waits on a console that accepts the event and never answers (a
  window whose loop is blocked), with a short silence limit (`--wait`), before it blocks the call.  Not a
  ratio: the figure is the wait itself, to be read against the limit (and against Claude Code's hour).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CALLS, CALL_ROUNDS = 60, 6
"""Tool calls per setup in the per-call figure, in that many alternating rounds."""
ROUND_TRIPS = 600
PAUSE_S = 0.01
"""Between two requests.  Claude Code runs a hook command per call and each takes ~17 ms to start (the
hook_command_start figure), so hooks never come closer than that; 10 ms also lets the journal commit the
last call's group (core.store.group_commit.DELAY_S, 5 ms) before the next, as it would between real calls."""
ROUNDS = 10
COMMANDS = 30
SILENCE_LIMIT_S = 2.0


CLIENT = """
import json, socket, sys, time
path, request, count, pause = sys.argv[1], sys.argv[2].encode() + b"\\n", int(sys.argv[3]), float(sys.argv[4])
times = []
for _ in range(count):
    time.sleep(pause)
    started = time.perf_counter()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    times.append((time.perf_counter() - started) * 1e6)
    assert json.loads(data).get("ok"), data
print(json.dumps(times))
"""
"""A client of its own process, as the hook command is: one connection per request, answer read to the end,
PAUSE_S apart."""


CALLER = """
import http.client, json, subprocess, sys, time
setup, target, token, events, count, pause = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), \\
    int(sys.argv[5]), float(sys.argv[6])
connection = http.client.HTTPConnection("127.0.0.1", int(target)) if setup == "http" else None
headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
times = []
for n in range(count):
    use_id = f"toolu_{setup}_{n}_{time.time_ns()}"
    pre, post = (json.dumps({**e, "tool_use_id": use_id}) for e in events)
    time.sleep(pause)
    started = time.perf_counter()
    answers = []
    for event in (pre, post):
        if connection is not None:
            connection.request("POST", "/hook/claude", event, headers)
            answer = connection.getresponse()
            body = answer.read()
            assert answer.status == 200, (answer.status, body)
        else:
            done = subprocess.run(["/bin/sh", "-c", target], input=event.encode(), capture_output=True)
            assert done.returncode == 0, done
            body = done.stdout
        answers.append(body)
    times.append((time.perf_counter() - started) * 1e3)
    assert setup == "noop" or b'"permissionDecision": "allow"' in answers[0], answers  # supervised, and allowed
print(json.dumps(times))
"""
"""Stands in for Claude Code: per tool call, PreToolUse then PostToolUse through one hook setup; milliseconds each."""


def _per_call(setups: dict[str, tuple[str, str]], events: list[dict[str, object]]) -> dict[str, list[float]]:
    """Each setup's milliseconds per tool call, CALLS each in CALL_ROUNDS rounds that take turns."""
    times: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(CALL_ROUNDS):
        for name, (target, token) in setups.items():
            done = subprocess.run([sys.executable, "-I", "-S", "-c", CALLER, name, target, token, json.dumps(events),
                                   str(CALLS // CALL_ROUNDS), str(PAUSE_S)],
                                  capture_output=True, check=True, timeout=120)
            times[name] += json.loads(done.stdout)
    return times


async def measure_per_call(root: Path) -> dict[str, list[float]]:
    """A tool call's two hook events through a console: http hooks, command hooks, and a no-op command hook."""
    from core import Console
    from core.outside.endpoint import install_token
    from core.outside.http_door import door_token
    from core.outside.install import hook_command
    from core.policy.settings import config_dir
    from core.settings import state_root

    workspace = root / "per-call-ws"
    shutil.copytree(Path(__file__).resolve().parents[1] / "resources" / "demo" / "workspace", workspace)
    pre = {"session_id": "bench-per-call", "cwd": str(workspace), "hook_event_name": "PreToolUse",
           "tool_name": "Read", "transcript_path": "/dev/null",
           "tool_input": {"file_path": str(workspace / "README.md")}}
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"type": "text", "file": {
        "filePath": str(workspace / "README.md"), "content": "# shop\n", "numLines": 1, "startLine": 1,
        "totalLines": 1}}}
    async with Console(workspace) as console:
        assert console.endpoint is not None and console.endpoint.door is not None
        token = door_token(install_token(config_dir()), console.state_dir)
        command = f"cd {workspace} && " + hook_command(state_root(), config_dir())
        setups = {"noop": ("true", ""), "http": (str(console.endpoint.door.port), token), "command": (command, "")}
        return await asyncio.to_thread(_per_call, setups, [pre, post])


def _send(path: str, request: dict[str, object]) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return json.loads(data)


def _round_trips(path: str, request: dict[str, object], count: int, pause_s: float) -> list[float]:
    """Microseconds per request, sent one after another, `pause_s` apart, by a client process of its own
    (CLIENT).  A client thread in this process would share the console's GIL, and wait for it after every
    answer while the loop finishes its turn: the hook command never does."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c", CLIENT, path, json.dumps(request), str(count),
                           str(pause_s)],
                          capture_output=True, check=True, timeout=120)
    return json.loads(done.stdout)


def _alternating(belay: tuple[str, dict[str, object]], noop: tuple[str, dict[str, object]],
                 pause_s: float = PAUSE_S) -> dict[str, float]:
    """Both sides, ROUNDS rounds each in turn: the median round trip of each, and the range of the rounds' medians."""
    sides: dict[str, list[float]] = {"belay": [], "noop": []}
    rounds: dict[str, list[float]] = {"belay": [], "noop": []}
    for _ in range(ROUNDS):
        for side, (path, request) in (("belay", belay), ("noop", noop)):
            times = _round_trips(path, request, ROUND_TRIPS // ROUNDS, pause_s)
            sides[side] += times
            rounds[side].append(statistics.median(times))
    figures = {}
    for side in sides:
        figures[f"{side}_us"] = statistics.median(sides[side])
        figures[f"{side}_lo"], figures[f"{side}_hi"] = min(rounds[side]), max(rounds[side])
    return figures


async def _noop_endpoint(path: str) -> asyncio.AbstractServer:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(b'{"ok": true, "exit": 0, "stdout": null}\n')
        await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(serve, path=path, limit=64 * 1024 * 1024)


async def _hung_console(path: str) -> asyncio.AbstractServer:
    """Accepts, reads whatever comes, never answers; lets go when the client hangs up."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            pass
        writer.close()

    return await asyncio.start_unix_server(serve, path=path)


def _gives_up_s(command: str, stdin: bytes, cwd: Path) -> float:
    """Seconds the hook command takes to block a PreToolUse on a hung console."""
    started = time.perf_counter()
    done = subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, cwd=cwd, check=False, timeout=60)
    took = time.perf_counter() - started
    blocked = b'"permissionDecision": "deny"' in done.stdout or b'"permissionDecision":"deny"' in done.stdout
    assert done.returncode == 0 and blocked and b"did not answer within" in done.stdout, done.stdout + done.stderr
    return took


def _command_ms(argv: list[str], stdin: bytes) -> float:
    times = []
    for _ in range(COMMANDS):
        started = time.perf_counter()
        subprocess.run(argv, input=stdin, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def measure(root: Path) -> dict[str, float]:
    from core import Console
    from core.outside.install import hook_command
    from core.policy.settings import config_dir
    from core.settings import state_root

    workspace = root / "ws"
    shutil.copytree(Path(__file__).resolve().parents[1] / "resources" / "demo" / "workspace", workspace)
    event = {"session_id": "bench-session", "cwd": str(workspace), "hook_event_name": "PreToolUse",
             "tool_name": "Read", "tool_use_id": "toolu_bench", "transcript_path": "/dev/null",
             "tool_input": {"file_path": str(workspace / "README.md")}}
    figures: dict[str, float] = {}
    noop_path = str(root / "noop.sock")
    server = await _noop_endpoint(noop_path)
    try:
        async with Console(workspace) as console:
            assert console.endpoint is not None
            token = (config_dir() / "token").read_text().strip()
            request = {"token": token, "kind": "hook", "event": event}
            answer = await asyncio.to_thread(_send, str(console.endpoint.path), request)
            decision = answer["stdout"]["hookSpecificOutput"]["permissionDecision"]  # type: ignore[index]
            assert decision == "allow", answer
            sides = (str(console.endpoint.path), request), (noop_path, {"kind": "hook", "event": event})
            figures |= await asyncio.to_thread(_alternating, *sides)
            flood = await asyncio.to_thread(_alternating, *sides, 0.0)
            figures["flood_belay_us"], figures["flood_noop_us"] = flood["belay_us"], flood["noop_us"]
            command = hook_command(state_root(), config_dir())
            figures["command_ms"] = await asyncio.to_thread(_command_ms, ["sh", "-c", command],
                                                            json.dumps(event).encode())
    finally:
        server.close()
        await server.wait_closed()
    figures["python_ms"] = await asyncio.to_thread(_command_ms, [sys.executable, "-I", "-S", "-c", "pass"], b"")
    figures["gives_up_s"] = await _hung(root, event)
    return figures


async def _hung(root: Path, event: dict[str, object]) -> float:
    """The hook command against a console that is there but hung, with a silence limit of SILENCE_LIMIT_S."""
    from core.outside.install import hook_command
    from core.policy.settings import config_dir
    from core.settings import state_root, workspace_state_dir

    workspace = root / "hung-ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    hung_path = str(root / "hung.sock")
    (state / "endpoint.sock").write_text(hung_path)  # where the hook client looks for the console's socket
    server = await _hung_console(hung_path)
    try:
        command = hook_command(state_root(), config_dir(), wait_s=SILENCE_LIMIT_S)
        return await asyncio.to_thread(_gives_up_s, command, json.dumps({**event, "cwd": str(workspace)}).encode(),
                                       workspace)
    finally:
        server.close()
        await server.wait_closed()


async def measure_gemini(root: Path) -> dict[str, float]:
    """Gemini CLI's BeforeTool (a read_file, which the policy allows) through the console, against the same
    request to a no-op endpoint on the same Unix socket transport: what supervising a Gemini call adds."""

    workspace = root / "gemini-ws"
    shutil.copytree(Path(__file__).resolve().parents[1] / "resources" / "demo" / "workspace", workspace)
    event = {"session_id": "bench-gemini-session", "transcript_path": "/dev/null", "cwd": str(workspace),
             "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00.000Z", "tool_name": "read_file",
             "tool_input": {"file_path": "README.md"}}
    return await _agent_round_trips(workspace, "gemini", event, lambda a: a["stdout"] == {"decision": "allow"})


async def measure_codex(root: Path) -> dict[str, float]:
    """Codex's PreToolUse for an `update_plan` (a tool of Codex's own, judged read-only and auto-allowed, as Read is
    for Claude Code) through the console, against the same request to a no-op endpoint on the same Unix socket
    transport: what supervising a Codex call adds.  (A Codex shell command also takes the change lock until its
    PostToolUse, so it cannot be repeated without one.)"""

    workspace = root / "codex-ws"
    shutil.copytree(Path(__file__).resolve().parents[1] / "resources" / "demo" / "workspace", workspace)
    event = {"session_id": "01a2160e-4a86-7cc3-85e1-d048b50bf374", "turn_id": "bench-turn", "transcript_path": None,
             "cwd": str(workspace), "hook_event_name": "PreToolUse", "model": "gpt-5.5",
             "permission_mode": "bypassPermissions", "tool_name": "update_plan", "tool_use_id": "call_bench",
             "tool_input": {"plan": [{"step": "measure", "status": "in_progress"}]}}
    # Codex's "go ahead" is no output at all
    return await _agent_round_trips(workspace, "codex", event, lambda a: a["exit"] == 0 and a["stdout"] is None)


async def _agent_round_trips(workspace: Path, agent: str, event: dict[str, object],
                             allowed: Callable[[dict[str, object]], bool]) -> dict[str, float]:
    """`agent`'s pre-tool event through a console on `workspace` (checked to be allowed), and the same request to
    a no-op endpoint on the same Unix socket transport: median microseconds each."""
    from core import Console
    from core.policy.settings import config_dir

    noop_path = str(workspace.parent / f"{agent}-noop.sock")
    server = await _noop_endpoint(noop_path)
    try:
        async with Console(workspace) as console:
            assert console.endpoint is not None
            request = {"token": (config_dir() / "token").read_text().strip(), "kind": "hook", "agent": agent,
                       "event": event}
            answer = await asyncio.to_thread(_send, str(console.endpoint.path), request)
            assert allowed(answer), answer
            return await asyncio.to_thread(_alternating, (str(console.endpoint.path), request),
                                           (noop_path, {"kind": "hook", "agent": agent, "event": event}))
    finally:
        server.close()
        await server.wait_closed()


AGENT = """
import subprocess, sys, time
with open(sys.argv[2], "rb") as event:
    subprocess.run(sys.argv[1], shell=True, stdin=event, stdout=subprocess.DEVNULL)
time.sleep(120)
"""
"""A stand-in for Claude Code: runs one hook command through a shell, then carries on with the call (sleeps)."""


async def measure_dead_session(root: Path) -> float:
    """Seconds from killing an agent whose allowed command holds the workspace to another session's command being
    let through: the console notices the dead process and ends its call as interrupted."""
    from core import AutoReviewer, Console, spawn
    from core.outside.install import hook_command
    from core.policy.settings import config_dir
    from core.settings import state_root

    workspace = root / "dead-ws"
    workspace.mkdir()
    command = hook_command(state_root(), config_dir())
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(workspace)}

    def event(session: str, touched: str) -> Path:
        path = root / f"{session}.json"
        path.write_text(json.dumps({"session_id": session, "cwd": str(workspace), "hook_event_name": "PreToolUse",
                                    "tool_name": "Bash", "tool_use_id": f"toolu_{session}",
                                    "tool_input": {"command": f"touch {touched}"}}))
        return path

    async with Console(workspace) as console:
        reviewer = AutoReviewer(console)
        reviewer.start()
        assert console.interceptor is not None
        agent = await asyncio.create_subprocess_exec(sys.executable, "-c", AGENT, command,
                                                     str(event("dead-agent", "a")), cwd=workspace, env=env)
        try:
            for _ in range(3000):  # until it is allowed: its call then holds the workspace
                if console.interceptor.waiting:
                    break
                await asyncio.sleep(0.01)
            live = event("live-agent", "b").read_bytes()
            other = spawn(asyncio.to_thread(subprocess.run, ["sh", "-c", command], input=live, capture_output=True,
                                            cwd=workspace, env=env, timeout=60), "the live agent's hook")
            await asyncio.sleep(0.5)
            assert not other.done(), "the second command did not wait for the first"
            agent.kill()
            killed = time.perf_counter()
            answer = await other
            took = time.perf_counter() - killed
            assert b'"allow"' in answer.stdout, answer
        finally:
            if agent.returncode is None:
                agent.kill()
            await agent.wait()
            await reviewer.stop()
    return took


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["BELAY_STATE_DIR"] = str(root / "state")
        os.environ["BELAY_CONFIG_DIR"] = str(root / "config")
        per_call = asyncio.run(measure_per_call(root))
        f = asyncio.run(measure(root))
        codex = asyncio.run(measure_codex(root))
        gemini = asyncio.run(measure_gemini(root))
        dead_s = asyncio.run(measure_dead_session(root))
    print(f"PreToolUse (auto-allowed Read): {f['belay_us']:.0f} us through Belay (rounds {f['belay_lo']:.0f}-"
          f"{f['belay_hi']:.0f}), {f['noop_us']:.0f} us to a no-op endpoint "
          f"(rounds {f['noop_lo']:.0f}-{f['noop_hi']:.0f}); "
          f"medians of {ROUND_TRIPS} each in {ROUNDS} alternating rounds. Codex: {codex['belay_us']:.0f} us "
          f"({codex['belay_lo']:.0f}-{codex['belay_hi']:.0f}) vs {codex['noop_us']:.0f} us; Gemini: "
          f"{gemini['belay_us']:.0f} us ({gemini['belay_lo']:.0f}-{gemini['belay_hi']:.0f}) "
          f"vs {gemini['noop_us']:.0f} us. "
          f"Hook command: {f['command_ms']:.1f} ms, bare `python -I -S -c pass` "
          f"{f['python_ms']:.1f} ms (medians of {COMMANDS})")
    noop, http, command = (statistics.median(per_call[k]) for k in ("noop", "http", "command"))
    print(f"Per tool call (PreToolUse + PostToolUse of an auto-allowed Read, medians of {CALLS}): no-op command "
          f"hook `true` {noop:.2f} ms, Belay's http hooks {http:.2f} ms, Belay's command hooks {command:.1f} ms")
    print(f"RESULT hook per tool call = {http / noop:.2f} x the time (no-op shell hook: `true` as a command hook for "
          f"both events, {noop:.2f} ms; Belay's http hooks {http:.2f} ms)")
    print(f"RESULT command hook per tool call = {command / noop:.2f} x the time (no-op shell hook, {noop:.2f} ms; "
          f"Belay's hook client for agents with command hooks only, {command:.1f} ms)")
    print(f"RESULT pretooluse_round_trip = {f['belay_us'] / f['noop_us']:.2f} x the time (a no-op endpoint on the "
          f"same Unix socket transport; {f['belay_us'] / 1000:.2f} ms per call, {PAUSE_S * 1000:g} ms apart)")
    print(f"RESULT pretooluse_back_to_back = {f['flood_belay_us'] / f['flood_noop_us']:.2f} x the time (the no-op "
          f"endpoint, both sent with no pause: {f['flood_belay_us']:.0f} vs {f['flood_noop_us']:.0f} us; each "
          f"answer then also waits on the journal and events of the calls before it)")
    print(f"RESULT hook_command_start = {f['command_ms'] / f['python_ms']:.2f} x the time (starting the same Python "
          f"with -I -S -c pass; {f['command_ms']:.1f} ms per hook)")
    print(f"RESULT hook_client_gives_up = {f['gives_up_s']:.2f} s (silence limit {SILENCE_LIMIT_S:g} s; a console "
          f"that accepts the event and never answers; the call is blocked with a JSON deny)")
    print(f"RESULT gemini_pretooluse_round_trip = {gemini['belay_us'] / gemini['noop_us']:.2f} x the time (a no-op "
          f"endpoint on the same socket; Gemini CLI's BeforeTool for an auto-allowed read_file, "
          f"{gemini['belay_us'] / 1000:.2f} ms per call)")
    print(f"RESULT codex_pretooluse_round_trip = {codex['belay_us'] / codex['noop_us']:.2f} x the time (a no-op "
          f"endpoint on the same socket; Codex's PreToolUse for an auto-allowed update_plan, "
          f"{codex['belay_us'] / 1000:.2f} ms per call)")

    print(f"RESULT dead_session_release = {dead_s:.2f} s (from killing an agent mid-command to another session's "
          f"command going ahead; without watching the agent's process the lock is held for HOLD_S = 600 s)")


if __name__ == "__main__":
    main()
