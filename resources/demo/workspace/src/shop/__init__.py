"""A tiny shopping-cart library."""

from shop.cart import Cart, Item

__all__ = ["Cart", "Item"]
