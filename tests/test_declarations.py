"""docs/rules.md §5 and §10: ronda, tringa, double ronda; timing, pots, ties and visibility."""

import pytest

from app.engine import DeclarationNotHeld, NotYourTurn, observation, parse_card, perform
from app.engine.declarations import DOUBLE_RONDA, RONDA, TRINGA, combination
from app.engine.rules import PRESETS
from builders import finish_deal, finish_round, new_game, of_type, play, scores_of


def declaration_scores(events):
    return [s for s in scores_of(events) if s[2] == "declaration"]


def holding(hand, preset="traditional", first_deal=True):
    held = combination([parse_card(c) for c in hand], PRESETS[preset].announce, first_deal)
    return held and (held[0], [1, 2, 3, 4, 5, 6, 7, 10, 11, 12][held[1]])


# ----- what a hand declares (§10) ------------------------------------------------------------
def test_a_pair_is_a_ronda_three_a_tringa():
    assert holding(["5o", "5c", "1e"], "classic") == (RONDA, 5)
    assert holding(["5o", "5c", "5e"], "classic") == (TRINGA, 5)
    assert holding(["5o", "6c", "1e"], "classic") is None


def test_two_pairs_are_a_double_ronda_only_in_the_first_deal():
    assert holding(["6o", "6c", "3o", "3c"]) == (DOUBLE_RONDA, 6)
    assert holding(["6o", "6c", "3o", "3c"], first_deal=False) == (RONDA, 6)
    assert holding(["6o", "6c", "3o", "3c"], "elaborate") == (RONDA, 6)


def test_four_of_a_kind_is_a_double_ronda_in_any_deal_else_a_tringa():
    assert holding(["6o", "6c", "6e", "6b"], first_deal=False) == (DOUBLE_RONDA, 6)
    assert holding(["6o", "6c", "6e", "6b"], "elaborate") == (TRINGA, 6)


# ----- pot scoring (S0 examples) ------------------------------------------------------------
def test_s0_ronda_of_six_against_ronda_of_rey_the_rey_takes_two():
    game = new_game("traditional", deals=[[["6o", "6c", "1o", "2o"], ["12o", "12c", "1c", "2c"]]])
    assert declaration_scores(play(game, "declare", "declare")) == []  # not certain from the kinds
    events = finish_deal(game)
    reveal = of_type(events, "reveal")[0]["declarations"]
    assert {(d["seat"], d["rank"]) for d in reveal} == {(0, 6), (1, 12)}
    assert declaration_scores(events) == [(1, 2, "declaration")]


def test_s0_double_ronda_six_and_three_against_ronda_of_seven_the_seven_takes_three():
    game = new_game("traditional", deals=[[["6o", "6c", "3o", "3c"], ["7o", "7c", "1c", "2c"]]])
    play(game, "declare", "declare")
    assert declaration_scores(finish_deal(game)) == [(1, 3, "declaration")]


def test_together_scores_at_once_without_ranks_when_one_camp_alone_declared():
    game = new_game("traditional", deals=[[["6o", "6c", "1o", "2o"], ["12o", "12c", "1c", "2c"]]])
    events = play(game, "s1:pass", "s0:declare")  # answers come in any order
    assert declaration_scores(events) == [(0, 1, "declaration")]
    assert not of_type(events, "reveal")
    assert observation(game, 1)["declarations"] == [{"seat": 0, "camp": 0, "kind": "ronda", "rank": None}]


def test_together_scores_at_once_when_one_camp_alone_has_a_tringa():
    game = new_game("traditional", deals=[[["6o", "6c", "6e", "2o"], ["12o", "12c", "1c", "2c"]]])
    assert declaration_scores(play(game, "declare", "declare")) == [(0, 6, "declaration")]


def test_exact_tie_in_pot_with_split_shares_rounded_down():
    game = new_game("traditional", deals=[[["5o", "5c", "1o", "2o"], ["5e", "5b", "1c", "2c"]]])
    play(game, "declare", "declare")
    assert declaration_scores(finish_deal(game)) == [(0, 1, "declaration"), (1, 1, "declaration")]


def test_double_ronda_and_ronda_with_the_same_top_pair_are_an_exact_tie():
    game = new_game("traditional", deals=[[["5o", "5c", "1o", "1c"], ["5e", "5b", "2c", "3c"]]])
    play(game, "declare", "declare")
    assert declaration_scores(finish_deal(game)) == [(0, 1, "declaration"), (1, 1, "declaration")]  # 3 // 2


def test_exact_tie_with_earlier_goes_to_the_earlier_declarer_in_playing_order():
    game = new_game("classic", deals=[[["5o", "5c", "1o"], ["5e", "5b", "2c"]]], table=["3b", "4b", "7b", "11b"],
                    dealer=0)  # seat 1 plays first
    play(game, "5e declare", "5o declare")
    assert declaration_scores(finish_deal(game)) == [(1, 2, "declaration")]


def test_partners_do_not_compete_the_better_one_represents_the_team():
    deals = [[["3o", "3c", "1o"], ["7o", "7c", "2o"], ["12o", "12c", "1c"], ["4o", "5o", "6o"]]]
    game = new_game("classic", players=4, deals=deals, table=["10b", "11e", "2e", "5e"])
    play(game, "3o declare", "7o declare", "12o declare")
    assert declaration_scores(finish_deal(game)) == [(0, 3, "declaration")]


def test_all_four_lowest_with_four_players_when_all_four_declared():
    deals = [[["3o", "3c", "1o"], ["7o", "7c", "2o"], ["12o", "12c", "1c"], ["4o", "4c", "6o"]]]
    game = new_game("classic", players=4, deals=deals, table=["10b", "11e", "2e", "5e"])
    play(game, "3o declare", "7o declare", "12o declare", "4o declare")
    assert declaration_scores(finish_deal(game)) == [(0, 4, "declaration")]


def test_on_turn_declarations_score_at_the_end_of_the_deal_with_ranks_revealed():
    game = new_game("classic", deals=[[["5o", "5c", "1o"], ["12e", "12b", "2c"]]], table=["3b", "4b", "7b", "11b"])
    events = play(game, "declare", "5o", "12e declare")
    assert declaration_scores(events) == []
    assert observation(game, 0)["declarations"][1]["rank"] is None  # type only while the deal is played
    assert observation(game, 1)["declarations"][1]["rank"] == 12
    events = finish_deal(game)
    assert of_type(events, "reveal") and declaration_scores(events) == [(1, 2, "declaration")]


def test_on_turn_declaring_is_possible_only_before_the_first_card():
    game = new_game("classic", deals=[[["5o", "5c", "1o"], ["12e", "6b", "2c"]]], table=["3b", "4b", "7b", "11b"])
    play(game, "1o", "2c")
    with pytest.raises(DeclarationNotHeld):
        play(game, "declare")


def test_nobody_can_declare_what_they_do_not_hold():
    game = new_game("traditional", deals=[[["6o", "6c", "1o", "2o"], ["12o", "3c", "1c", "2c"]]])
    with pytest.raises(DeclarationNotHeld):
        perform(game, 1, {"type": "declare"})
    with pytest.raises(DeclarationNotHeld):
        perform(game, 0, {"type": "declare", "kind": "tringa"})
    with pytest.raises(DeclarationNotHeld):
        perform(game, 0, {"type": "declare", "kind": "ronda", "rank": 7})
    perform(game, 0, {"type": "declare", "kind": "ronda", "rank": 6})


def test_in_turn_first_deal_in_playing_order_scores_the_highest_only_before_the_first_card():
    game = new_game("runda", deals=[[["5o", "5c", "1o"], ["12e", "12b", "2c"]]], table=["3b", "4b", "7b", "11b"])
    with pytest.raises(NotYourTurn):
        perform(game, 1, {"type": "pass"})
    events = play(game, "declare")
    assert of_type(events, "declaration")[0]["rank"] == 5  # shown with this timing
    assert declaration_scores(play(game, "declare")) == [(1, 1, "declaration")]
    assert game.phase == "playing"


def test_in_turn_first_deal_has_no_declarations_in_later_deals():
    game = new_game(
        "runda",
        deals=[[["5o", "6c", "1o"], ["12e", "11b", "2c"]], [["1c", "1e", "2o"], ["3o", "3c", "4o"]]],
        table=["3b", "4b", "7b", "11e"],
    )
    play(game, "pass", "pass")
    finish_deal(game)
    assert game.holdings[0] == ("ronda", 0)  # a pair of aces, but no declaring after the first deal
    assert {"type": "declare"} not in observation(game, 0)["legal_actions"]


def test_undeclared_ronda_in_the_first_deal_pays_each_opposing_camp_at_round_end():
    game = new_game("runda", deals=[[["5o", "5c", "1o"], ["12e", "11b", "2c"]]], table=["3b", "4b", "7b", "11e"])
    play(game, "pass", "pass")
    events = finish_round(game)
    assert [(s[0], s[1]) for s in scores_of(events) if s[2] == "undeclared_penalty"] == [(1, 1)]


def test_automatic_declares_at_the_deal_and_scores_at_its_end():
    game = new_game("simple", deals=[[["5o", "5c", "1o"], ["12e", "12b", "12c"]]], table=["3b", "4b", "7b", "11e"])
    assert [d.kind for d in game.declarations] == ["ronda", "tringa"]
    assert declaration_scores(finish_deal(game)) == [(1, 6, "declaration")]


def test_highest_only_scores_the_winner_its_own_value():
    game = new_game("runda", deals=[[["5o", "5c", "5e"], ["12e", "12b", "2c"]]], table=["3b", "4b", "7b", "11e"])
    assert declaration_scores(play(game, "declare", "declare")) == [(0, 5, "declaration")]


def test_ronda_and_tringa_points_options():
    game = new_game("runda", announce={"ronda_points": 5, "tringa_points": 20},
                    deals=[[["5o", "5c", "1e"], ["12e", "12b", "2c"]]], table=["3b", "4b", "7b", "11e"])
    assert declaration_scores(play(game, "declare", "declare")) == [(1, 5, "declaration")]


# ----- `together`: certain from the types alone (§5), in both orders --------------------------
FOUR_LOWEST = {"announce": {"all_four_lowest": True}}


def test_together_all_four_lowest_a_lone_ronda_among_tringas_scores_the_pot_at_once():
    deals = [[["2o", "2c", "1o", "3o"], ["10o", "10c", "10e", "1c"], ["11o", "11c", "11e", "3c"],
              ["12o", "12c", "12e", "4c"]]]
    game = new_game("traditional", players=4, deals=deals, dealer=0, **FOUR_LOWEST)
    events = play(game, "s0:declare", "s1:declare", "s2:declare", "s3:declare")
    assert declaration_scores(events) == [(0, 16, "declaration")]  # 1 + 3 × 5, before any card
    assert not of_type(events, "reveal")
    assert game.scores[0] == 16


def test_together_normal_order_a_lone_tringa_among_rondas_scores_the_pot_at_once():
    deals = [[["2o", "2c", "1o", "3o"], ["10o", "10c", "10e", "1c"], ["11o", "11c", "4e", "3c"],
              ["12o", "12c", "5e", "4c"]]]
    game = new_game("traditional", players=4, deals=deals, dealer=0)
    events = play(game, "s0:declare", "s1:declare", "s2:declare", "s3:declare")
    assert declaration_scores(events) == [(1, 8, "declaration")]  # 5 + 3 × 1
    assert not of_type(events, "reveal")


def test_together_all_four_lowest_rondas_in_both_camps_wait_for_the_ranks():
    deals = [[["2o", "2c", "1o", "3o"], ["5o", "5c", "1c", "3c"], ["11o", "11c", "11e", "4c"],
              ["12o", "12c", "12e", "4o"]]]
    game = new_game("traditional", players=4, deals=deals, dealer=0, **FOUR_LOWEST)
    assert declaration_scores(play(game, "s0:declare", "s1:declare", "s2:declare", "s3:declare")) == []
    events = finish_deal(game)
    assert of_type(events, "reveal")
    assert declaration_scores(events) == [(0, 12, "declaration")]  # the 2s are lowest: 1 + 1 + 5 + 5
