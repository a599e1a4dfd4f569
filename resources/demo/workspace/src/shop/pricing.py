"""Prices: discounts and rounding."""


def apply_discount(amount: float, percent: float) -> float:
    if percent < 0 or percent > 100:
        raise ValueError("discount must be between 0 and 100")
    return amount * (1 - percent / 100)
