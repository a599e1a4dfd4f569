"""`belay calls`: a workspace's journaled calls, listed from a shell in about the time Python takes to start.

The listing reads the journal with sqlite3 alone (core.store.call_list): no console, no pydantic, no asyncio.
Only a journal that must first be brought up to date (an older Belay's) is opened by a console, as the
window would, and listed from its history.  Either way the same lines come out.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from core import BelayError, ErrorKind, ListedCall, listed_calls, workspace_state_dir

if TYPE_CHECKING:
    from core import AgentNode, CallRecord


class WorkspaceMissing(BelayError):
    """The --workspace given is not a directory: there is nothing to list or undo in."""

    def __init__(self, workspace: str) -> None:
        super().__init__(ErrorKind.NOT_FOUND, f"the workspace {workspace} does not exist or is not a directory",
                         "Belay finds a workspace's journal by the workspace's path: give the directory the "
                         "calls were made in (recreate it first if it was removed).")


def existing(workspace: str) -> str:
    """The workspace, checked before its journal is opened (which would fail less clearly)."""
    if not os.path.isdir(os.path.expanduser(workspace)):
        raise WorkspaceMissing(workspace)
    return os.path.expanduser(workspace)


def status(call: ListedCall) -> str:
    if call.undone:
        return "undone"
    return f"partly undone ({len(call.undone_files)})" if call.undone_files else call.status


def row(call: ListedCall) -> dict[str, object]:
    """One call for `calls --json`; with its agent's id, kind and parent (a sub-agent's calls tie to its parent's)."""
    return {
        "id": call.call_id, "agent": call.agent_name, "agent_id": call.agent_id,
        "agent_kind": call.agent_kind, "parent_agent_id": call.parent_agent_id,
        "spawned_by": call.spawned_by, "tool": call.tool, "summary": call.summary,
        "status": status(call), "files_changed": list(call.files_changed),
        "undone_files": list(call.undone_files), "git": list(call.git),
        "created_at": call.created_at, "decision": call.decision,
    }


def list_calls(workspace: str, state_dir: str | None, as_json: bool, out: TextIO = sys.stdout) -> int:
    workspace = existing(workspace)
    calls = listed_calls(workspace_state_dir(Path(workspace), state_dir) / "journal.sqlite3")
    if calls is None:  # a journal an older Belay wrote: a console opens it, bringing it up to date
        calls = _through_a_console(workspace, state_dir)
    if as_json:
        json.dump([row(c) for c in calls], out, indent=2)
        out.write("\n")
        return 0
    if not calls:
        out.write(f"No calls journaled for {workspace} yet.\n")
        return 0
    table = [(c.call_id, c.agent_name, c.tool, str(status(c)), ", ".join(c.files_changed) or "-") for c in calls]
    widths = [max(len(r[k]) for r in [HEADER, *table]) for k in range(4)]  # whole names, in columns that line up
    for r in [HEADER, *table]:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(r, widths)) + f"  {r[4]}\n")
    return 0


HEADER = ("ID", "AGENT", "TOOL", "STATUS", "FILES CHANGED")


def _through_a_console(workspace: str, state_dir: str | None) -> list[ListedCall]:
    import asyncio

    from core import Console

    async def load() -> tuple[list[CallRecord], dict[str, AgentNode]]:
        async with Console(workspace, state_dir=state_dir, track=False) as console:
            return await console.history(), dict(console.timeline.agents)

    calls, agents = asyncio.run(load())
    return [_listed(call, agents.get(call.agent_id)) for call in calls]


def _listed(call: CallRecord, agent: AgentNode | None) -> ListedCall:
    d = call.decision
    return ListedCall(
        call_id=call.call_id, agent_name=call.agent_name, agent_id=call.agent_id,
        agent_kind=agent.agent_kind if agent else None, parent_agent_id=agent.parent_id if agent else None,
        spawned_by=agent.spawned_by if agent else None, tool=call.tool, summary=call.summary,
        status=call.status.value, files_changed=tuple(c.path for c in call.changes),
        undone_files=tuple(call.undone_paths), undone=call.undone_by is not None,
        git=tuple(g.what for g in call.git_changes), created_at=call.created_at.isoformat(),
        decision=None if d is None else {"decision": d.decision.value, "decided_by": d.by, "rule": d.rule,
                                         "reason": d.reason})


