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

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.integration.scripted_server import MAIN, Handler, ScriptedServer

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
    reasoning: str = ""
    """A reasoning item with this summary, sent before the text."""
    usage: Mapping[str, int] | None = None
    """``input_tokens``, ``cached_tokens`` (of the input), ``output_tokens``, ``reasoning_tokens`` to report;
    None: the input estimated from the request's size, 5 out."""


def answers(call_id: str) -> Callable[[ModelRequest], bool]:
    """A `Turn.when` accepting requests that carry the output of `call_id`."""
    return lambda request: request.output(call_id) is not None


class ScriptedModel(ScriptedServer[ModelRequest, Turn]):
    """A fake OpenAI Responses API serving scripted turns, in a background thread.

    ``turns`` answer the main conversation; ``agents`` maps a fragment of a sub-agent's message to
    the turns that answer that sub-agent.  A request no turn accepts gets `fallback` and is listed in
    `unscripted`."""

    def __init__(self, turns: Sequence[Turn] = (), *, agents: Mapping[str, Sequence[Turn]] | None = None,
                 fallback: Turn = Turn(text="(no scripted turn left)")) -> None:
        super().__init__(turns, agents, fallback)

    name = "fake-openai"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    # -- what a test uses ------------------------------------------------------

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

    # -- serving (on handler threads) -----------------------------------------------

    def _answer(self, request: ModelRequest) -> tuple[list[dict[str, Any]], Mapping[str, int] | None]:
        """Pick the turn for a responses request and build its output items; the usage it reports."""
        with self._lock:
            request, turn = self._take(request, "\n".join(request.user_texts))
            return self._items(turn, request), turn.usage

    def _items(self, turn: Turn, request: ModelRequest) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.reasoning:
            items.append({"type": "reasoning", "id": f"rs_fake_{next(self._ids):03d}", "encrypted_content": None,
                          "summary": [{"type": "summary_text", "text": turn.reasoning}]})
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


def sse_body(response_id: str, items: Sequence[Mapping[str, Any]], tokens: int,
             usage_given: Mapping[str, int] | None = None) -> bytes:
    """The stream of one response: created, each item done, completed (what the CLI needs to act)."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}})]
    for index, item in enumerate(items):
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": dict(item)}))
    usage: dict[str, Any] = {"input_tokens": tokens, "input_tokens_details": None, "output_tokens": 5,
                             "output_tokens_details": None, "total_tokens": tokens + 5}
    if usage_given is not None:
        given = dict(usage_given)
        usage = {"input_tokens": given.get("input_tokens", tokens),
                 "input_tokens_details": {"cached_tokens": given.get("cached_tokens", 0)},
                 "output_tokens": given.get("output_tokens", 5),
                 "output_tokens_details": {"reasoning_tokens": given.get("reasoning_tokens", 0)}}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    events.append(("response.completed", {"type": "response.completed", "response": {"id": response_id,
                                                                                      "usage": usage}}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def _route(method: str, path: str) -> str | None:
    bare = path.split("?")[0].rstrip("/")
    if method == "POST" and bare == "/v1/responses":
        return "responses"
    return None


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class ResponsesHandler(Handler):
        def serve(self, raw: bytes, body: Any) -> None:
            request = ModelRequest(self.command, self.path, dict(self.headers.items()), body)
            if _route(self.command, self.path) == "responses" and isinstance(body, dict):
                items, usage = model._answer(request)
                self.send(200, sse_body(f"resp_fake_{next(model._ids):04d}", items, max(1, len(raw) // 4), usage),
                          "text/event-stream")
                return
            model._record(request)
            error = {"error": {"type": "not_found", "message": f"fake: no {self.path}"}}
            self.send(404, json.dumps(error).encode())

    return ResponsesHandler
