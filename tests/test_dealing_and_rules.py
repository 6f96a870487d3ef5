"""docs/rules.md §1, §2, §8: options and presets, dealing order, table restriction, determinism."""

import hashlib
import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine import (CARD_IDS, DECLARE, PASS, PRESETS, Game, InvalidAction, InvalidRules, InvalidSetup,
                        action_text, action_to_dict, card_id, commitment, parse_card, parse_text,
                        rules_from_request, shuffled_deck)
from app.engine import randomness
from app.engine.randomness import SeedStream
from builders import deck_for, new_game, rules


# ----- options and presets (§8) -----------------------------------------------------------
def test_presets_follow_the_table_of_section_8():
    assert PRESETS["traditional"].announce.tie == "split" and PRESETS["traditional"].streak == "pile"
    assert PRESETS["runda"].win == "round_end" and PRESETS["runda"].announce.undeclared_penalty
    assert not PRESETS["simple"].teams and PRESETS["elaborate"].dealer_last_card
    assert PRESETS["classic"].announce.all_four_lowest and not PRESETS["classic"].missa_last_card


def test_overrides_apply_on_top_of_a_preset():
    r = rules_from_request({"preset": "runda", "capture_runs": False, "announce": {"tie": "split"}})
    assert not r.capture_runs and r.announce.tie == "split" and r.announce.when == "in_turn_first_deal"


@pytest.mark.parametrize("request_, players, option", [
    ({"preset": "classic", "deal": "hand4"}, 3, "deal"),
    ({"preset": "traditional"}, 3, "deal"),
    ({"preset": "classic", "jokers": True}, 2, "jokers"),
    ({"preset": "classic", "target": 0}, 2, "target"),
    ({"preset": "classic", "target": True}, 2, "target"),
    ({"preset": "classic", "announce": {"when": "later"}}, 2, "announce.when"),
    ({"preset": "classic", "announce": {"colour": 1}}, 2, "announce.colour"),
    ({"preset": "classic", "missa_points": -1}, 2, "missa_points"),
    ({"preset": "belote"}, 2, "preset"),
    ({"preset": "classic"}, 5, "players"),
])
def test_impossible_combinations_are_refused_naming_the_option(request_, players, option):
    with pytest.raises(InvalidRules) as error:
        Game(rules_from_request(request_), players)
    assert error.value.option == option


# ----- dealing (§2) --------------------------------------------------------------------------
def test_cards_are_dealt_one_at_a_time_from_the_seat_after_the_dealer_then_the_table():
    deck = deck_for(3, 0, [[["1o", "2o", "3o"], ["1c", "2c", "3c"], ["1e", "2e", "3e"]]], ["5b", "7b", "11b", "12o"])
    game = Game(rules("classic"), 3, deck=deck, first_dealer=0)
    assert deck[:3] == ["1c", "1e", "1o"]  # seat 1 first, then 2, then the dealer 0
    assert [sorted(CARD_IDS[c] for c in h) for h in game.hands] == [
        ["1o", "2o", "3o"], ["1c", "2c", "3c"], ["1e", "2e", "3e"]]
    assert [CARD_IDS[c] for c in game.table] == ["5b", "7b", "11b", "12o"]
    assert game.turn == 1


@pytest.mark.parametrize("preset, players, sizes", [
    ("classic", 2, [3] * 6), ("classic", 3, [3] * 4), ("classic", 4, [3] * 3),
    ("traditional", 2, [4] * 5), ("traditional", 4, [4, 3, 3]),
])
def test_hand_sizes_per_deal(preset, players, sizes):
    assert list(rules(preset).hand_sizes(players)) == sizes
    first_table = 4 if rules(preset).deal == "table4" else 0
    assert first_table + sum(sizes) * players == 40


def test_hand4_starts_with_an_empty_table():
    assert new_game("traditional").table == []


def test_a_card_completing_a_pair_goes_back_to_the_middle_of_the_remaining_stock():
    deck = deck_for(2, 1, [[["2o", "3o", "4o"], ["2c", "3c", "4c"]]], ["1b", "1o", "6e", "10e", "12e"])
    game = Game(rules("classic"), 2, deck=deck, first_dealer=1)
    assert [CARD_IDS[c] for c in game.table] == ["1b", "6e", "10e", "12e"]
    # 1o went back at index 32 // 2 = 16 of the 32 cards left; three cards were drawn since.
    assert CARD_IDS[game.stock[13]] == "1o"


def test_four_consecutive_ranks_are_refused_on_the_table():
    deck = deck_for(2, 1, [[["2o", "3o", "4o"], ["2c", "3c", "4c"]]], ["7b", "10b", "11b", "12b", "1e"])
    game = Game(rules("classic"), 2, deck=deck, first_dealer=1)
    assert [CARD_IDS[c] for c in game.table] == ["7b", "10b", "11b", "1e"]


def test_without_table_restriction_the_table_is_dealt_as_it_comes():
    deck = deck_for(2, 1, [[["2o", "3o", "4o"], ["2c", "3c", "4c"]]], ["1b", "1o", "6e", "10e"])
    assert [CARD_IDS[c] for c in Game(rules("simple"), 2, deck=deck, first_dealer=1).table] == ["1b", "1o", "6e", "10e"]


def test_an_explicit_deck_whose_table_can_never_be_legal_is_refused():
    # After 4b 5b 6b, every 3, 4, 5, 6 and 7 is refused; sixteen of them fill the front half of the
    # stock, which the put-back only cycles: no legal fourth card ever comes (§10).
    refused = [f"{r}{s}" for r in (3, 4, 5, 6, 7) for s in "oceb" if f"{r}{s}" not in ("4b", "5b", "6b")]
    deck = deck_for(2, 1, [[["1o", "2o", "10o"], ["1c", "2c", "10c"]]], ["4b", "5b", "6b", *refused[:16]])
    with pytest.raises(InvalidSetup) as error:
        Game(rules("classic"), 2, deck=deck, first_dealer=1)
    assert error.value.field == "deck"
    assert len(Game(rules("simple"), 2, deck=deck, first_dealer=1).table) == 4


@pytest.mark.parametrize("deck", [["1o"] * 40, list(CARD_IDS[:39]), ["99z", *list(CARD_IDS[1:])], "1o 2o"])
def test_a_deck_must_name_the_40_cards_once(deck):
    with pytest.raises(InvalidSetup):
        Game(rules("classic"), 2, deck=deck)


def test_the_last_deal_is_flagged():
    game = new_game("traditional", players=4)
    assert next(e for e in game.events if e["type"] == "deal")["last_deal"] is False
    assert len(game.hand_sizes) == 3


def test_the_shuffle_is_the_documented_shake_256_fisher_yates():
    words = hashlib.shake_256(b"golden:round:0").digest(8 * 39)
    deck = list(range(40))
    for step, i in enumerate(range(39, 0, -1)):
        word = int.from_bytes(words[8 * step:8 * step + 8], "big")
        assert word < 2**64 - 2**64 % (i + 1)  # no rejection happens on this seed
        j = word % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    assert deck == shuffled_deck("golden", 0)


@pytest.mark.parametrize("batched", [True, False])
def test_the_shuffle_draws_what_the_seed_stream_draws_one_by_one(batched, monkeypatch):
    """§2: the deck is Fisher-Yates over the stream "round:<index>", however the draws are read
    (in one piece, or through the stream when a word might be rejected)."""
    if not batched:
        monkeypatch.setattr(randomness, "_unrejected", lambda words, bounds, largest_bound: None)
    for seed in map(str, range(300)):
        stream, deck = SeedStream(seed, "round:2"), list(range(40))
        for i in range(39, 0, -1):
            j = stream.below(i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        assert shuffled_deck(seed, 2) == deck


def test_a_rejected_word_is_skipped_by_batched_draws_as_by_single_ones():
    """§2 fairness: a word at or above the largest multiple of n is never used, however draws are batched."""
    bounds = (2**63 + 1, 5, 2**63 + 1, 3)  # a word is rejected for 2**63 + 1 about half the time
    for label in map(str, range(20)):
        one_by_one = SeedStream("s", label)
        assert SeedStream("s", label).below_each(bounds) == [one_by_one.below(n) for n in bounds]
    words = struct.unpack(">8Q", hashlib.shake_256(b"s:0").digest(64))
    expected = [w % bounds[0] for w in words if w < 2**63 + 1][:1]
    assert SeedStream("s", "0").below_each(bounds[:1]) == expected


def test_later_rounds_shuffle_from_the_seed():
    assert shuffled_deck("s", 1) != shuffled_deck("s", 0)
    assert sorted(shuffled_deck("s", 1)) == list(range(40))


def test_the_engine_and_bots_load_nothing_of_the_web_stack():
    """The engine is a library of its own: importing it (and the bots) loads no Flask, Redis or RQ."""
    probe = ("import sys, app.engine, app.bots; "
             "print(sorted(m for m in ('flask', 'flask_smorest', 'marshmallow', 'redis', 'rq') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    assert loaded == "[]"


# ----- text forms ------------------------------------------------------------------------
def test_cards_and_actions_round_trip_through_text():
    assert [card_id(parse_card(c)) for c in CARD_IDS] == list(CARD_IDS)
    for action in [*range(40), DECLARE, PASS]:
        assert parse_text(action_text(action)) == action_to_dict(action)
    assert parse_text("play 7o declare") == {"type": "play", "card": "7o", "declare": True}
    with pytest.raises(InvalidAction):
        parse_text("jump 7o")


# ----- determinism (golden) ------------------------------------------------------------------
def play_random_game(seed, preset="classic", players=2, chooser_seed=1):
    game = Game(PRESETS[preset], players, seed=seed)
    chooser = random.Random(chooser_seed)
    log = list(game.events)
    while game.winner is None:
        seat = game.awaiting()[0]
        log.extend(game.apply(seat, chooser.choice(game.legal_actions(seat))))
    return game, log


def test_same_seed_and_actions_give_the_same_game():
    first, log1 = play_random_game("same")
    second, log2 = play_random_game("same")
    assert log1 == log2 and first.scores == second.scores


def test_golden_game_on_a_fixed_seed():
    """Pins the dealing algorithm (SHAKE-256 stream, Fisher-Yates) and the rules on every machine."""
    assert commitment("golden", "salt") == hashlib.sha256(b"salt:golden").hexdigest()
    assert [CARD_IDS[c] for c in shuffled_deck("golden", 0)[:6]] == GOLDEN_FIRST_CARDS
    game, log = play_random_game("golden")
    digest = hashlib.sha256(json.dumps(log, sort_keys=True).encode()).hexdigest()
    assert (game.scores, game.winner, digest) == GOLDEN_RESULT


GOLDEN_FIRST_CARDS = ["6e", "3c", "12c", "5c", "11b", "10c"]
GOLDEN_RESULT = ([54, 37], 0, "167e3ae3f531f4208ff4ac8003880d7196b59d66b043f726df9ad7120d7d7ea6")
