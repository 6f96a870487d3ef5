"""The Ronda rules engine: a pure library (no Flask, Redis or RQ) that everything else drives.

    game = Game(rules_from_request({"preset": "classic"}), players=2, seed="demo")
    seat = game.awaiting()[0]
    events = perform(game, seat, {"type": "play", "card": observation(game, seat)["hand"][0]})
"""

from .actions import action_text, action_to_dict, engine_steps, parse_text, perform
from .cards import CARD_IDS, RANKS, card_id, parse_card
from .errors import (CardNotInHand, DeclarationNotHeld, GameOver, IllegalAction, InvalidAction,
                     InvalidRules, InvalidSetup, NotYourTurn, RondaError)
from .game import DECLARE, PASS, Game
from .randomness import commitment, new_seed, shuffled_deck
from .phases import DECLARING, OVER, PLAYING
from .rounds import end_off_the_table
from .rules import PRESETS, Rules, rules_from_dict, rules_from_request
from .serialize import SCHEMA_VERSION, game_from_dict, game_to_dict
from .views import observation, visible_event

__all__ = [
    "action_text", "action_to_dict", "engine_steps", "parse_text", "perform",
    "CARD_IDS", "RANKS", "card_id", "parse_card",
    "CardNotInHand", "DeclarationNotHeld", "GameOver", "IllegalAction", "InvalidAction", "InvalidRules",
    "InvalidSetup", "NotYourTurn", "RondaError",
    "DECLARE", "PASS", "Game", "commitment", "new_seed", "shuffled_deck", "DECLARING", "OVER", "PLAYING",
    "end_off_the_table", "PRESETS", "Rules", "rules_from_dict", "rules_from_request",
    "SCHEMA_VERSION", "game_from_dict", "game_to_dict", "observation", "visible_event",
]
