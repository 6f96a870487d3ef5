"""Rounds and deals: starting them, closing declarations, the end of a round (§6), winning (§7)."""

from collections.abc import Iterable, Sequence
from typing import NoReturn

from . import randomness
from .cards import ACE, KING, RANKS, ids
from .declarations import awards, certain_from_kinds, value
from .errors import InvalidSetup
from .phases import OVER, PLAYING, Won
from .seats import NEXT_SEAT
from .state import GameState
from .streaks import resolve_chain

NEUTRAL_SHARE = {2: 20, 3: 13, 4: 10}  # by number of camps
DEALER_LAST_CARD_POINTS = 5
REPLAY_ORDER = {"cards": 0, "declaration": 1, "play": 2}  # §7 round_end


class NoLegalTable(Exception):
    pass


def start_round(g: GameState, deck: list[int] | None = None) -> None:
    attempt = 0
    while True:
        label = g.round_index if attempt == 0 else f"{g.round_index}:{attempt}"
        _reset_round(g, randomness.shuffled_deck(g.seed, label) if deck is None else deck)
        try:
            g.deal()
            return
        except NoLegalTable:
            if deck is not None:
                raise InvalidSetup("deck", "its table can never satisfy table_restriction") from None
            attempt += 1  # astronomically rare with a shuffled deck; reshuffle deterministically


def _reset_round(g: GameState, deck: list[int]) -> None:
    g.stock = list(deck)
    g.hands = [[] for _ in range(g.players)]
    g.table, g.table_count, g.pile = [], [0] * 10, []
    g.captured = [[] for _ in range(g.camps)]
    g.deal_index = -1
    g.turn = None  # and the phase is the deal's
    g.prev_rank = g.dropped = g.last_capturer = -1
    g.last_play, g.last_card = None, False
    g.streak, g.streak_step = 0, None
    g.chain_len, g.chain_rank, g.chain_seat, g.chain_missa = 0, -1, -1, False
    g.caida_rank, g.caida_k = -1, 0
    g.undeclared = []
    g.live_win_check = g.rules.win == "immediate"
    g.round_start_scores = list(g.scores)
    g.round_log = [] if g.rules.win == "round_end" else None
    if g.events is not None:
        g.events.append({"type": "round_start", "round": g.round_index, "dealer": g.dealer})


def close_declaring(g: GameState) -> None:
    """Every seat has answered: play starts; `in_turn_first_deal` and certain `together` pots score now."""
    g.phase = PLAYING
    g.turn = NEXT_SEAT[g.players][g.dealer]
    when = g.rules.announce.when
    if when == "in_turn_first_deal" or (
            g.declarations and certain_from_kinds(g.declarations, g.rules.announce, g.camp_of, g.players)):
        resolve_declarations(g, reveal=False)


def resolve_declarations(g: GameState, reveal: bool) -> None:
    if not g.declarations_open:
        return
    g.declarations_open = False
    if reveal:
        g.revealed = True
        if g.events is not None:
            g.events.append({"type": "reveal", "declarations": [
                {"seat": d.seat, "camp": g.camp_of[d.seat], "kind": d.kind, "rank": RANKS[d.rank]}
                for d in g.declarations]})
    won = awards(g.declarations, g.rules.announce, g.camp_of, g.position, g.players)
    if g.events is not None:
        g.events.append({"type": "declarations_resolved", "awards": [
            {"camp": camp, "points": points} for camp, points in sorted(won.items())]})
    # §10: one deal's resolution is one scoring event, both shares of a split pot included.
    g.score_event([(camp, points, "declaration", {}) for camp, points in sorted(won.items()) if points],
                  "declaration")


def end_of_deal(g: GameState) -> None:
    if g.deal_index == 0 and g.rules.announce.undeclared_penalty:
        declared = {d.seat for d in g.declarations}
        g.undeclared = [(seat, holding) for seat, holding in enumerate(g.holdings)
                        if holding and seat not in declared]
    if not g.stock:
        end_of_round(g)
        return
    resolve_declarations(g, reveal=True)
    g.deal()


def end_of_round(g: GameState) -> None:
    """§6, in order, as one moment: nobody wins until all of it is scored."""
    g.live_win_check = False
    if g.chain_len:
        resolve_chain(g)
    resolve_declarations(g, reveal=True)
    _undeclared_penalties(g)
    _sweep_table(g)
    if g.rules.dealer_last_card:
        _dealer_last_card(g)
    _card_points(g)
    if g.events is not None:
        g.events.append({"type": "round_end", "round": g.round_index, "scores": list(g.scores),
                         "captured": [len(c) for c in g.captured]})
    winner = _replay_winner(g) if g.rules.win == "round_end" else leader_at_target(g.scores, g.rules.target)
    if winner is not None:
        finish(g, winner)
        return
    g.round_index += 1
    g.dealer = NEXT_SEAT[g.players][g.dealer]
    if g.deal_next_round:
        start_round(g)


def _undeclared_penalties(g: GameState) -> None:
    """§10: the round's penalties are one scoring event, after its declarations."""
    announce = g.rules.announce
    entries = [(camp, value(kind, announce), "undeclared_penalty", {"seat": seat, "kind": kind, "rank": RANKS[rank]})
               for seat, (kind, rank) in g.undeclared if value(kind, announce)
               for camp in range(g.camps) if camp != g.camp_of[seat]]
    g.score_event(entries, "declaration")
    g.undeclared = []


def _sweep_table(g: GameState) -> None:
    if g.table and g.last_capturer >= 0:
        camp = g.camp_of[g.last_capturer]
        if g.events is not None:
            g.events.append({"type": "table_swept", "seat": g.last_capturer, "camp": camp, "cards": ids(g.table)})
        g.captured[camp].extend(g.table)
        g.table, g.table_count = [], [0] * 10


def _dealer_last_card(g: GameState) -> None:
    assert g.last_play is not None  # the round's last card was played
    _, took, rank = g.last_play
    dealer_camp = g.camp_of[g.dealer]
    if took and rank == KING:
        g.score(dealer_camp, DEALER_LAST_CARD_POINTS, "dealer_last_card")
    elif not took or rank == ACE:
        g.score_event([(camp, DEALER_LAST_CARD_POINTS, "dealer_last_card", {})
                       for camp in range(g.camps) if camp != dealer_camp])


def _card_points(g: GameState) -> None:
    neutral = NEUTRAL_SHARE[g.camps]
    entries = [(camp, len(cards) - neutral, "card_points", {"card_count": len(cards)})
               for camp, cards in enumerate(g.captured) if len(cards) > neutral]
    g.score_event(entries, "cards")


def leader_at_target(scores: Sequence[int], target: int, camps: Iterable[int] | None = None) -> int | None:
    """The strict leader among the camps (all, or those named) at or above the target, if there is one."""
    best, top, tied = None, None, False
    for camp in range(len(scores)) if camps is None else camps:
        score = scores[camp]
        if score >= target:
            if top is None or score > top:
                best, top, tied = camp, score, False
            elif score == top:
                tied = True
    return None if tied else best


def _replay_winner(g: GameState) -> int | None:
    """round_end (§7, §10): only camps at or above the target at the round's end can win; with
    several, the round's scoring events are replayed (cards, declarations, play, each group in
    the order it happened) until one candidate leads the others at or above the target."""
    target = g.rules.target
    candidates = [camp for camp, score in enumerate(g.scores) if score >= target]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    scores = list(g.round_start_scores)
    assert g.round_log is not None  # kept for round_end
    for _, entries in sorted(g.round_log, key=lambda step: REPLAY_ORDER[step[0]]):  # sorted is stable
        for camp, points in entries:
            scores[camp] += points
        winner = leader_at_target(scores, target, candidates)
        if winner is not None:
            return winner
    return None


def check_winner(g: GameState) -> None:
    winner = leader_at_target(g.scores, g.rules.target)
    if winner is not None:
        finish(g, winner)


def end_off_the_table(g: GameState, winner: int | None, reason: str, seat: int | None) -> list[dict]:
    """The game ends for a reason RULES.md does not know (a seat's absence, judged by the service's
    turn timers): camp `winner` is awarded it, or nobody (None). `seat`: the seat whose absence
    ended it. Answers the events (its `game_over` carries `reason` and `seat`)."""
    g.winner, g.phase, g.turn = winner, OVER, None
    event = {"type": "game_over", "winner": winner, "scores": list(g.scores), "seed": g.seed,
             "reason": reason, "seat": seat}
    if g.events is not None:
        g.events = [event]
    return [event]


def finish(g: GameState, winner: int) -> NoReturn:
    g.winner, g.phase, g.turn = winner, OVER, None
    if g.events is not None:
        g.events.append({"type": "game_over", "winner": winner, "scores": list(g.scores), "seed": g.seed})
    raise Won()
