"""Each agent and each call as an OpenTelemetry span, sent live over OTLP/HTTP while the console works.

Off unless the user's settings name an endpoint (`core.telemetry.settings`).
It follows the console's bus as a listener, on the loop: starting or
ending a span costs microseconds, and the SDK's batch processor sends them
from a thread of its own, so a slow or absent collector never holds the
loop or a call (spans it cannot take are dropped, by the SDK's bounded
queue, not queued without end).

An agent is a span (`invoke_agent <name>`) from its start to its end, its
sub-agents' spans under it; each call is a span under its agent
(`execute_tool <tool>`), from when it was queued to when it ended. Their
attributes follow OpenTelemetry's generative-AI conventions for agents and
tool execution (`gen_ai.operation.name`, `gen_ai.tool.name`,
`gen_ai.tool.call.id`, `gen_ai.agent.id`, `gen_ai.agent.name`), with
Belay's own beside them: who decided (`belay.decision`,
`belay.decided_by`, `belay.rule`), how the call ended (`belay.outcome`,
`error.type`), and the files it changed (`belay.files_changed`, paths).
A call's arguments and output go only with `contents` set.  What an agent's
transcript says (core.outside.transcripts) goes too: each model response a
`chat <model>` span under its agent's, with its tokens
(`gen_ai.usage.input_tokens`, the cached part among them, `..output_tokens`),
each message an event on its agent's span (its text only with `contents`). When the
console closes, the spans still open end there and what is queued is sent
(within EXPORT_TIMEOUT_S).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.events import (
    AgentFinished,
    AgentStarted,
    ApprovalResolved,
    CallFinished,
    CallQueued,
    ConversationRecorded,
    Event,
)
from core.models.records import RunStatus
from core.telemetry.settings import TelemetrySettings

if TYPE_CHECKING:
    from opentelemetry.trace import Span

EXPORT_TIMEOUT_S = 5.0
CONTENT_CHARS = 4_000
"""With `contents`, a call's arguments and output are cut to this many characters each."""
_FAILED = frozenset({RunStatus.FAILED, RunStatus.TIMED_OUT})


def _ns(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000_000)


class SpanExport:
    """A bus listener that turns agents and calls into spans (see the module's docstring)."""

    def __init__(self, settings: TelemetrySettings, workspace: str, session_id: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self._contents = settings.contents
        self._provider = TracerProvider(resource=Resource.create({
            "service.name": "belay", "belay.workspace": workspace, "belay.session.id": session_id}))
        sender = OTLPSpanExporter(endpoint=settings.otlp_endpoint, headers=dict(settings.headers),
                                  timeout=EXPORT_TIMEOUT_S)
        self._provider.add_span_processor(BatchSpanProcessor(sender, export_timeout_millis=EXPORT_TIMEOUT_S * 1000))
        self._tracer = self._provider.get_tracer("belay")
        self._agents: dict[str, Span] = {}
        self._calls: dict[str, Span] = {}
        self.endpoint = settings.otlp_endpoint

    def __call__(self, event: Event) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _start(self, name: str, parent: Span | None, at: datetime, attributes: dict[str, Any]) -> Span:
        from opentelemetry import trace

        context = trace.set_span_in_context(parent) if parent is not None else None
        return self._tracer.start_span(name, context=context, start_time=_ns(at),
                                       attributes=attributes)

    def _agent_started(self, e: AgentStarted) -> None:
        self._agents[e.agent_id] = self._start(
            f"invoke_agent {e.name}", self._agents.get(e.parent_id or ""), e.at,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": e.agent_id, "gen_ai.agent.name": e.name,
             "belay.agent.kind": e.agent_kind, "belay.session.id": e.session_id})

    def _agent_finished(self, e: AgentFinished) -> None:
        span = self._agents.pop(e.agent_id, None)
        if span is not None:
            span.set_attribute("belay.outcome", str(e.status.value))
            span.end(end_time=_ns(e.at))

    def _call_queued(self, e: CallQueued) -> None:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.tool,
                                      "gen_ai.tool.call.id": e.call_id, "gen_ai.tool.type": "function",
                                      "gen_ai.agent.id": e.agent_id, "belay.summary": e.summary}
        if e.batch_id:
            attributes["belay.batch.id"] = e.batch_id
        if e.use_id:
            attributes["belay.tool_use_id"] = e.use_id
        if self._contents:
            import json

            attributes["gen_ai.tool.call.arguments"] = json.dumps(e.args, default=str)[:CONTENT_CHARS]
        self._calls[e.call_id] = self._start(f"execute_tool {e.tool}", self._agents.get(e.agent_id), e.at,
                                             attributes)

    def _approval_resolved(self, e: ApprovalResolved) -> None:
        span = self._calls.get(e.call_id)
        if span is not None:
            span.set_attribute("belay.decision", str(e.decision.value))
            span.set_attribute("belay.decided_by", e.by)
            if e.rule:
                span.set_attribute("belay.rule", e.rule)
            if e.via:
                span.set_attribute("belay.decided_via", e.via)

    def _call_finished(self, e: CallFinished) -> None:
        from opentelemetry.trace import Status, StatusCode

        span = self._calls.pop(e.call_id, None)
        if span is None:
            return
        span.set_attribute("belay.outcome", str(e.status.value))
        span.set_attribute("belay.files_changed", [change.path for change in e.changes])
        if e.error is not None:
            span.set_attribute("error.type", str(e.error.kind.value))
        if e.status in _FAILED:
            span.set_status(Status(StatusCode.ERROR, e.error.message if e.error else str(e.status.value)))
        if self._contents and e.output:
            span.set_attribute("gen_ai.tool.call.result", e.output[:CONTENT_CHARS])
        span.end(end_time=_ns(e.at))

    def _conversation(self, e: ConversationRecorded) -> None:
        """Each model response a span (`chat <model>`) under its agent's, with its tokens; each message an event
        on its agent's span, its text only with `contents`."""
        for use in e.tokens:
            usage = use.usage
            span = self._start(f"chat {use.model}".rstrip(), self._agents.get(use.agent_id), use.at, {
                "gen_ai.operation.name": "chat", "gen_ai.response.model": use.model, "gen_ai.response.id":
                use.response_id, "gen_ai.agent.id": use.agent_id, "gen_ai.usage.input_tokens": usage.context,
                "gen_ai.usage.output_tokens": usage.output, "belay.usage.cache_read_tokens": usage.cache_read,
                "belay.usage.cache_write_tokens": usage.cache_write, "belay.tool_use_ids": list(use.tool_uses)})
            span.end(end_time=_ns(use.at))
        for message in e.messages:
            agent = self._agents.get(message.agent_id)
            if agent is not None:
                attributes = {"belay.message.kind": message.kind, **({"belay.message.text": message.text[
                    :CONTENT_CHARS]} if self._contents else {})}
                agent.add_event(f"belay.{message.kind}", attributes, timestamp=_ns(message.at))

    def close(self) -> None:
        """End what is still open (calls first, then agents, deepest last started first) and send what is
        queued, waiting at most EXPORT_TIMEOUT_S.  Blocking: the console calls it off the loop."""
        for spans in (self._calls, self._agents):
            for span in reversed(list(spans.values())):
                span.set_attribute("belay.outcome", "open when the console closed")
                span.end()
            spans.clear()
        self._provider.force_flush(int(EXPORT_TIMEOUT_S * 1000))
        self._provider.shutdown()

    def __repr__(self) -> str:
        return f"<SpanExport to {self.endpoint} agents={len(self._agents)} calls={len(self._calls)}>"


_HANDLERS: dict[type, Any] = {
    AgentStarted: SpanExport._agent_started,
    AgentFinished: SpanExport._agent_finished,
    CallQueued: SpanExport._call_queued,
    ApprovalResolved: SpanExport._approval_resolved,
    CallFinished: SpanExport._call_finished,
    ConversationRecorded: SpanExport._conversation,
}
