"""A scripted Gemini API server on 127.0.0.1, so the real Gemini CLI runs offline in tests.

The CLI is pointed at it with ``GOOGLE_GEMINI_BASE_URL`` (it allows plain HTTP only for
localhost) and a dummy ``GEMINI_API_KEY``.  The CLI asks for content with
``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (each answer is server-sent
events, one ``GenerateContentResponse`` per ``data:`` line) and, for its side questions,
``:generateContent`` (one JSON response) and ``:countTokens``.  Each content request of the
conversation is answered with the next scripted `Turn` (text and/or ``functionCall`` parts);
side questions (which of its `Turn`s would not fit) get `side_answer`.  Every request is
recorded, so a test can assert what the model saw (a ``functionResponse``, a deny reason).

A sub-agent runs its own conversation against the same server, its first user message being
the task its parent gave it, so ``ScriptedModel(agents={...})`` serves it from a separate
list of turns keyed by a fragment of that task, as tests/integration/fake_anthropic.py does.

Run as a script it serves a demo (one write_file, then a closing text) and prints the
environment to use::

    python tests/integration/fake_gemini.py
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

_FOREIGN_PREFIXES = ("GEMINI_", "GOOGLE_", "OTEL_", "CLOUD_SHELL", "VERTEX")
"""Variables the CLI reads that could send it to a real service or hand it a real credential."""

OFFLINE_ENV = {
    "GEMINI_TELEMETRY_ENABLED": "false",
    "GEMINI_CLI_NO_RELAUNCH": "true",  # one process: the hook commands are its children, not a grandchild's
    "NO_BROWSER": "true",
    "CI": "1",
}
OFFLINE_SETTINGS: dict[str, Any] = {
    # Found in the CLI's settings reference: usage statistics (Clearcut) and update checks reach Google's
    # servers unless turned off; the IDE companion and folder trust dialog need a person.
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "ide": {"enabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}},
}
"""The user settings the private home starts with."""


@dataclass(frozen=True)
class ToolCall:
    """One functionCall part the model emits."""

    name: str
    """The tool's name as the CLI declares it (``write_file``, ``replace``, ``run_shell_command``)."""
    args: Mapping[str, Any]
    id: str = ""
    """The call's id; blank lets the server number it (``call_fake_001``...)."""


@dataclass(frozen=True)
class ModelRequest:
    """One HTTP request the server received, as data."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    """The decoded JSON body (None when there was none)."""
    conversation: str = MAIN
    """`MAIN`, an `agents` key whose script served it, or "" for a side question."""

    @property
    def contents(self) -> list[dict[str, Any]]:
        return list(self.body.get("contents", [])) if isinstance(self.body, dict) else []

    @property
    def system_text(self) -> str:
        system = self.body.get("systemInstruction") if isinstance(self.body, dict) else None
        return "\n".join(_texts(system.get("parts", []))) if isinstance(system, dict) else ""

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        return [d.get("name", "") for t in tools for d in t.get("functionDeclarations", [])]

    @property
    def prompt(self) -> str:
        """The first user message's text."""
        first = next((c for c in self.contents if c.get("role") == "user"), None)
        return "\n".join(_texts(first.get("parts", []))) if first else ""

    def function_responses(self) -> list[dict[str, Any]]:
        """Every functionResponse sent so far in this conversation, oldest first."""
        return [p["functionResponse"] for c in self.contents if c.get("role") == "user"
                for p in c.get("parts", []) if isinstance(p, dict) and "functionResponse" in p]

    def function_response(self, call_id: str) -> dict[str, Any] | None:
        return next((r for r in self.function_responses() if r.get("id") == call_id), None)

    def latest_function_responses(self) -> list[dict[str, Any]]:
        """The functionResponse parts of the latest user message."""
        users = [c for c in self.contents if c.get("role") == "user"]
        parts = users[-1].get("parts", []) if users else []
        return [p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p]


def response_text(response: Mapping[str, Any]) -> str:
    """What a functionResponse told the model, as one string (its output, or its error)."""
    body = response.get("response", {})
    if isinstance(body, dict):
        return "\n".join(str(v) for v in body.values())
    return str(body)


def _texts(parts: Any) -> list[str]:
    return [p.get("text", "") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)] \
        if isinstance(parts, list) else []


@dataclass(frozen=True)
class Turn:
    """What the model answers to one request: some text, then function calls (if any)."""

    text: str = ""
    tools: Sequence[ToolCall] = ()
    when: Callable[[ModelRequest], bool] | None = None
    """Serve this turn only to a request it accepts; None: to the next request of its conversation."""
    thought: str = ""
    """A thought summary sent first (a part with `thought: true`)."""
    usage: Mapping[str, int] | None = None
    """The `usageMetadata` to report (promptTokenCount, candidatesTokenCount, cachedContentTokenCount,
    thoughtsTokenCount); None: 100 in, 10 out."""


def answers(call_id: str) -> Callable[[ModelRequest], bool]:
    """A `Turn.when` accepting the request whose latest user message carries the response to `call_id`."""
    return lambda request: any(r.get("id") == call_id for r in request.latest_function_responses())


class ScriptedModel(ScriptedServer[ModelRequest, Turn]):
    """A fake Gemini API serving scripted turns, in a background thread.

    ``turns`` answer the main conversation; ``agents`` maps a fragment of a sub-agent's task to the
    turns that answer that sub-agent.  A conversation request no turn accepts gets `fallback` and is
    listed in `unscripted`.  A request that does not offer the CLI's tools (its side questions: is the
    next speaker the model, which model should answer) gets `side_answer` as its text.
    """

    def __init__(self, turns: Sequence[Turn] = (), *, agents: Mapping[str, Sequence[Turn]] | None = None,
                 fallback: Turn = Turn(text="(no scripted turn left)"),
                 side_answer: str = '{"next_speaker": "user", "reasoning": "scripted"}') -> None:
        super().__init__(turns, agents, fallback)
        self._side_answer = side_answer

    name = "fake-gemini"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def _prepare_home(self, home: Path) -> None:
        gemini = home / ".gemini"
        gemini.mkdir()
        (gemini / "settings.json").write_text(json.dumps(OFFLINE_SETTINGS, indent=2))

    @property
    def user_settings(self) -> Path:
        """The CLI's user settings file in the private home: where `belay hooks install --user` writes."""
        return self.home / ".gemini" / "settings.json"

    def env(self, base: Mapping[str, str] | None = None, *, path_first: Path | None = None) -> dict[str, str]:
        """A full environment for the CLI: `base` (default os.environ) without Gemini/Google variables,
        plus this server's URL, a dummy key, the private HOME and the offline switches; `path_first`
        (the pinned Node's folder) goes first on PATH."""
        env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(_FOREIGN_PREFIXES)}
        env.update(OFFLINE_ENV)
        env.update({"GOOGLE_GEMINI_BASE_URL": self.url, "GEMINI_API_KEY": "fake-gemini-key",
                    "HOME": str(self.home), "GEMINI_CLI_HOME": str(self.home)})
        if path_first is not None:
            env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
        return env

    def content_requests(self, conversation: str | None = MAIN) -> list[ModelRequest]:
        """The content requests of a conversation (None: of all, side questions included)."""
        return [r for r in self.requests if _route(r.method, r.path) in ("stream", "generate")
                and (conversation is None or r.conversation == conversation)]

    def function_response(self, call_id: str) -> dict[str, Any] | None:
        """What the model was told of call `call_id`, from the first request that carries it."""
        return next((found for r in self.content_requests(None) if (found := r.function_response(call_id))), None)

    @property
    def unknown(self) -> list[ModelRequest]:
        """Requests to paths this server does not implement (answered 404)."""
        return [r for r in self.requests if _route(r.method, r.path) is None]

    # -- serving (called on handler threads) -------------------------------------

    def _answer(self, request: ModelRequest) -> dict[str, Any]:
        """The GenerateContentResponse for a content request."""
        with self._lock:
            if not request.tool_names:  # a side question of the CLI's, not a turn of the conversation
                request = ModelRequest(request.method, request.path, request.headers, request.body, "")
                self._requests.append(request)
                return _response([{"text": self._side_answer}])
            request, turn = self._take(request, request.prompt)
            parts: list[dict[str, Any]] = [{"text": turn.thought, "thought": True}] if turn.thought else []
            parts += [{"text": turn.text}] if turn.text else []
            for call in turn.tools:
                parts.append({"functionCall": {"id": call.id or f"call_fake_{next(self._ids):03d}",
                                               "name": call.name, "args": dict(call.args)}})
        return _response(parts, turn.usage)


def _response(parts: list[dict[str, Any]], usage: Mapping[str, int] | None = None) -> dict[str, Any]:
    metadata = dict(usage) if usage is not None else {"promptTokenCount": 100, "candidatesTokenCount": 10}
    metadata["totalTokenCount"] = sum(v for k, v in metadata.items() if k != "cachedContentTokenCount")
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": metadata, "modelVersion": "gemini-fake"}


def _route(method: str, path: str) -> str | None:
    bare = path.split("?")[0].rstrip("/")
    if method != "POST" or "/models/" not in bare:
        return None
    action = bare.rsplit(":", 1)[-1]
    return {"streamGenerateContent": "stream", "generateContent": "generate", "countTokens": "count",
            "embedContent": "embed", "batchEmbedContents": "embed"}.get(action)


def sse_chunks(response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The streaming form of a response: text in pieces, each function call whole, the finish reason last."""
    candidate = response["candidates"][0]
    parts = candidate["content"]["parts"]
    pieces = [dict(p) for p in parts if p.get("thought")]  # a thought summary comes whole, as the real API's do
    pieces += [{"text": t} for p in parts if "text" in p and not p.get("thought") for t in _chunks(p["text"])]
    pieces += [p for p in parts if "text" not in p]
    for i, part in enumerate(pieces or [{"text": ""}]):
        last = i == len(pieces) - 1 or not pieces
        chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0,
                                                 **({"finishReason": "STOP"} if last else {})}],
                                 "modelVersion": response["modelVersion"]}
        if last:
            chunk["usageMetadata"] = response["usageMetadata"]
        yield chunk


def _chunks(text: str, size: int = 40) -> Iterator[str]:
    yield from (text[i:i + size] for i in range(0, len(text), size)) if text else [""]


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class GeminiHandler(Handler):
        def serve(self, raw: bytes, body: Any) -> None:
            request = ModelRequest(self.command, self.path, dict(self.headers.items()), body)
            route = _route(self.command, self.path)
            if route in ("stream", "generate") and isinstance(body, dict):
                response = model._answer(request)
                if route == "stream":
                    payload = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in sse_chunks(response))
                    self.send(200, payload.encode(), "text/event-stream")
                else:
                    self.send(200, json.dumps(response).encode())
                return
            model._record(request)
            if route == "count":
                self.send(200, json.dumps({"totalTokens": max(1, len(raw) // 4)}).encode())
            else:
                error = {"error": {"code": 404, "message": f"fake: no {self.path}", "status": "NOT_FOUND"}}
                self.send(404, json.dumps(error).encode())

    return GeminiHandler


def main() -> None:
    """Serve a demo script (one write_file, then a closing text) until interrupted, and print how to use it."""
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hello.txt").resolve()
    turns = [Turn(text="Writing the file.", tools=[ToolCall("write_file", {"file_path": str(target),
                                                                          "content": "hello\n"})]),
             Turn(text="Done.")]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so `kill` also removes the private HOME
    with ScriptedModel(turns) as model:
        overrides = {k: v for k, v in model.env().items() if os.environ.get(k) != v}
        print("\n".join(f"export {k}={v}" for k, v in sorted(overrides.items())))
        print("gemini -p 'go' --output-format stream-json --approval-mode yolo --skip-trust", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            for request in model.content_requests(None):
                print(f"served {request.conversation or 'side'}: {len(request.contents)} contents", file=sys.stderr)


if __name__ == "__main__":
    main()
