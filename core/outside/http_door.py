"""The console's second door, for Claude Code's http hooks: HTTP/1.1 on a loopback port, no process per call.

A command hook costs Claude Code a process (a Python start) per event; an http hook is a POST on a
connection Claude Code keeps open across calls.  Claude Code sends `POST <url>` with the hook's event as
the JSON body and the headers the settings name, and reads a 2xx answer's JSON body as it reads a command
hook's stdout; with `"onFailure": "block"` a refused connection, a non-2xx answer or its own timeout blocks
the call (tests/integration/CLAUDE_CODE_HOOKS.md, section 8).  So a dead console still refuses every call.

Where: 127.0.0.1 only, on a port fixed per workspace (`http-port` in its state directory, chosen once,
by `belay hooks install` or the first console that serves the workspace) because the URL is written into
Claude Code's settings and must stay right across restarts.

Who may use it, as on the Unix socket (core/outside/endpoint.py):
- the token: `Authorization: Bearer <door token>`, where the door token is derived from the install's
  secret and the workspace's state directory (`door_token`), so the copy written into a project's
  machine-local settings file opens only this door, for hook events only;
- the peer: the kernel's record of the connection (core/outside/tcp_peer.py) gives the connecting
  process's uid and pid; another user's process is refused, and so is one `refuse_peer(pid)` turns away
  (a command Belay runs, or one of its descendants, which could read the token and approve its own calls).
  Checked once per connection, in a worker thread, before any request on it is read.

Each request is `POST /hook/<agent>` whose body is the event; it becomes the same HookRequest the socket's
hook command sends (with `direct` set: the peer is the agent itself, not a hook command) and is answered by
the same handler, waiting as long as a person takes (Claude Code's own `timeout` on the hook, an hour, is
the only limit; there is no keepalive line to send on HTTP).  If the connection ends while a person
decides, the handler is cancelled, as on the socket.  A refusal of a stoppable event is a 200 whose body is
the event's own structured refusal with Belay's reason, so the model reads why; anything else Belay
cannot answer is a 4xx, which `onFailure: "block"` turns into a block.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from core.outside.hook_client import BLOCKING, REFUSALS, json_string
from core.outside.tcp_peer import PeerFinder, TcpPeer

log = logging.getLogger(__name__)

PORT_FILE = "http-port"
HOST = "127.0.0.1"
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
"""As the socket's: a Write's event carries the whole file."""
Serve = Callable[[dict[str, Any], asyncio.StreamReader], Awaitable[dict[str, Any]]]
"""(the request as the socket's hook command would send it, the connection's reader to watch for the client
going away) -> the endpoint's answer, `{"ok": ..., ...}` (core.outside.endpoint.Endpoint.serve_request)."""
RefusePeer = Callable[[int], bool]


def door_token(install_token: str, state_dir: Path) -> str:
    """The bearer token of one workspace's door: the install's secret, bound to that workspace."""
    return hmac.new(install_token.encode(), b"belay-http-hook\0" + str(state_dir).encode(), hashlib.sha256).hexdigest()


def door_port(state_dir: Path) -> int:
    """The workspace's door port: the one recorded in its state directory, else a free one, recorded now."""
    path = state_dir / PORT_FILE
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text(encoding="ascii").strip())
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port = int(probe.getsockname()[1])
    state_dir.mkdir(parents=True, exist_ok=True)
    tmp = state_dir / f".{PORT_FILE}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"{port}\n")
    try:
        os.link(tmp, path)  # first writer wins: a console and an install racing agree on the winner's port
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return int(path.read_text(encoding="ascii").strip())


def hook_url(port: int, agent: str = "claude") -> str:
    return f"http://{HOST}:{port}/hook/{agent}"


class HttpDoor:
    """HTTP/1.1 keep-alive server on 127.0.0.1:`port` handing hook events to `serve`."""

    def __init__(self, port: int, token: str, serve: Serve, *, refuse_peer: RefusePeer | None = None) -> None:
        self.port, self._serve_request, self._refuse_peer = port, serve, refuse_peer
        self._token = token.encode()
        self.uid = os.getuid()
        self._finder = PeerFinder()
        self._server: asyncio.AbstractServer | None = None
        self._clients: set[asyncio.Task[None]] = set()
        self.answered = 0
        """Requests answered so far (any status)."""

    async def start(self) -> bool:
        """Listen; False (logged) when the port is taken: the hooks naming it are then refused by Claude Code,
        or answered by whatever holds it, which the warning says."""
        try:
            self._server = await asyncio.start_server(self._serve, HOST, self.port, limit=MAX_HEAD_BYTES,
                                                      reuse_address=True)
        except OSError as e:
            log.warning("Belay's http hook door could not listen on %s:%d (%s): Claude Code's http hooks for this "
                        "workspace will not reach this console; if another program holds the port, run `belay hooks "
                        "install` again after removing %s", HOST, self.port, e, PORT_FILE)
            return False
        return True

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._clients):
            task.cancel()
        if self._clients:
            await asyncio.wait(self._clients)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._clients.add(task)
        try:
            peer = await asyncio.to_thread(self._peer, writer)
            refusal = self._refusal(peer)
            while await self._one(reader, writer, peer, refusal):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away, or sent what is not HTTP: nothing to tell it
        except asyncio.CancelledError:  # the door is closing
            task.uncancel()
        finally:
            self._clients.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    def _peer(self, writer: asyncio.StreamWriter) -> TcpPeer | None | OSError:
        try:
            return self._finder.find(writer.get_extra_info("sockname"), writer.get_extra_info("peername"))
        except OSError as e:  # no /proc/net/tcp (not Linux): the token is the only check, as on the socket
            return e

    def _refusal(self, peer: TcpPeer | None | OSError) -> str | None:
        """Why this connection's process may not use the door (logged), or None when it may."""
        if isinstance(peer, OSError):
            return None
        if peer is not None and peer.uid != self.uid:
            log.warning("refused a connection to the http hook door from pid %s of another user (uid %d)",
                        peer.pid, peer.uid)
            return f"this door serves only uid {self.uid}, not uid {peer.uid}"
        if peer is None or peer.pid is None:
            log.warning("refused a connection to the http hook door on port %d: the kernel did not say which "
                        "process connected", self.port)
            return "Belay could not tell which process connected"
        try:
            refused = self._refuse_peer is not None and self._refuse_peer(peer.pid)
        except Exception:  # a bug in the check must not open the door
            log.exception("checking peer pid %d of the http hook door failed; refusing it", peer.pid)
            refused = True
        if refused:
            log.warning("refused a connection to the http hook door from pid %d: a command Belay runs started it",
                        peer.pid)
            return (f"process {peer.pid} was started by a command Belay runs; such commands may not talk to "
                    f"Belay's console (they could approve their own calls)")
        return None

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: TcpPeer | None | OSError,
                   refusal: str | None) -> bool:
        """Read one request and answer it; whether the connection stays open for the next."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            if e.partial:
                raise
            return False  # closed between requests: the usual end of a keep-alive connection
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = (lines[0].split(" ") + ["", ""])[:3]
        headers = {name.strip().lower(): value.strip()
                   for name, _, value in (line.partition(":") for line in lines[1:] if line)}
        if "transfer-encoding" in headers or "content-length" not in headers:
            await _respond(writer, 411, b'{"error": "a Content-Length is required"}')
            return False
        length = int(headers["content-length"]) if headers["content-length"].isdigit() else -1
        if not 0 <= length <= MAX_BODY_BYTES:
            await _respond(writer, 413, b'{"error": "the event is too large"}')
            return False
        body = await reader.readexactly(length)
        keep = headers.get("connection", "").lower() != "close"
        agent = path.removeprefix("/hook/") if path.startswith("/hook/") else ""
        if method != "POST" or not agent:
            await _respond(writer, 404, b'{"error": "Belay answers POST /hook/<agent>"}')
            return keep
        status, answer = await self._answer(reader, agent, headers, body, peer, refusal)
        await _respond(writer, status, answer)
        self.answered += 1
        return keep and refusal is None

    async def _answer(self, reader: asyncio.StreamReader, agent: str, headers: dict[str, str], body: bytes,
                      peer: TcpPeer | None | OSError, refusal: str | None) -> tuple[int, bytes]:
        try:
            event = json.loads(body)
        except ValueError:
            return 400, b'{"error": "the hook\'s event is not JSON"}'
        if not isinstance(event, dict):
            return 400, b'{"error": "the hook\'s event is not a JSON object"}'
        if refusal is not None:
            return _refused(agent, event, f"refused: {refusal}", 403)
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(token.encode(), self._token):
            log.warning("refused an http hook request on port %d with a wrong token", self.port)
            return _refused(agent, event, "wrong token: this is not the token of this workspace's Belay door", 401)
        known = peer if isinstance(peer, TcpPeer) else None
        request = {"kind": "hook", "agent": agent, "event": event, "direct": True,
                   "peer_pid": known.pid if known else None, "launched": known.launched if known else ""}
        answer = await self._serve_request(request, reader)
        if not answer.get("ok"):
            return _refused(agent, event, f"the console refused the event: {answer.get('error')}", 400)
        return _translated(agent, event, answer)

    def __repr__(self) -> str:
        return (f"<HttpDoor {HOST}:{self.port} serving={self._server is not None} clients={len(self._clients)} "
                f"answered={self.answered}>")


def _gates(agent: str, event: dict[str, Any]) -> bool:
    name = event.get("hook_event_name")
    return not isinstance(name, str) or name.encode() in BLOCKING.get(agent, ())


def _refusal_body(agent: str, event: dict[str, Any], reason: str) -> bytes | None:
    """The event's own structured refusal with `reason` (None for an event that stops nothing)."""
    name = event.get("hook_event_name")
    template = REFUSALS.get(agent, {}).get(name.encode()) if isinstance(name, str) else None
    return template % json_string(reason).encode("ascii") if template is not None else None


def _refused(agent: str, event: dict[str, Any], why: str, status: int) -> tuple[int, bytes]:
    """A stoppable event refused in its own words (200, so the model reads Belay's reason); any other one
    answered with `status`, which Claude Code counts as the hook failing."""
    body = _refusal_body(agent, event, f"Belay: {why}")
    if body is not None:
        return 200, body
    return status, json.dumps({"error": why}).encode()


def _translated(agent: str, event: dict[str, Any], answer: dict[str, Any]) -> tuple[int, bytes]:
    """The hook command's answer (exit code, stdout, stderr) as an http hook's: exit 0 is its stdout; exit 2
    (block, saying why on stderr) is the event's structured refusal, or for an event that stops nothing a
    `decision: block` whose reason reaches the model as a command hook's stderr would."""
    stdout, code = answer.get("stdout"), int(answer.get("exit", 0))
    if code == 0:
        return 200, json.dumps(stdout if stdout is not None else {}).encode()
    reason = str(answer.get("stderr") or "Belay blocked this").strip()
    if _gates(agent, event):
        body = _refusal_body(agent, event, reason)
        return (200, body) if body is not None else (403, json.dumps({"error": reason}).encode())
    return 200, json.dumps({"decision": "block", "reason": reason}).encode()


REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           411: "Length Required", 413: "Payload Too Large"}


async def _respond(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
    writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                 % (status, REASONS[status].encode(), len(body)) + body)
    await writer.drain()
