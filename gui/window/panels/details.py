"""The details pane: everything about the selected call or agent, and its undo.

For a run: tool, status, who ran it, the approval decision, what it
changed (every file, shell side effects included, each with its own undo or
redo link, and the git references it moved), the arguments, the result or
error, and a diff of every file it changed, with Undo and Redo buttons.
The window decides what an undo needs (a merge, the person's choices).

The timeline keeps only excerpts of a call's arguments and output (its
memory must not follow their size), so the pane shows the excerpt at once
and, when something was cut, reads the whole call from the journal in a
task (`records`, e.g. `Console.call_record`, which reads on the journal's
thread): "loading…" meanwhile, then the full text; a result that arrives
for a call no longer selected is dropped, and a call gone from the journal
says so.

Signals:
    undo_requested(str, list): call id and the paths to undo ([]: every file).
    redo_requested(str, list): call id and the paths to put back ([]: everything undone).
    full_output_requested(str): call id whose whole journaled output the person wants to read.
"""

from __future__ import annotations

import asyncio
import html
import json
import sqlite3
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core import (
    AgentKey,
    BatchKey,
    BelayError,
    CallRecord,
    Decision,
    ErrorInfo,
    FileChange,
    FileDiff,
    NodeKey,
    RunKey,
    RunNode,
    RunStatus,
    Timeline,
    ToolName,
    UndoPreview,
    UndoReport,
    parse_key,
)
from gui.window.approvals.text import agent_path
from gui.window.kit import theme
from gui.window.kit.remembered import keep_splitter, window_settings
from gui.window.review.diff_view import DiffView
from gui.window.runtime.tasks import TaskSet
from gui.window.timeline.rows import rollup_text
from gui.window.undo.dialog import undo_notes

MAX_SHOWN_CHARS = 20_000
UNDO_PREVIEW_DELAY_S = 0.2
"""A call shown this long has its undo previewed (it reads and merges its files, off the thread)."""


def _pre(text: str) -> str:
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + f"\n… ({len(text) - MAX_SHOWN_CHARS:,} more characters)"
    return f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"


MAX_LISTED_FILES = 400


def describe_changes(run: RunNode) -> str:
    """What a run changed: a line of totals ("Bash · npm install changed 312 files"), then each file with
    how it changed and its own undo or redo link, then the git references it moved."""
    parts = []
    if run.changes:
        unstored = sum(not c.stored for c in run.changes)
        total = f"{len(run.changes)} file{'s' if len(run.changes) != 1 else ''}"
        note = f"; {unstored} not stored (ignored or too large): they cannot be restored" if unstored else ""
        parts.append(f"<h4>Changed {total}{note}</h4>")
        rows = [_change_row(run, c) for c in run.changes[:MAX_LISTED_FILES]]
        if len(run.changes) > MAX_LISTED_FILES:
            rows.append(f"<tr><td colspan='2'>… and {len(run.changes) - MAX_LISTED_FILES:,} more (see the "
                        "Changes tab)</td></tr>")
        parts.append("<table cellspacing='0' cellpadding='1'>" + "".join(rows) + "</table>")
    if run.git_changes:
        state = "undone: the references are back, files and index left as they were" if run.git_undone else (
            "Undo moves branches back (like git reset --soft: files and index stay); a checkout is not undone")
        parts.append("<h4>Git</h4><p>" + "<br>".join(html.escape(g.what) for g in run.git_changes) +
                     f"<br><span style='color:{theme.colour('muted')}'>{html.escape(state)}.</span></p>")
    return "".join(parts)


def _change_row(run: RunNode, change: FileChange) -> str:
    path = html.escape(change.path)
    what = f"renamed from {html.escape(change.old_path)}" if change.old_path else change.kind.value
    link = "link " if change.after_link or change.before_link else ""
    if not change.stored:
        action = f"<span style='color:{theme.colour('warning')}'>not stored: cannot be restored</span>"
    elif change.path in run.undone_paths:
        action = f"undone · <a href='redo-file:{urllib.parse.quote(change.path)}'>redo</a>"
    elif run.status.final and run.status != RunStatus.DENIED:
        action = f"<a href='undo-file:{urllib.parse.quote(change.path)}'>undo this file</a>"
    else:
        action = ""
    return f"<tr><td>{link}{what}&nbsp;</td><td><code>{path}</code>&nbsp; {action}</td></tr>"


RecordReader = Callable[[str], Awaitable[CallRecord | None]]
"""Reads one journaled call in full (None: the journal no longer has it)."""

LOADING_TEXT = "Loading… the whole arguments and result from the journal; an excerpt is shown meanwhile."
GONE_TEXT = "This call is no longer in the journal: only the excerpt shown here is left."


@dataclass(frozen=True)
class FullCall:
    """A selected call read back from the journal, ready to show (formatted off the GUI thread)."""

    call_id: str
    args_text: str | None
    """Its whole arguments as indented JSON; None when the journal no longer has the call."""
    output: str = ""
    error: ErrorInfo | None = None
    final: bool = True
    """It had ended when read (else its result is still to come, and is read again then)."""
    problem: str = GONE_TEXT
    """Why there is no whole call to show, when there is none."""

    @property
    def gone(self) -> bool:
        return self.args_text is None


def full_call(call_id: str, record: CallRecord | None) -> FullCall:
    """What the pane shows of a journaled call (json.dumps of megabytes: call it off the GUI thread)."""
    if record is None:
        return FullCall(call_id, None)
    return FullCall(call_id, json.dumps(record.args, indent=2, ensure_ascii=False), record.output, record.error,
                    record.status.final)


WHO = {"person": "by you", "auto-approver": "by the auto-approver (--auto-approve)", "mode": "by the mode",
       "policy": "by Belay's policy", "timeout": "when nobody answered in time",
       "headless": "as no window could ask", "console": "as the console closed"}
"""How the details pane names who decided (core.models.records.DecidedBy), after the decision."""
VIA = {"window": " in the window", "notification": " from the desktop notification", "terminal": " at the terminal"}
"""Where a person answered (core.models.records.DecidedVia), after "by you"."""


def decision_text(run: RunNode) -> str:
    """What was decided and by whom, e.g. "approved by you", "allowed by rule Bash(ls:*) [workspace]"."""
    assert run.decision is not None
    what = run.decision.value.replace("_", " ")
    if run.decided_by in ("rule", "mode", "policy") and run.decision is Decision.APPROVED:
        what = "allowed"
    if run.decided_by == "rule":
        return f"{what} by rule {run.decision_rule}" if run.decision_rule else f"{what} by a rule"
    if run.decided_by == "timeout" and run.decision_rule:
        return f"{what} when nobody answered in time (rule {run.decision_rule})"
    who = WHO.get(run.decided_by or "")
    if who and run.decided_by == "person" and run.decided_via:
        who += VIA[run.decided_via]
    return f"{what} {who}" if who else what


def describe_run(run: RunNode, timeline: Timeline, full: FullCall | None = None, loading: bool = False) -> str:
    """The pane's rich text for one run (pure: easy to test, cheap to call).

    `full` is the call as the journal holds it, when read; without it the timeline's excerpts are shown
    (with `loading`, a note that the whole is on its way)."""
    full = full if full is not None and full.call_id == run.call_id else None
    if run.undone_by:
        status = "undone"
    elif run.undone_paths:
        status = f"{run.status.value.replace('_', ' ')}, {len(run.undone_paths)} file(s) undone"
    else:
        status = run.status.value.replace("_", " ")
    took = f" in {run.duration_s:.2f} s" if run.duration_s is not None else ""
    parts = [f"<h3>{html.escape(run.tool)} · {html.escape(run.summary)}</h3>",
             f"<p><b>{status}</b>{took} · by {html.escape(agent_path(timeline, run.agent_id))}"
             f" · <span style='color:{theme.colour('muted')}'>{run.call_id}</span></p>"]
    if run.decision is not None:
        reason = f": {html.escape(run.decision_reason)}" if run.decision_reason else ""
        parts.append(f"<p>Decision: {html.escape(decision_text(run))}{reason}</p>")
    parts.append(describe_changes(run))
    parts.append(_loading_note(run, full, loading))
    parts.append("<h4>Arguments</h4>" + _arguments(run, full))
    output, error = (full.output, full.error) if full is not None and full.final and not full.gone else \
        (run.output, run.error)
    if error is not None:
        danger = theme.colour("danger")
        parts.append(f"<h4 style='color:{danger}'>Error ({error.kind.value})</h4>" + _pre(error.message))
        if error.suggestion:
            parts.append(f"<p>{html.escape(error.suggestion)}</p>")
    elif output:
        parts.append("<h4>Result</h4>" + _pre(output))
    if run.tool == ToolName.BASH and run.status.final and _was_cut(error.message if error is not None else output,
                                                            run.output_cut and full is None):
        parts.append(f"<p><a href='full-output:{run.call_id}'>Read the whole output kept in the journal</a></p>")
    elif run.live_output:
        parts.append("<h4>Output so far</h4>" + _pre(run.live_output))
    return "".join(parts)


def _was_cut(text: str, excerpt_cut: bool) -> bool:
    """Whether the output the agent saw was cut (the journal may keep more).  The excerpt of a long
    output may have lost the marker from its middle: then its being cut at all says so."""
    return excerpt_cut or " cut ...]" in text  # the marker the tool and the pipeline put where they cut


def _loading_note(run: RunNode, full: FullCall | None, loading: bool) -> str:
    if full is not None and full.gone:
        return f"<p style='color:{theme.colour('warning')}'>{html.escape(full.problem)}</p>"
    if loading and (full is None or not full.final):
        return f"<p style='color:{theme.colour('muted')}'>{html.escape(LOADING_TEXT)}</p>"
    return ""


def _arguments(run: RunNode, full: FullCall | None) -> str:
    """The whole arguments when read (a link opens them all when even the pane must cut them), else the
    timeline's excerpt."""
    if full is None or full.args_text is None:
        return _pre(json.dumps(run.args, indent=2, ensure_ascii=False))
    more = ""
    if len(full.args_text) > MAX_SHOWN_CHARS:
        more = (f"<p><a href='full-args:{run.call_id}'>Read all the arguments "
                f"({len(full.args_text):,} characters)</a></p>")
    return _pre(full.args_text) + more


def describe_agent(key: AgentKey, timeline: Timeline) -> str:
    """Who the agent is and what it did: its calls counted with its sub-agents' (at any depth), as its row's
    roll-up counts them, and how many of those are its own."""
    agent = timeline.agents[key.agent_id]
    counts = timeline.rollup(key)
    own = sum(agent.statuses.values())  # those in its batches too
    deeper = sum(counts.values()) - own
    by_subs = f"<p>{own} of them its own, {deeper} by its sub-agents</p>" if deeper else ""
    spawned = f"<p>Spawned by the Task call {agent.spawned_by}</p>" if agent.spawned_by else ""
    kind = "sub-agent" if agent.parent_id else f"{agent.agent_kind} agent"
    message = f"<p>{html.escape(agent.message)}</p>" if agent.message else ""
    return (f"<h3>{html.escape(agent_path(timeline, agent.agent_id))}</h3>"
            f"<p>{kind} · {agent.status.value} · {html.escape(rollup_text(counts))}</p>{by_subs}{spawned}{message}")


def describe_batch(key: BatchKey, timeline: Timeline) -> str:
    batch = timeline.batches[key.batch_id]
    calls = [timeline.runs[k.call_id] for k in batch.children if isinstance(k, RunKey)]
    parts = [f"<h3>Batch {html.escape(batch.name)}</h3>",
             f"<p>{len(calls)} of {max(batch.size, len(calls))} calls seen, by "
             f"{html.escape(agent_path(timeline, batch.agent_id))}</p>"]
    if batch.totals is not None:
        t = batch.totals
        parts.append(f"<p>{t.succeeded} ok, {t.failed} failed, {t.skipped} skipped, {t.cache_hits} from the cache; "
                     f"{t.duration_s:.2f} s, at most {t.max_running} at once</p>")
    if batch.plan is not None:
        levels = "<br>".join(f"{n}: {html.escape(', '.join(level))}" for n, level in enumerate(batch.plan.levels))
        parts.append(f"<h4>Plan</h4><p>{levels}</p><p>Critical path: "
                     f"{html.escape(' → '.join(batch.plan.critical_path))}</p>")
    return "".join(parts)


class DetailsPane(QWidget):
    """What the selected timeline row did, with its diffs, undo and redo."""

    undo_requested = Signal(str, list)
    redo_requested = Signal(str, list)
    full_output_requested = Signal(str)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None, *, records: RecordReader | None = None,
                 tasks: TaskSet | None = None,
                 undo_preview: Callable[[str], Awaitable[UndoPreview]] | None = None) -> None:
        """`records` reads a whole call from the journal and `tasks` owns the reads; without them the pane
        shows the timeline's excerpts only.  `undo_preview` previews an undo, so the pane can say beforehand
        that undoing the selected call needs a merge."""
        super().__init__(parent)
        self._timeline = timeline
        self._key: NodeKey | None = None
        self._diff_of: str | None = None
        self._records = records
        self._tasks = tasks if tasks is not None else TaskSet()
        self._full: FullCall | None = None
        """The selected call as last read from the journal."""
        self._loading: str | None = None
        """The call being read now."""
        self.full_output_dialog: QDialog | None = None
        self.info = QTextBrowser()
        self.info.setOpenLinks(False)
        self.info.anchorClicked.connect(self._on_link)
        self.diff = DiffView()
        self.undo_button = QPushButton("Undo this call")
        self.undo_button.setObjectName("undoButton")
        self.undo_button.setToolTip("Restore every file this call changed (Ctrl+Z); later edits are merged or "
                                    "shown to you first")
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        self.redo_button = QPushButton("Redo")
        self.redo_button.setToolTip("Put back what undoing this call took away (Ctrl+Shift+Z)")
        self.redo_button.clicked.connect(self._on_redo_button_clicked)
        self._undo_preview = undo_preview
        self._undo_previewed: str | None = None
        """The call whose undo the note was last asked for (asked again when another is shown)."""
        self._undo_note_task: asyncio.Task[None] | None = None
        self.undo_note = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        """Before an undo that needs a merge: which files changed since the call, and how many conflicts."""
        self.undo_note.setObjectName("undoNote")
        self.undo_note.hide()
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout()
        row.addWidget(self.notice, 1)
        row.addWidget(self.redo_button)
        row.addWidget(self.undo_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.info)
        split.addWidget(self.diff)
        split.setSizes([220, 320])
        keep_splitter(split, "details/split", window_settings())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split, 1)
        layout.addWidget(self.undo_note)
        layout.addLayout(row)
        self.show_key(None)
        theme.follow(self, lambda: self.show_key(self._key))  # the call's text carries the theme's colours

    @property
    def key(self) -> NodeKey | None:
        return self._key

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self.show_key(self._key if self._key and self._known(self._key) else None)

    def _known(self, key: NodeKey) -> bool:
        if isinstance(key, RunKey):
            return key.call_id in self._timeline.runs
        if isinstance(key, BatchKey):
            return key.batch_id in self._timeline.batches
        return key.ident in self._timeline.agents

    def show_key(self, key: NodeKey | str | None) -> None:
        """Show the row `key` names (or a key's text, e.g. "r:<call id>"); None: nothing selected."""
        key = parse_key(key) if key is not None else None
        changed = key != self._key
        self._key = key
        if changed:
            self.notice.clear()
        run = self._timeline.runs.get(key.call_id) if isinstance(key, RunKey) else None
        if self._full is not None and (run is None or run.call_id != self._full.call_id):
            self._full = None  # a call's whole arguments are kept while it is selected, no longer
        if run is not None and self._wants_record(run):
            self._loading = run.call_id
            self._tasks.spawn(self._read(run.call_id), f"details of {run.call_id}")
        if key is None:
            self.info.setHtml(f"<p style='color:{theme.colour('muted')}'>Select a call in the timeline to see its "
                              "arguments, result and the files it changed.</p>")
        elif isinstance(key, BatchKey):
            self.info.setHtml(describe_batch(key, self._timeline))
        elif isinstance(key, AgentKey):
            self.info.setHtml(describe_agent(key, self._timeline))
        else:
            self.info.setHtml(describe_run(run, self._timeline, self._full, self._loading == run.call_id))
        self.undo_button.setEnabled(undoable(run))
        if changed or (run is not None and undoable(run) and self._undo_previewed != run.call_id):
            self._preview_undo(run)
        self.redo_button.setVisible(bool(run and (run.undone_paths or run.git_undone)))
        if changed:
            self._diff_of = None
            self.diff.set_diffs([])

    @property
    def loading(self) -> bool:
        """Whether the selected call is being read from the journal."""
        return self._loading is not None and self._key == RunKey(self._loading)

    def _wants_record(self, run: RunNode) -> bool:
        """Whether to read the call from the journal: the timeline cut something, and the pane has not read
        it yet (or read it before its result came)."""
        if self._records is None or not (run.args_cut or run.output_cut) or self._loading == run.call_id:
            return False
        full = self._full
        if full is None or full.call_id != run.call_id:
            return True
        return run.status.final and not full.final

    async def _read(self, call_id: str) -> None:
        assert self._records is not None
        try:
            record = await self._records(call_id)
            full = await asyncio.to_thread(full_call, call_id, record)
        except (BelayError, RuntimeError, OSError, sqlite3.Error) as error:  # a closed console, a broken journal
            full = FullCall(call_id, None, problem=f"Could not read the whole call from the journal: {error}")
        finally:
            if self._loading == call_id:
                self._loading = None
        # Another row chosen meanwhile (or the pane gone with its window): the result is dropped.
        if shiboken6.isValid(self) and self._key == RunKey(call_id):
            self._full = full
            self.show_key(self._key)

    def show_diffs(self, call_id: str, diffs: list[FileDiff]) -> None:
        if self._key == RunKey(call_id):
            self._diff_of = call_id
            self.diff.set_diffs(diffs)

    def shows_diff_of(self, call_id: str) -> bool:
        """Whether the diff of `call_id` is fully on screen."""
        return self._diff_of == call_id and self.diff.is_rendered()

    def show_undo_report(self, report: UndoReport) -> None:
        if self._key != RunKey(report.call_id):
            return
        self.undo_note.hide()  # said before the undo; the report now says what happened
        if report.ok:
            self.notice.setText(f"<span style='color:{theme.colour('success')}'>{html.escape(report.message)}</span>")
        else:
            verb = "redone" if report.redo else "undone"
            danger = theme.colour("danger")
            self.notice.setText(f"<span style='color:{danger}'>Not {verb}: {html.escape(report.message)}</span>")

    def _on_link(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        value = urllib.parse.unquote(value)
        call_id = self._key.call_id if isinstance(self._key, RunKey) else ""
        if kind == "full-output":
            self.full_output_requested.emit(value)
        elif kind == "full-args" and self._full is not None and self._full.call_id == value:
            self._show_text(f"Arguments of {value}", self._full.args_text or "")
        elif kind == "undo-file" and call_id:
            self.undo_requested.emit(call_id, [value])
        elif kind == "redo-file" and call_id:
            self.redo_requested.emit(call_id, [value])

    def show_full_output(self, call_id: str, text: str | None) -> None:
        """The whole journaled output in its own window: a plain-text view copes with megabytes."""
        self._show_text(f"Full output of {call_id}",
                        text if text is not None else "The journal holds no more than the result shown.")

    def _show_text(self, title: str, text: str) -> None:
        if self.full_output_dialog is None:
            self.full_output_dialog = QDialog(self)
            self.full_output_dialog.resize(900, 600)
            self._full_output_view = QPlainTextEdit()
            self._full_output_view.setReadOnly(True)
            self._full_output_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            self._full_output_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            QVBoxLayout(self.full_output_dialog).addWidget(self._full_output_view)
        self.full_output_dialog.setWindowTitle(title)
        self._full_output_view.setPlainText(text)
        self.full_output_dialog.show()

    def _preview_undo(self, run: RunNode | None) -> None:
        """Say before the undo whether it needs a merge (read off the thread; a stale answer is dropped)."""
        self.undo_note.clear()
        self.undo_note.hide()
        self._undo_previewed = None
        if self._undo_note_task is not None:
            self._undo_note_task.cancel()  # another row shown: its preview is no longer wanted
            self._undo_note_task = None
        if self._undo_preview is not None and run is not None and undoable(run):
            self._undo_previewed = run.call_id
            self._undo_note_task = self._tasks.spawn(self._show_undo_notes(run.call_id),
                                                     f"undo preview of {run.call_id}")

    async def _show_undo_notes(self, call_id: str) -> None:
        assert self._undo_preview is not None
        await asyncio.sleep(UNDO_PREVIEW_DELAY_S)  # rows run through with the keyboard are not previewed
        try:
            preview = await self._undo_preview(call_id)
        except (BelayError, RuntimeError, OSError) as error:  # nothing to undo, a closed console, a damaged blob
            notes = [f"Undo cannot be previewed: {error}"] if isinstance(error, OSError) else []
        else:
            notes = undo_notes(preview)
        if shiboken6.isValid(self) and self._key == RunKey(call_id):
            self.undo_note.setText("\n".join(notes))
            self.undo_note.setVisible(bool(notes))

    def _on_undo_button_clicked(self) -> None:
        if isinstance(self._key, RunKey):
            self.undo_requested.emit(self._key.call_id, [])

    def _on_redo_button_clicked(self) -> None:
        if isinstance(self._key, RunKey):
            self.redo_requested.emit(self._key.call_id, [])


def undoable(run: RunNode | None) -> bool:
    """Whether the run has a stored change still in force (so "Undo" has something to do)."""
    if not run or not (run.changes or run.git_changes) or not run.status.final or run.status == RunStatus.DENIED:
        return False
    files = any(c.stored and c.path not in run.undone_paths for c in run.changes)
    return files or (bool(run.git_changes) and not run.git_undone)
