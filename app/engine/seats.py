"""Seats round the table, as lookups: `%` is not among the integer operations Python 3.11 makes cheap."""

# NEXT_SEAT[players][seat]: the seat on its left, who plays after it.
NEXT_SEAT = {n: tuple((seat + 1) % n for seat in range(n)) for n in (2, 3, 4)}
# PLAYING_ORDERS[players][dealer]: the seats from the dealer's left round to the dealer.
PLAYING_ORDERS = {n: tuple(tuple((dealer + 1 + i) % n for i in range(n)) for dealer in range(n)) for n in (2, 3, 4)}
