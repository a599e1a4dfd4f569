"""A pending write approved in part: the accepted hunks applied to the file as the agent saw it.

The person reviews a write hunk by hunk and rejects some.  What is written is
then the file's content before the call with only the accepted hunks of the
approval's diff applied: a rejected hunk leaves its lines as they were.  The
hunks are checked against the before-content line by line (context and
removed lines, with their endings), so a diff that does not describe that
content is refused rather than half applied.  A truncated or binary diff,
a create and a delete cannot be split; partial approval refuses them too.

`revert_hunks` is the mirror, from the new content: the window, which holds
only the proposed text, takes every hunk back to show the file as it is
beside the person's edit.  `not_applied` words what the agent is told, naming the hunks it lost
("hunks 3, 9 and 12 of 30 in src/app.py were not applied").  Pure functions,
linear in the file's size.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.models.diffs import FileDiff, Hunk


class PartialError(ValueError):
    """The accepted hunks cannot be applied to this content (the reason says why)."""


def apply_hunks(before: bytes, diff: FileDiff, accepted: Collection[int]) -> bytes:
    """`before` with the hunks of `diff` whose 0-based index is in `accepted` applied, and the others not."""
    if diff.binary or diff.truncated:
        raise PartialError(f"the diff of {diff.path} is {'binary' if diff.binary else 'truncated'}, "
                           "so it cannot be approved in part")
    if diff.status != "modify":
        raise PartialError(f"{diff.path} is {'created' if diff.status == 'create' else 'deleted'} whole by this "
                           "call, so it cannot be approved in part")
    unknown = sorted(set(accepted) - set(range(len(diff.hunks))))
    if unknown:
        raise PartialError(f"{diff.path} has {len(diff.hunks)} hunk(s); there is no hunk {unknown[0] + 1}")
    try:
        old = _split(before.decode("utf-8"))
    except UnicodeDecodeError:
        raise PartialError(f"{diff.path} is not UTF-8 text, so it cannot be approved in part") from None
    out: list[str] = []
    at = 0  # index into `old` of the first line not yet copied
    for index, hunk in enumerate(diff.hunks):
        start = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        if start < at or start + hunk.old_len > len(old):
            raise PartialError(f"hunk {index + 1} of {diff.path} does not fit the file's {len(old)} lines")
        out.extend(old[at:start])
        covered = old[start:start + hunk.old_len]
        if _old_side(hunk) != covered:
            raise PartialError(f"hunk {index + 1} of {diff.path} does not match the file as it is")
        out.extend(_new_side(hunk) if index in accepted else covered)
        at = start + hunk.old_len
    out.extend(old[at:])
    return "".join(out).encode("utf-8")


def not_applied(path: str, rejected: Collection[int], total: int, reason: str = "") -> str:
    """'hunks 3, 9 and 12 of 30 in src/app.py were not applied: <reason>' (0-based indices in)."""
    numbers = [str(i + 1) for i in sorted(rejected)]
    if not numbers:
        return ""
    said = f": {reason.strip()}" if reason.strip() else ""
    if len(numbers) == 1:
        return f"hunk {numbers[0]} of {total} in {path} was not applied{said}"
    return f"hunks {_and(numbers)} of {total} in {path} were not applied{said}"


def partial_note(parts: Sequence[str]) -> str:
    """What the agent reads after its tool's message: which hunks the person kept out, and what to do."""
    shown = [p for p in parts if p]
    if not shown:
        return ""
    return (f"The user approved this change only in part; {'; '.join(shown)}. "
            "The rest was written; read the file to see what it holds now.")


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _old_side(hunk: Hunk) -> list[str]:
    return [line.text + line.ending for line in hunk.lines if line.kind != "+"]


def _new_side(hunk: Hunk) -> list[str]:
    return [line.text + line.ending for line in hunk.lines if line.kind != "-"]


def _split(text: str) -> list[str]:
    """Lines keeping their endings (as `core.changes.diffs` splits them)."""
    lines = text.split("\n")
    last = lines.pop()
    lines = [line + "\n" for line in lines]
    if last:
        lines.append(last)
    return lines


def revert_hunks(after: bytes, diff: FileDiff, reverted: Collection[int]) -> bytes:
    """`after` with the hunks whose index is in `reverted` taken back to their old lines (all of them: the
    content before).  The mirror of `apply_hunks`, for a front end that holds only the new content."""
    if diff.binary or diff.truncated or diff.status != "modify":
        raise PartialError(f"the diff of {diff.path} cannot be taken back hunk by hunk")
    try:
        new = _split(after.decode("utf-8"))
    except UnicodeDecodeError:
        raise PartialError(f"{diff.path} is not UTF-8 text") from None
    out: list[str] = []
    at = 0
    for index, hunk in enumerate(diff.hunks):
        start = hunk.new_start - 1 if hunk.new_len else hunk.new_start
        covered = new[start:start + hunk.new_len]
        if start < at or _new_side(hunk) != covered:
            raise PartialError(f"hunk {index + 1} of {diff.path} does not match the new content")
        out.extend(new[at:start])
        out.extend(_old_side(hunk) if index in reverted else covered)
        at = start + hunk.new_len
    out.extend(new[at:])
    return "".join(out).encode("utf-8")
