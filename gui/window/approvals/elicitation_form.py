"""An MCP server asking the person for input: its message and its schema as a form, answered like an approval.

A configured MCP server may ask, in the middle of its work, for something only the person can give
(a name, a choice, a confirmation).  The console publishes it as an `ElicitationRequested`; this panel
shows one form per waiting request above the approvals, built from the server's flat JSON schema
(`core.form_fields`): a line for text, a line checked as a number or a whole number, a box for yes or
no, a list for one choice, boxes for several.  The form starts from the schema's defaults.  Accept
sends what the form holds once it fits the schema (what does not is said under the form, and nothing
is sent); Decline says no; Cancel dismisses it without a choice.  A request leaves the panel when the
bridge says it ended (answered here, or the server stopped waiting).

A server may instead ask the person to visit a page (URL mode: a sign-in elsewhere, a payment): the
form then shows the whole address and its host, and "Open the page" opens it in the browser and tells
the server so; nothing opens without that click.

Signals:
    answered(str, str, object): elicitation id, "accept" | "decline" | "cancel", the content (accept only).
    waiting_changed(int): how many requests wait now.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core import ElicitationRequested, FormField, checked_elicitation, form_fields

Editor = QLineEdit | QCheckBox | QComboBox | QWidget
Opener = Callable[[str], object]


def open_in_browser(url: str) -> None:
    QDesktopServices.openUrl(QUrl(url))


class ElicitationForm(QFrame):
    """One server's request: who asks, what it says, the form, and the three answers."""

    answered = Signal(str, str, object)

    def __init__(self, request: ElicitationRequested, parent: QWidget | None = None,
                 opener: Opener = open_in_browser) -> None:
        super().__init__(parent)
        self.setObjectName("elicitationForm")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.request = request
        self._opener = opener
        self.fields = form_fields(request.requested_schema) if request.mode == "form" else []
        self.title = QLabel(f"<b>MCP server {html.escape(request.server)} asks for your input</b>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.message = QLabel(request.message)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.editors: dict[str, Editor] = {}
        self.error = QLabel()
        self.error.setObjectName("elicitationError")
        self.error.setWordWrap(True)
        self.error.hide()
        self.address = QLabel()
        self.address.setTextFormat(Qt.TextFormat.RichText)
        self.address.setWordWrap(True)
        self.address.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if request.mode == "url" and request.url:
            host = urlsplit(request.url).hostname or "?"
            self.address.setText(f"It asks you to open a page on <b>{html.escape(host)}</b>:<br>"
                                 f"<code>{html.escape(request.url)}</code>")
        self.address.setVisible(request.mode == "url")
        self.accept_button = QPushButton("Open the page" if request.mode == "url" else "Accept")
        self.accept_button.setObjectName("elicitationAccept")
        self.decline_button = QPushButton("Decline")
        self.cancel_button = QPushButton("Cancel")
        self.accept_button.clicked.connect(self.accept)
        self.decline_button.clicked.connect(self.decline)
        self.cancel_button.clicked.connect(self.cancel)
        form = QFormLayout()
        for field in self.fields:
            editor = _editor(field)
            editor.setObjectName(f"field_{field.name}")
            editor.setToolTip(field.description)
            self.editors[field.name] = editor
            label = QLabel(html.escape(field.title) + (" <b>*</b>" if field.required else ""))
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setToolTip(field.description)
            form.addRow(label, editor)
        buttons = QHBoxLayout()
        for button in (self.accept_button, self.decline_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.addWidget(self.title)
        column.addWidget(self.message)
        column.addWidget(self.address)
        column.addLayout(form)
        column.addWidget(self.error)
        column.addLayout(buttons)

    @property
    def elicitation_id(self) -> str:
        return self.request.elicitation_id

    def content(self) -> dict[str, Any]:
        """What the form holds, each field read as its type (ValueError: a number that is not one)."""
        values: dict[str, Any] = {}
        problems: list[str] = []
        for field in self.fields:
            try:
                value = _value(field, self.editors[field.name])
            except ValueError as e:
                problems.append(f"{field.title} {e}")
                continue
            if value is not None:
                values[field.name] = value
        if problems:
            raise ValueError("; ".join(problems))
        return values

    def accept(self) -> None:
        if self.request.mode == "url":
            if self.request.url:
                self._opener(self.request.url)
            self.answered.emit(self.elicitation_id, "accept", None)
            return
        try:
            content = checked_elicitation(self.request.requested_schema, self.content())
        except ValueError as e:
            self.show_error(str(e))
            return
        self.show_error("")
        self.answered.emit(self.elicitation_id, "accept", content)

    def decline(self) -> None:
        self.answered.emit(self.elicitation_id, "decline", None)

    def cancel(self) -> None:
        self.answered.emit(self.elicitation_id, "cancel", None)

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))

    def __repr__(self) -> str:
        return f"<ElicitationForm {self.elicitation_id} from {self.request.server} fields={len(self.fields)}>"


def _editor(field: FormField) -> Editor:
    if field.kind == "boolean":
        box = QCheckBox(field.description or "Yes")
        box.setChecked(field.default is True)
        return box
    if field.kind == "choice":
        combo = QComboBox()
        if not field.required or field.default is None:
            combo.addItem("", None)  # nothing chosen yet
        for value, label in field.options:
            combo.addItem(label, value)
        if field.default is not None:
            combo.setCurrentIndex(combo.findData(field.default))
        return combo
    if field.kind == "choices":
        group = QWidget()
        row = QHBoxLayout(group)
        row.setContentsMargins(0, 0, 0, 0)
        chosen = field.default if isinstance(field.default, list) else []
        for value, label in field.options:
            box = QCheckBox(label)
            box.setProperty("value", value)
            box.setChecked(value in chosen)
            row.addWidget(box)
        row.addStretch(1)
        return group
    line = QLineEdit("" if field.default is None else _shown(field.default))
    line.setPlaceholderText(field.description or {"number": "a number", "integer": "a whole number"}.get(
        field.kind, field.format or ""))
    if field.max_length is not None and field.kind == "string":
        line.setMaxLength(field.max_length)
    return line


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _value(field: FormField, editor: Editor) -> Any:
    """The editor's value as the field's type; None for an empty line or no choice."""
    if isinstance(editor, QCheckBox):
        return editor.isChecked()
    if isinstance(editor, QComboBox):
        return editor.currentData()
    if isinstance(editor, QLineEdit):
        text = editor.text().strip() if field.kind != "string" else editor.text()
        if text == "":
            return None
        if field.kind == "integer":
            try:
                return int(text)
            except ValueError:
                raise ValueError("must be a whole number") from None
        if field.kind == "number":
            try:
                number = float(text)
            except ValueError:
                raise ValueError("must be a number") from None
            if not math.isfinite(number):
                raise ValueError("must be a number")
            return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        return text
    return [box.property("value") for box in editor.findChildren(QCheckBox) if box.isChecked()]


class ElicitationPanel(QWidget):
    """The requests for input that wait, one form each, oldest first; hidden while there are none."""

    answered = Signal(str, str, object)
    waiting_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None, opener: Opener = open_in_browser) -> None:
        super().__init__(parent)
        self.setObjectName("elicitationPanel")
        self.opener = opener
        """Opens a page a server asks the person to visit (the browser; tests record it)."""
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        self._forms: dict[str, ElicitationForm] = {}
        self.hide()

    def forms(self) -> list[ElicitationForm]:
        return list(self._forms.values())

    def form(self, elicitation_id: str) -> ElicitationForm | None:
        return self._forms.get(elicitation_id)

    def add(self, request: ElicitationRequested) -> None:
        if request.elicitation_id in self._forms:
            return
        try:
            form = ElicitationForm(request, opener=self.opener)
        except ValueError:
            return  # a schema no form can show: the core declines it
        form.answered.connect(self.answered)
        self._forms[request.elicitation_id] = form
        self._column.addWidget(form)
        self._changed()

    def remove(self, elicitation_id: str) -> None:
        form = self._forms.pop(elicitation_id, None)
        if form is not None:
            self._column.removeWidget(form)
            form.hide()
            form.deleteLater()
            self._changed()

    def set_pending(self, requests: list[ElicitationRequested]) -> None:
        """After missed events: show exactly the requests that wait now."""
        wanted = {r.elicitation_id for r in requests}
        for elicitation_id in [i for i in self._forms if i not in wanted]:
            self.remove(elicitation_id)
        for request in requests:
            self.add(request)

    def show_error(self, elicitation_id: str, text: str) -> None:
        form = self._forms.get(elicitation_id)
        if form is not None:
            form.show_error(text)

    def _changed(self) -> None:
        self.setVisible(bool(self._forms))
        self.waiting_changed.emit(len(self._forms))

    def __repr__(self) -> str:
        return f"<ElicitationPanel waiting={list(self._forms)}>"
