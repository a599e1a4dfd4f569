"""Terminal commands that need no window: listing journaled calls and undoing one.

They open a console on the workspace's journal like the window does, so a
call made in the window can be listed and undone from a shell (and the other
way round).  No Qt is imported on this path, so they start fast.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from core import BelayError, ErrorKind, config_dir, find_endpoint, state_root
from gui.terminal.calls import WorkspaceMissing, existing, list_calls

if TYPE_CHECKING:
    from core import UndoReport

__all__ = ["WorkspaceMissing", "hooks_command", "list_calls", "undo_call"]


def _relative(workspace: str, files: Sequence[str] | None) -> list[str] | None:
    """--file paths as the journal lists them: relative to the workspace, whether typed so or not."""
    if not files:
        return None
    root = os.path.realpath(workspace)
    out: list[str] = []
    for name in files:
        path = os.path.normpath(name)
        if os.path.isabs(path):
            real = os.path.realpath(path)
            inside = os.path.commonpath([real, root]) == root
            path = os.path.relpath(real, root) if inside else path
        out.append(path)
    return out


UNDO_WAIT_S = 120.0
"""How long `belay undo` waits for the window's console to answer (an undo of many files takes a while)."""


def undo_call(workspace: str, op_id: str, state_dir: str | None, force: bool, as_json: bool,
              files: Sequence[str] | None = None, redo: bool = False, out: TextIO = sys.stdout) -> int:
    """Undo (or, with `redo`, put back) a call or some of its files; conflicts need --force."""
    workspace = existing(workspace)
    files = _relative(workspace, files)
    report = _undo_in_running_console(workspace, op_id, state_dir, force, files, redo)
    if report is not None:
        return _show_undo(report, op_id, redo, as_json, out)

    import asyncio

    from core import Console  # the console and all it runs: only when no window has the workspace

    async def run() -> UndoReport:
        async with Console(workspace, state_dir=state_dir, holder="belay undo", mcp="never") as console:
            if not as_json:
                for note in console.recovery_notes:
                    out.write(f"Note: {note}\n")
            if redo:
                return await console.redo(op_id, paths=files or None)
            return await console.undo(op_id, paths=files or None, force=force)

    return _show_undo(asyncio.run(run()), op_id, redo, as_json, out)


def _undo_in_running_console(workspace: str, op_id: str, state_dir: str | None, force: bool,
                             files: Sequence[str] | None, redo: bool) -> UndoReport | None:
    """The report of the console that has the workspace open (a window), asked over its socket; None when
    no console answers there (this command then opens the workspace itself)."""
    endpoint = find_endpoint(str(state_root(state_dir)), workspace)
    if endpoint is None:
        return None
    import socket

    from core import UndoReport, install_token
    request = {"token": install_token(config_dir()), "kind": "undo", "call_id": op_id, "files": list(files or []),
               "force": force, "redo": redo}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(UNDO_WAIT_S)
            try:
                conn.connect(endpoint["socket"])
            except (ConnectionRefusedError, FileNotFoundError):
                return None  # the socket of a console that has gone: open the workspace here
            conn.sendall(json.dumps(request).encode() + b"\n")
            answer = json.loads(conn.makefile("rb").readline() or b"{}")
    except (OSError, ValueError) as e:
        raise BelayError(ErrorKind.CONFLICT, f"the Belay window on {workspace} did not answer the undo ({e})",
                         "Undo from the window, or close it and try again.") from None
    if "report" not in answer:
        raise BelayError(ErrorKind.CONFLICT, f"the Belay window on {workspace} refused the undo: "
                         f"{answer.get('error') or answer}", "Undo from the window.")
    return UndoReport.model_validate(answer["report"])


def _show_undo(report: UndoReport, op_id: str, redo: bool, as_json: bool, out: TextIO) -> int:
    if as_json:
        out.write(report.model_dump_json(indent=2) + "\n")
    elif report.ok:
        out.write(f"{'Redone' if report.redo else 'Undone'} {op_id}: {report.message}\n")
    else:
        out.write(f"Not {'redone' if redo else 'undone'}: {report.message}\n")
        if report.conflicts:
            out.write("They can be merged by hand in the window (Undo on the call); --force overwrites them.\n")
    return 0 if report.ok else 1


GEMINI_PROJECT_NOTE = (
    "Gemini CLI has no per-machine project settings: this is the project's shared .gemini/settings.json, which "
    "projects may commit, and it names this machine's paths; `--user` avoids both. Gemini CLI reads a project's "
    "hooks only in a folder it trusts, and never under --skip-trust.\n")


CODEX_TRUST_NOTE = (
    "Codex runs only hooks it has been told to trust, and skips the others without a word: Belay's own entries are "
    "recorded as trusted in Codex's config.toml (in a block marked as Belay's, which uninstall takes out).\n")
CODEX_PROJECT_NOTE = "Codex reads a project's hooks only in a project you trust in Codex (`codex exec --trust`).\n"


def _local_note(path: Path) -> str:
    """Why the hooks went to settings.local.json, and whether git will keep the file out of commits."""
    note = ("That file is this machine's own project settings (it holds this machine's paths); Claude Code reads "
            "it, and it is not meant to be committed.\n")
    import subprocess

    try:
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=path.parent.parent,
                                 capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return note
    if ignored.returncode == 1:  # a repository that does not ignore it
        note += f"git does not ignore it yet: add `.claude/settings.local.json` to {path.parent.parent}/.gitignore.\n"
    return note


HTTP_NOTE = ("Tool calls reach the console as http hooks on 127.0.0.1 (no process per call); the file holds that "
             "port's token and is readable by you alone (0600). While no console runs, calls are refused (no "
             "prompt of Claude Code's own), a hung console is waited for up to the hook's hour, and on a machine "
             "shared with other users one of them could open that port first: leave out --http there.\n")
WITHOUT_CONSOLE = {
    "claude": "While Belay is not running, Claude Code asks you in its terminal instead (run headless with -p, it "
              "refuses the call).",
    "codex": "While Belay is not running, Codex's calls are refused.",
    "gemini": "While Belay is not running, Gemini CLI's calls are refused.",
}
"""What an agent does with its calls when no console answers (core.outside.hook_client.no_console)."""


def hooks_command(action: str, project: str | None, user: bool, state_dir: str | None,
                  out: TextIO = sys.stdout, agent: str = "claude", http: bool = False) -> int:
    """`belay hooks install|uninstall [--agent claude|codex|gemini] [--http]`: Belay's entries in that agent CLI's
    settings, added or taken out.  `http` (Claude Code in one project): http hooks for its tool calls to the
    workspace's own loopback port, no process per call (see HTTP_NOTE for what that gives up)."""
    from core import agent_hooks, hook_command, install_hooks, project_http_hook, shared_settings_file, uninstall_hooks

    hooks = agent_hooks(agent)
    path = hooks.settings_file(Path(project) if project else None, user)
    if http and (agent != "claude" or user):
        sys.stderr.write("belay hooks: --http is for Claude Code in one project (Codex and Gemini CLI have command "
                         "hooks only; a user-wide install cannot name one workspace's port)\n")
        return 2
    try:
        if action == "install":
            command = hook_command(state_root(state_dir), config_dir(), agent=agent)
            if http:
                door = project_http_hook(Path(project) if project else None, config_dir(), state_dir)
                changed = install_hooks(path, command, config_dir(), http=door)
            else:
                changed = hooks.install(path, command, config_dir())
            if changed.events:
                where = "in every project" if user else f"in {path.parent.parent}"
                out.write(f"Installed Belay's hooks ({', '.join(changed.events)}) in {path}.\n"
                          f"{hooks.console_word} now asks Belay before every tool call {where}; start the console "
                          f"with `belay`. {WITHOUT_CONSOLE[agent]}\n")
            else:
                out.write(f"Belay's hooks were already installed in {path}.\n")
            if not user and agent == "claude":
                if http:
                    out.write(HTTP_NOTE)
                out.write(_local_note(path))
            elif not user and agent == "gemini":
                out.write(GEMINI_PROJECT_NOTE)
            if agent == "codex":
                out.write(CODEX_TRUST_NOTE + ("" if user else CODEX_PROJECT_NOTE))
        else:
            changed = hooks.uninstall(path, config_dir())
            gone = " (the file, which Belay had created, is removed)" if changed.file_removed else ""
            out.write(f"Removed Belay's hooks from {path}{gone}.\n" if changed.events else
                      f"No Belay hooks in {path}; nothing changed.\n")
            shared = shared_settings_file(Path(project) if project else None)
            if agent == "claude" and not user and shared.exists() and uninstall_hooks(shared, config_dir()).events:
                out.write(f"Also removed the hooks an earlier Belay wrote into the shared {shared}.\n")
    except (OSError, ValueError) as e:
        sys.stderr.write(f"belay hooks: {e}\n")
        return 2
    return 0
