"""Bots: legal in every preset, blind to hidden cards, and sensible where the choice is plain."""

import random
from functools import partial

import pytest

from app.bots import BOTS, choose_action
from app.bots.expert import expert_bot
from app.engine import PRESETS, Game
from app.engine.views import seat_knowledge
from builders import make_position
from test_properties import swap_hidden_cards

SETUPS = [(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]
FAST = {"random": BOTS["random"], "greedy": BOTS["greedy"], "expert": partial(expert_bot, iterations=3)}


@pytest.mark.parametrize("preset, players", SETUPS)
def test_every_bot_plays_only_legal_actions_to_the_end(preset, players):
    kinds = list(FAST)
    game = Game(PRESETS[preset], players, seed=f"bots-{preset}-{players}")
    rng = random.Random(players)
    while game.winner is None:
        seat = game.awaiting()[0]
        action = FAST[kinds[seat % 3]](seat_knowledge(game, seat), rng)
        assert action in game.legal_actions(seat)
        game.apply(seat, action)


@pytest.mark.parametrize("kind", ["random", "greedy", "expert"])
@pytest.mark.parametrize("preset, players", [("classic", 2), ("traditional", 4), ("runda", 3)])
def test_a_bot_never_peeks_its_choice_is_the_same_when_hidden_cards_are_swapped(kind, preset, players):
    game = Game(PRESETS[preset], players, seed=f"peek-{kind}")
    rng = random.Random(11)
    for step in range(40):
        if game.winner is not None:
            break
        seat = game.awaiting()[0]
        swapped = swap_hidden_cards(game, seat, random.Random(step))
        assert seat_knowledge(game, seat) == seat_knowledge(swapped, seat)
        seed = rng.random()
        choice = FAST[kind](seat_knowledge(game, seat), random.Random(seed))
        assert FAST[kind](seat_knowledge(swapped, seat), random.Random(seed)) == choice
        game.apply(seat, choice)


def test_greedy_declares_whenever_it_holds_something():
    game = make_position("traditional", hands=[["5o", "5c", "1o"], ["7o", "2c", "3c"]], table=[], dealer=1)
    game.phase, game.turn = "declaring", None
    assert choose_action("greedy", seat_knowledge(game, 0), random.Random(1)) == {"type": "declare"}


def test_greedy_takes_the_biggest_capture():
    game = make_position("simple", hands=[["2o", "6o", "11o"], ["1c", "3c", "12c"]], table=["6c", "7c", "10c", "2b"])
    assert choose_action("greedy", seat_knowledge(game, 0), random.Random(1)) == {"type": "play", "card": "6o"}


def test_expert_finds_the_card_that_wins_the_game():
    # 2o takes 2c and empties the table: the missa brings camp 0 to 41 at once.
    game = make_position("simple", hands=[["2o", "6o", "11o"], ["1c", "3c", "12c"]], table=["2c"], scores=[40, 40])
    assert choose_action("expert", seat_knowledge(game, 0), random.Random(1)) == {"type": "play", "card": "2o"}
