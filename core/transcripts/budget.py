"""Budgets: how many tokens, or how much money, a session or a workspace's day may spend before a person is told.

Set in the settings' `[budget]` table, the user's and the workspace's (a workspace's file can only tighten:
of two limits the smaller stands):

    [budget]
    session_usd = 5.0        # this console's session, every agent in it
    day_usd = 20.0           # the workspace, per UTC day, every session
    session_tokens = 2000000
    day_tokens = 10000000
    hold = true              # also hold the next call for a decision once a limit is reached

Each limit is told once when the spending reaches it (`Spending.reached`); money is worked out with the price
table (core.transcripts.prices), tokens count input, output and cache alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.models.conversation import Usage
from core.transcripts.prices import PriceTable

Limit = Literal["session_usd", "day_usd", "session_tokens", "day_tokens"]
LIMITS: tuple[Limit, ...] = ("session_usd", "day_usd", "session_tokens", "day_tokens")


@dataclass(frozen=True)
class BudgetSettings:
    """The limits in force (None: no limit), and whether reaching one holds the next call."""

    session_usd: float | None = None
    day_usd: float | None = None
    session_tokens: int | None = None
    day_tokens: int | None = None
    hold: bool = False

    @property
    def any(self) -> bool:
        return any(getattr(self, name) is not None for name in LIMITS)

    def tightened(self, other: BudgetSettings | None) -> BudgetSettings:
        """These limits with `other`'s over them where smaller (a workspace's file only tightens)."""
        if other is None:
            return self
        merged = {name: min((v for v in (getattr(self, name), getattr(other, name)) if v is not None), default=None)
                  for name in LIMITS}
        return BudgetSettings(**merged, hold=self.hold or other.hold)


def read_budget(table: Any, path: Path) -> tuple[BudgetSettings | None, list[str]]:
    """The `[budget]` table of a settings file, and what is wrong with it (a wrong limit is no limit)."""
    if not isinstance(table, dict):
        return None, [f"{path}: [budget] must be a table"]
    problems = [f"{path}: unknown key {key!r} in [budget] (expected {', '.join(LIMITS)}, hold)"
                for key in table if key not in (*LIMITS, "hold")]
    values: dict[str, Any] = {}
    for name in LIMITS:
        value = table.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            problems.append(f"{path}: [budget] {name} must be a positive number; no such limit applies")
            continue
        values[name] = int(value) if name.endswith("tokens") else float(value)
    hold = table.get("hold", False)
    if not isinstance(hold, bool):
        problems.append(f"{path}: [budget] hold must be true or false; false applies")
        hold = False
    return BudgetSettings(**values, hold=hold), problems


@dataclass(frozen=True)
class Reached:
    """A limit the spending reached."""

    limit: Limit
    """Which: this session's or the workspace's day's, in money or in tokens."""
    allowed: float
    spent: float

    def __str__(self) -> str:
        scope = "this session" if self.limit.startswith("session") else "this workspace today"
        if self.limit.endswith("usd"):
            return f"{scope} has spent about ${self.spent:,.2f} of its ${self.allowed:,.2f} budget"
        return f"{scope} has used {int(self.spent):,} tokens of its budget of {int(self.allowed):,}"


@dataclass
class Spending:
    """Tokens by model for this session and for the workspace's current day, and the limits told already."""

    session: dict[str, Usage] = field(default_factory=dict)
    day: dict[str, Usage] = field(default_factory=dict)
    today: str = ""
    """The UTC day `day` counts."""
    told: set[str] = field(default_factory=set)

    def add(self, model: str, usage: Usage, day: str) -> None:
        if day != self.today:
            self.today, self.day = day, {}
            self.told = {t for t in self.told if not t.startswith("day")}
        self.session[model] = self.session.get(model, Usage()) + usage
        self.day[model] = self.day.get(model, Usage()) + usage

    def reached(self, budget: BudgetSettings, prices: PriceTable) -> list[Reached]:
        """The limits reached and not told before (each is told once; a new day's limits anew)."""
        spent = {"session_usd": prices.cost(self.session)[0], "day_usd": prices.cost(self.day)[0],
                 "session_tokens": _tokens(self.session), "day_tokens": _tokens(self.day)}
        found = []
        for name in LIMITS:
            allowed = getattr(budget, name)
            if allowed is not None and name not in self.told and spent[name] >= allowed:
                self.told.add(name)
                found.append(Reached(name, allowed, spent[name]))
        return found


def _tokens(by_model: dict[str, Usage]) -> int:
    return sum(u.input + u.output + u.cache_read + u.cache_write for u in by_model.values())
