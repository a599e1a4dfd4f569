"""Deciding, file by file, how to undo a call whose files were edited again since.

The core's `UndoPreview` says what undoing would do to each file; this
dialog shows it and asks one question per conflicting file: merge (write the
edited merged text), overwrite (put back what was there before the call,
losing the later edits) or skip (leave the file as it is).  Undo stays
disabled until every conflict has an answer.  It is opened with `open()`,
never a blocking `exec()`.  The versions are shown as plain text: nothing
slow runs here but `setPlainText`, once per file shown (documents are kept).

Signals:
    resolved(dict): {path: Resolution} for every conflicting file, emitted
        when the person presses Undo, just before the dialog accepts.
"""

from __future__ import annotations

import re
from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QKeyEvent, QKeySequence, QShortcut, QTextDocument
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
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core import FilePreview, Resolution, UndoPreview

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
_ERROR_COLOUR = "#cf222e"


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
        self._docs: dict[tuple[str, str], QTextDocument] = {}
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        verb = "Redo" if preview.redo else "Undo"
        changed = sum(f.action in ("conflict", "merged") for f in preview.files)
        plural = "file" if changed == 1 else "files"
        self.setWindowTitle(f"{verb} {preview.call_id}: {changed} {plural} changed since" if changed
                            else f"{verb} {preview.call_id}")
        self.resize(1040, 700)
        self._build(verb)
        self._fill_list()
        self._sync_undo_button()

    def __repr__(self) -> str:
        return (f"<UndoDialog call={self._preview.call_id} files={len(self._files)} "
                f"conflicts={len(self._conflicts())} decided={len(self._choices)}>")

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
        self.versions = QTabWidget()
        self.versions.addTab(self.now_view, "Now")
        self.versions.addTab(self.after_view, "After the call")
        self.versions.addTab(self.before_view, f"{verb} restores")
        self.merged_label = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.merged_edit = self._text_view()
        self.merged_edit.setAccessibleName("Merged")
        merged_panel = _column(self.merged_label, self.merged_edit)
        self.choice_buttons = {action: QRadioButton(_CHOICE_TEXT[action]) for action in CHOICES}
        self.choice_box = _column(*self.choice_buttons.values())
        for action, button in self.choice_buttons.items():
            button.setAutoExclusive(False)  # exclusivity is ours: arrow keys must not change a choice
            button.clicked.connect(lambda _=False, a=action: self._choose_current(a))
        self.message = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.message.setStyleSheet(f"color: {_ERROR_COLOUR};")
        self.texts = QSplitter(Qt.Orientation.Vertical)
        self.texts.addWidget(self.versions)
        self.texts.addWidget(merged_panel)
        self.texts.setSizes([260, 340])
        right = _column(self.heading, self.detail, self.texts, self.choice_box, self.message)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.files)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([280, 760])
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

    def _text_view(self) -> QPlainTextEdit:
        view = QPlainTextEdit(readOnly=True)
        view.setFont(self._font)
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
        self.files.setFocus()  # Up / Down move between files

    # -- showing ----------------------------------------------------------------------

    def _label_item(self, item: QListWidgetItem) -> None:
        f = self._files[item.data(_PATH)]
        _, glyph, status, _ = _STATUS[f.action]
        chosen = self._choices.get(f.path)
        item.setText(f"{glyph}  {f.path}\n      {_CHOSEN[chosen] if chosen else status}")
        item.setToolTip(f.reason or status)
        undecided = f.action == "conflict" and chosen is None
        font = QFont(self.files.font())
        font.setBold(undecided)
        item.setFont(font)
        item.setData(Qt.ItemDataRole.ForegroundRole, QColor(_ERROR_COLOUR) if undecided else None)

    def _show_current(self) -> None:
        f = self._files.get(self.current_path())
        if f is None:
            return
        moved = f" (moved back to {f.old_path})" if f.old_path else ""
        self.heading.setText(f"{f.path}{moved}")
        self.detail.setText(_sentence(f.reason or _STATUS[f.action][3]))
        for view, side, text in ((self.now_view, "now", f.now), (self.after_view, "after", f.after_call),
                                 (self.before_view, "before", f.before_call)):
            self._put(view, f, side, text, "(not shown: absent, or not text)" if f.binary else "(no such file)")
        self._show_merged(f)
        self.choice_box.setVisible(f.action == "conflict")
        self._sync_choice_buttons(f)

    def _show_merged(self, f: FilePreview) -> None:
        conflict, mergeable = f.action == "conflict", _mergeable(f)
        self.merged_edit.parentWidget().setVisible(conflict or f.merged is not None)
        self.merged_edit.setReadOnly(not (conflict and mergeable))
        self.merged_edit.setEnabled(not conflict or mergeable)
        why = "binary file: overwrite or skip" if f.binary else f"{f.reason}: cannot be merged; overwrite or skip"
        self._put(self.merged_edit, f, "merged", f.merged if mergeable or not conflict else None, why)
        self.merged_label.setText(
            "Merged: edit until no conflict markers (<<<<<<< … >>>>>>>) remain" if conflict and mergeable
            else f"Merged: not available ({why})" if conflict else "Merged (written by the undo, later edits kept)")

    def _put(self, view: QPlainTextEdit, f: FilePreview, side: str, text: str | None, absent: str) -> None:
        doc = self._docs.get((f.path, side))
        if doc is None:
            doc = self._docs[(f.path, side)] = QTextDocument(self)
            doc.setDocumentLayout(QPlainTextDocumentLayout(doc))
            doc.setDefaultFont(self._font)
            doc.setPlainText(text or "")
        view.setDocument(doc)
        view.setPlaceholderText("" if text else "(empty)" if text == "" else absent)

    def _sync_choice_buttons(self, f: FilePreview) -> None:
        chosen = self._choices.get(f.path)
        for action, button in self.choice_buttons.items():
            button.setChecked(action == chosen)
        self.choice_buttons["merge"].setEnabled(_mergeable(f))

    def _sync_undo_button(self) -> None:
        self.undo_button.setEnabled(all(f.path in self._choices for f in self._conflicts()))

    # -- deciding ---------------------------------------------------------------------

    def _choose_current(self, action: Choice) -> None:
        f = self._files.get(self.current_path())
        if f is not None and f.action == "conflict" and (action != "merge" or _mergeable(f)):
            self.choose(f.path, action)
        elif f is not None:
            self._sync_choice_buttons(f)  # a click on a checked button must not uncheck it

    def _undo(self) -> None:
        if not self.undo_button.isEnabled():
            return
        merges = [path for path, action in self._choices.items() if action == "merge"]
        unresolved = [path for path in merges if has_conflict_markers(self._merged_text(path))]
        if unresolved:
            self.files.setCurrentItem(self._item(unresolved[0]))
            self.merged_edit.setFocus()
            self.message.setText(f"{unresolved[0]} still has conflict markers (<<<<<<< … >>>>>>>): edit the "
                                 "Merged text until none remain, or choose Overwrite or Skip.")
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
