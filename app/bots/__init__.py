"""Bots: pure code beside the engine. One interface: (seat knowledge, rng) → action dict."""

from ..engine import action_to_dict
from .expert import expert_bot, master_bot, montecarlo_bot
from .policies import casual_bot, greedy_bot, random_bot

BOTS = {"random": random_bot, "casual": casual_bot, "greedy": greedy_bot, "montecarlo": montecarlo_bot,
        "expert": expert_bot, "master": master_bot}

# Levels for human players, weakest first: level n is LEVELS[n - 1], with what a player meets
# there. Their measured strengths (win rate and Elo against greedy, bench/bots.py) are in the README.
LEVEL_SUMMARIES = {
    "random": "Plays any legal card: learning the rules.",
    "casual": "Takes what it sees half the time, plays at random otherwise: a beginner.",
    "greedy": "Always takes the best capture it sees now: a steady club player.",
    "montecarlo": "Samples the hidden hands and plays each card out: strong.",
    "expert": "Samples the hidden hands and searches ahead: strong and steady.",
    "master": "The expert's search with a judgement learned by self-play: the house's strongest.",
}
LEVELS = tuple(LEVEL_SUMMARIES)


def choose_action(kind: str, knowledge: dict, rng) -> dict:
    """The action bot `kind` takes, knowing only what `seat_knowledge` gives it."""
    return action_to_dict(BOTS[kind](knowledge, rng))
