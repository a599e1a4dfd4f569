"""The running console's door for other processes: a Unix socket that checks a per-install token.

Claude Code's hook command (`core/outside/hook_client.py`) and `belay mcp-serve`
reach the console that owns a workspace through it.  The socket lives in a
private runtime directory (0700, owned by the user; the socket itself
0600), and every request must carry the install's token, a secret kept in
the user's config directory with 0600 permissions.  Nothing listens on a
network interface.

The token alone does not say who is asking: a command Belay itself runs
(the Bash tool's) runs as the same user and can read the token file.  So
the socket also asks the kernel who connected (SO_PEERCRED: pid, uid,
gid): a peer of another user is refused, and so is one the console's
`refuse_peer(pid)` says no to (core/console.py asks the shell manager
whether a command Belay runs started that process), before its request is
read any further.  The answer is an error saying why, and the refusal is
logged.  Where the kernel cannot say (no SO_PEERCRED: not Linux) only the
token is checked.  This is the console's only door; `belay mcp-serve
--http` listens on a loopback port of its own, where no peer pid can be
learnt, and reaches the console through this socket as itself.

Protocol: one request per connection, one JSON object per line each way (an
`attach` keeps its connection: core.remote.protocol):
`{"token": ..., "kind": "hook" | "ping" | ..., ...}` answered by
`{"ok": true, ...}` or `{"ok": false, "error": "..."}`.  Each kind has a
model (core.outside.requests) the request is validated into before its
handler runs; a request that does not fit is refused, saying why.  A handler may take
as long as a person takes to approve; the client waits.  The hook client,
which must start fast, uses a framing that needs no JSON parser on its
side: a header line with `"length": N` followed by N bytes of the hook's
event, answered by `HOOK <exit> <stdout bytes> <stderr bytes>\n` and the
two texts.  Until that answer, a `WAIT\n` line goes out every few seconds
(`KEEPALIVE_S`) while the handler works: the hook client gives up on a
console that stays silent (a hung window) well before Claude Code's own
hour, and these lines are how it tells a person still deciding from that.

Where to find it: `<workspace state dir>/endpoint.json` names the socket
and the console's pid while it runs, and is removed when it closes.

Given an `http_port`, the endpoint opens a second door for the same hook
handler: Claude Code's http hooks on 127.0.0.1 (core/outside/http_door.py),
with the same checks (a token, the peer's uid and pid) and the same long
waits, and no process started per call.
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
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from core.outside.http_door import HttpDoor, door_token
from core.outside.requests import PingRequest
from core.paths import runtime_dir
from core.store.atomic_file import write_text_atomically
from core.tasks import spawn

log = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)
Handler = Callable[[Any], Awaitable[dict[str, Any]]]
"""Answers one validated request (a model of core.outside.requests) with the fields of `{"ok": true, ...}`."""
MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""A hook's input carries whole file contents (Write): generous, but bounded."""
ENDPOINT_FILE = "endpoint.json"
SOCKET_FILE = "endpoint.sock"
"""The socket's path alone, as plain text: the hook client reads it without loading a JSON parser."""
TOKEN_FILE = "token"
START_FAILED_FILE = "start-failed"
"""Why the console could not open the workspace, for a hook command that waited for it to start
(core.outside.hook_client.START_FAILED_FILE); removed once a console serves."""
KEEPALIVE = b"WAIT\n"
"""Sent to the hook client while its event is handled (core.outside.hook_client.KEEPALIVE)."""
KEEPALIVE_S = 5.0
"""How often: a sixth of the hook client's default silence limit (30 s), so a busy loop still makes it."""
Stream = Callable[[Any, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
"""Takes a validated request's connection over for as long as it lasts (core.remote.server's attach)."""
RefusePeer = Callable[[int], bool]
"""Says True for a process id that must not use the socket (one a command Belay runs started)."""


def install_token(config_dir: Path) -> str:
    """This install's secret, made on first use (0600 in the config directory)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    path = config_dir / TOKEN_FILE
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    token = secrets.token_hex(32)
    tmp = config_dir / f".{TOKEN_FILE}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    try:
        os.link(tmp, path)  # first writer wins; a racing console reads the winner's token
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_text(encoding="ascii").strip()


def start_failed(state_dir: Path, error: Exception) -> None:
    """Leave why the console could not start where a hook command waiting for it looks once the lock is free."""
    info = getattr(error, "info", None)  # a BelayError says it in words of its own
    said = info.message if info is not None else f"{type(error).__name__}: {error}"
    try:
        write_text_atomically(state_dir / START_FAILED_FILE, said, mode=0o600, fsync=False)
    except OSError as e:  # a full disk, perhaps why it failed: the hook command then says it was not told
        log.warning("could not say why the console did not start: %s", e)


def socket_path(state_dir: Path) -> Path:
    """Short (a Unix socket path must fit in 108 bytes) and unique per workspace state directory."""
    digest = hashlib.sha256(str(state_dir).encode()).hexdigest()[:16]
    return runtime_dir() / f"{digest}.sock"


class Endpoint:
    """The console's socket: dispatches authenticated requests to handlers by kind."""

    def __init__(self, state_dir: Path, token: str, workspace: Path, *, refuse_peer: RefusePeer | None = None,
                 keepalive_s: float = KEEPALIVE_S, http_port: int | None = None) -> None:
        self.state_dir, self.workspace = state_dir, workspace
        self._refuse_peer, self.keepalive_s = refuse_peer, keepalive_s
        self.uid = os.getuid()
        """The only user whose processes are served: the console's."""
        self._token = token.encode()
        self.path = socket_path(state_dir)
        self._handlers: dict[str, tuple[type[BaseModel], Handler]] = {"ping": (PingRequest, self._ping)}
        self._streams: dict[str, tuple[type[BaseModel], Stream]] = {}
        self._server: asyncio.AbstractServer | None = None
        self._clients: set[asyncio.Task[None]] = set()
        self._watchers: set[asyncio.Task[None]] = set()
        self.door = HttpDoor(http_port, door_token(token, state_dir), self.serve_request,
                             refuse_peer=refuse_peer) if http_port is not None else None
        """Claude Code's http hooks, when the console serves them (core.outside.http_door)."""

    def handle(self, model: type[R], handler: Callable[[R], Awaitable[dict[str, Any]]]) -> None:
        """Answer requests of `model`'s kind (its `kind` literal) with `handler`."""
        kind = get_args(model.model_fields["kind"].annotation)[0]
        self._handlers[kind] = (model, handler)

    def stream(self, model: type[R], handler: Callable[[R, asyncio.StreamReader, asyncio.StreamWriter],
                                                     Awaitable[None]]) -> None:
        """Hand the connection of a request of `model`'s kind, once it passed the door (peer, token, model),
        to `handler`, which says what it says on it until either side ends it."""
        kind = get_args(model.model_fields["kind"].annotation)[0]
        self._streams[kind] = (model, handler)

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket of a console that died (we hold the workspace's lock)
        old = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=MAX_REQUEST_BYTES)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        info = {"socket": str(self.path), "pid": os.getpid(), "workspace": str(self.workspace)}
        write_text_atomically(self.state_dir / ENDPOINT_FILE, json.dumps(info), mode=0o600, fsync=False)
        write_text_atomically(self.state_dir / SOCKET_FILE, str(self.path), mode=0o600, fsync=False)
        if self.door is not None:
            await self.door.start()
        with contextlib.suppress(FileNotFoundError):
            (self.state_dir / START_FAILED_FILE).unlink()  # an earlier start's failure is no longer the news

    async def close(self) -> None:
        for name in (ENDPOINT_FILE, SOCKET_FILE):
            with contextlib.suppress(FileNotFoundError):
                (self.state_dir / name).unlink()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self.door is not None:
            await self.door.close()
        for task in list(self._clients):
            task.cancel()
        if self._clients:
            await asyncio.wait(self._clients)
        if self._watchers:  # cancelled by their clients' tasks, perhaps not yet finished
            await asyncio.wait(self._watchers)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._clients.add(task)
        try:
            answer, framed = await self._answer(reader, writer, self._refusal(writer))
            if not isinstance(answer, dict):
                await answer()  # a stream: it has said all it had to
                return
            writer.write(_framed(answer) if framed else json.dumps(answer).encode() + b"\n")
            if writer.can_write_eof():
                writer.write_eof()  # the whole answer: a client reading to the end has it now, not after the close
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away (Claude Code gave up on the hook): nothing to tell it
        except asyncio.CancelledError:  # the endpoint is closing (`close` cancels its clients)
            task.uncancel()  # end quietly: asyncio's streams log a client task that ends cancelled as an error
        finally:
            self._clients.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):  # cancelled here: closing too
                await writer.wait_closed()

    def _refusal(self, writer: asyncio.StreamWriter) -> str | None:
        """Why the process at the other end may not use the socket (logged), or None when it may."""
        try:
            peer = _peer(writer)
        except OSError as e:
            log.warning("refused a connection to %s: the kernel did not say who connected (%s)", self.path, e)
            return f"Belay could not tell which process connected ({e})"
        if peer is None:
            return None  # no SO_PEERCRED here: the token is the only check
        pid, uid = peer
        if uid != self.uid:
            log.warning("refused a connection to %s from pid %d of another user (uid %d)", self.path, pid, uid)
            return f"this socket serves only uid {self.uid}, not uid {uid}"
        try:
            refused = self._refuse_peer is not None and self._refuse_peer(pid)
        except Exception:  # a bug in the check must not open the door
            log.exception("checking peer pid %d of %s failed; refusing it", pid, self.path)
            refused = True
        if refused:
            log.warning("refused a connection to %s from pid %d: a command Belay runs started it", self.path, pid)
            return (f"process {pid} was started by a command Belay runs; such commands may not talk to Belay's "
                    f"console (they could approve their own calls)")
        return None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      refusal: str | None) -> tuple[dict[str, Any] | Callable[[], Awaitable[None]], bool]:
        try:
            line = await reader.readline()
            request = json.loads(line)
        except (ValueError, asyncio.LimitOverrunError):
            return {"ok": False, "error": "the request is not one line of JSON"}, False
        if not isinstance(request, dict):
            return {"ok": False, "error": "the request is not a JSON object"}, False
        framed = isinstance(request.get("length"), int)
        if refusal is not None:
            if framed and 0 <= request["length"] <= MAX_REQUEST_BYTES:
                await reader.readexactly(request["length"])  # read, so closing does not reset the client
            return {"ok": False, "error": f"refused: {refusal}"}, framed
        token = request.get("token")
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self._token):
            log.warning("refused a request to %s with a wrong token", self.path)
            return {"ok": False, "error": "wrong token: this is not the install's token"}, framed
        if framed:
            length = int(request["length"])
            if not 0 <= length <= MAX_REQUEST_BYTES:
                return {"ok": False, "error": "the event is too large"}, framed
            try:
                request["event"] = json.loads(await reader.readexactly(length))
            except ValueError:
                return {"ok": False, "error": "the hook's event is not JSON"}, framed
        return await self._dispatch(request, reader, writer, framed)

    async def _dispatch(self, request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        framed: bool) -> tuple[dict[str, Any] | Callable[[], Awaitable[None]], bool]:
        """An authenticated request, validated into its kind's model and answered (or its stream, to run)."""
        kind = str(request.get("kind"))
        entry = self._handlers.get(kind) or self._streams.get(kind)
        if entry is None:
            return {"ok": False, "error": f"unknown kind {request.get('kind')!r}"}, framed
        model = entry[0]
        request["peer_pid"] = _peer_pid(writer)
        if "direct" in model.model_fields:
            request["direct"] = False  # the socket's peer is a hook command, never the agent itself
        try:
            valid = model.model_validate(request)
        except ValidationError as e:
            log.info("refused a malformed %s request: %s", request.get("kind"), _problems(e))
            return {"ok": False, "error": f"malformed {request.get('kind')} request: {_problems(e)}"}, framed
        stream = self._streams.get(kind)
        if stream is not None:
            talk = stream[1]
            return (lambda: talk(valid, reader, writer)), False
        return await self._run(self._handlers[kind][1], valid, reader, writer if framed else None), framed

    async def serve_request(self, request: dict[str, Any], reader: asyncio.StreamReader) -> dict[str, Any]:
        """A request that came through another door (http_door), already authenticated there: validated into
        its kind's model and answered as on the socket, the handler cancelled if `reader` ends meanwhile.
        Raises ConnectionError when the client went away before the answer."""
        kind = str(request.get("kind"))
        entry = self._handlers.get(kind)
        if entry is None:
            return {"ok": False, "error": f"unknown kind {request.get('kind')!r}"}
        try:
            valid = entry[0].model_validate(request)
        except ValidationError as e:
            log.info("refused a malformed %s request: %s", kind, _problems(e))
            return {"ok": False, "error": f"malformed {kind} request: {_problems(e)}"}
        return await self._run(entry[1], valid, reader, None, kept=True)

    async def _run(self, handler: Handler, request: BaseModel, reader: asyncio.StreamReader,
                   keepalive: asyncio.StreamWriter | None, kept: bool = False) -> dict[str, Any]:
        """The handler's answer, worked out in this task; meanwhile a watcher sends a keepalive line to
        `keepalive` (the hook client) every few seconds, and cancels the handler if the client goes away.

        The handler runs here, not in a task of its own: an answer given at once (a call the policy allows)
        then goes out in the same turn of the loop, and the watcher, cancelled before its first step, costs
        nothing.  `kept`: the connection carries more requests (HTTP keep-alive), so the watcher's read is
        over before this returns and the next request's read is the only one."""
        kind = getattr(request, "kind", "?")
        serving = asyncio.current_task()
        assert serving is not None
        abandoned: list[bool] = []
        watcher = spawn(self._watch(serving, reader, keepalive, abandoned), f"endpoint: watching {kind}")
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        try:
            answer = await handler(request)
        except asyncio.CancelledError:
            if not abandoned:
                raise  # the endpoint is closing
            serving.uncancel()
            raise ConnectionResetError("the client went away") from None
        except Exception as e:  # a bug in a handler must not leave the client waiting
            log.exception("endpoint handler %s failed", kind)
            return {"ok": False, "error": f"Belay failed to handle it: {type(e).__name__}: {e}"}
        finally:
            watcher.cancel()
            if kept:
                await asyncio.wait([watcher])
        if abandoned:  # the client went just as the answer was ready: nobody is left to tell
            serving.uncancel()
            raise ConnectionResetError("the client went away")
        return {"ok": True, **answer}

    async def _watch(self, serving: asyncio.Task[None], reader: asyncio.StreamReader,
                     keepalive: asyncio.StreamWriter | None, abandoned: list[bool]) -> None:
        """Until cancelled (the handler is done): a keepalive line every few seconds; `serving` cancelled, and
        marked `abandoned`, if the client goes (e.g. an approval nobody is waiting for any more: withdrawn)."""
        gone = spawn(reader.read(1), "endpoint: client gone?")  # EOF: the client stopped waiting (its process ended)
        try:
            while not gone.done():
                await asyncio.wait({gone}, timeout=self.keepalive_s)
                if keepalive is not None and not gone.done():
                    try:
                        keepalive.write(KEEPALIVE)
                        await keepalive.drain()
                    except ConnectionError:
                        break  # it went away as it was told to wait: gone as surely as by EOF
        finally:
            gone.cancel()
            await asyncio.wait([gone])  # its read ended: the connection's next request is read by its server
        abandoned.append(True)
        serving.cancel()

    async def _ping(self, request: PingRequest) -> dict[str, Any]:
        return {"workspace": str(self.workspace), "pid": os.getpid()}

    def __repr__(self) -> str:
        return f"<Endpoint {self.path} serving={self._server is not None}>"


def _peer_pid(writer: asyncio.StreamWriter) -> int | None:
    """The connected process's pid (None where the kernel cannot say): handlers may watch the agent behind it."""
    try:
        peer = _peer(writer)
    except OSError:
        return None
    return peer[0] if peer is not None else None


def _peer(writer: asyncio.StreamWriter) -> tuple[int, int] | None:
    """The connected process's (pid, uid), as the kernel recorded them when it connected."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    size = struct.calcsize("3i")
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size))
    return pid, uid


def _problems(error: ValidationError) -> str:
    """What did not fit, field by field (at most three), without echoing the values."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in error.errors()[:3])


def _framed(answer: dict[str, Any]) -> bytes:
    """The hook client's answer: exit code, then stdout (JSON text) and stderr, length-prefixed."""
    if not answer.get("ok"):
        out, err, code = b"", f"Belay: the console refused the event: {answer.get('error')}\n".encode(), 2
    else:
        stdout = answer.get("stdout")
        out = json.dumps(stdout).encode() if stdout is not None else b""
        err, code = str(answer.get("stderr") or "").encode(), int(answer.get("exit", 0))
    return f"HOOK {code} {len(out)} {len(err)}\n".encode() + out + err
