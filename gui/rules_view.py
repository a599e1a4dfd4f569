"""The rules view: every rule in force, and adding, removing, editing and dry-running one.

Rules come from three layers (user and workspace settings files, and this
session); the table shows where each lives.  Changes go through the
console, which writes the files and announces the new rule set; the view
redraws from that announcement, not from what it asked for.  A malformed
rule comes back as a message under the editor and nothing is lost.  An
edit adds the new rule before removing the old one, so a mistake in it
leaves the old rule in force.  A dry run lists the journaled calls of this
workspace the rule would have let through without asking.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QListWidget, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core import Console, RuleEntry
from gui.tasks import TaskSet

EMPTY = ("No rules yet: read-only commands and tools run, everything else asks. Add rules in Claude Code's "
         "syntax, e.g. <code>Bash(npm run test:*)</code>, <code>Bash(git * main)</code>, "
         "<code>Read(./src/**)</code>, <code>Edit(./docs/**)</code>, <code>mcp__docs</code>.")
ACTIONS = ("allow", "ask", "deny")
SCOPES = (("session", "this session"), ("workspace", "this workspace"), ("user", "all my workspaces"))
COLUMNS = ("Rule", "Action", "Layer", "Kept in")


class RulesView(QWidget):
    """The table of rules and the editor under it."""

    def __init__(self, console: Console, tasks: TaskSet, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._console, self._tasks = console, tasks
        self._rules: list[RuleEntry] = []
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color:#cf222e")
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.currentCellChanged.connect(self._on_current_cell_changed)
        self.rule = QLineEdit()
        self.rule.setPlaceholderText("A rule, e.g. Bash(npm run test:*)")
        self.rule.returnPressed.connect(self.add)
        self.action = QComboBox()
        self.action.addItems(ACTIONS)
        self.scope = QComboBox()
        for scope, label in SCOPES:
            self.scope.addItem(label, scope)
        self.add_button = QPushButton("Add")
        self.replace_button = QPushButton("Replace selected")
        self.remove_button = QPushButton("Remove selected")
        self.dry_run_button = QPushButton("Dry run")
        self.dry_run_button.setToolTip("Which earlier calls of this workspace this rule would have decided")
        self.add_button.clicked.connect(self.add)
        self.replace_button.clicked.connect(self.replace_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.dry_run_button.clicked.connect(self.dry_run)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.matches = QListWidget()
        self.matches.hide()
        self._layout()
        self.set_rules(console.rules(), console.settings_problems)

    def _layout(self) -> None:
        editor = QHBoxLayout()
        editor.addWidget(self.rule, 1)
        editor.addWidget(self.action)
        editor.addWidget(self.scope)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.replace_button, self.remove_button, self.dry_run_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.problems)
        layout.addWidget(self.empty)
        layout.addWidget(self.table, 2)
        layout.addLayout(editor)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.matches, 1)

    # -- what the console says -------------------------------------------------

    def set_rules(self, rules: Sequence[RuleEntry], problems: Sequence[str] = ()) -> None:
        self._rules = list(rules)
        self.table.setRowCount(len(self._rules))
        for row, entry in enumerate(self._rules):
            kept = str(entry.source) if entry.source else "memory (until Belay closes)"
            for column, text in enumerate((entry.rule, entry.action, entry.scope, kept)):
                item = QTableWidgetItem(text)
                if column == 1:
                    item.setForeground({"allow": Qt.GlobalColor.darkGreen, "ask": Qt.GlobalColor.darkYellow,
                                        "deny": Qt.GlobalColor.red}[entry.action])
                self.table.setItem(row, column, item)
        self.empty.setVisible(not self._rules)
        self.table.setVisible(bool(self._rules))
        self.problems.setText("<br>".join(html.escape(p) for p in problems))
        self.problems.setVisible(bool(problems))
        self._update_buttons()

    def selected(self) -> RuleEntry | None:
        row = self.table.currentRow()
        return self._rules[row] if 0 <= row < len(self._rules) and self.table.selectedItems() else None

    def _on_current_cell_changed(self, row: int, *_: int) -> None:
        entry = self._rules[row] if 0 <= row < len(self._rules) else None
        if entry is not None:
            self.rule.setText(entry.rule)
            self.action.setCurrentText(entry.action)
            self.scope.setCurrentIndex(max(0, self.scope.findData(entry.scope)))
        self._update_buttons()

    def _update_buttons(self) -> None:
        chosen = self.table.currentRow() >= 0 and bool(self._rules)
        self.replace_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)

    # -- commands ----------------------------------------------------------------

    def add(self) -> None:
        self._tasks.spawn(self._add(), "add a rule")

    def replace_selected(self) -> None:
        old = self.selected()
        if old is not None:
            self._tasks.spawn(self._replace(old), f"replace the rule {old.rule}")

    def remove_selected(self) -> None:
        old = self.selected()
        if old is not None:
            self._tasks.spawn(self._remove(old), f"remove the rule {old.rule}")

    def dry_run(self) -> None:
        self._tasks.spawn(self._dry_run(), "dry run of a rule")

    def _editor(self) -> tuple[str, str, str]:
        return self.rule.text().strip(), self.action.currentText(), str(self.scope.currentData())

    async def _add(self) -> str | None:
        """The rule as stored, or None (and the reason shown) when it was refused."""
        rule, action, scope = self._editor()
        try:
            stored = await self._console.add_rule(rule, action, scope)  # type: ignore[arg-type]
        except (ValueError, OSError) as e:
            self._say(str(e), error=True)
            return None
        self._say(f"Added {action} rule {stored} to {dict(SCOPES)[scope]}.")
        return stored

    async def _replace(self, old: RuleEntry) -> None:
        stored = await self._add()
        if stored is None:
            return  # the old rule stays in force
        _, action, scope = self._editor()
        if (old.rule, old.action, old.scope) != (stored, action, scope):
            await self._console.remove_rule(old.rule, old.action, old.scope)
            self._say(f"Replaced {old.action} rule {old.rule} with {action} rule {stored}.")

    async def _remove(self, old: RuleEntry) -> None:
        removed = await self._console.remove_rule(old.rule, old.action, old.scope)
        self._say(f"Removed {old.action} rule {old.rule}." if removed else f"{old.rule} was already gone.")

    async def _dry_run(self) -> None:
        rule, action, _ = self._editor()
        try:
            records = await self._console.dry_run(rule, action)  # type: ignore[arg-type]
        except ValueError as e:
            self._say(str(e), error=True)
            return
        verb = {"allow": "auto-approved", "ask": "asked about", "deny": "refused"}[action]
        self._say(f"{rule} would have {verb} {len(records)} earlier call{'s' if len(records) != 1 else ''} "
                  "of this workspace.")
        self.matches.clear()
        for record in records:
            when = record.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
            self.matches.addItem(f"{when}  {record.tool}  {record.summary}  [{record.status.value}]")
        self.matches.setVisible(bool(records))

    def _say(self, text: str, error: bool = False) -> None:
        colour = "#cf222e" if error else "#1a7f37"
        self.message.setText(f"<span style='color:{colour}'>{html.escape(text)}</span>")

    def __repr__(self) -> str:
        return f"<RulesView rules={len(self._rules)}>"
