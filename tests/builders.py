"""Builders for rule tests: a game from hand-built deals, or a position from hands and table."""

from app.engine import (CARD_IDS, Game, game_from_dict, game_to_dict, parse_card, parse_text, perform,
                        rules_from_request)
from app.engine.declarations import combination


def rules(preset="classic", **options):
    return rules_from_request({"preset": preset, **options})


def deck_for(players, dealer, deals, table=()):
    """A deck whose dealing (§2: one card at a time from the seat after the dealer) gives `deals`.

    `deals` lists deals, each a list of hands by seat; `table` follows the first deal.
    The cards not named come after, in id order.
    """
    order = []
    for index, hands in enumerate(deals):
        for k in range(len(hands[0])):
            for j in range(players):
                order.append(hands[(dealer + 1 + j) % players][k])
        if index == 0:
            order.extend(table)
    assert len(set(order)) == len(order), "a card is named twice"
    return order + [c for c in CARD_IDS if c not in order]


def new_game(preset="classic", players=2, deals=(), table=(), dealer=None, seed="test", **options):
    """Seat 0 plays first unless `dealer` says otherwise."""
    dealer = players - 1 if dealer is None else dealer
    deck = deck_for(players, dealer, deals, table) if deals else None
    return Game(rules(preset, **options), players, seed=seed, deck=deck, first_dealer=dealer)


def make_position(preset="classic", players=2, hands=(), table=(), stock=(), captured=None,
                  dealer=None, scores=None, **options):
    """A position in the middle of a round: seat 0 to play; unnamed cards sit in the camps' piles."""
    game = new_game(preset, players, dealer=dealer, **options)
    data = game_to_dict(game)
    named = [c for hand in hands for c in hand] + list(table) + list(stock)
    if captured is None:
        rest = [c for c in CARD_IDS if c not in named]
        captured = [rest[camp::game.camps] for camp in range(game.camps)]
    assert sorted(named + [c for pile in captured for c in pile]) == sorted(CARD_IDS)
    data.update(hands=[list(h) for h in hands], table=list(table), stock=list(stock),
                captured=[list(p) for p in captured], phase="playing", turn=(data["dealer"] + 1) % players,
                answered=[False] * players, declarations=[], declarations_open=False,
                deal_index=len(game.hand_sizes) - 1 if not stock else 1)
    data["holdings"] = [_holding(game, h) for h in hands]
    if scores is not None:
        data["scores"] = data["round_start_scores"] = list(scores)
    return game_from_dict(data)


def _holding(game, hand):
    held = combination([parse_card(c) for c in hand], game.rules.announce, False)
    return list(held) if held else None


def play(game, *moves):
    """Apply moves for whoever must act: '7o', '7o declare', 'declare', 'pass', or 's2:pass'."""
    events = []
    for move in moves:
        seat, _, text = move.rpartition(":")
        seat = int(seat[1:]) if seat else game.awaiting()[0]
        action = parse_text(text if text.split()[0] in ("declare", "pass") else f"play {text}")
        events.extend(perform(game, seat, action))
    return events


def scores_of(events):
    return [(e["camp"], e["points"], e["reason"]) for e in events if e["type"] == "score"]


def of_type(events, kind):
    return [e for e in events if e["type"] == kind]


def finish_deal(game):
    """Play the first card of whoever must play until the deal changes (passing any declaration)."""
    events, deal, round_ = [], game.deal_index, game.round_index
    while game.winner is None and (game.deal_index, game.round_index) == (deal, round_):
        seat = game.awaiting()[0]
        legal = game.legal_actions(seat)
        events.extend(game.apply(seat, min(legal)))  # cards (0..39) before declare/pass
    return events


def finish_round(game):
    events, round_ = [], game.round_index
    while game.winner is None and game.round_index == round_:
        events.extend(finish_deal(game))
    return events
