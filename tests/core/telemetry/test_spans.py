"""Spans of a console's agents and calls, received by a real OTLP/HTTP receiver on this machine."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from core import Console, RunStatus
from core.telemetry import spans as span_export
from tests.conftest import RUNAWAY_S, run

TOKEN = "Bearer receiver-token-1"


class Receiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 that keeps what it is sent (with the right token)."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.resources: list[dict[str, str]] = []
        self.refused = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != "/v1/traces" or self.headers.get("Authorization") != TOKEN:
                    receiver.refused += 1
                    self.send_response(401)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    receiver.resources.append({a.key: a.value.string_value
                                               for a in resource_spans.resource.attributes})
                    for scope in resource_spans.scope_spans:
                        receiver.spans.extend(scope.spans)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _settings(text: str) -> None:
    folder = Path(os.environ["BELAY_CONFIG_DIR"])  # the test's own (tests/conftest.py)
    (folder / "settings.toml").write_text(text)


def _attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for attribute in span.attributes:
        value = attribute.value
        kind = value.WhichOneof("value")
        found[attribute.key] = ([v.string_value for v in value.array_value.values] if kind == "array_value"
                                else getattr(value, kind))
    return found


def test_agents_and_calls_arrive_as_nested_spans_with_who_decided_and_no_contents(
        workspace: Path, receiver: Receiver) -> None:
    _settings(f'[telemetry]\notlp_endpoint = "{receiver.url}"\nheaders = {{ Authorization = "{TOKEN}" }}\n')
    ids: dict[str, str] = {}

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            lead = await console.start_agent("lead", "scripted")
            docs = await console.start_agent("docs", "subagent", parent=lead)
            read = await console.call(docs, "Read", {"file_path": str(workspace / "README.md")})
            assert read.status == RunStatus.DONE
            ids["read"] = read.call_id
            write = asyncio.ensure_future(console.call(lead, "Write", {"file_path": str(workspace / "new.txt"),
                                                                       "content": "CONTENT-NOT-SENT"}))
            while not console.pending_approvals():
                await asyncio.sleep(0.005)
            ids["write"] = console.pending_approvals()[0].call_id
            console.deny(ids["write"], "not now", via="window")
            assert (await write).status == RunStatus.DENIED

    run(scenario())  # the console's close sends what is queued
    spans = {span.name: span for span in receiver.spans}
    assert {"invoke_agent lead", "invoke_agent docs", "execute_tool Read", "execute_tool Write"} <= set(spans)
    lead, docs = spans["invoke_agent lead"], spans["invoke_agent docs"]
    read, write = spans["execute_tool Read"], spans["execute_tool Write"]
    assert docs.parent_span_id == lead.span_id and read.parent_span_id == docs.span_id
    assert write.parent_span_id == lead.span_id and not lead.parent_span_id
    assert len({span.trace_id for span in (lead, docs, read, write)}) == 1
    wanted = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Read", "gen_ai.tool.call.id": ids["read"],
              "belay.outcome": "done", "belay.decided_by": "policy", "belay.decision": "approved",
              "belay.files_changed": []}
    assert {key: _attributes(read).get(key) for key in wanted} == wanted
    assert _attributes(write)["belay.decided_by"] == "person" and _attributes(write)["belay.decision"] == "denied"
    assert _attributes(write)["belay.decided_via"] == "window" and "belay.decided_via" not in _attributes(read)
    assert _attributes(write)["belay.outcome"] == "denied" and _attributes(write)["gen_ai.tool.call.id"] == ids["write"]
    assert _attributes(lead)["gen_ai.agent.name"] == "lead" and _attributes(lead)["gen_ai.operation.name"] == \
        "invoke_agent"
    assert read.start_time_unix_nano <= read.end_time_unix_nano
    assert not any("CONTENT-NOT-SENT" in str(_attributes(span)) or "gen_ai.tool.call.arguments" in _attributes(span)
                   for span in receiver.spans)
    assert receiver.resources[0]["service.name"] == "belay" and receiver.refused == 0


def test_with_contents_a_call_carries_its_arguments_and_output(workspace: Path, receiver: Receiver) -> None:
    _settings(f'[telemetry]\notlp_endpoint = "{receiver.url}"\ncontents = true\n'
              f'headers = {{ Authorization = "{TOKEN}" }}\n')

    async def scenario() -> None:
        async with Console(workspace) as console:
            lead = await console.start_agent("lead", "scripted")
            await console.call(lead, "Read", {"file_path": str(workspace / "README.md")})

    run(scenario())
    [read] = [span for span in receiver.spans if span.name == "execute_tool Read"]
    assert "README.md" in _attributes(read)["gen_ai.tool.call.arguments"]
    assert (workspace / "README.md").read_text().splitlines()[0] in _attributes(read)["gen_ai.tool.call.result"]


@pytest.mark.allow_warning_logs  # the console logs the settings problem it reports
def test_no_endpoint_sends_nothing_and_a_workspace_cannot_set_one(workspace: Path, receiver: Receiver) -> None:
    (workspace / ".belay").mkdir(exist_ok=True)
    (workspace / ".belay" / "settings.toml").write_text(f'[telemetry]\notlp_endpoint = "{receiver.url}"\n')

    async def scenario() -> list[str]:
        async with Console(workspace) as console:
            lead = await console.start_agent("lead", "scripted")
            await console.call(lead, "Read", {"file_path": str(workspace / "README.md")})
            return list(console.settings_problems)

    problems = run(scenario())
    assert any("[telemetry] is ignored here" in problem for problem in problems)
    assert not receiver.spans and not receiver.refused


class HungCollector:
    """A collector that is down behind a live port: it takes each request and never answers (until released)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/v1/traces"
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._take, name="hung collector", daemon=True)
        self.thread.start()

    def _take(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # released
                return
            conn.recv(65536)
            self.held.append(conn)

    def release(self) -> None:
        self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not)
        self.server.close()
        self.thread.join(5)
        for conn in self.held:
            conn.close()


@pytest.mark.timeout(RUNAWAY_S)  # the calls and the close must not wait for a collector that never answers
@pytest.mark.allow_warning_logs  # the SDK logs each failed export
def test_a_collector_that_is_down_holds_up_no_call_and_the_close_only_briefly(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(span_export, "EXPORT_TIMEOUT_S", 1.0)  # what the close gives the collector: 5 s in the product
    collector = HungCollector()
    _settings(f'[telemetry]\notlp_endpoint = "{collector.url}"\n')
    done: list[RunStatus] = []

    async def scenario() -> None:
        async with Console(workspace) as console:
            lead = await console.start_agent("lead", "scripted")
            for _ in range(10):
                done.append((await console.call(lead, "Read", {"file_path": str(workspace / "README.md")})).status)

    try:
        run(scenario())
        # Every call ended though the collector answered nothing, and the console closed while it still held
        # what was sent to it: its close gave up on it (within EXPORT_TIMEOUT_S) rather than waiting.
        assert done == [RunStatus.DONE] * 10 and collector.held
    finally:
        collector.release()


def test_an_agents_responses_are_spans_with_their_tokens_and_its_words_events_without_their_text(
        workspace: Path, receiver: Receiver) -> None:
    from datetime import datetime, timezone

    from core import Message, TokenUse, Usage
    _settings(f'[telemetry]\notlp_endpoint = "{receiver.url}"\nheaders = {{ Authorization = "{TOKEN}" }}\n')

    async def scenario() -> None:
        async with Console(workspace) as console:
            lead = await console.start_agent("claude-code 1234", "claude-code")
            at = datetime.now(timezone.utc)
            await console.recorder.conversation(
                lead.agent_id, [Message(message_id="m1", agent_id=lead.agent_id, kind="text", text="WORDS-NOT-SENT",
                                        at=at)],
                [TokenUse(response_id="r1", agent_id=lead.agent_id, at=at, model="claude-opus-4",
                          usage=Usage(input=100, output=20, cache_read=900), tool_uses=("toolu_1",))])

    run(scenario())
    spans = {span.name: span for span in receiver.spans}
    chat, agent = spans["chat claude-opus-4"], spans["invoke_agent claude-code 1234"]
    assert chat.parent_span_id == agent.span_id
    wanted = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 20,
              "belay.usage.cache_read_tokens": 900, "belay.tool_use_ids": ["toolu_1"]}
    assert {key: _attributes(chat).get(key) for key in wanted} == wanted
    assert [event.name for event in agent.events] == ["belay.text"]
    assert "WORDS-NOT-SENT" not in str(agent.events)
