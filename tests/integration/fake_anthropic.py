"""A scripted Anthropic Messages server on 127.0.0.1, so the real Claude Code CLI runs offline in tests.

The CLI is pointed at it with ``ANTHROPIC_BASE_URL``; each ``POST /v1/messages`` is
answered with the next scripted `Turn` (text and/or tool_use blocks), as SSE when the
request asks to stream and as one JSON message otherwise.  Every request is recorded,
so a test can assert what the model saw (a tool_result, its ``is_error``, a deny reason).

A sub-agent (the ``Agent`` tool) opens its own conversation with the same server; its
first user message is the prompt the parent gave it, so ``ScriptedModel(agents={...})``
serves it from a separate list of turns keyed by a fragment of that prompt.

Run as a script it serves a small demo script and prints the environment to use::

    python tests/integration/fake_anthropic.py
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.integration.scripted_server import MAIN, Handler, ScriptedServer

# Variables the CLI reads that could send it to the real service or leak a real credential.
_FOREIGN_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AWS_BEARER_TOKEN_BEDROCK")

# Found by tracing the CLI (strace -e connect,sendto): without these it resolves
# api.anthropic.com and sends HEAD /api/hello even when ANTHROPIC_BASE_URL is set.
OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def bundled_cli() -> Path:
    """The Claude Code CLI that the ``claude-agent-sdk`` wheel ships."""
    import claude_agent_sdk

    return Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


@dataclass(frozen=True)
class ToolCall:
    """One tool_use block the model emits."""

    name: str
    """The tool's name as the CLI lists it in ``tools`` (``Write``, ``Edit``, ``Bash``, ``Agent``)."""
    input: Mapping[str, Any]
    """The tool's arguments."""
    id: str = ""
    """The tool_use id; blank lets the server number it (``toolu_fake_001``...)."""


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
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def system_text(self) -> str:
        system = self.body.get("system", "") if isinstance(self.body, dict) else ""
        return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools", [])] if isinstance(self.body, dict) else []

    @property
    def prompt(self) -> str:
        """The first user message's text, without the CLI's ``<system-reminder>`` blocks."""
        first = next((m for m in self.messages if m.get("role") == "user"), None)
        return "\n".join(_texts(first["content"])) if first else ""

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block sent so far in this conversation, oldest first."""
        return [b for m in self.messages if m.get("role") == "user" and isinstance(m.get("content"), list)
                for b in m["content"] if b.get("type") == "tool_result"]

    def tool_result(self, tool_use_id: str) -> dict[str, Any] | None:
        return next((b for b in self.tool_results() if b.get("tool_use_id") == tool_use_id), None)

    def latest_tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the latest user message (one per tool call of the previous turn)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        return [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []

    def last_tool_result(self) -> dict[str, Any] | None:
        results = self.latest_tool_results()
        return results[-1] if results else None

    @property
    def is_subagent(self) -> bool:
        """True for a sub-agent's conversation: the CLI marks its system prompt with ``cc_is_subagent=true``."""
        return "cc_is_subagent=true" in self.system_text


def result_text(block: Mapping[str, Any]) -> str:
    """A tool_result's content as one string (the CLI sends a string or a list of text blocks)."""
    content = block.get("content", "")
    return content if isinstance(content, str) else "\n".join(_texts(content))


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content
            if b.get("type") == "text" and not b.get("text", "").lstrip().startswith("<system-reminder>")]


@dataclass(frozen=True)
class Turn:
    """What the model answers to one request: some text, then tool calls (if any)."""

    text: str = ""
    tools: Sequence[ToolCall] = ()
    when: Callable[[ModelRequest], bool] | None = None
    """Serve this turn only to a request it accepts; None: to the next request of its conversation."""
    thinking: str = ""
    """A visible reasoning block sent before the text (a ``thinking`` block with a fake signature)."""
    usage: Mapping[str, int] | None = None
    """The usage to report (``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
    ``cache_creation_input_tokens``); None: estimated from the request's and the answer's sizes."""


def prompt_contains(fragment: str) -> Callable[[ModelRequest], bool]:
    """A `Turn.when` accepting requests whose first user message contains `fragment`."""
    return lambda request: fragment in request.prompt


def answers(tool_use_id: str) -> Callable[[ModelRequest], bool]:
    """A `Turn.when` accepting the request whose latest user message carries the result of `tool_use_id`."""
    return lambda request: any(r.get("tool_use_id") == tool_use_id for r in request.latest_tool_results())


class ScriptedModel(ScriptedServer[ModelRequest, Turn]):
    """A fake Anthropic Messages API serving scripted turns, in a background thread.

    ``turns`` answer the main conversation; ``agents`` maps a fragment of a sub-agent's
    prompt to the turns that answer that sub-agent.  A request no turn accepts gets
    `fallback` and is listed in `unscripted`.
    """

    def __init__(self, turns: Sequence[Turn] = (), *, agents: Mapping[str, Sequence[Turn]] | None = None,
                 fallback: Turn = Turn(text="(no scripted turn left)"), model_name: str = "") -> None:
        super().__init__(turns, agents, fallback)
        self._model_name = model_name
    name = "fake-anthropic"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def env(self, base: Mapping[str, str] | None = None, *, home: Path | None = None) -> dict[str, str]:
        """A full environment for the CLI: `base` (default os.environ) without Anthropic/Claude
        variables, plus this server's URL, a dummy key, a private HOME and the offline switches."""
        home = home or self.home
        env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(_FOREIGN_PREFIXES)}
        env.update(OFFLINE_ENV)
        tmp = home / "tmp"
        tmp.mkdir(mode=0o700, exist_ok=True)  # the CLI refuses a temp dir others can write to
        env.update({"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key",
                    "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                    # task output and its messaging socket go here instead of /tmp/claude-UID, /tmp/cc-socks
                    "CLAUDE_CODE_TMPDIR": str(tmp)})
        return env

    def message_requests(self, conversation: str | None = None) -> list[ModelRequest]:
        """The ``POST /v1/messages`` requests, optionally of one conversation only."""
        return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"
                and (conversation is None or r.conversation == conversation)]

    @property
    def unknown(self) -> list[ModelRequest]:
        """Requests to paths this server does not implement (answered 404)."""
        return [r for r in self.requests if _route(r.method, r.path) is None]

    # -- serving (called on handler threads) -------------------------------------

    def _answer(self, request: ModelRequest) -> tuple[ModelRequest, dict[str, Any]]:
        """Pick the turn for a messages request and build the assistant message."""
        with self._lock:
            request, turn = self._take(request, request.prompt)
            content = self._content(turn)
        model = self._model_name or (request.body or {}).get("model", "claude-fake")
        usage = {"input_tokens": _estimate_tokens(request.body), "output_tokens": max(1, len(json.dumps(content)) // 4),
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        usage.update(turn.usage or {})
        return request, {
            "id": f"msg_fake_{next(self._ids):04d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if turn.tools else "end_turn", "stop_sequence": None,
            "usage": usage,
        }

    def _content(self, turn: Turn) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.thinking:
            blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": "fake-signature"})
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for call in turn.tools:
            blocks.append({"type": "tool_use", "id": call.id or f"toolu_fake_{next(self._ids):03d}",
                           "name": call.name, "input": dict(call.input)})
        return blocks


def _estimate_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4)


def _route(method: str, path: str) -> str | None:
    bare = path.split("?")[0].rstrip("/")
    if method == "POST" and bare == "/v1/messages":
        return "messages"
    if method == "POST" and bare == "/v1/messages/count_tokens":
        return "count_tokens"
    if bare == "/api/hello":  # the CLI's reachability probe (sent only when nonessential traffic is on)
        return "hello"
    return None


def sse_events(message: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The streaming form of a complete assistant message, event by event."""
    yield "message_start", {"type": "message_start", "message": {
        **message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            for piece in _chunks(block["text"]):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "text_delta", "text": piece}}
        elif block["type"] == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            for piece in _chunks(block["thinking"]):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "thinking_delta", "thinking": piece}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "signature_delta", "signature": block["signature"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            for piece in _chunks(json.dumps(block["input"])):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def _chunks(text: str, size: int = 40) -> Iterator[str]:
    """Split like a real stream does, so the CLI's incremental JSON parsing is exercised."""
    yield from (text[i:i + size] for i in range(0, len(text), size)) if text else [""]


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class MessagesHandler(Handler):
        def serve(self, raw: bytes, body: Any) -> None:
            request = ModelRequest(self.command, self.path, dict(self.headers.items()), body)
            route = _route(self.command, self.path)
            if route == "messages" and isinstance(body, dict):
                request, message = model._answer(request)
                if body.get("stream"):
                    payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in sse_events(message))
                    self._reply(200, payload.encode(), "text/event-stream")
                else:
                    self._reply(200, json.dumps(message).encode())
                return
            model._record(request)
            if route == "count_tokens":
                self._reply(200, json.dumps({"input_tokens": _estimate_tokens(body)}).encode())
            elif route == "hello":
                self._reply(200, b"")
            else:
                error = {"type": "error", "error": {"type": "not_found_error", "message": f"fake: no {self.path}"}}
                self._reply(404, json.dumps(error).encode())

        def _reply(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
            self.send(status, payload, content_type, {"request-id": f"req_fake_{id(payload):x}"})

    return MessagesHandler


def main() -> None:
    """Serve a demo script (one Write, then a closing text) until interrupted, and print how to use it."""
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hello.txt").resolve()
    turns = [Turn(text="Writing the file.", tools=[ToolCall("Write", {"file_path": str(target), "content": "hello\n"})]),
             Turn(text="Done.")]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so `kill` also removes the private HOME
    with ScriptedModel(turns) as model:
        overrides = {k: v for k, v in model.env().items() if os.environ.get(k) != v}
        print("\n".join(f"export {k}={v}" for k, v in sorted(overrides.items())))
        try:
            cli = str(bundled_cli())
        except ImportError:  # run with a Python that lacks the SDK: a `claude` on PATH will do
            cli = "claude"
        print(f"{cli} -p 'go' --output-format stream-json --verbose --allowedTools Write", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            for request in model.message_requests():
                print(f"served {request.conversation}: {len(request.messages)} messages", file=sys.stderr)


if __name__ == "__main__":
    main()
