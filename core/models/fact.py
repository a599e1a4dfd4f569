"""What every event is: a frozen fact, with its place in the bus's stream and the time it happened."""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field

_UTC = timezone.utc


def _now() -> datetime:
    return datetime.now(_UTC)  # (no module look-ups: every event is stamped)


class Fact(BaseModel):
    """The base of every event (core.events): frozen, refusing fields it does not know, stamped when made and
    numbered when published."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = 0
    """Position in the bus's stream, from 1; stamped by the bus when published (0 until then)."""
    at: datetime = Field(default_factory=_now)
    """When the fact happened (UTC), set when the event is made."""
