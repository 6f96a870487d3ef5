"""The rating system of players and bots alike: Elo, pure arithmetic (the store applies it, tests
check it by hand). docs/ratings.md says why Elo and not Glicko-2.

Every rated game is one Elo game per entrant: a winner scores 1, a loser 0 (Ronda has no draws: a
tie plays another round), each against the mean rating of the entrants whose result differs from
its own, so a 2-player game is classic Elo, a team game rates each partner against the other team,
and a 4-player game without teams rates its winner against the three others and each of them
against the winner. Everyone starts at 1500; K is 24. A game's changes are computed from the
ratings read just before it and added as increments, so two games finishing at once both count.
An entrant is provisional until it has played PROVISIONAL_GAMES rated games in the pool.
"""

INITIAL_RATING = 1500.0
K_FACTOR = 24.0
SCALE = 400.0  # a 400-point gap means 10 to 1 odds
PROVISIONAL_GAMES = 10


def expected_score(rating: float, opponent: float) -> float:
    """The chance, by Elo's model, that a player rated `rating` beats one rated `opponent`."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / SCALE))


def rating_change(winner: float, loser: float) -> float:
    """Points the winner of a 2-player game gains and the loser gives up."""
    return K_FACTOR * (1.0 - expected_score(winner, loser))


def game_changes(results: list[tuple[float, bool]]) -> list[float]:
    """Each entrant's change for one game, given (rating before, won) per entrant."""
    changes = []
    for rating, won in results:
        opponents = [other for other, other_won in results if other_won != won]
        mean = sum(opponents) / len(opponents)
        changes.append(K_FACTOR * ((1.0 if won else 0.0) - expected_score(rating, mean)))
    return changes


def provisional(games: int) -> bool:
    return games < PROVISIONAL_GAMES
