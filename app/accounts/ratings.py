"""The rating system of players and bots alike: Elo, pure arithmetic (the store applies it, tests
check it by hand). docs/ratings.md says why Elo and not Glicko-2.

A rated game is a set of Elo games, one for each winner and loser in it (Ronda has no draws: a
tie plays another round), each with K shared out so that nobody's game weighs more than one
2-player game: K divided by the larger of the two entrants' numbers of opponents. A 2-player game
is classic Elo; in a team game each partner plays each of the other team at K/2; in a 4-player
game without teams the winner plays each of the three others at K/3. Points only move, from
loser to winner: a pool's total never changes. Everyone starts at 1500; K is 24. A game's changes are computed from the
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
    winners = [i for i, (_, won) in enumerate(results) if won]
    losers = [i for i, (_, won) in enumerate(results) if not won]
    changes = [0.0] * len(results)
    for winner in winners:
        for loser in losers:
            points = K_FACTOR / max(len(losers), len(winners)) * (
                1.0 - expected_score(results[winner][0], results[loser][0]))
            changes[winner] += points
            changes[loser] -= points
    return changes


def provisional(games: int) -> bool:
    return games < PROVISIONAL_GAMES
