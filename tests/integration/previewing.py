"""A person who has every command run in preview first, then keeps part of what it changed."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping

from core import ApprovalRequested, Console


async def previewing_person(console: Console, keep: Mapping[str, Collection[int]],
                            shown: list[ApprovalRequested]) -> None:
    """Answers each command with "Run in preview", and each preview by applying the hunks `keep` names per file
    (a file not named is kept whole; an empty list leaves it out); the previews it was shown go to `shown`.
    Anything else asked is approved."""
    answered: set[tuple[str, bool]] = set()
    while True:
        for request in console.pending_approvals():
            key = (request.call_id, bool(request.diffs))
            if key in answered:
                continue
            answered.add(key)
            if request.tool == "Bash" and not request.diffs:
                console.approve(request.call_id, preview=True)
            elif request.tool == "Bash":
                shown.append(request)
                hunks = {d.path: list(keep.get(d.path, range(len(d.hunks)))) for d in request.diffs}
                console.approve(request.call_id, hunks=hunks)
            else:
                console.approve(request.call_id)
        await asyncio.sleep(0.02)
