"""The price table: dated defaults, the person's own prices over them, money from tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.models.conversation import Usage
from core.transcripts.prices import DEFAULTS_DATED, Price, PriceTable, load_prices


def test_a_model_is_priced_by_the_longest_name_that_begins_its_own() -> None:
    table = PriceTable()
    assert table.price("claude-sonnet-4-5-20250929") == ("claude-sonnet", Price(3.0, 15.0, 0.3, 3.75))
    assert table.price("gpt-5-mini-2025-08-07") is not None and table.price("gpt-5-mini-2025-08-07")[0] == "gpt-5-mini"  # type: ignore[index]
    assert table.price("llama-70b") is None
    assert table.source("claude-sonnet-4") == f"Belay's default list price of {DEFAULTS_DATED}"


def test_money_is_the_tokens_at_their_model_s_price_and_unpriced_models_are_named() -> None:
    table = PriceTable()
    usage = Usage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=0)
    total, unpriced = table.cost({"claude-sonnet-4": usage, "local-llm": usage})
    assert total == pytest.approx(3.0 + 1.5 + 0.6)
    assert unpriced == ["local-llm"]


def test_the_persons_prices_toml_goes_over_the_defaults_and_a_bad_one_is_said(tmp_path: Path) -> None:
    assert load_prices(tmp_path) == PriceTable()
    (tmp_path / "prices.toml").write_text('[models."claude-opus"]\ninput = 5\noutput = 25\n'
                                          '[models."local"]\ninput = "x"\n')
    table = load_prices(tmp_path)
    assert table.prices["claude-opus"] == Price(5.0, 25.0) and table.source("claude-opus-5") == "your prices.toml"
    assert "local" in table.problem
    (tmp_path / "prices.toml").write_text("not [toml")
    assert "cannot be read" in load_prices(tmp_path).problem
