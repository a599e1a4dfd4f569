"""Budgets: read from the settings, tightened by the workspace, each limit told once when reached."""

from __future__ import annotations

from pathlib import Path

from core.models.conversation import Usage
from core.transcripts.budget import BudgetSettings, Reached, Spending, read_budget
from core.transcripts.prices import PriceTable


def test_the_budget_table_is_read_and_a_wrong_limit_is_no_limit(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    budget, problems = read_budget({"session_usd": 5, "day_tokens": 10_000, "hold": True}, path)
    assert budget == BudgetSettings(session_usd=5.0, day_tokens=10_000, hold=True) and problems == []
    budget, problems = read_budget({"day_usd": -1, "session_tokens": "many", "hold": "yes", "weekly": 3}, path)
    assert budget == BudgetSettings() and not budget.any and len(problems) == 4
    assert read_budget([1], path) == (None, [f"{path}: [budget] must be a table"])


def test_a_workspace_only_tightens_the_persons_budget() -> None:
    mine = BudgetSettings(session_usd=5.0, day_usd=20.0)
    theirs = BudgetSettings(session_usd=50.0, day_tokens=1_000, hold=True)
    assert mine.tightened(theirs) == BudgetSettings(session_usd=5.0, day_usd=20.0, day_tokens=1_000, hold=True)
    assert mine.tightened(None) == mine


def test_each_limit_is_told_once_when_reached_and_a_new_day_counts_anew() -> None:
    spending = Spending(today="2026-12-08")
    budget = BudgetSettings(session_tokens=1_000, day_usd=1.0)
    prices = PriceTable()
    spending.add("claude-sonnet-4", Usage(input=600), "2026-12-08")
    assert spending.reached(budget, prices) == []
    spending.add("claude-sonnet-4", Usage(input=500, output=100_000), "2026-12-08")  # 1,100 tokens and $1.50
    reached = spending.reached(budget, prices)
    assert [r.limit for r in reached] == ["day_usd", "session_tokens"]
    assert str(reached[0]) == "this workspace today has spent about $1.50 of its $1.00 budget"
    assert str(reached[1]) == "this session has used 101,100 tokens of its budget of 1,000"
    spending.add("claude-sonnet-4", Usage(input=10), "2026-12-08")
    assert spending.reached(budget, prices) == []  # told once
    spending.add("claude-sonnet-4", Usage(output=100_000), "2026-12-09")  # a new day: its limit anew
    assert spending.reached(budget, prices) == [Reached("day_usd", 1.0, 1.5)]
