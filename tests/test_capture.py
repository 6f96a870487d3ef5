"""docs/rules.md §3: capturing, runs, drops, missa, the remaining-table sweep."""

import pytest

from app.engine import CARD_IDS

from builders import make_position, new_game, of_type, play, scores_of


def captured_by(events):
    return [sorted(e["taken"]) for e in of_type(events, "capture")]


def test_run_continues_from_the_matched_rank_and_stops_at_a_gap():
    # S2: play 6 on {6,7,10,12} → take 6,7,10; 12 stays (7 is followed directly by 10).
    game = new_game(deals=[[["6o", "1c", "2c"], ["3e", "4e", "5b"]]], table=["6c", "7c", "10c", "12c"])
    events = play(game, "6o")
    assert captured_by(events) == [["10c", "6c", "7c"]]
    assert of_type(events, "capture")[0]["reason"] == "run"
    assert [CARD_IDS[c] for c in game.table] == ["12c"]


def test_two_takes_the_whole_run_of_the_s4_example():
    game = new_game("simple", deals=[[["2o", "1c", "11c"], ["3e", "12e", "5b"]]], table=["2c", "3c", "4c", "7b"])
    assert captured_by(play(game, "2o")) == [["2c", "3c", "4c"]]


def test_four_on_four_five_six_eleven_takes_four_five_six():
    game = new_game(deals=[[["4o", "1c", "2c"], ["3e", "12e", "7b"]]], table=["4c", "5c", "6c", "11c"])
    assert captured_by(play(game, "4o")) == [["4c", "5c", "6c"]]


def test_no_wrap_around_after_the_rey():
    game = new_game(deals=[[["12o", "2c", "3c"], ["3e", "4e", "5b"]]], table=["12c", "1c", "6b", "10b"])
    assert captured_by(play(game, "12o")) == [["12c"]]


def test_capture_runs_off_takes_only_the_same_rank():
    game = new_game("runda", capture_runs=False, deals=[[["6o", "1c", "2c"], ["3e", "4e", "5b"]]],
                    table=["6c", "7c", "10c", "12c"])
    play(game, "pass", "pass")
    assert captured_by(play(game, "6o")) == [["6c"]]


def test_a_card_of_a_rank_absent_from_the_table_is_dropped_face_up():
    game = new_game(deals=[[["5o", "1c", "2c"], ["3e", "4e", "5b"]]], table=["6c", "7c", "10c", "12c"])
    events = play(game, "5o")
    assert of_type(events, "drop") == [{"type": "drop", "card": "5o"}]
    assert not of_type(events, "capture")


def test_missa_scores_when_a_capture_empties_the_table():
    game = new_game("simple", deals=[[["2o", "1c", "11c"], ["3e", "12e", "5b"]]], table=["2c", "3c", "4c", "5c"])
    assert scores_of(play(game, "2o")) == [(0, 1, "missa")]


def test_missa_points_option_sets_its_value():
    game = new_game("simple", missa_points=3, deals=[[["2o", "1c", "11c"], ["3e", "12e", "5b"]]],
                    table=["2c", "3c", "4c", "5c"])
    assert scores_of(play(game, "2o")) == [(0, 3, "missa")]


@pytest.mark.parametrize("preset, scored", [("simple", True), ("classic", False)])
def test_missa_on_the_very_last_card_of_the_round(preset, scored):
    # classic (S1): "sauf la toute dernière carte de la manche"; simple counts it.
    game = make_position(preset, hands=[["10o"], ["7c"]], table=["7b"], dealer=1)
    events = play(game, "10o", "7c")  # the last card takes 7b and the run 10o: the table is empty
    assert ((1, 1, "missa") in scores_of(events)) == scored


def test_remaining_table_goes_to_the_last_capturer():
    game = make_position("simple", hands=[["4o", "1o"], ["4c", "5c"]], table=["7b", "11b"], dealer=1)
    events = play(game, "4o", "4c", "1o", "5c")  # seat 1 captured last (4c took 4o)
    sweep = of_type(events, "table_swept")
    assert sweep and sweep[0]["seat"] == 1 and sorted(sweep[0]["cards"]) == ["11b", "1o", "5c", "7b"]


def test_remaining_table_goes_to_nobody_when_nobody_captured():
    game = make_position("simple", hands=[["4o"], ["5c"]], table=["7b"], dealer=1)
    assert not of_type(play(game, "4o", "5c"), "table_swept")
