"""An MCP server asking the person for input: the form read from its schema, and the request's way through
Belay with a real server (tests/core/mcp/toy_server.py --eliciting) over stdio, in both protocol eras."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest

from core.events import ElicitationRequested, ElicitationResolved, Event
from core.mcp.elicitation import Elicitations, FormField, UnsupportedSchema, checked, defaults, form_fields
from tests.conftest import run, wait_until
from tests.core.mcp.conftest import harness, stdio
from tests.core.mcp.test_manager import ERAS

SEP_1034 = {"type": "object", "required": [], "properties": {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "default": True}}}
"""The conformance suite's schema for a client's defaults (SEP-1034)."""


def test_the_form_follows_the_schema_and_starts_from_its_defaults() -> None:
    fields = {f.name: f for f in form_fields(SEP_1034)}
    assert [f.kind for f in fields.values()] == ["string", "integer", "number", "choice", "boolean"]
    assert fields["status"].options == (("active", "active"), ("inactive", "inactive"), ("pending", "pending"))
    assert fields["age"].title == "age" and fields["age"].description == "User age"
    assert defaults(SEP_1034) == {"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                                  "verified": True}


def test_titled_and_multiple_choices_as_sep_1330_has_them() -> None:
    schema = {"type": "object", "required": ["colour"], "properties": {
        "colour": {"type": "string", "title": "Colour", "oneOf": [{"const": "r", "title": "Red"},
                                                                  {"const": "g", "title": "Green"}]},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Option A", "Option B"]},
        "tags": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["x", "y", "z"]},
                 "default": ["x"]},
        "sizes": {"type": "array", "items": {"anyOf": [{"const": "s", "title": "Small"},
                                                       {"const": "l", "title": "Large"}]}}}}
    fields = {f.name: f for f in form_fields(schema)}
    assert fields["colour"] == FormField(name="colour", kind="choice", title="Colour", required=True,
                                         options=(("r", "Red"), ("g", "Green")))
    assert fields["legacy"].options == (("a", "Option A"), ("b", "Option B"))
    assert fields["tags"].kind == "choices" and fields["tags"].default == ["x"] and fields["tags"].min_length == 1
    assert fields["sizes"].options == (("s", "Small"), ("l", "Large"))
    assert checked(schema, {"colour": "g", "tags": ["y", "z"], "legacy": ""}) == {"colour": "g", "tags": ["y", "z"]}
    with pytest.raises(ValueError, match="^Colour is required; tags must be some of x, y, z$"):
        checked(schema, {"tags": ["w"]})


def test_accepting_checks_types_and_limits() -> None:
    schema = {"type": "object", "required": ["email"], "properties": {
        "email": {"type": "string", "format": "email", "maxLength": 40},
        "count": {"type": "integer", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number"}, "ok": {"type": "boolean"}}}
    assert checked(schema, {"email": "a@b.org", "count": 3, "ratio": 2, "ok": False}) == {
        "email": "a@b.org", "count": 3, "ratio": 2, "ok": False}
    with pytest.raises(ValueError) as problems:
        checked(schema, {"email": "nobody", "count": 12, "ratio": "x", "ok": "yes", "extra": 1})
    assert str(problems.value) == ("'extra' is not asked for; email must be an email address; count must be at "
                                   "most 9; ratio must be a number; ok must be yes or no")
    with pytest.raises(ValueError, match="count must be a whole number"):
        checked(schema, {"email": "a@b.org", "count": 1.5})
    with pytest.raises(ValueError, match="ok must be yes or no"):
        checked(schema, {"email": "a@b.org", "ok": 1})


@pytest.mark.parametrize("schema", [{"type": "object", "properties": {"where": {"type": "object"}}},
                                    {"type": "array"},
                                    {"type": "object", "properties": {"pick": {"type": "string", "enum": "ab"}}}])
def test_a_schema_that_is_not_a_flat_form_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchema):
        form_fields(schema)


class Window:
    """Stands for a front end: records what the console publishes; may be there or not."""

    def __init__(self, present: bool = True) -> None:
        self.present = present
        self.events: list[Event] = []
        self.elicitations = Elicitations(self.events.append, can_ask=lambda: self.present)

    def requests(self) -> list[ElicitationRequested]:
        return [e for e in self.events if isinstance(e, ElicitationRequested)]

    def resolutions(self) -> list[ElicitationResolved]:
        return [e for e in self.events if isinstance(e, ElicitationResolved)]


@pytest.mark.parametrize("era", ERAS)
def test_a_servers_question_waits_for_the_person_and_the_answer_reaches_the_server(tmp_path: Path,
                                                                                  era: tuple[str, ...]) -> None:
    window = Window()

    async def scenario() -> tuple[str, str, str]:
        async with harness(tmp_path, stdio("toy", "--eliciting", *era), elicit=window.elicitations.ask) as h:
            call = asyncio.ensure_future(h.call("mcp__toy__book", {}))
            await wait_until(window.elicitations.pending, 20, "the server's question to reach the person")
            [asked] = window.elicitations.pending()
            assert asked.server == "toy" and asked.message == "Who is the booking for?" and asked.mode == "form"
            assert defaults(asked.requested_schema) == {"nights": 2, "room": "double", "breakfast": True}
            with pytest.raises(ValueError, match="^Name is required$"):
                window.elicitations.answer(asked.elicitation_id, "accept", {"nights": 3})
            assert window.elicitations.pending() == [asked]  # a wrong form is not an answer
            content = defaults(asked.requested_schema) | {"name": "Ada", "nights": 3}
            assert window.elicitations.answer(asked.elicitation_id, "accept", content)
            assert not window.elicitations.answer(asked.elicitation_id, "decline")  # answered once
            booked = (await asyncio.wait_for(call, 20)).text

            call = asyncio.ensure_future(h.call("mcp__toy__book", {}))
            await wait_until(window.elicitations.pending, 20, "the second question")
            [second] = window.elicitations.pending()
            assert window.elicitations.answer(second.elicitation_id, "decline")
            declined = (await asyncio.wait_for(call, 20)).text

            call = asyncio.ensure_future(h.call("mcp__toy__book", {}))
            await wait_until(window.elicitations.pending, 20, "the third question")
            [third] = window.elicitations.pending()
            assert window.elicitations.answer(third.elicitation_id, "cancel")
            cancelled = (await asyncio.wait_for(call, 20)).text
        return booked, declined, cancelled

    booked, declined, cancelled = run(scenario())
    assert booked.startswith("booked ")
    assert json.loads(booked.removeprefix("booked ")) == {"name": "Ada", "nights": 3, "room": "double",
                                                         "breakfast": True}
    assert (declined, cancelled) == ("not booked: decline", "not booked: cancel")
    assert [r.action for r in window.resolutions()] == ["accept", "decline", "cancel"]
    assert all(r.by == "person" for r in window.resolutions())
    assert [e.elicitation_id for e in window.requests()] == [e.elicitation_id for e in window.resolutions()]


def test_without_a_window_the_question_is_declined_at_once(tmp_path: Path) -> None:
    window = Window(present=False)

    async def scenario() -> str:
        async with harness(tmp_path, stdio("toy", "--eliciting"), elicit=window.elicitations.ask) as h:
            return (await asyncio.wait_for(h.call("mcp__toy__book", {}), 20)).text

    assert run(scenario()) == "not booked: decline"
    [resolved] = window.resolutions()
    assert (resolved.action, resolved.by) == ("decline", "headless")
    assert window.elicitations.pending() == []


def test_a_question_the_server_stops_waiting_for_leaves_the_window(tmp_path: Path) -> None:
    window = Window()

    async def scenario() -> None:
        async with harness(tmp_path, stdio("toy", "--eliciting", "--legacy"), elicit=window.elicitations.ask) as h:
            call = asyncio.ensure_future(h.call("mcp__toy__book", {}))
            await wait_until(window.elicitations.pending, 20, "the server's question to reach the person")
            await h.manager.restart("toy")  # the session ends under the question
            await wait_until(lambda: not window.elicitations.pending(), 20, "the question to be withdrawn")
            with pytest.raises(Exception):  # noqa: B017, PT011 - the call fails with the lost connection
                await asyncio.wait_for(call, 20)

    run(scenario())
    [resolved] = window.resolutions()
    assert (resolved.action, resolved.by) == ("cancel", "server")


def test_unshowable_forms_and_pages_that_are_not_web_pages_are_declined_saying_why(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "core.mcp.elicitation")
    window = Window()
    script = mt.ElicitRequestURLParams(message="Sign in", url="javascript:alert(1)", elicitation_id="e1")
    nested = mt.ElicitRequestFormParams(message="Where?", requested_schema={
        "type": "object", "properties": {"place": {"type": "object"}}})

    async def scenario() -> list[mt.ElicitResult]:
        return [await window.elicitations.ask("web", script), await window.elicitations.ask("web", nested)]

    assert [r.action for r in run(scenario())] == ["decline", "decline"]
    assert [(r.action, r.by) for r in window.resolutions()] == [("decline", "belay"), ("decline", "belay")]
    assert window.requests()[0].mode == "url" and window.requests()[0].url == "javascript:alert(1)"
    assert "not an http(s) address" in caplog.text and "'place' is of type 'object'" in caplog.text


def test_a_page_to_visit_waits_for_the_person_and_accepting_sends_no_content() -> None:
    window = Window()
    page = mt.ElicitRequestURLParams(message="Sign in to the tracker", url="https://example.org/login",
                                     elicitation_id="e1")

    async def scenario() -> mt.ElicitResult:
        asked = asyncio.ensure_future(window.elicitations.ask("tracker", page))
        await wait_until(window.elicitations.pending, 5, "the page to be offered")
        [request] = window.elicitations.pending()
        assert (request.mode, request.url, request.requested_schema) == ("url", "https://example.org/login", {})
        assert window.elicitations.answer(request.elicitation_id, "accept", {"ignored": 1})
        return await asked

    result = run(scenario())
    assert result.action == "accept" and result.content is None
    assert [(r.action, r.by) for r in window.resolutions()] == [("accept", "person")]
