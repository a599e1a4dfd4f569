"""What every agent CLI's transcript format offers the follower: lines in, messages and token use out."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from typing import Any, Protocol

from core.models.conversation import Message, TokenUse


class TranscriptReader(Protocol):
    """One transcript file's format (core.transcripts.claude is one): fed its lines in order, asked for what
    they held."""

    agent_id: str
    """The Belay agent whose file it is."""

    def feed(self, line: bytes) -> None:
        """Take in one complete line."""
        ...

    def take(self) -> tuple[list[Message], list[TokenUse], Counter[str]]:
        """The messages, token use and what could not be read (by why) since the last take."""
        ...


def skipped_note(skipped: Counter[str], overlong: int) -> tuple[int, str]:
    """How many records a read skipped, and why in words ("" when none)."""
    reasons = Counter(skipped)
    if overlong:
        reasons["record too long to read"] += overlong
    total = sum(reasons.values())
    if not total:
        return 0, ""
    return total, "skipped: " + ", ".join(f"{n} × {why}" for why, n in reasons.most_common())


def record_time(record: dict[str, Any]) -> datetime:
    """When a record says it was written (its ISO `timestamp`, "Z" for UTC); now, when it does not say."""
    stamp = record.get("timestamp")
    if isinstance(stamp, str):
        try:
            at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return datetime.now(timezone.utc)
