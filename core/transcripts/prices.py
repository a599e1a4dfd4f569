"""What tokens cost: a price table per model, Belay's dated defaults under the person's own `prices.toml`.

Money is worked out from the tokens an agent recorded and a price per million tokens of each kind (input,
output, cache read, cache write).  A model is priced by the longest name in the table that begins its own
name ("claude-sonnet-4" prices "claude-sonnet-4-5-20250929"); a model the table does not know has no price
(its tokens are counted, its money is not guessed).  Belay's defaults are list prices as published on the
date in `DEFAULTS_DATED` and are named so wherever they are shown; the person corrects or extends them in
`<config dir>/prices.toml`:

    [models."claude-opus"]
    input = 15.0          # USD per million tokens
    output = 75.0
    cache_read = 1.5
    cache_write = 18.75
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from core.models.conversation import Usage

DEFAULTS_DATED = "2025-08"
"""When Belay's default prices were the providers' list prices (USD per million tokens): check them."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens of each kind."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def of(self, usage: Usage) -> float:
        """What `usage` costs at this price, in USD."""
        return (usage.input * self.input + usage.output * self.output + usage.cache_read * self.cache_read
                + usage.cache_write * self.cache_write) / 1_000_000


DEFAULTS: dict[str, Price] = {
    "claude-opus": Price(15.0, 75.0, 1.5, 18.75),
    "claude-sonnet": Price(3.0, 15.0, 0.3, 3.75),
    "claude-3-5-haiku": Price(0.8, 4.0, 0.08, 1.0),
    "claude-haiku": Price(1.0, 5.0, 0.1, 1.25),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-4.1": Price(2.0, 8.0, 0.5),
    "o3": Price(2.0, 8.0, 0.5),
    "o4-mini": Price(1.1, 4.4, 0.275),
    "gemini-2.5-pro": Price(1.25, 10.0, 0.31),
    "gemini-2.5-flash": Price(0.3, 2.5, 0.075),
}
"""Belay's defaults, list prices as of `DEFAULTS_DATED`."""


@dataclass(frozen=True)
class PriceTable:
    """The prices in force, and where each came from."""

    prices: dict[str, Price] = field(default_factory=lambda: dict(DEFAULTS))
    edited: frozenset[str] = frozenset()
    """The models whose price the person set (the others are Belay's dated defaults)."""
    problem: str = ""
    """Why the person's file could not be read ("" when it could, or there is none)."""

    def price(self, model: str) -> tuple[str, Price] | None:
        """The table's entry that prices `model` (the longest name it begins with), or None."""
        known = [name for name in self.prices if model.startswith(name)]
        if not known:
            return None
        name = max(known, key=len)
        return name, self.prices[name]

    def cost(self, usage_by_model: dict[str, Usage]) -> tuple[float, list[str]]:
        """The money these tokens cost, and the models that have no price (their tokens are left out)."""
        total, unpriced = 0.0, []
        for model, usage in usage_by_model.items():
            found = self.price(model)
            if found is None:
                unpriced.append(model or "an unnamed model")
            else:
                total += found[1].of(usage)
        return total, unpriced

    def source(self, model: str) -> str:
        """Where `model`'s price comes from, in words."""
        found = self.price(model)
        if found is None:
            return "no price"
        return "your prices.toml" if found[0] in self.edited else f"Belay's default list price of {DEFAULTS_DATED}"


def load_prices(config_dir: Path) -> PriceTable:
    """Belay's defaults with the person's `prices.toml` over them.  Blocking (a file read): call it off the loop."""
    path = config_dir / "prices.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return PriceTable()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return PriceTable(problem=f"{path} cannot be read ({e}); Belay's default prices are used")
    prices, edited, problems = dict(DEFAULTS), set(), []
    models = data.get("models", {})
    for name, entry in (models.items() if isinstance(models, dict) else ()):
        try:
            prices[name] = Price(**{k: float(v) for k, v in entry.items()})
            edited.add(name)
        except (TypeError, ValueError, AttributeError) as e:
            problems.append(f"{name}: {e}")
    problem = f"{path}: some prices were not understood ({'; '.join(problems)})" if problems else ""
    return PriceTable(prices, frozenset(edited), problem)
