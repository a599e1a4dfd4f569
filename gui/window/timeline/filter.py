"""The timeline's filter bar: narrow a long timeline by agent, status, tool and text, hide or show what the
agents said, and step to the next waiting or failed call.

At a few hundred calls a person looks for something ("what failed under the
frontend agent?"), and Qt's type-ahead only finds the first column.  The bar
hides the rows of the view that do not match (`FlatTimeline.hide_only`,
the rows the view shows) rather than putting a proxy model between the view and
`TimelineModel`: the window, its tests and its slots all speak in the model's own
indexes and keys, and a hidden row costs nothing to the model.  A call matches when it passes every
choice; the agents and batches above a match stay shown, expanded, so a match
is always seen in its place.  Only the rows whose state changes are told to
the view, so typing one more letter touches a few rows, not all of them (a pass
that changes many is one reset of the shown rows).

Matching is plain Python over the timeline's runs, each run's text (tool,
summary, the paths in its arguments and its changes) lowered once and kept:
2,000 calls take a few milliseconds (bench/timeline_filter.py measures the
whole answer, layout included).  Typing waits 150 ms of quiet before it
filters; the choices filter at once.  Rows that arrive while a filter is on
are hidden at once when they do not match; their parents are put right by
the next pass, run soon after.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from core import AgentKey, BatchKey, MessageKey, NodeKey, RunKey, RunNode, RunStatus, Timeline
from gui.window.kit.fold_row import FoldingRow
from gui.window.timeline.model import TIMELINE_COLUMN, TimelineModel
from gui.window.timeline.view import TimelineView

TYPING_MS = 150
CHOICES_MS = 400

STATUS_CHOICES: tuple[tuple[str, frozenset[RunStatus]], ...] = (
    ("Any status", frozenset()),
    ("waiting", frozenset({RunStatus.BLOCKED_ON_USER})),
    ("running", frozenset({RunStatus.RUNNING})),
    ("queued", frozenset({RunStatus.QUEUED})),
    ("failed", frozenset({RunStatus.FAILED, RunStatus.TIMED_OUT})),
    ("denied", frozenset({RunStatus.DENIED})),
    ("done", frozenset({RunStatus.DONE})),
    ("cancelled / skipped", frozenset({RunStatus.CANCELLED, RunStatus.SKIPPED, RunStatus.INTERRUPTED})),
)
WAITING = frozenset({RunStatus.BLOCKED_ON_USER})
FAILED = frozenset({RunStatus.FAILED, RunStatus.TIMED_OUT})
PATH_ARGS = ("file_path", "path", "notebook_path", "paths", "files", "cwd", "directory")
"""Argument names whose values are searched as paths (a Write's content is not: it would match everything)."""
COUNT_MIN = 40
"""The narrowest the count of calls shown gets, in pixels: its text grows with the session, the window must not."""


@dataclass(frozen=True)
class Criteria:
    """What the bar asks for; an empty criterion lets every call through."""

    text: str = ""
    agent: str | None = None
    statuses: frozenset[RunStatus] = frozenset()
    tool: str | None = None
    conversation: bool = True
    """Show what the agents said (their messages' rows): those that pass the text and agent; none when a status
    or a tool is asked for (a message has neither)."""

    @property
    def active(self) -> bool:
        return bool(self.text.strip() or self.agent or self.statuses or self.tool or not self.conversation)


def _paths(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            if isinstance(item, str):
                yield item


def haystack(run: RunNode) -> str:
    """The text a search looks in: tool, summary, path arguments and changed paths, lowered."""
    parts = [run.tool, run.summary]
    for name in PATH_ARGS:
        parts += _paths(run.args.get(name))
    parts += (str(change.path) for change in run.changes)
    return "\n".join(parts).lower()


@dataclass
class Matcher:
    """Which calls pass a `Criteria`; each call's text kept until the call changes what it is made of."""

    _texts: dict[str, tuple[tuple[str, int], str]] = field(default_factory=dict)

    def _text(self, run: RunNode) -> str:
        stamp = (run.summary, len(run.changes))
        kept = self._texts.get(run.call_id)
        if kept is None or kept[0] != stamp:
            kept = self._texts[run.call_id] = (stamp, haystack(run))
        return kept[1]

    def matches(self, timeline: Timeline, criteria: Criteria) -> list[str]:
        """The ids of the calls that pass, in the timeline's order."""
        words = criteria.text.lower().split()
        agents = agent_family(timeline, criteria.agent) if criteria.agent else None
        statuses, tool = criteria.statuses, criteria.tool
        found = []
        for run in timeline.runs.values():
            if agents is not None and run.agent_id not in agents:
                continue
            if statuses and run.status not in statuses:
                continue
            if tool and run.tool != tool:
                continue
            if words:
                text = self._text(run)
                if not all(word in text for word in words):
                    continue
            found.append(run.call_id)
        return found

    def said(self, timeline: Timeline, criteria: Criteria) -> list[str]:
        """The ids of the messages that pass (their text holds every word, their agent is of the family)."""
        if not criteria.conversation or criteria.statuses or criteria.tool:
            return []
        words = criteria.text.lower().split()
        agents = agent_family(timeline, criteria.agent) if criteria.agent else None
        return [m.message_id for m in timeline.messages.values()
                if (agents is None or m.agent_id in agents) and all(word in m.text.lower() for word in words)]


def agent_family(timeline: Timeline, agent_id: str) -> set[str]:
    """The agent and its sub-agents at any depth (as the tree shows them)."""
    family = {agent_id}
    for other in timeline.agents:
        key: NodeKey | None = AgentKey(other)
        while key is not None:
            if isinstance(key, AgentKey) and key.agent_id == agent_id:
                family.add(other)
                break
            key = timeline.parent(key)
    return family


def agent_choices(timeline: Timeline) -> list[tuple[str, str]]:
    """(label, agent id) for every agent in tree order, indented by depth: "lead", "  frontend", "    tests"."""
    choices = []

    def walk(keys: list[AgentKey], depth: int) -> None:  # the agents only: a walk of the rows took 30 ms at 100k
        for key in keys:
            choices.append(("   " * depth + timeline.agents[key.agent_id].name, key.agent_id))
            walk(timeline.sub_agents(key), depth + 1)

    walk([key for key in timeline.roots if isinstance(key, AgentKey)], 0)
    return choices


CALL_COLUMN_MAX = 340


def call_column_width(tree: TimelineView, timeline: Timeline) -> int:
    """How wide the Call column must be for every agent's name (bold) and its calls' tools at their depth:
    a sub-agent three levels down is read whole, not cut.  At most CALL_COLUMN_MAX (its tooltip says the rest)."""
    bold = QFont(tree.font())
    bold.setBold(True)
    names, tools = QFontMetrics(bold), tree.fontMetrics()
    widest_tool = max((tools.horizontalAdvance(tool) for tool in timeline.tools), default=0)
    step, need = tree.indentation(), 0
    for agent_id, agent in timeline.agents.items():
        depth = 1  # the root's branch takes a step too
        key = timeline.parent(AgentKey(agent_id))
        while key is not None:
            depth += 1
            key = timeline.parent(key)
        need = max(need, step * depth + names.horizontalAdvance(agent.name), step * (depth + 2) + widest_tool)
    return min(need + 16, CALL_COLUMN_MAX)


def tree_order(timeline: Timeline) -> Iterator[NodeKey]:
    """Every row, as the tree shows them top to bottom (all expanded)."""
    stack = list(reversed(timeline.roots))
    while stack:
        key = stack.pop()
        yield key
        if not isinstance(key, RunKey):
            stack.extend(reversed(timeline.children(key)))


class TimelineFilter(QWidget):
    """Text, agent, status and tool above the timeline; "12 of 229 calls"."""

    filtered = Signal(int, int)
    """(calls shown, calls in all) after each pass."""

    def __init__(self, tree: TimelineView, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timelineFilter")
        self._tree, self._model = tree, model
        self._matcher = Matcher()
        self._hidden: set[NodeKey] = set()
        """Every row not shown."""
        self._applied = Criteria()
        """What the last pass asked: a pass for the same (rows came or changed) opens nothing the person closed."""
        self.shown = 0
        self.text = QLineEdit()
        self.text.setPlaceholderText("Filter calls: summary, tool, file path… (Ctrl+F)")
        self.text.setClearButtonEnabled(True)
        for button in self.text.findChildren(QToolButton):  # the clear button
            button.setAccessibleName("Clear the filter text")
        self.text.setAccessibleName("Filter the timeline by text")
        clear = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.text)  # not an action: it is no menu's
        clear.setContext(Qt.ShortcutContext.WidgetShortcut)
        clear.activated.connect(self.text.clear)
        self.agent = QComboBox()
        self.agent.setAccessibleName("Filter by agent")
        self.agent.setToolTip("The calls of this agent and of its sub-agents")
        self.status = QComboBox()
        self.status.setAccessibleName("Filter by status")
        for label, statuses in STATUS_CHOICES:
            self.status.addItem(label, statuses)
        self.tool = QComboBox()
        self.tool.setAccessibleName("Filter by tool")
        self.words = QToolButton()
        self.words.setText("✎")
        self.words.setCheckable(True)
        self.words.setChecked(True)
        self.words.setAccessibleName("Show what the agents said")
        self.words.setToolTip("Show what the agents said between their calls (prompts, words, reasoning)")
        self.words.toggled.connect(self.apply)
        self.count = QLabel()
        self.count.setObjectName("filterCount")
        self.count.setMinimumWidth(COUNT_MIN)  # "41,250 of 100,000 calls" is cut, not a window wider than its screen
        self.text.setMinimumWidth(90)  # the choices never squeeze the text box away (nor widen a 1024-px window)
        for combo, letters in ((self.agent, 7), (self.status, 5), (self.tool, 5)):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(letters)
            combo.view().setTextElideMode(Qt.TextElideMode.ElideNone)
        # One line where it fits; the choices under the text box where it does not (a 1024-pixel hub).
        self.row = FoldingRow([(self.text, 3), (self.agent, 1), (self.status, 1), (self.tool, 1), (self.words, 0),
                               (self.count, 0)], fold_at=1)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        outer.addWidget(self.row)
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TYPING_MS)
        self._typing.timeout.connect(self.apply)
        self._choices_soon = QTimer(self)
        self._choices_soon.setSingleShot(True)
        self._choices_soon.setInterval(CHOICES_MS)
        self._choices_soon.timeout.connect(self.refresh_choices)
        self._count_soon = QTimer(self)
        self._count_soon.setSingleShot(True)
        self._count_soon.setInterval(0)
        self._count_soon.timeout.connect(self._show_count)
        self.text.textChanged.connect(self._on_text_changed)
        for combo in (self.agent, self.status, self.tool):
            combo.currentIndexChanged.connect(self.apply)
        model.rowsInserted.connect(self._on_model_rows_inserted)
        model.dataChanged.connect(self._on_model_data_changed)
        model.modelAboutToBeReset.connect(self._on_model_about_to_be_reset)
        model.modelReset.connect(self._on_model_reset)
        self.refresh_choices()
        self._show_count()

    # -- what is asked -----------------------------------------------------------

    def criteria(self) -> Criteria:
        return Criteria(self.text.text(), self.agent.currentData(), self.status.currentData() or frozenset(),
                        self.tool.currentData(), self.words.isChecked())

    def _asking(self) -> bool:
        """`criteria().active` without making the criteria: asked at each insert of a flood (each combo's first
        choice is its "all")."""
        return bool(self.text.text().strip()) or self.agent.currentIndex() > 0 or self.status.currentIndex() > 0 \
            or self.tool.currentIndex() > 0 or not self.words.isChecked()

    def refresh_choices(self) -> None:
        """The agents and tools seen so far, the current choices kept."""
        timeline = self._model.timeline
        _fill(self.agent, [("All agents", None), *agent_choices(timeline)])
        _fill(self.tool, [("All tools", None), *((tool, tool) for tool in sorted(timeline.tools))])

    def focus_text(self) -> None:
        self.text.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.text.selectAll()

    # -- filtering ---------------------------------------------------------------

    def apply(self) -> None:
        """Hide the rows that do not match, show those that do (and the rows above them, expanded)."""
        self._typing.stop()
        model, rows, timeline = self._model, self._tree.rows, self._model.timeline
        model.flush()
        criteria = self.criteria()
        rows.hiding_new = criteria.active
        if not criteria.active:
            self._applied = criteria
            self._set_hidden(set())
            self.shown = len(timeline.runs)
            self._show_count()
            return
        found = self._matcher.matches(timeline, criteria)
        visible: set[NodeKey] = set()
        above: set[NodeKey] = set()
        shown: list[NodeKey] = [RunKey(call_id) for call_id in found]
        shown += [MessageKey(m) for m in self._matcher.said(timeline, criteria)]
        for row in shown:
            visible.add(row)
            key = timeline.parent(row)
            while key is not None and key not in above:
                above.add(key)
                key = timeline.parent(key)
        visible |= above
        every: list[NodeKey] = [AgentKey(a) for a in timeline.agents]
        every += [BatchKey(b) for b in timeline.batches]
        every += [RunKey(r) for r in timeline.runs]
        every += [MessageKey(m) for m in timeline.messages]
        self._set_hidden({key for key in every if key not in visible})
        if criteria != self._applied:
            for key in above:
                rows.set_expanded(key, True)
        self._applied = criteria
        self.shown = len(found)
        self._show_count()

    def _set_hidden(self, hidden: set[NodeKey]) -> None:
        """Hide the highest rows of `hidden` (the view hides what is under them); the view changes only the rows
        whose state changes."""
        timeline = self._model.timeline
        told = {key for key in hidden if timeline.parent(key) not in hidden}
        self._tree.rows.hide_only(told)
        self._hidden = hidden

    def is_hidden(self, key: NodeKey) -> bool:
        return key in self._hidden

    def _show_count(self) -> None:
        total = len(self._model.timeline.runs)
        if self.criteria().active:
            self.count.setText(f"{self.shown} of {total} calls")
        else:
            self.shown = total
            self.count.setText(f"{total} call{'s' if total != 1 else ''}")
        self.count.setToolTip(self.count.text())
        self.filtered.emit(self.shown, total)

    # -- stepping ------------------------------------------------------------------

    def next_call(self, statuses: Collection[RunStatus], after: NodeKey | None) -> RunKey | None:
        """The next shown call (after `after`, wrapping round) in one of these statuses."""
        timeline = self._model.timeline
        order = list(tree_order(timeline))
        start = order.index(after) + 1 if after in order else 0
        for key in order[start:] + order[:start]:
            if isinstance(key, RunKey) and key not in self._hidden and timeline.runs[key.call_id].status in statuses:
                return key
        return None

    def go_to_next(self, statuses: Collection[RunStatus]) -> bool:
        """Make the next such call the current row (its parents expanded); False when there is none."""
        key = self.next_call(statuses, self._tree.current_key())
        return key is not None and self._tree.go_to(key)

    def __repr__(self) -> str:
        return (f"<TimelineFilter {self.criteria()} shown={self.shown}/{len(self._model.timeline.runs)} "
                f"hidden={len(self._hidden)} pending={self._typing.isActive()}>")

    # -- slots -------------------------------------------------------------------

    def _on_text_changed(self, _: str) -> None:
        self._tree.rows.hiding_new = self._asking()  # rows that come meanwhile wait hidden for the pass
        self._typing.start()

    def _on_model_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if not self._choices_soon.isActive():
            self._choices_soon.start()
        if not self._asking():
            if not self._count_soon.isActive():
                self._count_soon.start()  # once for the rows of a batch, however many parents they came under
            return
        fresh = self._model.timeline.children(self._model.key_of(parent))[first:last + 1]
        self._hidden.update(fresh)  # the view hid them as they came (`hiding_new`), until a pass says they match
        if not self._typing.isActive():
            self._typing.start()

    def _on_model_data_changed(self, first: QModelIndex, last: QModelIndex, roles: Any = ()) -> None:
        if first.column() == TIMELINE_COLUMN == last.column():
            return  # only time moved on
        if not self._typing.isActive() and self._asking():
            self._typing.start()

    def _on_model_about_to_be_reset(self) -> None:
        self._hidden = set()  # the view forgets its hidden rows with the model's indexes

    def _on_model_reset(self) -> None:
        self.refresh_choices()
        self.apply()


def _fill(combo: QComboBox, items: list[tuple[str, Any]]) -> None:
    """Replace a choice's items when they changed, keeping what is chosen (or the first item when it is gone)."""
    if [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())] == items:
        return
    chosen = combo.currentData()
    combo.blockSignals(True)
    try:
        combo.clear()
        for label, data in items:
            combo.addItem(label, data)
        at = combo.findData(chosen) if chosen is not None else 0
        combo.setCurrentIndex(max(at, 0))
    finally:
        combo.blockSignals(False)
    if combo.currentData() != chosen:
        combo.currentIndexChanged.emit(combo.currentIndex())
