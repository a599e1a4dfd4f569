"""A scripted OpenAI Responses server on 127.0.0.1, so the real Codex CLI runs offline in tests.

Codex is pointed at it with a custom model provider in its config.toml (`config_toml`:
``base_url = http://127.0.0.1:PORT/v1``, ``wire_api = "responses"``, a dummy key in an
environment variable); each ``POST /v1/responses`` is answered with the next scripted `Turn`
as the server-sent events the CLI reads (``response.created``, one ``response.output_item.done``
per output item, ``response.completed``).  Every request is recorded, so a test can assert what
the model saw: a call's output (``function_call_output`` / ``custom_tool_call_output``), a hook's
deny reason.

A Codex sub-agent (``spawn_agent``) opens its own thread against the same server; its input
carries the message its parent gave it, so ``ScriptedModel(agents={...})`` serves it from a
separate list of turns keyed by a fragment of that message.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

MAIN = "main"
"""The conversation name of requests not routed to a sub-agent's script."""
MODEL = "gpt-5.5"
"""A model the CLI has metadata for (bundled in the binary): with it, Codex offers its freeform
`apply_patch` tool; with an unknown name it falls back to a tool set without one."""
KEY_ENV = "BELAY_FAKE_OPENAI_KEY"

# Variables that could send the CLI to the real service or hand it a real credential.
_FOREIGN_PREFIXES = ("OPENAI_", "CODEX_", "AZURE_OPENAI", "OTEL_")


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model emits: a function call (JSON arguments) or a freeform custom one (text)."""

    name: str
    """As the CLI lists it in ``tools``: ``exec_command``, ``apply_patch``, ``spawn_agent``."""
    arguments: Mapping[str, Any] | str | Callable[[ModelRequest], Mapping[str, Any]]
    """A mapping for a function tool, or a function of the request making one (to name an id the CLI gave
    earlier, such as a sub-agent's); the raw text for a custom (freeform) tool such as ``apply_patch``."""
    id: str = ""
    """The call_id; blank lets the server number it (``call_fake_001``...)."""
    namespace: str = ""
    """The tool's namespace, for a namespaced tool (``multi_agent_v1`` for ``spawn_agent``)."""


def patch_call(patch: str, id: str = "") -> ToolCall:
    """An ``apply_patch`` call carrying `patch` (the ``*** Begin Patch`` text)."""
    return ToolCall("apply_patch", patch, id)


def shell_call(command: str, id: str = "") -> ToolCall:
    """An ``exec_command`` call running `command`."""
    return ToolCall("exec_command", {"cmd": command}, id)


@dataclass(frozen=True)
class ModelRequest:
    """One HTTP request the server received, as data."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    """The decoded JSON body (None when there was none)."""
    conversation: str = MAIN
    """`MAIN` or the `agents` key whose script served it."""

    @property
    def input(self) -> list[dict[str, Any]]:
        items = self.body.get("input", []) if isinstance(self.body, dict) else []
        return list(items) if isinstance(items, list) else []

    @property
    def user_texts(self) -> list[str]:
        """The text of every user message in the input, oldest first."""
        return [part.get("text", "") for item in self.input
                if item.get("type") == "message" and item.get("role") == "user"
                for part in item.get("content", []) if isinstance(part, dict)]

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        return [t.get("name", "") for t in tools]

    def outputs(self) -> dict[str, str]:
        """call_id -> what the CLI sent the model as that call's output, for every call so far."""
        found = {}
        for item in self.input:
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                found[item.get("call_id", "")] = output_text(item.get("output"))
        return found

    def output(self, call_id: str) -> str | None:
        return self.outputs().get(call_id)


def output_text(output: Any) -> str:
    """A call's output as one string (the CLI sends a string, or a list of content items)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    if isinstance(output, dict):
        return str(output.get("content", output))
    return "" if output is None else str(output)


@dataclass(frozen=True)
class Turn:
    """What the model answers to one request: some text, then tool calls (if any)."""

    text: str = ""
    tools: Sequence[ToolCall] = ()
    when: Callable[[ModelRequest], bool] | None = None
    """Serve this turn only to a request it accepts; None: to the next request of its conversation."""


def answers(call_id: str) -> Callable[[ModelRequest], bool]:
    """A `Turn.when` accepting requests that carry the output of `call_id`."""
    return lambda request: request.output(call_id) is not None


@dataclass
class _Script:
    turns: list[Turn]
    used: set[int] = field(default_factory=set)

    def take(self, request: ModelRequest) -> Turn | None:
        for i, turn in enumerate(self.turns):
            if i not in self.used and (turn.when is None or turn.when(request)):
                self.used.add(i)
                return turn
        return None

    @property
    def remaining(self) -> int:
        return len(self.turns) - len(self.used)


class ScriptedModel:
    """A fake OpenAI Responses API serving scripted turns, in a background thread.

    ``turns`` answer the main conversation; ``agents`` maps a fragment of a sub-agent's message to
    the turns that answer that sub-agent.  A request no turn accepts gets `fallback` and is listed in
    `unscripted`."""

    def __init__(self, turns: Sequence[Turn] = (), *, agents: Mapping[str, Sequence[Turn]] | None = None,
                 fallback: Turn = Turn(text="(no scripted turn left)")) -> None:
        self._scripts = {MAIN: _Script(list(turns))}
        self._scripts.update({key: _Script(list(ts)) for key, ts in (agents or {}).items()})
        self._fallback = fallback
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._requests: list[ModelRequest] = []
        self._unscripted: list[ModelRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._home: Path | None = None

    def __enter__(self) -> ScriptedModel:
        self._home = Path(tempfile.mkdtemp(prefix="fake-openai-home-"))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-openai",
                                        daemon=True)
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
        return f"<ScriptedModel url={self.url if self._server else None} requests={len(self._requests)} left={left}>"

    # -- what a test uses ------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "use ScriptedModel as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def home(self) -> Path:
        """A private HOME for the CLI, deleted on exit; CODEX_HOME is `home/.codex`."""
        assert self._home is not None, "use ScriptedModel as a context manager"
        return self._home

    @property
    def codex_home(self) -> Path:
        path = self.home / ".codex"
        path.mkdir(exist_ok=True)
        return path

    def config_toml(self) -> str:
        """The config.toml lines that send Codex here and nowhere else: no update check, analytics or feedback,
        and no plugins (found with strace: with them on, Codex looks up github.com, api.github.com and
        chatgpt.com even with a custom model provider)."""
        return (f'model = "{MODEL}"\nmodel_provider = "belay-fake"\ncheck_for_update_on_startup = false\n'
                f'[features]\nplugins = false\nremote_plugin = false\n'
                f'[analytics]\nenabled = false\n[feedback]\nenabled = false\n'
                f'[model_providers.belay-fake]\nname = "belay fake"\nbase_url = "{self.url}/v1"\n'
                f'wire_api = "responses"\nenv_key = "{KEY_ENV}"\nrequest_max_retries = 0\n'
                f'stream_max_retries = 0\n')

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """A full environment for the CLI: `base` (default os.environ) without OpenAI/Codex variables, a
        private HOME and CODEX_HOME (with `config_toml` written there) and a dummy key."""
        env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(_FOREIGN_PREFIXES)}
        config = self.codex_home / "config.toml"
        if not config.exists():
            config.write_text(self.config_toml(), encoding="utf-8")
        env.update({"HOME": str(self.home), "CODEX_HOME": str(self.codex_home), KEY_ENV: "sk-fake-key",
                    "NO_COLOR": "1", "RUST_LOG": "error"})
        return env

    @property
    def requests(self) -> list[ModelRequest]:
        with self._lock:
            return list(self._requests)

    def response_requests(self, conversation: str | None = None) -> list[ModelRequest]:
        """The ``POST /v1/responses`` requests, optionally of one conversation only."""
        return [r for r in self.requests if _route(r.method, r.path) == "responses"
                and (conversation is None or r.conversation == conversation)]

    def output(self, call_id: str) -> str | None:
        """What the model was last told of call `call_id` (None: never)."""
        for request in reversed(self.response_requests()):
            text = request.output(call_id)
            if text is not None:
                return text
        return None

    @property
    def unscripted(self) -> list[ModelRequest]:
        with self._lock:
            return list(self._unscripted)

    def remaining(self, conversation: str = MAIN) -> int:
        with self._lock:
            return self._scripts[conversation].remaining

    # -- serving (on handler threads) -----------------------------------------------

    def _answer(self, request: ModelRequest) -> list[dict[str, Any]]:
        """Pick the turn for a responses request and build its output items."""
        with self._lock:
            text = "\n".join(request.user_texts)
            conversation = next((k for k in self._scripts if k != MAIN and k in text), MAIN)
            request = ModelRequest(request.method, request.path, request.headers, request.body, conversation)
            turn = self._scripts[conversation].take(request)
            if turn is None:
                self._unscripted.append(request)
                turn = self._fallback
            self._requests.append(request)
            return self._items(turn, request)

    def _items(self, turn: Turn, request: ModelRequest) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.text:
            items.append({"type": "message", "role": "assistant", "id": f"msg_fake_{next(self._ids):03d}",
                          "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
        for call in turn.tools:
            call_id = call.id or f"call_fake_{next(self._ids):03d}"
            if isinstance(call.arguments, str):
                items.append({"type": "custom_tool_call", "name": call.name, "input": call.arguments,
                              "call_id": call_id, "status": "completed"})
            else:
                arguments = call.arguments(request) if callable(call.arguments) else call.arguments
                item = {"type": "function_call", "name": call.name, "arguments": json.dumps(dict(arguments)),
                        "call_id": call_id, "status": "completed"}
                if call.namespace:
                    item["namespace"] = call.namespace
                items.append(item)
        return items

    def _record(self, request: ModelRequest) -> None:
        with self._lock:
            self._requests.append(request)


def sse_body(response_id: str, items: Sequence[Mapping[str, Any]], tokens: int) -> bytes:
    """The stream of one response: created, each item done, completed (what the CLI needs to act)."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}})]
    for index, item in enumerate(items):
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": dict(item)}))
    usage = {"input_tokens": tokens, "input_tokens_details": None, "output_tokens": 5,
             "output_tokens_details": None, "total_tokens": tokens + 5}
    events.append(("response.completed", {"type": "response.completed", "response": {"id": response_id,
                                                                                      "usage": usage}}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def _route(method: str, path: str) -> str | None:
    bare = path.split("?")[0].rstrip("/")
    if method == "POST" and bare == "/v1/responses":
        return "responses"
    return None


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60

        def do_POST(self) -> None:
            self._serve()

        def do_GET(self) -> None:
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
            request = ModelRequest(self.command, self.path, dict(self.headers.items()), body)
            if _route(self.command, self.path) == "responses" and isinstance(body, dict):
                items = model._answer(request)
                self._send(200, sse_body(f"resp_fake_{next(model._ids):04d}", items, max(1, len(raw) // 4)),
                           "text/event-stream")
                return
            model._record(request)
            error = {"error": {"type": "not_found", "message": f"fake: no {self.path}"}}
            self._send(404, json.dumps(error).encode())

        def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
