"""Random games of every preset and player count: invariants that must hold at every step."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import (CARD_IDS, PRESETS, Game, game_from_dict, game_to_dict, observation,
                        rules_from_request, visible_event)

SETUPS = [(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]
games = st.tuples(st.sampled_from(SETUPS), st.integers(0, 2**32), st.integers(0, 2**32))
CARD_SET = set(CARD_IDS)


def random_game(setup, seed, chooser_seed):
    (preset, players) = setup
    return Game(PRESETS[preset], players, seed=str(seed)), random.Random(chooser_seed)


def all_cards(game):
    places = [*game.hands, game.table, game.pile, game.stock, *game.captured]
    return [c for place in places for c in place]


def hidden_from(game, viewer):
    seats = [s for s in range(game.players) if s != viewer]
    return {CARD_IDS[c] for s in seats for c in game.hands[s]} | {CARD_IDS[c] for c in game.stock}


def card_ids_in(value):
    if isinstance(value, str):
        return {value} & CARD_SET
    if isinstance(value, dict):
        return set().union(*map(card_ids_in, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(card_ids_in, value)) if value else set()
    return set()


def events_of_current_round(events):
    """Cards shown in a finished round are shuffled into the next one: check from its start."""
    starts = [i for i, e in enumerate(events) if e["type"] == "round_start"]
    return events[starts[-1]:] if starts else events


def swap_hidden_cards(game, viewer, rng):
    """The same position with the cards the viewer cannot see dealt differently."""
    other = game.clone(record_events=True)
    seats = [s for s in range(other.players) if s != viewer]
    hidden = [c for s in seats for c in other.hands[s]] + other.stock
    rng.shuffle(hidden)
    for s in seats:
        size = len(other.hands[s])
        other.hands[s], hidden = sorted(hidden[:size]), hidden[size:]
    other.stock = hidden
    return other


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_cards_are_conserved_and_scores_are_the_sum_of_score_events(args):
    game, chooser = random_game(*args)
    score_events = [0] * game.camps
    steps = 0
    while game.winner is None:
        seat = game.awaiting()[0]
        for event in game.apply(seat, chooser.choice(game.legal_actions(seat))):
            if event["type"] == "score":
                score_events[event["camp"]] += event["points"]
        cards = all_cards(game)
        assert len(cards) == 40 and len(set(cards)) == 40
        steps += 1
        assert steps < 5000, "a game must end"
    assert game.scores == score_events
    assert max(game.scores) >= game.rules.target


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_serialisation_round_trips_at_every_step(args):
    game, chooser = random_game(*args)
    while game.winner is None:
        data = game_to_dict(game)
        copy = game_from_dict(data)
        assert game_to_dict(copy) == data
        seat = game.awaiting()[0]
        action = chooser.choice(game.legal_actions(seat))
        assert copy.apply(seat, action) == game.apply(seat, action)
        assert game_to_dict(copy) == game_to_dict(game)


overrides = st.fixed_dictionaries({}, optional={
    "win": st.sampled_from(["immediate", "round_end"]), "target": st.integers(1, 50),
    "streak": st.sampled_from(["darba", "pile", "caida"]), "missa_points": st.integers(0, 2),
    "announce": st.fixed_dictionaries({}, optional={"tie": st.sampled_from(["earlier", "split"])})})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PRESETS)), overrides, st.integers(0, 2**32), st.data())
def test_who_wins_a_whole_game_with_any_options(preset, options, seed, data):
    """§7 and §10: the winner is at or above the target and strictly ahead (immediate), or one of
    the camps at or above the target at the round's end (round_end); the scores are the sum of
    the score events, and nothing is scored after game over."""
    rules = rules_from_request({"preset": preset, **options})
    game = Game(rules, data.draw(st.sampled_from(rules.player_counts())), seed=str(seed))
    chooser, events = random.Random(seed), []
    while game.winner is None:
        seat = game.awaiting()[0]
        events += game.apply(seat, chooser.choice(game.legal_actions(seat)))
        assert len(events) < 50_000, "a game must end"
    over = next(i for i, e in enumerate(events) if e["type"] == "game_over")
    assert over == len(events) - 1, "nothing follows game over"
    score_events = [0] * game.camps
    for event in events:
        if event["type"] == "score":
            score_events[event["camp"]] += event["points"]
    assert game.scores == score_events
    top, others = game.scores[game.winner], game.scores[:game.winner] + game.scores[game.winner + 1:]
    assert top >= rules.target
    if rules.win == "immediate":
        assert all(top > score for score in others)
    else:
        assert events[over - 1]["type"] == "round_end", "round_end: a game ends only at a round's end"


def test_a_game_stored_while_the_state_counted_its_actions_still_loads():
    """Stored games outlive deploys: a document that still carries the former `actions_applied`
    counter (never read, since dropped) loads into the same game."""
    game = Game(PRESETS["classic"], 2, seed="stored")
    data = game_to_dict(game)
    assert game_to_dict(game_from_dict({**data, "actions_applied": 0})) == data


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games, st.integers(0, 200))
def test_a_clone_plays_on_alone_and_exactly_like_its_original(args, moves_first):
    game, chooser = random_game(*args)
    for _ in range(moves_first):
        if game.winner is not None:
            break
        seat = game.awaiting()[0]
        game.apply(seat, chooser.choice(game.legal_actions(seat)))
    before = game_to_dict(game)
    clone = game.clone(record_events=True)
    played = []
    while clone.winner is None:
        seat = clone.awaiting()[0]
        played.append((seat, chooser.choice(clone.legal_actions(seat))))
        clone.apply(*played[-1])
    assert game_to_dict(game) == before  # the search's copy shares nothing it changes
    for seat, action in played:
        game.apply(seat, action)
    assert game_to_dict(game) == game_to_dict(clone)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games, st.integers(0, 3))
def test_no_leak_a_view_is_blind_to_the_cards_it_may_not_see(args, viewer_pick):
    game, chooser = random_game(*args)
    viewers = [None, viewer_pick % game.players]
    swapper = random.Random(viewer_pick)
    while game.winner is None:
        seat = game.awaiting()[0]
        events = game.apply(seat, chooser.choice(game.legal_actions(seat)))
        for viewer in viewers:
            assert observation(game, viewer) == observation(swap_hidden_cards(game, viewer, swapper), viewer)
            hidden = hidden_from(game, viewer)
            seen = card_ids_in([visible_event(e, viewer) for e in events_of_current_round(events)])
            assert not seen & hidden, f"{viewer} sees hidden cards {seen & hidden}"


def test_a_round_end_game_stored_before_scoring_events_were_grouped_still_loads():
    """Stored games outlive deploys: the round's score log was one row per score (group, the
    event's first row, camp, points); it loads as the events it recorded."""
    game = Game(rules_from_request({"preset": "runda"}), 2, seed="stored")
    data = game_to_dict(game)
    rows = [["play", 0, 1, 1], ["declaration", 1, 0, 1], ["declaration", 1, 1, 1], ["play", 3, 0, 5],
            ["play", 3, 1, -1]]
    loaded = game_from_dict({**data, "round_log": rows})
    assert loaded.round_log == [("play", [(1, 1)]), ("declaration", [(0, 1), (1, 1)]),
                                ("play", [(0, 5), (1, -1)])]
