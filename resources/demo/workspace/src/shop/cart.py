"""A shopping cart that knows its items and its total."""

from dataclasses import dataclass, field

from shop.pricing import apply_discount


@dataclass
class Item:
    name: str
    unit_price: float
    quantity: int = 1


@dataclass
class Cart:
    items: list[Item] = field(default_factory=list)
    discount_percent: float = 0.0

    def add(self, item: Item) -> None:
        self.items.append(item)

    def subtotal(self) -> float:
        # TODO: quantities are ignored here
        return sum(item.unit_price for item in self.items)

    def total(self) -> float:
        return apply_discount(self.subtotal(), self.discount_percent)
