"""Bots: pure code beside the engine. One interface: (seat knowledge, rng) → action dict."""

from ..engine import action_to_dict
from .expert import expert_bot, montecarlo_bot
from .policies import greedy_bot, random_bot

BOTS = {"random": random_bot, "greedy": greedy_bot, "montecarlo": montecarlo_bot, "expert": expert_bot}


def choose_action(kind: str, knowledge: dict, rng) -> dict:
    """The action bot `kind` takes, knowing only what `seat_knowledge` gives it."""
    return action_to_dict(BOTS[kind](knowledge, rng))
