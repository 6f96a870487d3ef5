"""The rating ladder: Elo, pure arithmetic (the store applies it, tests check it by hand).

Every finished match game between two different rated entrants is one Elo game: the winner
scores 1, the loser 0 (Ronda has no draws: a tie plays another round). Everyone starts at
1500; K is 24. A game's change is computed from the ratings read just before it, and added
to each side as an increment, so two games finishing at once both count.
"""

INITIAL_RATING = 1500.0
K_FACTOR = 24.0
SCALE = 400.0  # a 400-point gap means 10 to 1 odds


def expected_score(rating: float, opponent: float) -> float:
    """The chance, by Elo's model, that a player rated `rating` beats one rated `opponent`."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / SCALE))


def rating_change(winner: float, loser: float) -> float:
    """Points the winner gains and the loser gives up."""
    return K_FACTOR * (1.0 - expected_score(winner, loser))
