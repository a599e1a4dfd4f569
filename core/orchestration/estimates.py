"""How long each call of a batch is expected to take, before it runs: the tool's own estimate, refined by the
journal's history of calls like it.

The tool says first (`Tool.estimate_s`, the seed's `estimateCost`: a command a second, a sub-agent half a
minute, a read a few milliseconds).  The journal knows better once it has timed calls like this one: the
median of the last SAMPLES done calls of the same tool that are alike (a command with the same first word,
`pytest` or `npm`; a file tool on the same path), else of that tool's calls, once there are at least
MIN_SAMPLES.  A batch plans its critical path by these figures, starts the calls on the longest remaining
path first when it must choose, and shows how long it expects to take still.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from core.models.batches import BatchCall
from core.tools.names import ToolName
from core.tools.registry import ToolRegistry

SAMPLES = 50
"""Calls of one tool the journal is asked for (the latest)."""
MIN_SAMPLES = 3
"""Fewer timed calls than this say too little: the tool's own estimate stands."""
UNKNOWN_S = 1.0
"""A call of a tool no registry holds (a misspelt name; the batch will report it)."""

History = Mapping[str, Sequence[tuple[dict[str, Any], float]]]
"""tool -> (arguments, seconds) of its latest done calls, newest first (`Journal.recent_durations`)."""


def likeness(tool: str, args: Mapping[str, Any]) -> str | None:
    """What makes two calls of `tool` alike enough to take as long: a command's first word, a file tool's path;
    None for a tool whose calls are only alike by tool."""
    command = args.get("command")
    if tool == ToolName.BASH and isinstance(command, str):
        words = command.split()
        return words[0] if words else None
    for key in ("file_path", "path", "notebook_path"):
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def estimates(calls: Sequence[BatchCall], registry: ToolRegistry, history: History) -> dict[str, float]:
    """Seconds each call is expected to take, by its id in the batch."""
    return {call.id: _estimate(call, registry, history) for call in calls}


def _estimate(call: BatchCall, registry: ToolRegistry, history: History) -> float:
    past = history.get(call.tool, ())
    like = likeness(call.tool, call.args)
    alike = [took for args, took in past if like is not None and likeness(call.tool, args) == like]
    for sample in (alike, [took for _, took in past]):
        if len(sample) >= MIN_SAMPLES:
            return statistics.median(sample)
    tool = registry.get(call.tool)
    if tool is None:
        return UNKNOWN_S
    try:
        return max(0.0, float(tool.estimate_s(tool.Args.model_validate(call.args))))
    except ValueError:  # arguments that do not fit (or hold references): the tool's typical call
        return tool.typical_s
