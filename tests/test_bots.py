"""Bots: legal in every preset, blind to hidden cards, and sensible where the choice is plain."""

import random
from functools import partial

import pytest

from app.bots import BOTS, choose_action
from app.bots.expert import (_evaluate, _lookahead, _playout, expert_bot, master_bot, montecarlo_bot,
                             win_probability)
from app.bots.value import FEATURES, ValueModel, features
from app.bots.sampling import Sampler
from app.engine import CARD_IDS, DECLARE, PRESETS, Game, parse_card
from app.engine.declarations import Declaration, combination
from app.engine.views import deal_events, seat_knowledge
from builders import make_position, play
from test_properties import swap_hidden_cards

SETUPS = [(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]
FAST = {"random": BOTS["random"], "greedy": BOTS["greedy"], "montecarlo": partial(montecarlo_bot, iterations=3),
        "expert": partial(expert_bot, iterations=3), "master": partial(master_bot, iterations=3)}


@pytest.mark.parametrize("preset, players", SETUPS)
def test_every_bot_plays_only_legal_actions_to_the_end(preset, players):
    kinds = list(FAST)
    game = Game(PRESETS[preset], players, seed=f"bots-{preset}-{players}")
    history = deal_events(game.events)
    rng = random.Random(players)
    while game.winner is None:
        seat = game.awaiting()[0]
        action = FAST[kinds[seat % len(kinds)]](seat_knowledge(game, seat, history), rng)
        assert action in game.legal_actions(seat)
        history = deal_events(history + game.apply(seat, action))


@pytest.mark.parametrize("kind", list(FAST))
@pytest.mark.parametrize("preset, players", [("classic", 2), ("traditional", 4), ("runda", 3)])
def test_a_bot_never_peeks_its_choice_is_the_same_when_hidden_cards_are_swapped(kind, preset, players):
    game = Game(PRESETS[preset], players, seed=f"peek-{kind}")
    history = deal_events(game.events)
    rng = random.Random(11)
    for step in range(40):
        if game.winner is not None:
            break
        seat = game.awaiting()[0]
        swapped = swap_hidden_cards(game, seat, random.Random(step))
        swapped_history = _with_other_hands_dealt_differently(history, seat, random.Random(step))
        knowledge = seat_knowledge(game, seat, history)
        assert knowledge == seat_knowledge(swapped, seat, swapped_history)
        seed = rng.random()
        choice = FAST[kind](knowledge, random.Random(seed))
        assert FAST[kind](seat_knowledge(swapped, seat, swapped_history), random.Random(seed)) == choice
        history = deal_events(history + game.apply(seat, choice))


def _with_other_hands_dealt_differently(history, seat, rng):
    """The deal's events with the hands the seat never saw replaced by other cards."""
    changed = []
    for event in history:
        if event["type"] == "deal":
            hands = [
                hand if s == seat else sorted(rng.sample(CARD_IDS, len(hand))) for s, hand in enumerate(event["hands"])
            ]
            event = {**event, "hands": hands}
        changed.append(event)
    return changed


def test_the_master_finds_the_card_that_wins_the_game():
    game = make_position("simple", hands=[["2o", "6o", "11o"], ["1c", "3c", "12c"]], table=["2c"], scores=[40, 40])
    assert choose_action("master", seat_knowledge(game, 0), random.Random(1)) == {"type": "play", "card": "2o"}


def _model_valuing(feature, weight):
    return ValueModel({table: [weight if name == feature else 0.0 for name in FEATURES]
                       for table in ("2x2", "3x3", "4x2", "4x4")})


def test_the_master_values_its_leaves_by_the_learned_model():
    # Dropping 11o first lets 6o take the run 6-7-10-11 next turn (five cards), where 6o now takes
    # four (no unseen card can answer either): a model that prizes cards drops 11o first, one that
    # shuns them plays 6o. Cards are left in the stock so the search stops inside the round.
    game = make_position("simple", hands=[["6o", "11o"], ["1c", "3c"]], table=["6c", "7c", "10c", "2b"],
                         stock=["4o", "4c", "5o", "5c", "1b", "3b"])
    knowledge = seat_knowledge(game, 0)
    prizes = master_bot(knowledge, random.Random(1), iterations=4, model=_model_valuing("cards_lead", 1.0))
    shuns = master_bot(knowledge, random.Random(1), iterations=4, model=_model_valuing("cards_lead", -1.0))
    assert (prizes, shuns) == (parse_card("11o"), parse_card("6o"))


@pytest.mark.parametrize("preset, players", [("classic", 2), ("traditional", 4), ("runda", 3), ("elaborate", 2)])
def test_the_learned_evaluation_reads_no_hidden_card(preset, players):
    """§9: the features of a position are the same whatever the cards no seat can see."""
    game = Game(PRESETS[preset], players, seed=f"features-{preset}")
    rng = random.Random(5)
    while game.winner is None:
        seat = game.awaiting()[0]
        swapped = swap_hidden_cards(game, seat, rng)
        for camp in range(game.camps):
            assert features(game, camp, game.round_index) == features(swapped, camp, game.round_index)
        game.apply(seat, rng.choice(game.legal_actions(seat)))


def test_the_shipped_weights_load_and_say_how_they_were_made():
    from app.bots.value import SHIPPED_WEIGHTS, shipped_model
    model = shipped_model()
    assert set(model.weights) == {"2x2", "3x3", "4x2", "4x4"} and SHIPPED_WEIGHTS.stat().st_size < 5_000_000
    assert {"command", "seed", "games_per_generation", "generations", "date"} <= set(model.provenance)


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


def test_the_expert_weighs_a_point_by_the_chance_it_gives_to_win_the_game():
    # §7: a game is won at the target, not on the margin: the same point is worth more as the
    # target nears, and less to a camp far ahead than to one level with the other.
    def gain(before):
        return win_probability([before[0] + 1, before[1]], 0, 41) - win_probability(before, 0, 41)

    assert gain([39, 39]) > 2 * gain([0, 0])
    assert gain([30, 10]) < gain([30, 30])
    assert win_probability([30, 30], 0, 41) == 0.5
    assert win_probability([35, 20], 0, 41) + win_probability([35, 20], 1, 41) == pytest.approx(1)
    assert win_probability([20, 35], 0, 41) < 0.2


def test_a_montecarlo_playout_runs_to_the_end_of_the_deal_each_seat_taking_its_best_immediate_gain():
    # Seat 1 takes 7o with 7e (+0.4 in cards) rather than drop 1b, which would leave 7o to seat 0's
    # 7c; the play-out then stops where the next deal is dealt from the stock (§2).
    stock = ["2o", "2c", "4o", "4c", "6o", "6c"]
    root = make_position(hands=[["5o", "7c"], ["7e", "1b"]], table=["7o", "3c"], stock=stock)
    game = root.clone()
    game.apply(0, parse_card("5o"))
    _playout(game, 0, root)
    assert {parse_card("7e"), parse_card("7o")} <= set(game.captured[1])
    assert (game.round_index, game.deal_index) == (root.round_index, root.deal_index + 1)
    assert [len(hand) for hand in game.hands] == [3, 3] and not game.stock


def _last_deals(seeds, players=2):
    """Positions at the first card of a round's last deal (classic), reached by greedy play."""
    for seed in seeds:
        game = Game(PRESETS["classic"], players, seed=f"endgame-{seed}")
        history = deal_events(game.events)
        while game.stock or any(len(hand) != 3 for hand in game.hands):
            seat = game.awaiting()[0]
            events = game.apply(seat, BOTS["greedy"](seat_knowledge(game, seat, history), random.Random(seed)))
            history = deal_events(history + events)
        yield game, history


def _round_end_value(game, camp, round_index):
    """Exhaustive minimax over card plays to the round's end, every hand known (a 2p last deal, or a
    sample), of the camp's chance to win the game from the round's final scores."""
    if game.winner is not None:
        return 1.0 if game.winner == camp else 0.0
    if game.round_index != round_index:
        return win_probability(game.scores, camp, game.rules.target)
    seat = game.awaiting()[0]
    values = []
    for card in [a for a in game.legal_actions(seat) if a < DECLARE]:
        child = game.clone(deal_next_round=False)
        child.apply(seat, card)
        values.append(_round_end_value(child, camp, round_index))
    return max(values) if game.camp_of[seat] == camp else min(values)


def test_the_expert_plays_the_last_deal_exactly_as_it_hides_nothing():
    # §2: the last deal empties the stock, so the unseen cards are exactly the other hand; the
    # sweep of the table (§3) and card points (§6) decide it beyond a three-ply horizon.
    for game, history in _last_deals(range(12)):
        seat = game.awaiting()[0]
        values = {}
        for card in [a for a in game.legal_actions(seat) if a < DECLARE]:
            child = game.clone(deal_next_round=False)
            child.apply(seat, card)
            values[card] = _round_end_value(child, game.camp_of[seat], game.round_index)
        chosen = expert_bot(seat_knowledge(game, seat, history), random.Random(1), iterations=8)
        if chosen < DECLARE:
            assert values[chosen] == max(values.values()), (game.seed, values, chosen)


def test_in_teams_the_expert_searches_the_last_deal_to_the_round_end_in_every_sample():
    # With four players the last deal is twelve cards and the others' hands stay hidden: the
    # card must be the best summed over the expert's samples, each searched to the round's end,
    # where the sweep of the table (§3) and card points (§6) are decided.
    checked = 0
    for game, history in _last_deals(range(14), players=4):
        seat = game.awaiting()[0]
        cards = game.legal_actions(seat)
        if DECLARE in cards:
            continue  # the declaration would draw its own samples first
        knowledge = seat_knowledge(game, seat, history)
        sampler, rng = Sampler(knowledge, reads_play=True), random.Random(1)
        samples = [sampler.sample(rng) for _ in range(4)]
        totals = dict.fromkeys(cards, 0)
        for sample in samples:
            for card in cards:
                child = sample.clone(deal_next_round=False)
                child.apply(seat, card)
                totals[card] += _round_end_value(child, game.camp_of[seat], game.round_index)
        chosen = expert_bot(knowledge, random.Random(1), iterations=4)
        assert totals[chosen] == max(totals.values()), (game.seed, totals, chosen)
        checked += 1
    assert checked >= 8


def _plain_minimax(game, camp, root, depth):
    if depth == 0 or game.winner is not None or game.round_index != root.round_index:
        return _evaluate(game, camp, root)
    mover = game.awaiting()[0]
    legal = game.legal_actions(mover)
    values = []
    for action in [a for a in legal if a < DECLARE] or legal:
        child = game.clone(deal_next_round=False)
        child.apply(mover, action)
        values.append(_plain_minimax(child, camp, root, depth - 1))
    return max(values) if game.camp_of[mover] == camp else min(values)


@pytest.mark.parametrize("preset, players", [("classic", 4), ("classic", 2), ("traditional", 4)])
def test_the_expert_lookahead_cuts_lines_without_changing_a_minimax_value(preset, players):
    game = Game(PRESETS[preset], players, seed=f"alphabeta-{preset}-{players}")
    history = deal_events(game.events)
    rng = random.Random(5)
    compared = 0
    while game.winner is None and compared < 400:
        seat = game.awaiting()[0]
        knowledge = seat_knowledge(game, seat, history)
        position = Sampler(knowledge, reads_play=True).sample(rng)
        camp = position.camp_of[seat]
        for action in position.legal_actions(seat):
            child = position.clone(deal_next_round=False)
            child.apply(seat, action)
            assert _lookahead(child, camp, position, players, _evaluate) == _plain_minimax(
                child, camp, position, players
            )
            compared += 1
        history = deal_events(history + game.apply(seat, BOTS["greedy"](knowledge, rng)))
    assert compared >= 100


def _deal_event(game):
    return {"type": "deal", "round": 0, "deal": game.deal_index, "dealer": game.dealer,
            "hands": [[CARD_IDS[c] for c in hand] for hand in game.hands],
            "table": [CARD_IDS[c] for c in game.table], "stock": len(game.stock), "last_deal": False}


def _holding_frequency(knowledge, reads_play, holds, samples=300):
    sampler, rng = Sampler(knowledge, reads_play=reads_play), random.Random(5)
    return sum(holds(sampler.sample(rng).hands[1]) for _ in range(samples)) / samples


def test_a_sample_deals_the_unseen_cards_uniformly_between_the_other_hands_and_the_stock():
    """Determinization (§9): the others' hands and the stock are exactly the cards the seat has not
    seen, and without the history read every unseen card is as likely to be in a hand as any other."""
    game = Game(PRESETS["classic"], 2, seed="uniform", first_dealer=0)
    knowledge = seat_knowledge(game, 1)
    sampler, rng = Sampler(knowledge), random.Random(11)
    unseen = sorted(sampler.unseen)
    in_hand = dict.fromkeys(unseen, 0)
    samples = 4000
    for _ in range(samples):
        position = sampler.sample(rng)
        assert sorted(position.hands[0] + position.stock) == unseen
        assert len(position.hands[0]) == knowledge["hand_counts"][0]
        for card in position.hands[0]:
            in_hand[card] += 1
    expected = samples * knowledge["hand_counts"][0] / len(unseen)
    assert all(abs(count - expected) < 5 * expected ** 0.5 for count in in_hand.values())  # five sigma


def test_the_expert_reads_a_skipped_streak_as_not_holding_that_rank():
    # Seat 1 answered 5o with 7c: a player holding a 5 would have followed it (darba, §4).
    game = make_position("classic", hands=[["5o", "2o", "11o"], ["7c", "3c", "12c"]], table=["1b", "4b"],
                         stock=["5c", "5e", "5b", "6c", "6e", "6b"], dealer=1)
    history = [_deal_event(game), *play(game, "5o", "7c")]
    knowledge = seat_knowledge(game, 0, history)
    holds_a_five = lambda hand: any(c >> 2 == 4 for c in hand)  # noqa: E731
    assert _holding_frequency(knowledge, reads_play=False, holds=holds_a_five) > 0.5
    assert _holding_frequency(knowledge, reads_play=True, holds=holds_a_five) < 0.2


def test_the_expert_samples_a_declared_tringa_into_the_declarer_hand():
    # Seat 1 declared a tringa (its kind is public, §9) and then played 6c: two 6s are left in its hand.
    game = make_position("classic", hands=[["5o", "2o", "11o"], ["6c", "6e", "6b"]], table=["1b", "4b"],
                         stock=["5c", "5e", "5b", "3c", "12c", "7e"], dealer=1)
    history = [_deal_event(game), *play(game, "5o", "s1:declare", "6c")]
    knowledge = seat_knowledge(game, 0, history)
    holds_the_sixes = lambda hand: [c >> 2 for c in hand] == [5, 5]  # noqa: E731
    assert _holding_frequency(knowledge, reads_play=True, holds=holds_the_sixes) == 1.0
    assert _holding_frequency(knowledge, reads_play=False, holds=holds_the_sixes) < 0.2


def test_a_sampled_declaration_rank_is_the_one_its_dealt_hand_makes_after_some_of_it_was_played():
    # §5: a declaration is made on the hand as dealt. Seat 1 declared a ronda, then played 5c: its
    # dealt hand is what it still holds plus 5c, so the hidden rank follows from each sample.
    game = make_position("classic", hands=[["2o", "3o", "11o"], ["5c", "5e", "12b"]], table=["1b", "4b"],
                         stock=["6c", "6e", "6b", "7c", "12c", "7e"], dealer=1)
    history = [_deal_event(game), *play(game, "2o", "s1:declare", "5c")]
    sampler, rng = Sampler(seat_knowledge(game, 0, history), reads_play=True), random.Random(3)
    five_of_cups = CARD_IDS.index("5c")
    for _ in range(100):
        position = sampler.sample(rng)
        declared = position.declarations[0]
        dealt = combination(position.hands[1] + [five_of_cups], position.rules.announce, True)
        assert (declared.kind, declared.rank) == dealt == position.holdings[1]


def _declaring(preset, others_declared):
    game = make_position(preset, hands=[["5o", "5c", "1o"], ["7o", "2c", "3c"]], table=[], dealer=1)
    game.phase, game.turn, game.answered = "declaring", None, [False, True]
    game.declarations = [Declaration(1, kind, 3) for kind in others_declared]
    game.declarations_open = bool(others_declared)
    return seat_knowledge(game, 0)


def test_the_expert_declares_a_ronda_the_others_did_not_answer_with_a_declaration():
    assert choose_action("expert", _declaring("traditional", []), random.Random(1)) == {"type": "declare"}


def test_the_expert_keeps_a_ronda_quiet_against_a_declared_tringa_in_pot_scoring():
    # pot (§5): declaring would add 1 to the 5 the tringa wins.
    assert choose_action("expert", _declaring("traditional", ["tringa"]), random.Random(1)) == {"type": "pass"}
