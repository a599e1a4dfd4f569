"""The Bash approval card: the command as Bash will read it, and what made the policy ask.

It shows where the command would run and in what (the working directory,
the sandbox, or a warning that there is none), the impact with its reasons,
the command text with the parts that caused the question marked (red for
refused, amber for asked), and the parsed command as a tree.  Selecting a
tree row marks its text in the command, and says in full, wrapped under the
tree, why that part matters (the tree's rows keep one height, for speed, so
its "why" column is cut where the card is narrow; the first flagged part is
selected when a request is shown, so its reason reads whole at once).

The analysis arrives as a flat list of nodes (children by index), so the
tree is built with a loop, never recursion: a ten-thousand-command chain
is a normal input.  Past `MAX_TREE_ITEMS` rows the tree ends with a row
saying how many parts are not shown; the marks in the text cover them all.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QResizeEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core import ApprovalRequested, BashAnalysis, Impact
from gui.window.kit import theme
from gui.window.kit.code_font import keep_code_font

MAX_TREE_ITEMS = 2_000
MAX_MARKS = 500
"""Extra selections are drawn one by one; beyond this many, only the first are marked."""
FLAG_COLOURS = {"deny": ("flag_deny_fg", "flag_deny_bg"), "ask": ("flag_ask_fg", "flag_ask_bg")}
"""Theme roles (text, background) of a flagged part of a command."""
IMPACT_COLOURS = {"low": "approve_bg", "medium": "caution_bg", "high": "deny_bg"}
"""Theme roles of the impact badge's background (its text is `on_strong`)."""
_SPAN = Qt.ItemDataRole.UserRole


def impact_html(impact: Impact, limit: int | None = 4) -> str:
    """'HIGH impact — deletes outside the workspace; …' as a coloured badge and its reasons (at most `limit`
    of them, the rest counted; None: every one)."""
    colour = theme.colour(IMPACT_COLOURS.get(impact.level, "caution_bg"))
    shown = impact.reasons if limit is None else impact.reasons[:limit]
    reasons = "; ".join(html.escape(r) for r in shown)
    more = f" (and {len(impact.reasons) - len(shown)} more)" if len(impact.reasons) > len(shown) else ""
    return (f"<span style='background:{colour};color:{theme.colour('on_strong')};padding:1px 6px;border-radius:3px'>"
            f"&nbsp;{impact.level.upper()} impact&nbsp;</span>&nbsp; {reasons}{more}")


def sandbox_html(text: str) -> str:
    if not text or text.startswith("sandbox off"):
        return (f"<span style='color:{theme.colour('danger')}'><b>⚠ No sandbox</b></span> — "
                f"{html.escape(text.removeprefix('sandbox off: ') or 'commands run unsandboxed')}")
    return f"<span style='color:{theme.colour('success')}'>✓ {html.escape(text.split(':', 1)[0])}</span>"


class _Offsets:
    """Byte offsets of the analysis as character positions in the text (they differ beyond ASCII)."""

    def __init__(self, text: str) -> None:
        self._ascii = text.isascii()
        self._chars: list[int] = []
        if not self._ascii:
            for index, char in enumerate(text):
                self._chars.extend([index] * len(char.encode("utf-8", "surrogatepass")))
            self._chars.append(len(text))

    def char(self, byte: int) -> int:
        if self._ascii:
            return byte
        return self._chars[min(max(byte, 0), len(self._chars) - 1)]


class CommandCard(QWidget):
    """The parsed Bash command of one approval request."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setObjectName("commandProblem")
        self.command = QPlainTextEdit()
        self.command.setReadOnly(True)
        keep_code_font(self.command)
        self.command.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.tree = QTreeWidget()
        self.tree.setAccessibleName("The command's parts and why each was flagged")
        self.tree.setHeaderLabels(["Part", "Why it matters"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        self.tree.setColumnWidth(0, 320)
        self.tree.setUniformRowHeights(True)
        self.tree.currentItemChanged.connect(self._select)
        self.why = QLabel()
        self.why.setObjectName("commandWhy")
        self.why.setWordWrap(True)
        self.why.setTextFormat(Qt.TextFormat.PlainText)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        parts = QWidget()
        below = QVBoxLayout(parts)
        below.setContentsMargins(0, 0, 0, 0)
        below.setSpacing(2)
        below.addWidget(self.tree, 1)
        below.addWidget(self.why)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.command)
        split.addWidget(parts)
        split.setSizes([90, 220])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.problem)
        layout.addWidget(split, 1)
        self._offsets = _Offsets("")
        self._marks: list[QTextEdit.ExtraSelection] = []
        self._request: ApprovalRequested | None = None
        theme.follow(self, self._restyle)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """The parts and why each matters share the width (a fixed first column left "why" 80 pixels at 1024)."""
        super().resizeEvent(event)
        self.tree.setColumnWidth(0, max(self.tree.viewport().width() // 3, 120))

    @property
    def request(self) -> ApprovalRequested | None:
        """The request the card shows."""
        return self._request

    def _restyle(self) -> None:
        if self._request is not None:
            self.show_request(self._request)

    def show_request(self, request: ApprovalRequested) -> None:
        self._request = request
        analysis = request.analysis
        command = analysis.command if analysis is not None else str(request.args.get("command", ""))
        self.header.setText(
            f"Runs in <b>{html.escape(request.cwd or '?')}</b> &nbsp;·&nbsp; {sandbox_html(request.sandbox)}"
            f"<br>{impact_html(request.impact, limit=None)}")
        self._offsets = _Offsets(command)
        self.command.setPlainText(command)
        self.tree.clear()
        problem = (analysis.hidden_character or analysis.syntax_error) if analysis is not None else None
        self.problem.setText(html.escape(problem) if problem else "")
        self.problem.setVisible(bool(problem))
        self._marks = self._flag_marks(analysis) if analysis is not None else []
        self.command.setExtraSelections(self._marks)
        self.why.clear()
        self.why.hide()
        if analysis is not None and analysis.nodes:
            self._build_tree(analysis)

    def flagged_texts(self) -> list[str]:
        """The command's text under each mark, in order (what a person sees highlighted)."""
        text = self.command.toPlainText()
        return [text[m.cursor.selectionStart():m.cursor.selectionEnd()] for m in self._marks]

    def _flag_marks(self, analysis: BashAnalysis) -> list[QTextEdit.ExtraSelection]:
        marks = []
        for node in analysis.nodes:
            if node.flag == "ok" or node.kind in ("script", "list", "pipeline"):
                continue
            marks.append(self._mark(node.start, node.end, FLAG_COLOURS[node.flag][1]))
            if len(marks) >= MAX_MARKS:
                break
        return marks

    def _mark(self, start: int, end: int, background: str) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.command.document())
        cursor.setPosition(self._offsets.char(start))
        cursor.setPosition(self._offsets.char(end), QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setBackground(QBrush(theme.qcolour(background)))
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        selection.cursor, selection.format = cursor, fmt
        return selection

    def _build_tree(self, analysis: BashAnalysis) -> None:
        nodes = analysis.nodes
        root = self._item(self.tree.invisibleRootItem(), 0, analysis)
        stack = [(root, list(nodes[0].children))]
        shown, hidden = 1, 0
        flagged: list[QTreeWidgetItem] = []
        while stack:
            parent, pending = stack[-1]
            if not pending:
                stack.pop()
                continue
            index = pending.pop(0)
            if shown >= MAX_TREE_ITEMS:
                hidden += 1 + self._count_below(analysis, index)
                continue
            item = self._item(parent, index, analysis)
            shown += 1
            if nodes[index].flag != "ok":
                flagged.append(item)
            stack.append((item, list(nodes[index].children)))
        if hidden:
            QTreeWidgetItem(self.tree.invisibleRootItem(), [f"… {hidden:,} more parts not shown", ""])
        root.setExpanded(True)
        for item in flagged:
            above = item.parent()
            while above is not None and not above.isExpanded():
                above.setExpanded(True)
                above = above.parent()
        if flagged:
            self.tree.setCurrentItem(flagged[0])  # its reason, whole, under the tree

    @staticmethod
    def _count_below(analysis: BashAnalysis, index: int) -> int:
        count, stack = 0, list(analysis.nodes[index].children)
        while stack:
            count += 1
            stack.extend(analysis.nodes[stack.pop()].children)
        return count

    def _item(self, parent: QTreeWidgetItem, index: int, analysis: BashAnalysis) -> QTreeWidgetItem:
        node = analysis.nodes[index]
        label = node.text if len(node.text) <= 120 else node.text[:119] + "…"
        kind = "" if node.kind in ("command", "word") else f"{node.kind}: "
        item = QTreeWidgetItem(parent, [kind + label.replace("\n", " ⏎ "), node.why if node.flag != "ok" else ""])
        item.setData(0, _SPAN, (node.start, node.end))
        if node.flag != "ok":
            colour = theme.qcolour(FLAG_COLOURS[node.flag][0])
            for column in (0, 1):
                item.setForeground(column, QBrush(colour))
            item.setText(0, ("⛔ " if node.flag == "deny" else "⚠ ") + item.text(0))
            item.setToolTip(0, node.why)
            item.setToolTip(1, node.why)
        return item

    def _select(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None = None) -> None:
        why = item.text(1) if item is not None else ""
        self.why.setText(f"{item.text(0)}: {why}" if item is not None and why else "")
        self.why.setVisible(bool(why))
        span = item.data(0, _SPAN) if item is not None else None
        if not span:
            return
        cursor = self.command.textCursor()
        cursor.setPosition(self._offsets.char(span[0]))
        cursor.setPosition(self._offsets.char(span[1]), QTextCursor.MoveMode.KeepAnchor)
        self.command.setTextCursor(cursor)
        self.command.ensureCursorVisible()
