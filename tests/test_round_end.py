"""RULES.md §6 and §7: the end of a round, card points, the dealer's last card, winning."""

import pytest

from app.engine import CARD_IDS, GameOver, perform
from builders import make_position, of_type, play, scores_of


def piles(named, *sizes):
    """Captured piles of the given sizes from the cards not named; the last camp gets the rest."""
    rest = [c for c in CARD_IDS if c not in named]
    out, start = [], 0
    for size in sizes:
        out.append(rest[start:start + size])
        start += size
    return out + [rest[start:]]


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
