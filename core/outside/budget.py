"""The settings' `[budget]` kept while agents' transcripts are read: told when reached, the next call held.

Each time the transcripts bring token counts (core.outside.transcripts), this session's and the workspace's
day's spending grows (core.transcripts.budget.Spending: started from the journal, so a day's earlier sessions
count) and is held against the limits in force (the policy's `budget()`).  A limit reached is announced once
(`BudgetReached`); with `hold`, the policy puts the next call it would allow to a person, saying why
(`PolicyEngine.hold_next`), through the same approval path as any question.  The price table is read once,
off the loop, when a budget in money first needs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timezone

from core.events import BudgetReached
from core.models.conversation import TokenUse
from core.policy.engine import PolicyEngine
from core.recorder import Recorder
from core.settings import config_root
from core.store.journal_reads import JournalReads
from core.transcripts.budget import Spending
from core.transcripts.prices import PriceTable, load_prices


class BudgetWatch:
    """One console's spending against its budget."""

    def __init__(self, recorder: Recorder, policy: PolicyEngine) -> None:
        self.recorder, self.policy = recorder, policy
        self._spending: Spending | None = None
        self._prices: PriceTable | None = None

    async def heard(self, tokens: Sequence[TokenUse]) -> None:
        """Token counts journaled just now: the limits they reached are told (and the next call held)."""
        budget = self.policy.budget()
        if not tokens or not budget.any:
            return
        if self._spending is None:  # from the journal, which holds these tokens already
            self._spending = await self._spent_so_far()
        else:
            for use in tokens:
                self._spending.add(use.model, use.usage, use.at.astimezone(timezone.utc).date().isoformat())
        if self._prices is None:
            self._prices = await asyncio.to_thread(load_prices, config_root())
        for reached in self._spending.reached(budget, self._prices):
            if budget.hold:
                self.policy.hold_next(str(reached))
            self.recorder.bus.publish(BudgetReached(limit=reached.limit, message=str(reached), held=budget.hold))

    async def _spent_so_far(self) -> Spending:
        today = datetime.now(timezone.utc).date()
        since = datetime(today.year, today.month, today.day, tzinfo=timezone.utc).isoformat()
        day = await self.recorder.read(JournalReads.usage_since, since)
        session = await self.recorder.read(JournalReads.usage_since, "", self.recorder.session_id)
        return Spending(session=session, day=day, today=today.isoformat())

    def __repr__(self) -> str:
        return f"<BudgetWatch spending={self._spending!r}>"
