"""A command's effects previewed before they land: what its private layer holds, as a plan of writes a person
chooses from.

The command ran in an overlay of the workspace (`core.process.overlay`): it
saw the workspace, and everything it wrote went to its layer.  `layer_plan`
turns the layer's change set into the same `WritePlan` a file tool makes (a
creation, a modification or a mode change writes the layer's bytes; a
deletion removes the file; a rename is both), so the approval shows a diff
per file and applying goes through the file tools' durable path, journaled
against the call.  What a plan of file writes cannot carry, folders and
symbolic links, is merged from the layer as it is when the person applies
(`extras`, named on the card and to the agent); a file too large to capture
or unreadable is named in `left` and never applied.  `merge` makes a layer's changes as they are.

`chosen` reads the person's answer per file: a file whose hunks were all
turned off is discarded (a created file too, which an ordinary partial
approval cannot express), some hunks of a modified file apply those hunks,
an edited file writes the edit, and everything else applies whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.changes.diffs import compute_diff
from core.changes.partial import PartialError, apply_hunks
from core.errors import ToolError
from core.models.records import ChangeKind
from core.paths import Workspace
from core.process.overlay import Layer, LayerChange
from core.store import fsio
from core.store.restore import Chmod, FileOp, Put, Remove, apply_all
from core.tools.base import FileWrite, WritePlan

REASON = ("Belay ran this command in a private layer over the workspace: nothing has changed yet. Apply all, some "
          "files (turn a file's hunks off to leave it out), or deny to discard everything it did.")
CLASH = ("While this command ran beside others, another call changed {paths}, and this command changed them too, "
         "differently. Apply replaces that call's version with this command's; discard keeps it. The command's other "
         "changes are in the workspace already.")
LIMITS = ("A preview shows files in the workspace only: network calls the command made and processes it started "
          "elsewhere have happened already, and files it wrote outside the workspace are discarded with the layer.")


@dataclass(frozen=True)
class Choice:
    """What the person applies of a preview, and what they left out."""

    plan: WritePlan
    discarded: tuple[str, ...]


def layer_plan(layer: Layer, changes: Sequence[LayerChange], workspace: Workspace
               ) -> tuple[WritePlan, list[LayerChange], list[str]]:
    """Blocking: the writes that would make the workspace's files what the command left in its layer; the
    changes to folders and links (merged from the layer as they are, with the files); what cannot be applied,
    each with why."""
    writes: list[FileWrite] = []
    extras: list[LayerChange] = []
    left: list[str] = []
    for change in changes:
        if change.is_link or change.is_dir:
            extras.append(change)
            continue
        if change.kind == ChangeKind.RENAME and change.old_path is not None:
            writes.append(_removal(workspace, change.old_path))
        if change.kind == ChangeKind.DELETE:
            writes.append(_removal(workspace, change.path))
            continue
        upper = layer.upper / change.path
        try:
            st = upper.lstat()
            if st.st_size > fsio.MAX_CAPTURE_BYTES:
                raise OSError(f"{st.st_size:,} bytes, more than a preview captures")
            after = upper.read_bytes()
        except OSError as e:
            left.append(f"{change.path} (could not be read from the layer: {e})")
            continue
        path = workspace.root / change.path
        before = fsio.read_if_exists(workspace, path, fsio.MAX_CAPTURE_BYTES)
        writes.append(FileWrite(path, before, after, stat.S_IMODE(st.st_mode)))
    return WritePlan(writes=tuple(writes), message=""), extras, left


def described(extras: Sequence[LayerChange], layer: Layer) -> str:
    """The folders and links a command changed, in words: the approval and the agent are told of them."""
    said = []
    for change in extras:
        if change.is_link and change.kind != ChangeKind.DELETE:
            said.append(f"{change.path} (a link to {os.readlink(layer.upper / change.path)})")
        else:
            what = "link" if change.is_link else "folder"
            said.append(f"{change.path}/ ({what} {_PAST[change.kind]})" if change.is_dir else
                        f"{change.path} ({what} {_PAST[change.kind]})")
    return ", ".join(said)


_PAST = {ChangeKind.CREATE: "made", ChangeKind.DELETE: "removed", ChangeKind.MODE: "mode changed",
         ChangeKind.MODIFY: "changed", ChangeKind.RENAME: "renamed"}


def _removal(workspace: Workspace, rel: str) -> FileWrite:
    path = workspace.root / rel
    return FileWrite(path, fsio.read_if_exists(workspace, path, fsio.MAX_CAPTURE_BYTES), None)


def chosen(plan: WritePlan, workspace: Workspace, *, hunks: Mapping[str, Sequence[int]] | None,
           edited: Mapping[str, str] | None) -> Choice:
    """Blocking: the writes the person kept (see the module's docstring); PartialError when some hunks of a file
    cannot be applied alone (a file created or removed whole)."""
    writes: list[FileWrite] = []
    discarded: list[str] = []
    for write in plan.writes:
        rel = workspace.relative(write.path)
        after = write.after
        if edited and rel in edited:
            after = edited[rel].encode("utf-8")
        elif hunks is not None and rel in hunks:
            accepted = set(hunks[rel])
            diff = compute_diff(rel, write.before, write.after)
            if not accepted:
                discarded.append(rel)
                continue
            if len(accepted) < len(diff.hunks):
                if write.before is None or write.after is None:
                    raise PartialError(f"{rel} is {'created' if write.before is None else 'removed'} whole by the "
                                       "command: keep all of it or none")
                after = apply_hunks(write.before, diff, accepted)
        if after == write.before and write.mode is None:
            discarded.append(rel)
            continue
        writes.append(FileWrite(write.path, write.before, after, write.mode))
    return Choice(WritePlan(writes=tuple(writes), message=""), tuple(discarded))


def told(applied: Sequence[str], discarded: Sequence[str], left: Sequence[str], denied: str | None) -> str:
    """What the agent hears after its command's output: which of its changes were applied."""
    if denied is not None:
        said = f"[Belay previewed this command's changes; none were applied: {denied}]"
    elif not applied:
        said = "[Belay previewed this command's changes; the person applied none of them]"
    else:
        said = f"[Belay previewed this command's changes; applied: {', '.join(applied)}"
        said += f"; discarded: {', '.join(discarded)}]" if discarded else "]"
    if left:
        said += f"\n[Not applied: {'; '.join(left)}]"
    return said


def merge(layer: Layer, changes: Sequence[LayerChange], workspace: Workspace) -> None:
    """Blocking: make these of the layer's changes in the workspace itself, through the undo's writer
    (`core.store.restore`: staged beside their places, then renamed in; paths opened without following links,
    so a link another command made cannot lead a write out of the workspace).  Files and links that go, then
    folders that go (only if nothing kept is left in them), then folders that come, then what is written."""
    gone: list[FileOp] = [Remove(c.path) for c in changes if c.kind == ChangeKind.DELETE and not c.is_dir]
    gone += [Remove(c.old_path) for c in changes if c.kind == ChangeKind.RENAME and c.old_path is not None]
    apply_all(workspace, gone, [None] * len(gone))
    for change in sorted((c for c in changes if c.is_dir and c.kind == ChangeKind.DELETE), key=lambda c: c.path,
                         reverse=True):
        with contextlib.suppress(OSError, ToolError), fsio.parent_dir(workspace, workspace.root / change.path) as (
                dfd, name):
            os.rmdir(name, dir_fd=dfd)  # not empty: something in it was kept
    written: list[FileOp] = []
    for change in sorted((c for c in changes if c.kind != ChangeKind.DELETE), key=lambda c: c.path):
        upper = layer.upper / change.path
        mode = stat.S_IMODE(upper.lstat().st_mode)
        if change.is_dir:
            with fsio.parent_dir(workspace, workspace.root / change.path, create=True) as (dfd, name):
                if change.kind == ChangeKind.CREATE:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, mode, dir_fd=dfd)
                if stat.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    os.chmod(name, mode, dir_fd=dfd)
        elif change.is_link:
            written.append(Put(change.path, os.fsencode(os.readlink(upper)), link=True))
        elif change.kind == ChangeKind.MODE:
            written.append(Chmod(change.path, mode))
        else:
            written.append(Put(change.path, upper.read_bytes(), mode))
    apply_all(workspace, written, [None] * len(written))
