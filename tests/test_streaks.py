"""docs/rules.md §4: the three same-rank streak systems (darba, pile, caida), step by step."""

from builders import make_position, new_game, of_type, play, scores_of


# ----- darba (S1, S4) ----------------------------------------------------------------------
def test_darba_s1_example_then_joj_hbal_each_step_removes_the_previous_one():
    game = new_game(deals=[[["12o", "12c", "1o"], ["12e", "12b", "3e"]]], table=["1b", "3b", "5b", "7b"])
    assert scores_of(play(game, "12o")) == []
    second = play(game, "12e")
    assert of_type(second, "capture")[0]["taken"] == ["12o"]
    assert scores_of(second) == [(1, 1, "darba")]
    third = play(game, "12c")
    assert scores_of(third) == [(0, 5, "hbel"), (1, -1, "streak_removed")]
    assert of_type(third, "capture")[0] == {"type": "capture", "seat": 0, "camp": 0, "card": "12c",
                                            "taken": [], "reason": "streak"}
    assert scores_of(play(game, "12b")) == [(1, 10, "joj_hbal"), (0, -5, "streak_removed")]
    assert game.scores == [0, 10]


def test_darba_streak_counts_across_deals():
    game = new_game(deals=[[["2o", "3o", "4o"], ["5c", "6c", "12c"]], [["12o", "1c", "2c"], ["3c", "4c", "5o"]]],
                    table=["1b", "7b", "10b", "11e"])
    play(game, "2o", "5c", "3o", "6c", "4o", "12c")
    assert scores_of(play(game, "12o")) == [(0, 1, "darba")]


def test_a_streak_that_picks_itself_up_is_never_a_missa_but_is_a_capture():
    game = make_position("simple", hands=[["12o", "12c"], ["12e", "3c"]], table=[], dealer=1)
    assert scores_of(play(game, "12o", "12e")) == [(1, 1, "darba"), (1, 1, "missa")]
    events = play(game, "12c")
    assert scores_of(events) == [(0, 5, "hbel"), (1, -1, "streak_removed")]
    assert game.last_capturer == 0


def test_a_different_rank_breaks_the_darba_streak():
    game = new_game(deals=[[["12o", "2o", "12c"], ["12e", "3e", "4e"]]], table=["1b", "3b", "5b", "7b"])
    play(game, "12o", "12e", "2o")
    assert scores_of(play(game, "3e")) == []  # 3e takes 3b: a capture, no streak


# ----- pile (S0/S3 B'wahed, B'khemsa, B'3echra) ----------------------------------------------
def test_bwahed_forms_a_pending_pile_with_the_run_and_scores_when_the_chain_ends():
    game = make_position("traditional", hands=[["7o", "1o"], ["7c", "2c"]], table=["10b", "11b", "3e"], dealer=1)
    play(game, "7o")
    formed = play(game, "7c")
    assert sorted(of_type(formed, "pile_formed")[0]["cards"]) == ["10b", "11b", "7c", "7o"]
    assert not scores_of(formed)
    ended = play(game, "1o")
    assert of_type(ended, "pile_collected")[0]["seat"] == 1
    assert scores_of(ended) == [(1, 1, "bwahed")]
    assert of_type(ended, "drop") == [{"type": "drop", "card": "1o"}]


def test_bkhemsa_only_the_last_player_of_the_chain_scores():
    game = make_position("traditional", hands=[["7o", "7e", "1o"], ["7c", "2c", "3c"]], table=["4b"], dealer=1)
    play(game, "7o", "7c")
    joined = play(game, "7e")
    assert of_type(joined, "pile_joined")[0]["step"] == "bkhemsa" and not scores_of(joined)
    ended = play(game, "2c")
    assert scores_of(ended)[0] == (0, 5, "bkhemsa")
    assert sorted(of_type(ended, "pile_collected")[0]["cards"]) == ["7c", "7e", "7o"]


def test_b3echra_scores_ten_and_collects_at_once():
    game = make_position("traditional", hands=[["7o", "7e", "1o"], ["7c", "7b", "3c"]], table=["4b"], dealer=1)
    events = play(game, "7o", "7c", "7e", "7b")
    assert scores_of(events) == [(1, 10, "b3echra")]
    assert game.pile == [] and game.chain_len == 0


def test_the_pending_pile_is_out_of_reach_of_later_plays():
    game = make_position("traditional", hands=[["7o", "10o"], ["7c", "2c"]], table=["10b", "3e"], dealer=1)
    play(game, "7o", "7c")
    events = play(game, "10o")  # the 10b went into the pile: nothing to take
    assert of_type(events, "drop") == [{"type": "drop", "card": "10o"}]


def test_only_a_card_that_captured_nothing_starts_a_chain():
    game = make_position("traditional", hands=[["7o", "1o"], ["7c", "2c"]], table=["7b", "3e"], dealer=1)
    play(game, "7o")  # captures 7b
    events = play(game, "7c")
    assert not of_type(events, "pile_formed") and of_type(events, "drop")


def test_a_chain_crosses_a_deal():
    deals = [
        [["1o", "2o", "3o", "4o"], ["5c", "6c", "10c", "11c"]],
        [["11o", "1c", "2c", "3c"], ["4c", "5o", "6o", "7o"]],
    ]
    game = new_game("traditional", deals=deals)
    play(game, "pass", "pass", "1o", "5c", "2o", "6c", "3o", "10c", "4o", "11c", "pass", "pass")
    events = play(game, "11o")
    assert of_type(events, "pile_formed")


def test_a_chain_pending_at_round_end_is_resolved_first():
    game = make_position("traditional", hands=[["7o"], ["7c"]], table=["3e"], dealer=1)
    events = play(game, "7o", "7c")
    kinds = [e["type"] for e in events]
    assert kinds.index("pile_collected") < kinds.index("round_end")
    assert (1, 1, "bwahed") in scores_of(events)
    assert of_type(events, "table_swept")[0]["seat"] == 1  # collecting the pile was the last capture


def test_missa_when_forming_the_pile_emptied_the_table_scores_as_the_chain_resolves():
    game = make_position("traditional", hands=[["7o", "1o"], ["7c", "2c"]], table=["10b"], dealer=1)
    play(game, "7o")
    assert scores_of(play(game, "7c")) == []
    assert scores_of(play(game, "1o")) == [(1, 1, "bwahed"), (1, 1, "missa")]


def test_with_four_players_in_teams_the_chain_alternates_camps():
    game = make_position("traditional", players=4, hands=[["7o", "1o"], ["7c", "2c"], ["7e", "3c"], ["4e", "5e"]],
                         table=["11b"], dealer=3)
    events = play(game, "7o", "7c", "7e", "4e")
    assert scores_of(events) == [(0, 5, "bkhemsa")]


# ----- caida (S2) --------------------------------------------------------------------------
def test_caida_then_bkhamsa_then_bachra_add_up():
    game = make_position("runda", hands=[["5o", "5e", "1o"], ["5c", "5b", "2c"]], table=["11b"], dealer=1)
    play(game, "5o")
    assert scores_of(play(game, "5c")) == [(1, 1, "caida")]
    picked = play(game, "5e")
    assert scores_of(picked) == [(0, 5, "bkhamsa")]
    assert of_type(picked, "capture")[0]["reason"] == "streak"
    assert scores_of(play(game, "5b")) == [(1, 10, "bachra")]
    assert game.scores == [5, 11]


def test_caida_counts_when_the_dropped_card_is_taken_through_a_run():
    game = make_position("runda", hands=[["6o", "1o"], ["5c", "2c"]], table=["5b", "12b"], dealer=1)
    play(game, "6o")
    events = play(game, "5c")
    assert sorted(of_type(events, "capture")[0]["taken"]) == ["5b", "6o"]
    assert scores_of(events) == [(1, 1, "caida")]


def test_capturing_a_card_that_was_not_just_dropped_is_no_caida():
    game = make_position("runda", hands=[["1o", "5o", "3o"], ["5c", "2c", "4c"]], table=["5b", "12b"], dealer=1)
    play(game, "1o")
    assert scores_of(play(game, "5c")) == []
    assert scores_of(play(game, "5o")) == [(0, 5, "bkhamsa")]  # k was 2: the third five


def test_any_other_play_resets_the_caida_count():
    game = make_position("runda", hands=[["1o", "3o", "5o"], ["5c", "2c", "4c"]], table=["5b", "12b"], dealer=1)
    play(game, "1o", "5c", "3o", "2c")
    assert scores_of(play(game, "5o")) == []
