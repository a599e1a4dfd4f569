"""An MCP server's request for input as the person sees it: the schema as a form, and the three answers.

The form alone (offscreen, clicked like a person), then the whole way in the real window: a real MCP
server (tests/core/mcp/toy_server.py --eliciting) configured in the settings asks while an agent's
call runs; the form shows above the approvals, the person fills it in and accepts; the server books
with what was typed, and the form leaves.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QWidget

from core import Console, ElicitationRequested, RunStatus, config_dir
from gui.window.approvals.elicitation_form import ElicitationForm, ElicitationPanel
from gui.window.workspace.window import MainWindow
from tests.conftest import ROOT, wait_until
from tests.gui.window.workspace.test_window import in_window

LEFT = Qt.MouseButton.LeftButton
SCHEMA = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "Name", "description": "Who"},
    "age": {"type": "integer", "default": 30, "minimum": 0},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
    "verified": {"type": "boolean", "default": True},
    "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["y"]}}}


def _request(schema: dict[str, Any] = SCHEMA, elicitation_id: str = "eli_1") -> ElicitationRequested:
    return ElicitationRequested(elicitation_id=elicitation_id, server="toy", message="Who is it for?",
                                requested_schema=schema)


def _answers(form: ElicitationForm) -> list[tuple[str, str, Any]]:
    heard: list[tuple[str, str, Any]] = []
    form.answered.connect(lambda *answer: heard.append(answer))
    return heard


def test_the_form_starts_from_the_defaults_and_accepts_what_fits(qtbot: Any) -> None:
    form = ElicitationForm(_request())
    qtbot.addWidget(form)
    form.show()
    heard = _answers(form)
    editors = form.editors
    assert isinstance(editors["name"], QLineEdit) and editors["name"].placeholderText() == "Who"
    assert isinstance(editors["age"], QLineEdit) and editors["age"].text() == "30"
    assert isinstance(editors["score"], QLineEdit) and editors["score"].text() == "95.5"
    assert isinstance(editors["status"], QComboBox) and editors["status"].currentData() == "active"
    assert isinstance(editors["verified"], QCheckBox) and editors["verified"].isChecked()
    assert isinstance(editors["colour"], QComboBox) and editors["colour"].currentData() is None
    assert [editors["colour"].itemText(i) for i in range(editors["colour"].count())] == ["", "Red", "Green"]
    assert "Who is it for?" in form.message.text() and "toy" in form.title.text()

    qtbot.mouseClick(form.accept_button, LEFT)  # the name is required
    assert heard == [] and form.error.isVisible() and "Name is required" in form.error.text()

    qtbot.keyClicks(editors["name"], "Ada")
    editors["age"].setText("thirty")
    qtbot.mouseClick(form.accept_button, LEFT)
    assert heard == [] and form.error.text() == "age must be a whole number"

    editors["age"].setText("-1")
    qtbot.mouseClick(form.accept_button, LEFT)
    assert heard == [] and form.error.text() == "age must be at least 0"

    editors["age"].setText("41")
    editors["colour"].setCurrentIndex(2)
    [x_box] = [b for b in editors["tags"].findChildren(QCheckBox) if b.text() == "x"]
    x_box.setChecked(True)
    qtbot.mouseClick(form.accept_button, LEFT)
    assert heard == [("eli_1", "accept", {"name": "Ada", "age": 41, "score": 95.5, "status": "active",
                                          "verified": True, "colour": "g", "tags": ["x", "y"]})]
    assert not form.error.isVisible()


def test_decline_and_cancel_send_no_content(qtbot: Any) -> None:
    form = ElicitationForm(_request())
    qtbot.addWidget(form)
    heard = _answers(form)
    qtbot.mouseClick(form.decline_button, LEFT)
    qtbot.mouseClick(form.cancel_button, LEFT)
    assert heard == [("eli_1", "decline", None), ("eli_1", "cancel", None)]


def test_the_panel_shows_one_form_per_waiting_request_and_hides_when_none_waits(qtbot: Any) -> None:
    window = QWidget()
    panel = ElicitationPanel(window)
    qtbot.addWidget(window)
    window.show()
    waiting: list[int] = []
    panel.waiting_changed.connect(waiting.append)
    assert not panel.isVisible()
    panel.add(_request(elicitation_id="eli_1"))
    panel.add(_request(elicitation_id="eli_2"))
    panel.add(_request(elicitation_id="eli_2"))  # told twice (a resync): shown once
    panel.add(_request({"type": "object", "properties": {"where": {"type": "object"}}}, "eli_nested"))
    assert [f.elicitation_id for f in panel.forms()] == ["eli_1", "eli_2"] and panel.isVisible()
    panel.set_pending([_request(elicitation_id="eli_2"), _request(elicitation_id="eli_3")])
    assert [f.elicitation_id for f in panel.forms()] == ["eli_2", "eli_3"]
    panel.remove("eli_2")
    panel.remove("eli_3")
    panel.remove("eli_3")
    assert panel.forms() == [] and not panel.isVisible()
    assert waiting == [1, 2, 1, 2, 1, 0]


def test_a_page_to_visit_opens_only_when_the_person_says_so(qtbot: Any) -> None:
    opened: list[str] = []
    window = QWidget()
    panel = ElicitationPanel(window, opener=opened.append)
    qtbot.addWidget(window)
    window.show()
    url = "https://pay.example.org/checkout?id=42&next=%3Cb%3E"
    panel.add(ElicitationRequested(elicitation_id="eli_url", server="shop", message="Pay for the build minutes",
                                   mode="url", url=url))
    [form] = panel.forms()
    heard = _answers(form)
    assert opened == [] and form.address.isVisible() and form.editors == {}
    assert "<b>pay.example.org</b>" in form.address.text() and "&amp;next=%3Cb%3E" in form.address.text()
    assert form.accept_button.text() == "Open the page"
    qtbot.mouseClick(form.accept_button, LEFT)
    assert opened == [url] and heard == [("eli_url", "accept", None)]


def test_in_the_window_a_servers_question_is_answered_with_the_form(qtbot: Any, loop: Any,
                                                                   workspace: Path) -> None:
    toy = ROOT / "tests" / "core" / "mcp" / "toy_server.py"
    (config_dir() / "settings.toml").write_text(
        f'[mcp.servers.toy]\ncommand = {json.dumps(sys.executable)}\nargs = ["{toy}", "stdio", "--eliciting"]\n')

    async def body(console: Console, window: MainWindow) -> None:
        await wait_until(lambda: window.mcp.states().get("toy", "").startswith("ready"), timeout=30,
                         what="the toy server to be ready")
        console.set_mode("bypass")  # the call itself is not asked about: only the server's question is
        agent = await console.start_agent("agent", "scripted")
        call = asyncio.ensure_future(console.call(agent, "mcp__toy__book", {}))
        await wait_until(window.elicitations.forms, 30, "the server's question to show")
        [form] = window.elicitations.forms()
        assert window.elicitations.isVisible() and form.message.text() == "Who is the booking for?"
        assert form.editors["nights"].text() == "2"  # type: ignore[union-attr]
        qtbot.keyClicks(form.editors["name"], "Ada")
        qtbot.mouseClick(form.accept_button, LEFT)
        outcome = await asyncio.wait_for(call, 30)
        assert outcome.status == RunStatus.DONE, outcome
        assert json.loads(outcome.text.removeprefix("booked ")) == {"name": "Ada", "nights": 2, "room": "double",
                                                                    "breakfast": True}
        await wait_until(lambda: not window.elicitations.forms(), 10, "the form to leave")
        assert not window.elicitations.isVisible() and console.elicitations.pending() == []

        call = asyncio.ensure_future(console.call(agent, "mcp__toy__book", {}))
        await wait_until(window.elicitations.forms, 30, "the second question")
        qtbot.mouseClick(window.elicitations.forms()[0].decline_button, LEFT)
        assert (await asyncio.wait_for(call, 30)).text == "not booked: decline"
        await wait_until(lambda: not window.elicitations.forms(), 10, "the second form to leave")

    in_window(qtbot, loop, workspace, body)
