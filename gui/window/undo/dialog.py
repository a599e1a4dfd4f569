"""Deciding, file by file, how to undo a call whose files were edited again since.

The core's `UndoPreview` says what undoing would do to each file; this
dialog shows it and asks one question per conflicting file: merge (write the
edited merged text), overwrite (put back what was there before the call,
losing the later edits) or skip (leave the file as it is).  The merged text
is a small merge editor: numbered lines, each conflict region coloured (the
file now, what the call left, what the undo restores), opened on the first
region with the cursor there, next / previous region keys, and per region
"Take now", "Take the undo" or "Take both"; hand edits stay possible.  The three versions stand side by
side where the dialog is wide enough, in tabs otherwise (gui.window.undo.versions).  The
regions are parsed back out of the text (`core.conflict_regions`) after each
edit, so they are whatever the text now holds (gui.window.undo.regions).  Undo stays disabled until
every conflict has an answer and no merged text still has conflict markers.
It is opened with `open()`, never a blocking `exec()`.  Nothing slow runs
here: `setPlainText` once per file shown (documents are kept) and a parse of
the merged text, debounced, after edits.

Signals:
    resolved(dict): {path: Resolution} for every conflicting file, emitted
        when the person presses Undo, just before the dialog accepts.
"""

from __future__ import annotations

import re
from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import (
    QFont,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextDocumentLayout,
    QPlainTextEdit,
    QRadioButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core import ConflictRegion, FilePreview, Resolution, Take, UndoPreview, conflict_regions
from gui.window.kit import theme
from gui.window.kit.code_font import code_font, keep_code_font
from gui.window.review.code_editor import CodeEditor
from gui.window.undo.regions import TAKE_TEXT, RegionBar, cursor_at
from gui.window.undo.versions import VersionsView

Choice = Literal["merge", "overwrite", "skip"]
CHOICES: tuple[Choice, ...] = ("merge", "overwrite", "skip")
_CHOICE_TEXT = {
    "merge": "Merge: write the Merged text below  (Alt+M)",
    "overwrite": "Overwrite: put back the file as it was before the call; the later edits are lost  (Alt+O)",
    "skip": "Skip: leave this file as it is now  (Alt+S)",
}
_CHOSEN = {"merge": "✓ merge", "overwrite": "✓ overwrite later edits", "skip": "✓ skip: left as it is"}
_STATUS = {  # action: (order, glyph, label, what it means when the core gives no reason)
    "conflict": (0, "⚠", "conflict: needs a decision", "Changed since the call."),
    "merged": (1, "⇄", "merged: later edits kept", "Edited again since the call: the later edits are kept."),
    "restore": (2, "↶", "restore", "Unchanged since the call: the undo puts back what was there before it."),
    "already": (3, "=", "already as before", "Already as it was before the call: nothing to do."),
    "unrestorable": (4, "✕", "cannot be restored", "What was there before was never stored: the file is left."),
}
_MARKER = re.compile(r"^(?:<{7}|>{7})(?:\s|$)", re.MULTILINE)
_PATH = Qt.ItemDataRole.UserRole
_ERROR_COLOUR = "danger"


def has_conflict_markers(text: str) -> bool:
    """Whether a line of `text` opens or closes a conflict region (`<<<<<<<` / `>>>>>>>`)."""
    return _MARKER.search(text) is not None


class UndoDialog(QDialog):
    """The files an undo would touch, and a merge / overwrite / skip choice for each conflict.

    Signals:
        resolved(dict): {path: Resolution} for every conflict, on Undo.
    """

    resolved = Signal(dict)

    def __init__(self, preview: UndoPreview, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._preview = preview
        self._files = {f.path: f for f in sorted(preview.files, key=lambda f: _STATUS[f.action][0])}
        self._choices: dict[str, Choice] = {}
        self._left = {f.path: len(conflict_regions(f.merged or "")) for f in self._conflicts() if _mergeable(f)}
        """Conflict regions still in each mergeable file's merged text."""
        self._docs: dict[tuple[str, str], QTextDocument] = {}
        self._font = code_font()
        verb = "Redo" if preview.redo else "Undo"
        changed = sum(f.action in ("conflict", "merged") for f in preview.files)
        plural = "file" if changed == 1 else "files"
        self.setWindowTitle(f"{verb} {preview.call_id}: {changed} {plural} changed since" if changed
                            else f"{verb} {preview.call_id}")
        screen = self.screen().availableGeometry()  # wide enough, where the screen is, for the versions side by side
        self.resize(min(1440, screen.width() - 40), min(760, screen.height() - 60))
        self._build(verb)
        self._fill_list()
        self._sync_undo_button()

    def __repr__(self) -> str:
        return (f"<UndoDialog call={self._preview.call_id} files={len(self._files)} conflicts={len(self._conflicts())} "
                f"decided={len(self._choices)} regions={len(self.region_bar.regions)}>")

    # -- public -----------------------------------------------------------------------

    def choices(self) -> dict[str, Choice]:
        """{path: "merge" | "overwrite" | "skip"} for the conflicts decided so far."""
        return dict(self._choices)

    def choose(self, path: str, action: Choice | None) -> None:
        """Decide (or, with None, undecide) what to do with one conflicting file."""
        f = self._files.get(path)
        if f is None or f.action != "conflict":
            raise ValueError(f"{path!r} is not a conflicting file of this undo")
        if action is not None and (action not in CHOICES or (action == "merge" and not _mergeable(f))):
            raise ValueError(f"{action!r} is not a choice for {path!r}")
        if action is None:
            self._choices.pop(path, None)
        else:
            self._choices[path] = action
        self.message.clear()
        self._label_item(self._item(path))
        if path == self.current_path():
            self._sync_choice_buttons(f)
        self._sync_undo_button()

    def current_path(self) -> str:
        """The path of the file shown on the right ("" when none)."""
        item = self.files.currentItem()
        return item.data(_PATH) if item is not None else ""

    def regions(self) -> list[ConflictRegion]:
        """The conflict regions of the merged text shown, as it reads now (0-based lines)."""
        self.region_bar.refresh_now()
        return list(self.region_bar.regions)

    def current_region(self) -> int | None:
        """The index of the region the cursor is in, or None when it is in none."""
        self.region_bar.refresh_now()
        return self.region_bar.index_at(self.merged_edit.textCursor().blockNumber())

    def go_to_region(self, step: int) -> None:
        """Put the cursor on the next (step 1) or previous (-1) region, wrapping around; 0: the first."""
        self.region_bar.go_to(step)

    def take(self, take: Take) -> None:
        """Settle the cursor's region (or the next one) with a side; the file is then merged."""
        f = self._files.get(self.current_path())
        bar = self.region_bar
        bar.refresh_now()
        if f is None or not _mergeable(f) or not bar.regions:
            return
        line = self.merged_edit.textCursor().blockNumber()
        region = next((r for r in bar.regions if line < r.end), bar.regions[-1])
        doc = self.merged_edit.document()
        cursor = QTextCursor(doc)
        cursor.setPosition(doc.findBlockByNumber(region.start).position())
        end = doc.findBlockByNumber(region.end)
        cursor.setPosition(end.position() if end.isValid() else doc.characterCount() - 1,
                           QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(region.text(take) if end.isValid() else region.text(take).removesuffix("\n"))
        if self._choices.get(f.path) != "merge":
            self.choose(f.path, "merge")
        bar.refresh_now(force=True)
        if bar.regions:
            bar.put_cursor_on(next((r for r in bar.regions if r.start >= region.start), bar.regions[0]))
        else:
            self.merged_edit.setTextCursor(cursor_at(doc, region.start))

    def resolutions(self) -> dict[str, Resolution]:
        """What Undo would emit now (every conflict must be decided)."""
        return {path: Resolution(action=action, content=self._merged_text(path) if action == "merge" else None,
                                 seen_digest=self._files[path].now_digest)
                for path, action in self._choices.items()}

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802  (Qt override)
        """Up / Down the focused widget leaves (the tabs) move between files; plain Enter does not undo."""
        plain = not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        step = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1}.get(Qt.Key(event.key()), 0)
        if plain and step and 0 <= self.files.currentRow() + step < self.files.count():
            self.files.setCurrentRow(self.files.currentRow() + step)
        elif not (plain and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Up, Qt.Key.Key_Down)):
            super().keyPressEvent(event)  # QDialog would press the default button on Enter: Undo takes Ctrl+Enter

    # -- building ---------------------------------------------------------------------

    def _build(self, verb: str) -> None:
        self.files = QListWidget()
        self.files.setAccessibleName("Files")
        self.files.setSpacing(2)
        self.files.currentItemChanged.connect(self._show_current)
        self.heading = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        bold = QFont(self.heading.font())
        bold.setBold(True)
        self.heading.setFont(bold)
        self.detail = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.now_view, self.after_view, self.before_view = (self._text_view() for _ in range(3))
        self.versions = VersionsView([(self.now_view, "Now"), (self.after_view, "After the call"),
                                      (self.before_view, f"{verb} restores")])  # side by side where they fit
        self.merged_label = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.merged_edit = CodeEditor()
        self.merged_edit.setAccessibleName("Merged")
        self.region_bar = RegionBar(self.merged_edit)
        self.region_bar.reparsed.connect(self._on_region_bar_reparsed)
        self.region_bar.went_to.connect(self._show_region_in_versions)
        self.region_bar.take_requested.connect(self.take)
        self.region_label, self.take_buttons = self.region_bar.label, self.region_bar.take_buttons
        merged_panel = _column(self.merged_label, self.region_bar, self.merged_edit)
        self.choice_buttons = {action: QRadioButton(_CHOICE_TEXT[action]) for action in CHOICES}
        self.choice_box = _column(*self.choice_buttons.values())
        for action, button in self.choice_buttons.items():
            button.setAutoExclusive(False)  # exclusivity is ours: arrow keys must not change a choice
            button.clicked.connect(lambda _=False, a=action: self._choose_current(a))
        self.message = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.message.setObjectName("undoMessage")
        self.texts = QSplitter(Qt.Orientation.Vertical)
        self.texts.addWidget(self.versions)
        self.texts.addWidget(merged_panel)
        self.texts.setSizes([180, 420])  # the merged text is where the work is
        right = _column(self.heading, self.detail, self.texts, self.choice_box, self.message)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.files)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([240, 800])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.undo_button = buttons.addButton(verb, QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.undo_button.setToolTip(f"{verb} (Ctrl+Enter)")
        buttons.accepted.connect(self._undo)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(buttons)
        self.undo_button.setDefault(True)  # drawn as the primary button (in the dialog by now); Enter is swallowed
        self._shortcuts(verb)

    def _shortcuts(self, verb: str) -> None:
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, self._undo)
        for keys, action in (("Alt+M", "merge"), ("Alt+O", "overwrite"), ("Alt+S", "skip")):
            QShortcut(QKeySequence(keys), self, lambda a=action: self._choose_current(a))
        for keys, step in (("Alt+Down", 1), ("F8", 1), ("Alt+Up", -1), ("Shift+F8", -1)):
            QShortcut(QKeySequence(keys), self, lambda s=step: self.go_to_region(s))
        for take, (_, keys, _) in TAKE_TEXT.items():
            QShortcut(QKeySequence(keys), self, lambda t=take: self.take(t))

    def _text_view(self) -> QPlainTextEdit:
        view = QPlainTextEdit(readOnly=True)
        keep_code_font(view)
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        return view

    def _fill_list(self) -> None:
        for path in self._files:
            item = QListWidgetItem()
            item.setData(_PATH, path)
            self.files.addItem(item)
            self._label_item(item)
        if self.files.count():
            self.files.setCurrentRow(0)  # conflicts sort first
        else:
            self.heading.setText("No files to show")
            self.texts.hide()
            self.choice_box.hide()
        first = self._files.get(self.current_path())
        if first is not None and _mergeable(first):
            self.merged_edit.setFocus()  # the cursor waits on the first conflict
        else:
            self.files.setFocus()  # Up / Down move between files

    # -- showing ----------------------------------------------------------------------

    def _label_item(self, item: QListWidgetItem) -> None:
        f = self._files[item.data(_PATH)]
        _, glyph, status, _ = _STATUS[f.action]
        chosen = self._choices.get(f.path)
        left = self._left.get(f.path, 0) if chosen == "merge" else 0
        state = _CHOSEN[chosen] if chosen else status
        if left:
            state += f": {left} conflict{'s' if left != 1 else ''} left"
        item.setText(f"{glyph}  {f.path}\n      {state}")
        item.setToolTip(f.reason or status)
        undecided = f.action == "conflict" and (chosen is None or left > 0)
        font = QFont(self.files.font())
        font.setBold(undecided)
        item.setFont(font)
        item.setData(Qt.ItemDataRole.ForegroundRole, theme.qcolour(_ERROR_COLOUR) if undecided else None)

    def _show_current(self) -> None:
        f = self._files.get(self.current_path())
        if f is None:
            return
        moved = f" (moved back to {f.old_path})" if f.old_path else ""
        self.heading.setText(f"{f.path}{moved}")
        self.detail.setText(merge_note(f) or _sentence(f.reason or _STATUS[f.action][3]))
        for view, side, text in ((self.now_view, "now", f.now), (self.after_view, "after", f.after_call),
                                 (self.before_view, "before", f.before_call)):
            self._put(view, f, side, text, "(not shown: absent, or not text)" if f.binary else "(no such file)")
        self._show_merged(f)
        self.choice_box.setVisible(f.action == "conflict")
        self._sync_choice_buttons(f)

    def _show_merged(self, f: FilePreview) -> None:
        conflict, mergeable = f.action == "conflict", _mergeable(f)
        panel = self.merged_edit.parentWidget()
        if panel is not None:
            panel.setVisible(conflict or f.merged is not None)
        self.merged_edit.setReadOnly(not (conflict and mergeable))
        self.merged_edit.setEnabled(not conflict or mergeable)
        why = "binary file: overwrite or skip" if f.binary else f"{f.reason}: cannot be merged; overwrite or skip"
        self._put(self.merged_edit, f, "merged", f.merged if mergeable or not conflict else None, why)
        self.merged_label.setText(
            "Merged: take a side of each conflict, or edit until no conflict markers (<<<<<<< … >>>>>>>) remain"
            if conflict and mergeable
            else f"Merged: not available ({why})" if conflict else "Merged (written by the undo, later edits kept)")
        self.region_bar.show_text(conflict and mergeable)

    # -- conflict regions -------------------------------------------------------------

    def _on_region_bar_reparsed(self) -> None:
        """The merged text's regions were found again: count what is left in the file, and whether Undo can run."""
        f = self._files.get(self.current_path())
        if f is not None and _mergeable(f):
            self._left[f.path] = len(self.region_bar.regions)
            self._label_item(self._item(f.path))
        self._sync_undo_button()

    def _show_region_in_versions(self, region: ConflictRegion) -> None:
        """Scroll the versions to the region's lines: now's side in Now, the undo's in what it restores."""
        above = [r for r in self.region_bar.regions if r.end <= region.start]
        for view, side in ((self.now_view, "now"), (self.after_view, "base"), (self.before_view, "undo")):
            line = region.start - sum(r.lines - getattr(r, side).count("\n") for r in above)
            view.setTextCursor(cursor_at(view.document(), line))
            shown = max(view.viewport().height() // max(view.fontMetrics().height(), 1), 1)
            view.verticalScrollBar().setValue(max(line - min(3, shown // 3), 0))  # unwrapped: a block is a line

    def _put(self, view: QPlainTextEdit, f: FilePreview, side: str, text: str | None, absent: str) -> None:
        doc = self._docs.get((f.path, side))
        if doc is None:
            doc = self._docs[(f.path, side)] = QTextDocument(self)
            doc.setDocumentLayout(QPlainTextDocumentLayout(doc))
            doc.setDefaultFont(self._font)
            doc.setPlainText(text or "")
            if side == "merged":
                doc.contentsChanged.connect(self.region_bar.reparse.start)
        view.setDocument(doc)
        if view is self.merged_edit:  # setDocument does not say the line count changed: the gutter must widen
            self.merged_edit.blockCountChanged.emit(doc.blockCount())
        view.setPlaceholderText("" if text else "(empty)" if text == "" else absent)

    def _sync_choice_buttons(self, f: FilePreview) -> None:
        chosen = self._choices.get(f.path)
        for action, button in self.choice_buttons.items():
            button.setChecked(action == chosen)
        self.choice_buttons["merge"].setEnabled(_mergeable(f))

    def _sync_undo_button(self) -> None:
        self.undo_button.setEnabled(self._missing() is None)

    def _missing(self) -> tuple[str, str] | None:
        """The first conflict not settled yet and what it still needs, or None when Undo can run."""
        for f in self._conflicts():
            if f.path not in self._choices:
                return f.path, f"{f.path} needs a decision: merge, overwrite or skip."
            if self._choices[f.path] == "merge" and has_conflict_markers(self._merged_text(f.path)):
                return f.path, (f"{f.path} still has conflict markers (<<<<<<< … >>>>>>>): take a side of each "
                                "conflict or edit the Merged text until none remain, or choose Overwrite or Skip.")
        return None

    # -- deciding ---------------------------------------------------------------------

    def _choose_current(self, action: Choice) -> None:
        f = self._files.get(self.current_path())
        if f is not None and f.action == "conflict" and (action != "merge" or _mergeable(f)):
            self.choose(f.path, action)
        elif f is not None:
            self._sync_choice_buttons(f)  # a click on a checked button must not uncheck it

    def _undo(self) -> None:
        self.region_bar.refresh_now()
        missing = self._missing()
        if missing is not None:  # Ctrl+Enter while Undo is disabled: say why, and go there
            path, why = missing
            if path != self.current_path():
                self.files.setCurrentItem(self._item(path))
            if self._choices.get(path) == "merge":
                self.merged_edit.setFocus()
                self.go_to_region(0)
            self.message.setText(why)
            return
        self.resolved.emit(self.resolutions())
        self.accept()

    def _merged_text(self, path: str) -> str:
        """The merged text as edited; exactly the core's text when it was not edited."""
        original = self._files[path].merged or ""
        doc = self._docs.get((path, "merged"))
        if doc is None or not doc.isModified():
            return original
        eol = "\r\n" if "\r\n" in original else "\n"  # the document keeps no line endings of its own
        return doc.toRawText().replace("\u2029", eol)

    def _conflicts(self) -> list[FilePreview]:
        return [f for f in self._files.values() if f.action == "conflict"]

    def _item(self, path: str) -> QListWidgetItem:
        return next(self.files.item(r) for r in range(self.files.count()) if self.files.item(r).data(_PATH) == path)


def merge_note(f: FilePreview) -> str:
    """What undoing needs for a conflicting text file, e.g. "… needs a merge (2 conflicting regions)"."""
    if not _mergeable(f):
        return ""
    count = len(conflict_regions(f.merged or ""))
    regions = f"{count} conflicting region{'s' if count != 1 else ''}"
    return f"{f.path} changed since this call: undoing it needs a merge ({regions})."


def undo_notes(preview: UndoPreview) -> list[str]:
    """What the undo will have to merge, said before it runs: one sentence per file changed since the call."""
    notes = []
    for f in preview.files:
        if f.action == "conflict":
            notes.append(merge_note(f) or f"{f.path} changed since this call and cannot be merged: undoing it "
                                          "asks you to overwrite or skip it.")
        elif f.action == "merged":
            notes.append(f"{f.path} changed since this call: undoing it merges the later edits (no conflicts).")
    return notes


def _mergeable(f: FilePreview) -> bool:
    return f.action == "conflict" and f.merged is not None and not f.binary


def _column(*widgets: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget, 1 if isinstance(widget, (QSplitter, QPlainTextEdit)) else 0)
    return box


def _sentence(text: str) -> str:
    """The core's reasons are clauses ("it changed after this call"); shown alone they start a sentence."""
    return text[:1].upper() + text[1:]
