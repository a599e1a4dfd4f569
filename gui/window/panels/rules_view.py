"""The rules view: every rule in force, and adding, removing, editing and dry-running one.

Rules come from three layers (user and workspace settings files, and this
session); the table shows where each lives.  Changes go through the
console, which writes the files and announces the new rule set; the view
redraws from that announcement, not from what it asked for, and keeps the
selected rule selected by identity (a rule added elsewhere never shifts
"Remove selected" onto another rule).  A malformed rule comes back as a
message under the editor and the text stays there to be fixed.  An edit
adds the new rule before removing the old one, so a mistake in it leaves
the old rule in force.  A dry run lists the journaled calls of this
workspace the rule in the editor would have decided differently.

Keys: Enter in the editor adds, Delete in the table removes, Ctrl+R dry-runs.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core import CallRecord, ConsoleSurface, RuleAction, RuleEntry, Scope
from gui.window.kit import theme
from gui.window.panels.rules_model import RuleKey, RulesModel, rule_key
from gui.window.runtime.tasks import TaskSet

EMPTY = ("<b>No rules yet.</b> Read-only tools and commands run; everything else asks you. A rule names a tool, "
         "optionally with a pattern: <code>Bash(npm run test:*)</code> (a command prefix), "
         "<code>Read(./src/**)</code> (a path glob), <code>Edit</code> (every edit), "
         "<code>mcp__docs</code> (an MCP server). Add one below, or choose “Always allow” on a waiting call.")
SYNTAX = ("Tool or Tool(pattern): <code>Bash(git diff:*)</code>, <code>Edit(./docs/**)</code>, "
          "<code>WebFetch(domain:example.com)</code>. Deny beats ask beats allow.")
ACTIONS: tuple[RuleAction, ...] = ("allow", "ask", "deny")
SCOPES: tuple[tuple[Scope, str], ...] = (("session", "this session"), ("workspace", "this workspace"),
                                         ("user", "all my workspaces"))
VERBS: dict[RuleAction, str] = {"allow": "auto-approved", "ask": "asked about", "deny": "refused"}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class RulesView(QWidget):
    """The table of rules, the editor under it, and the last dry run's calls."""

    def __init__(self, console: ConsoleSurface, tasks: TaskSet, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._console, self._tasks = console, tasks
        self._focus: RuleKey | None = None
        self._filling = False
        self.problems = QLabel()
        self.problems.setObjectName("settingsProblems")
        self.problems.setWordWrap(True)
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty.setContentsMargins(4, 8, 4, 8)
        self.model = RulesModel(Path(os.path.realpath(console.workspace.root)))
        self.table = self._table()
        self._editor_widgets()
        self.matches = QTreeWidget()
        self.matches.setAccessibleName("Calls this rule would have matched")
        self.matches.setHeaderLabels(["When", "Tool", "Call", "Outcome then"])
        self.matches.setRootIsDecorated(False)
        self.matches.setUniformRowHeights(True)
        self.matches.header().setStretchLastSection(False)
        self.matches.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.matches.hide()
        self._layout()
        self._shortcuts()
        self.set_rules(console.rules(), console.settings_problems)

    def _table(self) -> QTableView:
        table = QTableView()
        table.setAccessibleName("Rules in force")
        table.setObjectName("rulesTable")
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setWordWrap(False)
        table.setAlternatingRowColors(True)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(24)
        header = table.horizontalHeader()
        for column in (0, 1, 2, 3):  # the rule as wide as its text (a scroll bar when the tab is narrow)
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        return table

    def _editor_widgets(self) -> None:
        self.rule = QLineEdit()
        self.rule.setAccessibleName("Rule")
        self.rule.setPlaceholderText("A rule, e.g. Bash(npm run test:*)")
        self.rule.setToolTip("Enter adds the rule")
        self.rule.returnPressed.connect(self.add)
        self.rule.textEdited.connect(self._on_rule_text_edited)
        self.action = QComboBox()
        self.action.setAccessibleName("Rule action")
        self.action.addItems(ACTIONS)
        self.action.setToolTip("allow: run without asking · ask: always ask · deny: refuse without asking")
        self.scope = QComboBox()
        self.scope.setAccessibleName("Rule scope")
        for scope, label in SCOPES:
            self.scope.addItem(label, scope)
        self.scope.setToolTip("This session: until Belay closes. This workspace: .belay/settings.toml. "
                              "All my workspaces: your user settings file.")
        self.add_button = QPushButton("Add")
        self.add_button.setToolTip("Add the rule in the editor (Enter)")
        self.replace_button = QPushButton("Replace selected")
        self.replace_button.setToolTip("Put the rule in the editor in place of the selected one; "
                                       "if the new rule is refused, the old one stays")
        self.remove_button = QPushButton("Remove selected")
        self.remove_button.setToolTip("Remove the selected rule (Delete)")
        self.dry_run_button = QPushButton("Dry run")
        self.dry_run_button.setToolTip("List the earlier calls of this workspace the rule in the editor would "
                                       "have decided differently; nothing is saved (Ctrl+R)")
        self.add_button.clicked.connect(self.add)
        self.replace_button.clicked.connect(self.replace_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.dry_run_button.clicked.connect(self.dry_run)
        self.syntax = QLabel(SYNTAX)
        self.syntax.setTextFormat(Qt.TextFormat.RichText)
        self.syntax.setObjectName("rulesSyntax")
        self.syntax.setWordWrap(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _layout(self) -> None:
        fields = QHBoxLayout()
        fields.addWidget(self.rule, 1)
        fields.addWidget(self.action)
        fields.addWidget(self.scope)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.replace_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.dry_run_button)
        editor = QGroupBox("Add, edit or dry-run a rule")
        column = QVBoxLayout(editor)
        column.addLayout(fields)
        column.addWidget(self.syntax)
        column.addLayout(buttons)
        column.addWidget(self.message)
        layout = QVBoxLayout(self)
        layout.addWidget(self.problems)
        layout.addWidget(self.empty, 3)  # the empty state and the table take turns in the same place
        layout.addWidget(self.table, 3)
        layout.addWidget(editor)
        layout.addWidget(self.matches, 2)

    def _shortcuts(self) -> None:
        remove = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table)
        remove.setContext(Qt.ShortcutContext.WidgetShortcut)
        remove.activated.connect(self.remove_selected)
        dry_run = QShortcut(QKeySequence("Ctrl+R"), self)
        dry_run.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        dry_run.activated.connect(self.dry_run)

    # -- what the console says -------------------------------------------------

    def set_rules(self, rules: Sequence[RuleEntry], problems: Sequence[str] = ()) -> None:
        """Show the rules now in force; the selected rule stays selected if it is still there."""
        keep = self._focus or self._selected_key()
        self._filling = True
        try:
            self.model.set_rules(rules)
            row = self.model.row_of(keep) if keep else -1
            if row >= 0:
                self._select_row(row)
                self._focus = None
        finally:
            self._filling = False
        self.empty.setVisible(not rules)
        self.table.setVisible(bool(rules))
        text = "".join(f"<br>• {html.escape(p)}" for p in problems)
        self.problems.setText(f"<b>Some settings could not be used:</b>{text}")
        self.problems.setVisible(bool(problems))
        self._update_buttons()

    def selected(self) -> RuleEntry | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.entry(rows[0].row()) if rows else None

    def _selected_key(self) -> RuleKey | None:
        entry = self.selected()
        return rule_key(entry) if entry else None

    def _select_row(self, row: int) -> None:
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(self.model.index(row, 0), flags)
        self.table.scrollTo(self.model.index(row, 0))

    def _on_table_current_row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        entry = self.model.entry(current.row())
        if entry is not None and not self._filling:
            self.rule.setText(entry.rule)
            self.action.setCurrentText(entry.action)
            self.scope.setCurrentIndex(max(0, self.scope.findData(entry.scope)))
        self._update_buttons()

    def _on_table_selection_changed(self, *_: object) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        chosen = self.selected() is not None
        self.replace_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)

    def _on_rule_text_edited(self, text: str) -> None:
        """Results of a dry run belong to the rule they ran: editing it clears them."""
        self.matches.clear()
        self.matches.hide()
        self.message.clear()

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

    def _editor(self) -> tuple[str, RuleAction, Scope]:
        """The rule, its action and its scope as the editor shows them (its boxes list ACTIONS and SCOPES)."""
        return self.rule.text().strip(), ACTIONS[self.action.currentIndex()], SCOPES[self.scope.currentIndex()][0]

    async def _add(self) -> tuple[str, RuleAction, Scope] | None:
        """The rule as stored, or None (and the reason shown) when it was refused."""
        rule, action, scope = self._editor()
        if not rule:
            self._say("Type a rule first, e.g. Bash(npm run test:*).", error=True)
            return None
        try:
            stored = await self._console.add_rule(rule, action, scope)
        except (ValueError, OSError) as e:
            self._say(str(e), error=True)
            return None
        key = (stored, action, scope)
        self._show_added(key)
        self._say(f"Added: {action} {stored} in {dict(SCOPES)[scope]}.")
        return key

    def _show_added(self, key: RuleKey) -> None:
        """Select the rule just added, now if the table has it, else when the console announces it."""
        row = self.model.row_of(key)
        if row >= 0:
            self._select_row(row)
        else:
            self._focus = key

    async def _replace(self, old: RuleEntry) -> None:
        existed = set(self.model.keys())
        new = await self._add()
        if new is None:
            return  # refused: the old rule is untouched and still in force
        if new == rule_key(old):
            self._say(f"Unchanged: {old.action} {old.rule}.")
            return
        try:
            await self._console.remove_rule(old.rule, old.action, old.scope)
        except (ValueError, OSError) as e:
            if new not in existed:  # undo the half-done edit rather than leave both in force
                await self._console.remove_rule(*new)
            self._say(f"Could not remove {old.rule}, so nothing changed: {e}", error=True)
            return
        self._say(f"Replaced {old.action} {old.rule} with {new[1]} {new[0]}.")

    async def _remove(self, old: RuleEntry) -> None:
        try:
            removed = await self._console.remove_rule(old.rule, old.action, old.scope)
        except (ValueError, OSError) as e:
            self._say(f"Could not remove {old.rule}: {e}", error=True)
            return
        self._say(f"Removed: {old.action} {old.rule}." if removed else f"{old.rule} was already gone.")

    async def _dry_run(self) -> None:
        rule, action, _ = self._editor()
        if not rule:
            self._say("Type a rule to dry-run, e.g. Edit(./docs/**).", error=True)
            return
        try:
            records = await self._console.dry_run(rule, action)
        except ValueError as e:
            self._say(str(e), error=True)
            return
        self._say(f"Dry run of {action} {rule}: it would have {VERBS[action]} "
                  f"{_plural(len(records), 'earlier call')} of this workspace"
                  + (" (below). Nothing was saved." if records else ". Nothing was saved."), error=False, info=True)
        self._show_matches(records)

    def _show_matches(self, records: list[CallRecord]) -> None:
        self.matches.clear()
        for record in records:
            when = record.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
            item = QTreeWidgetItem([when, record.tool, record.summary, record.status.value])
            item.setToolTip(2, record.summary)
            self.matches.addTopLevelItem(item)
        for column in (0, 1, 3):
            self.matches.resizeColumnToContents(column)
        self.matches.setVisible(bool(records))

    def _say(self, text: str, error: bool = False, info: bool = False) -> None:
        colour = theme.colour("danger" if error else "text" if info else "success")
        self.message.setText(f"<span style='color:{colour}'>{html.escape(text)}</span>")

    def __repr__(self) -> str:
        return f"<RulesView rules={self.model.rowCount()} selected={self._selected_key()}>"
