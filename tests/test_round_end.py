"""docs/rules.md §6 and §7: the end of a round, card points, the dealer's last card, winning."""

import pytest

from app.engine import CARD_IDS, GameOver, game_from_dict, game_to_dict, perform
from builders import make_position, new_game, of_type, play, scores_of
import functools
import operator


def piles(named, *sizes):
    """Captured piles of the given sizes from the cards not named; the last camp gets the rest."""
    rest = [c for c in CARD_IDS if c not in named]
    out, start = [], 0
    for size in sizes:
        out.append(rest[start:start + size])
        start += size
    return [*out, rest[start:]]


@pytest.mark.parametrize("preset, players, sizes, expected", [
    ("classic", 2, (23,), [(0, 3)]),                  # 2 camps: above 20 (the other has 13)
    ("classic", 3, (14, 13), [(0, 1)]),               # 3 players: above 13
    ("classic", 4, (21,), [(0, 1)]),                  # 4 in teams: above 20
    ("simple", 4, (12, 11, 10), [(0, 2), (1, 1)]),    # 4 individual: above 10
])
def test_card_points_above_the_neutral_share(preset, players, sizes, expected):
    hands = [["4o"], ["5c"], ["6e"], ["1b"]][:players]
    table = ["7b", "11b"]
    captured = piles(sum(hands, table), *sizes)
    game = make_position(preset, players=players, hands=hands, table=table, captured=captured,
                         missa_points=0)
    events = play(game, *[h[0] for h in hands])
    assert [(c, p) for c, p, r in scores_of(events) if r == "card_points"] == expected


def dealer_last_card_game(dealer_card, players=2):
    hands = [["4o"], [dealer_card]] if players == 2 else [["4o"], ["5c"], ["6e"], [dealer_card]]
    return make_position("elaborate", players=players, hands=hands, table=["12b", "1b", "10b"], missa_points=0)


@pytest.mark.parametrize("card, expected", [
    ("12o", [(1, 5)]),          # captures with the Rey: dealer +5
    ("1o", [(0, 5)]),           # captures with the As: opponent +5
    ("5o", [(0, 5)]),           # captures nothing: opponent +5
    ("10o", []),                # any other capture: nothing
])
def test_dealers_last_card(card, expected):
    events = play(dealer_last_card_game(card), "4o", card)
    assert [(c, p) for c, p, r in scores_of(events) if r == "dealer_last_card"] == expected


def test_dealers_last_card_pays_every_opposing_camp():
    events = play(dealer_last_card_game("7e", players=4), "4o", "5c", "6e", "7e")
    assert [(c, p) for c, p, r in scores_of(events) if r == "dealer_last_card"] == [(0, 5), (1, 5), (2, 5)]


def test_end_of_round_order():
    game = make_position("elaborate", hands=[["4o"], ["5o"]], table=["4b", "11b"])
    kinds = [e.get("reason", e["type"]) for e in play(game, "4o", "5o")]
    assert kinds.index("table_swept") < kinds.index("dealer_last_card") < kinds.index("card_points")


def test_immediate_win_in_the_middle_of_a_round_stops_the_game():
    game = make_position("simple", hands=[["2o", "3o"], ["2c", "3c"]], table=["2e"], stock=[], scores=[40, 0])
    events = play(game, "2o")  # takes 2e, empties the table: missa reaches 41
    assert of_type(events, "game_over")[0]["winner"] == 0 and game.phase == "over"
    with pytest.raises(GameOver):
        perform(game, 1, {"type": "play", "card": "2c"})


THREE_HANDS, TABLE = [["4o"], ["5c"], ["6e"]], ["7b", "11b"]


def test_immediate_several_camps_reach_the_target_at_round_end_highest_wins():
    captured = piles(sum(THREE_HANDS, TABLE), 16, 14)  # card points +3 and +1
    game = make_position("simple", players=3, hands=THREE_HANDS, table=TABLE, captured=captured,
                         scores=[39, 40, 0])
    play(game, "4o", "5c", "6e")
    assert game.scores[:2] == [42, 41] and game.winner == 0


def test_immediate_exact_tie_plays_another_round_then_the_strict_leader_wins():
    captured = piles(sum(THREE_HANDS, TABLE), 15, 14)  # card points +2 and +1
    game = make_position("simple", players=3, hands=THREE_HANDS, table=TABLE, captured=captured,
                         scores=[39, 40, 0])
    play(game, "4o", "5c", "6e")
    assert game.winner is None and game.round_index == 1 and game.scores == [41, 41, 0]


def test_round_end_replays_card_points_first():
    # Camp 1 reaches 41 during play (caida); camp 0 reaches 41 by card points, which replay first.
    hands, table = [["4o", "6e"], ["4b", "5c"]], ["7b", "11b"]
    game = make_position("runda", hands=hands, table=table, captured=piles(sum(hands, table), 23), scores=[38, 40])
    events = play(game, "4o", "4b", "6e", "5c")
    assert (1, 1, "caida") in scores_of(events)
    assert game.scores == [41, 41] and game.winner == 0


def test_round_end_persistent_tie_plays_another_round():
    captured = piles(sum(THREE_HANDS, TABLE), 14, 14)
    game = make_position("runda", players=3, hands=THREE_HANDS, table=TABLE,
                         captured=captured, scores=[40, 40, 0], missa_points=0)
    play(game, "4o", "5c", "6e")
    assert game.winner is None and game.round_index == 1 and game.scores[:2] == [41, 41]


def test_round_end_does_not_stop_in_the_middle_of_a_round():
    game = make_position("runda", hands=[["2o", "3o"], ["2c", "3c"]], table=["2e"], stock=[], scores=[40, 0])
    play(game, "2o")
    assert game.scores[0] == 41 and game.winner is None


# ----- §10: who wins, exactly: scoring events and round_end candidates -----------------

def test_round_end_only_camps_at_the_target_at_the_round_end_can_win():
    # Camp 0 touches the target 2 with two darba steps, then camp 1's hbel removes one of them:
    # camp 0 ends at 1, below the target, so camp 1 (at 5) is the one candidate and wins.
    hands = [["5o", "6o", "7o"], ["6c", "7c", "7e"]]
    game = make_position("classic", hands=hands, captured=piles(functools.reduce(operator.iadd, hands, []), 16, 18),
                         win="round_end", target=2, missa_points=0, capture_runs=False)
    events = play(game, "5o", "6c", "6o", "7c", "7o", "7e")
    assert [r for _, _, r in scores_of(events)] == ["darba", "darba", "hbel", "streak_removed"]
    assert game.scores == [1, 5] and game.winner == 1


def test_immediate_a_streak_step_and_the_removal_it_causes_are_one_scoring_event():
    # 12 dropped, 12 (darba, +1), 12 (hbel, +5 reaching the target 5, and the darba point removed).
    game = make_position("classic", hands=[["12o", "12e", "1o"], ["12c", "2c", "3c"]], table=["4b"],
                         target=5)
    play(game, "12o", "12c", "12e")
    assert game.scores == [5, 0] and game.winner == 0


def test_immediate_a_pile_chains_bonus_and_its_missa_are_one_scoring_event():
    # 7o dropped, 7c forms the pile and empties the table, then another rank ends the chain:
    # B'wahed (+1) reaches the target 1, and the chain's missa (+1) is part of the same event.
    game = make_position("traditional", hands=[["7o", "3o", "1o"], ["7c", "2c", "4c"]], target=1)
    events = play(game, "7o", "7c", "3o")
    assert [(c, r) for c, _, r in scores_of(events)] == [(1, "bwahed"), (1, "missa")]
    assert game.scores == [0, 2] and game.winner == 1


def test_immediate_a_split_pot_lands_whole_before_the_target_is_checked():
    # Two rondas of 5 tie: the pot of 2 is split, 1 each. Both camps reach the target 1 at once:
    # an exact tie at the top, so play goes on.
    game = new_game("traditional", deals=[[["5o", "5c", "1o", "3o"], ["2c", "4c", "5e", "5b"]]], target=1)
    events = play(game, "s0:declare", "s1:declare", "5o", "2c", "5c", "4c", "1o", "5e", "3o", "5b")
    assert [(c, p) for c, p, r in scores_of(events) if r == "declaration"] == [(0, 1), (1, 1)]
    assert game.scores == [1, 1] and game.winner is None and game.deal_index == 1


def test_round_end_the_undeclared_penalties_are_one_step_of_the_replay_after_the_declarations():
    # Both seats held a ronda in the first deal and did not declare it: each camp scores 1 from
    # the other's penalty, in one step, so both reach 41 together; camp 0's caída breaks the tie.
    hands, table = [["3o", "5o"], ["5c", "6c"]], ["7b", "11b"]
    game = make_position("runda", hands=hands, table=table, captured=piles(sum(hands, table), 14, 20),
                         scores=[40, 40])
    data = game_to_dict(game)
    data["undeclared"] = [[0, ["ronda", 1]], [1, ["ronda", 2]]]
    game = game_from_dict(data)
    events = play(game, "3o", "5c", "5o", "6c")
    assert [(c, r) for c, _, r in scores_of(events)] == [(0, "caida"), (1, "undeclared_penalty"),
                                                         (0, "undeclared_penalty")]
    assert game.scores == [42, 41] and game.winner == 0
