"""Which changes are undone now, given every undo ever made (undos of undos included).

An undo is an operation like any other: a rollback targets an operation
(a call, or another rollback: undoing an undo is a redo) and each of its
own changes reverts one change of the target, named by its position.  A
rollback's change is in force unless a later rollback reverts it; a
call's change is undone when a rollback change in force reverts it.

Rollbacks only ever target older operations, so walking them newest first
settles each one before anything it targets is looked at.  Pure
bookkeeping, no I/O: the journal feeds it rows, the console asks it what
to undo for a redo.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

Ref = tuple[str, int]
"""(operation id, position of the change in that operation)."""


class RollbackLink(NamedTuple):
    """A finished rollback as the bookkeeping needs it (a NamedTuple: `belay calls` reads undo state without
    importing dataclasses)."""

    rollback_id: str
    target: str
    """The operation it undid: a call id, or a rollback id for a redo."""
    reverts: Sequence[int | None]
    """Per own change, in order: the position of the target's change it reverts.  None (journals from
    before redo existed) means the rollback reverted every change of its target."""
    git_reverts: Sequence[int] = ()
    """Per own git reference move: the (negative) position of the target's move it reverts.  Git moves
    are numbered -1, -2, ... so that they never collide with file changes."""


def undoing(links: Iterable[RollbackLink], sizes: dict[str, int]) -> dict[Ref, Ref]:
    """Each change that is undone now, mapped to the rollback change undoing it.

    `links` in the order they were made (oldest first); `sizes[op]` is how many changes an operation
    has, needed only for old whole-operation rollbacks.
    """
    undone: dict[Ref, Ref] = {}
    for link in reversed(list(links)):
        for own, git_seq in enumerate(link.git_reverts):
            if (link.rollback_id, -1 - own) not in undone:
                undone.setdefault((link.target, git_seq), (link.rollback_id, -1 - own))
        for own, target_seq in enumerate(link.reverts):
            if (link.rollback_id, own) in undone:
                continue  # a later rollback reverted this one: it is not in force
            if target_seq is None:
                for seq in range(sizes.get(link.target, 0)):
                    undone.setdefault((link.target, seq), (link.rollback_id, own))
            else:
                undone.setdefault((link.target, target_seq), (link.rollback_id, own))
    return undone


def undone_positions(undone: dict[Ref, Ref], op_id: str) -> dict[int, str]:
    """The positions of `op_id`'s changes that are undone now, each with the rollback undoing it."""
    return {seq: by[0] for (op, seq), by in undone.items() if op == op_id}
