"""The attach protocol's lines: what a console sends reads back as what it was, a bad command is refused."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from core import CallQueued
from core.remote.protocol import Command, EventLine, Reply, ServerLine, Welcome


def test_each_line_a_console_sends_reads_back_as_its_type() -> None:
    adapter: TypeAdapter[Welcome | EventLine | Reply] = TypeAdapter(ServerLine)
    event = CallQueued(call_id="c1", agent_id="a1", tool="Write", args={"file_path": "x"}, summary="x", seq=7)
    welcome = Welcome(workspace="/ws", session_id="s1", last_seq=6, agents=[], batches=[], calls=[], externals=[],
                      pending=[])
    for line in (welcome, EventLine(event=event), Reply(id=3, ok=False, error="no")):
        assert adapter.validate_json(line.model_dump_json()) == line
    back = adapter.validate_json(EventLine(event=event).model_dump_json())
    assert isinstance(back, EventLine) and isinstance(back.event, CallQueued) and back.event.seq == 7


@pytest.mark.parametrize("line", [
    '{"id": 1, "op": "explode", "call_id": "c1"}',
    '{"id": 1, "op": "approve"}',
    '{"id": 1, "op": "always_allow", "call_id": "c1", "scope": "forever"}',
    '{"id": 1, "op": "deny", "call_id": "c1", "via": "carrier pigeon"}',
    '{"id": 1, "op": "approve", "call_id": "c1", "extra": true}',
])
def test_a_command_that_does_not_fit_is_refused(line: str) -> None:
    with pytest.raises(ValidationError):
        Command.model_validate_json(line)
