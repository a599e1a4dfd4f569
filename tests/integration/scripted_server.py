"""What the scripted model servers share (fake_anthropic, fake_openai, fake_gemini): scripts, requests, serving.

Each fake speaks one API to one real agent CLI on 127.0.0.1.  Their common part is here: a conversation's
turns (`Script`: a request takes the first unused turn that accepts it), the main conversation and the
sub-agents' ones told apart by a fragment of their text, every request recorded for the test to read,
an HTTP server on a background thread, and a private HOME for the CLI, deleted on exit.  A fake adds its
API: the requests it routes, the answers it builds and the home its CLI needs.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

MAIN = "main"
"""The main conversation's key; a sub-agent's is the fragment of its prompt its turns were given under."""


class _Turn(Protocol):
    @property
    def when(self) -> Callable[[Any], bool] | None: ...


R = TypeVar("R")
T = TypeVar("T", bound=_Turn)


@dataclass
class Script(Generic[T]):
    """One conversation's turns; a request takes the first unused turn that accepts it."""

    turns: list[T]
    used: set[int] = field(default_factory=set)

    def take(self, request: object) -> T | None:
        for i, turn in enumerate(self.turns):
            if i not in self.used and (turn.when is None or turn.when(request)):
                self.used.add(i)
                return turn
        return None

    @property
    def remaining(self) -> int:
        return len(self.turns) - len(self.used)


class ScriptedServer(Generic[R, T]):
    """Scripted turns served in a background thread; a subclass names itself and gives its handler."""

    name = "fake"
    """Names the server's thread and its private HOME's folder."""

    def __init__(self, turns: Sequence[T], agents: Mapping[str, Sequence[T]] | None, fallback: T) -> None:
        self._scripts = {MAIN: Script(list(turns))}
        self._scripts.update({key: Script(list(ts)) for key, ts in (agents or {}).items()})
        self._fallback = fallback
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._requests: list[R] = []
        self._unscripted: list[R] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._home: Path | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _prepare_home(self, home: Path) -> None:
        """Put what the CLI needs into its private HOME (nothing by default)."""

    # -- lifecycle -------------------------------------------------------------

    def __enter__(self) -> Self:
        self._home = Path(tempfile.mkdtemp(prefix=f"{self.name}-home-"))
        self._prepare_home(self._home)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=self.name,
                                        daemon=True)  # a short poll: shutdown() waits one interval
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
        finally:
            if self._home is not None:
                shutil.rmtree(self._home, ignore_errors=True)
            self._server = self._thread = self._home = None

    def __repr__(self) -> str:
        left = {k: s.remaining for k, s in self._scripts.items()}
        return (f"<{type(self).__name__} {self.name} url={self.url if self._server else None} "
                f"requests={len(self._requests)} left={left}>")

    # -- what a test uses ------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "use the scripted model as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def home(self) -> Path:
        """A private HOME for the CLI, deleted on exit."""
        assert self._home is not None, "use the scripted model as a context manager"
        return self._home

    @property
    def requests(self) -> list[R]:
        """Every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def unscripted(self) -> list[R]:
        """Conversation requests no turn accepted (they got the fallback)."""
        with self._lock:
            return list(self._unscripted)

    def remaining(self, conversation: str = MAIN) -> int:
        with self._lock:
            return self._scripts[conversation].remaining

    # -- serving (called on handler threads) -------------------------------------

    def _record(self, request: R) -> None:
        with self._lock:
            self._requests.append(request)

    def _take(self, request: R, text: str) -> tuple[R, T]:
        """Under the lock: the request tagged with its conversation (the sub-agent whose key is in `text`, else
        the main one) and recorded, and the turn that answers it (the fallback when none accepts it)."""
        conversation = next((k for k in self._scripts if k != MAIN and k in text), MAIN)
        request = dataclasses.replace(request, conversation=conversation)  # type: ignore[type-var]
        turn = self._scripts[conversation].take(request)
        if turn is None:
            self._unscripted.append(request)
            turn = self._fallback
        self._requests.append(request)
        return request, turn


class Handler(BaseHTTPRequestHandler):
    """Reads a request's JSON body; a fake's handler answers it in `serve`."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the CLIs' HTTP clients expect
    timeout = 60  # an idle keep-alive connection ends its thread eventually

    def do_POST(self) -> None:  # noqa: N802 - http.server's names
        self._serve()

    def do_GET(self) -> None:  # noqa: N802
        self._serve()

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the requests are recorded on the model instead."""

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.serve(raw, body)

    def serve(self, raw: bytes, body: Any) -> None:
        raise NotImplementedError

    def send(self, status: int, payload: bytes, content_type: str = "application/json",
             headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
