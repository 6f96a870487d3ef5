"""The rating system of players and bots alike: Weng-Lin, the Bayesian model of openskill's
Plackett-Luce (docs/ratings.md says why). A rating is a mean and a deviation (how sure it is):
everyone starts at 1500 ± 350, as Glicko does; a game moves the mean by how surprising its result
was and narrows the deviation, and a deviation grows back a little each game (tau), so a rating
keeps following a player who improves. Teams and 3-4 players are the model's own: a game is its
camps ranked, the winning camp first, the others level behind it (Ronda has no second place).

An entrant is provisional while its deviation is above PROVISIONAL_DEVIATION (about its first ten
games against players near its level; fewer when the results are clear). The shown `rating` is the
mean. Pure arithmetic: the ladder store (ladders.py) applies it inside the pool's transaction.
"""

from functools import cache

from openskill.models import PlackettLuce

INITIAL_RATING = 1500.0
INITIAL_DEVIATION = 350.0
PROVISIONAL_DEVIATION = 250.0
MODEL = PlackettLuce(mu=INITIAL_RATING, sigma=INITIAL_DEVIATION, beta=INITIAL_DEVIATION / 2,
                     tau=INITIAL_DEVIATION / 100)

Rating = tuple[float, float]  # mean, deviation


def rate_camps(camps: list[tuple[list[Rating], bool]]) -> list[list[Rating]]:
    """Each camp's entrants' ratings after a game, given their ratings before and whether the camp won."""
    teams = [[MODEL.rating(mu=mean, sigma=deviation) for mean, deviation in team] for team, _ in camps]
    rated = MODEL.rate(teams, ranks=[0 if won else 1 for _, won in camps])
    return [[(player.mu, player.sigma) for player in team] for team in rated]


@cache
def migrated_deviation(games: int) -> float:
    """The deviation of a record kept under Elo (a rating and a number of games, no deviation): what
    that many games against an equal opponent, won and lost in turn, leave of the initial one."""
    me, other = MODEL.rating(), MODEL.rating()
    for game in range(min(games, 200)):
        (me,), (other,) = MODEL.rate([[me], [other]], ranks=[game % 2, 1 - game % 2])
    return me.sigma


def provisional(deviation: float) -> bool:
    return deviation > PROVISIONAL_DEVIATION
