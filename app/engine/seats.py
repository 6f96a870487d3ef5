"""Seats round the table, as lookups: `%` is not among the integer operations Python 3.11 makes cheap."""

# PLAYING_ORDERS[players][dealer]: the seats from the dealer's left round to the dealer.
PLAYING_ORDERS = {n: tuple(tuple((dealer + 1 + i) % n for i in range(n)) for dealer in range(n)) for n in (2, 3, 4)}
# NEXT_SEAT[players][seat]: the seat on its left, who plays after it (the first of its order).
NEXT_SEAT = {n: tuple(order[0] for order in orders) for n, orders in PLAYING_ORDERS.items()}
