from shop.cart import Cart, Item


def test_total_counts_quantities():
    cart = Cart()
    cart.add(Item("pen", 1.50, quantity=4))
    assert cart.total() == 6.00


def test_discount_applies_to_total():
    cart = Cart(discount_percent=10)
    cart.add(Item("book", 20.00))
    assert cart.total() == 18.00
