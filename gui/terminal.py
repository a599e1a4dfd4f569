"""Terminal commands that need no window: listing journaled calls and undoing one.

They open a console on the workspace's journal like the window does, so a
call made in the window can be listed and undone from a shell (and the other
way round).  No Qt is imported on this path, so they start fast.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TextIO

from core import CallRecord, Console, UndoReport


def _row(call: CallRecord) -> dict[str, object]:
    return {
        "id": call.call_id, "agent": call.agent_name, "tool": call.tool, "summary": call.summary,
        "status": "undone" if call.undone_by else call.status.value,
        "files_changed": [c.path for c in call.changes], "created_at": call.created_at.isoformat(),
    }


def list_calls(workspace: str, state_dir: str | None, as_json: bool, out: TextIO = sys.stdout) -> int:
    async def load() -> list[CallRecord]:
        async with Console(workspace, state_dir=state_dir) as console:
            return await console.history()

    calls = asyncio.run(load())
    if as_json:
        json.dump([_row(c) for c in calls], out, indent=2)
        out.write("\n")
        return 0
    if not calls:
        out.write(f"No calls journaled for {workspace} yet.\n")
        return 0
    out.write(f"{'ID':<26} {'AGENT':<16} {'TOOL':<10} {'STATUS':<16} FILES CHANGED\n")
    for c in calls:
        r = _row(c)
        files = ", ".join(r["files_changed"]) or "-"  # type: ignore[arg-type]
        out.write(f"{c.call_id:<26} {c.agent_name[:16]:<16} {c.tool:<10} {r['status']!s:<16} {files}\n")
    return 0


def undo_call(workspace: str, call_id: str, state_dir: str | None, force: bool, as_json: bool,
              out: TextIO = sys.stdout) -> int:
    async def run() -> UndoReport:
        async with Console(workspace, state_dir=state_dir) as console:
            return await console.undo(call_id, force=force)

    report = asyncio.run(run())
    if as_json:
        out.write(report.model_dump_json(indent=2) + "\n")
    elif report.ok:
        out.write(f"Undone {call_id}: {report.message}\n")
    else:
        out.write(f"Not undone: {report.message}\n")
        if report.conflicts:
            out.write("Use --force to overwrite the later changes.\n")
    return 0 if report.ok else 1
