"""A game of Ronda: the whole state, the one source of legality, and the reducer.

The state is mutable on purpose: search bots play out hundreds of deals per move, so
`apply` changes the game in place and `clone` is cheap. Nothing here does I/O.
"""


from collections.abc import Callable, Iterable, Sequence

from . import randomness, rounds
from .cards import CARD_IDS, RANK_OF, RANKS, ids, parse_cards
from .declarations import Declaration, combination
from .errors import (CardNotInHand, DeclarationNotHeld, GameOver, IllegalAction, InvalidSetup,
                     NotYourTurn)
from .phases import DECLARING, OVER, PLAYING, Won
from .seats import NEXT_SEAT, PLAYING_ORDERS
from .rules import Rules
from .state import GameState, ScoreEntry
from .streaks import PLAYS
from .written_out import defined

DECLARE, PASS = 40, 41  # actions 0..39 play that card


class Game(GameState):
    __slots__ = ()

    def __init__(self, rules: Rules, players: int, seed: object = None, deck: Sequence[str] | None = None,
                 first_dealer: int | None = None, record_events: bool = True) -> None:
        rules.check_players(players)
        self.rules, self.players = rules, players
        self.seed = randomness.new_seed() if seed is None else str(seed)
        self.camp_of = tuple(s % 2 if rules.teams and players == 4 else s for s in range(players))
        self.camps = max(self.camp_of) + 1
        self.hand_sizes = rules.hand_sizes(players)
        self.events = [] if record_events else None
        if first_dealer is None:
            first_dealer = randomness.first_dealer(self.seed, players)
        elif first_dealer not in range(players):
            raise InvalidSetup("first_dealer", f"must be a seat from 0 to {players - 1}")
        self.dealer = first_dealer
        self.scores = [0] * self.camps
        self.winner = None
        self.round_index = 0
        self.deal_next_round = True
        self._play_card = PLAYS[rules.streak]
        rounds.start_round(self, _parse_deck(deck) if deck is not None else None)

    # ----- the one source of legality -------------------------------------------------
    def legal_actions(self, seat: int) -> list[int]:
        if self.phase == PLAYING:
            if seat != self.turn:  # on your turn of the play, any card in your hand may be played (§3)
                return []
            actions = self.hands[seat].copy()
            if (self.holdings[seat] and not self.answered[seat]
                    and self.rules.announce.when == "on_turn"):
                actions.append(DECLARE)
            return actions
        if self.phase == DECLARING and not self.answered[seat] and self.turn in (None, seat):
            return [DECLARE, PASS] if self.holdings[seat] else [PASS]
        return []

    def awaiting(self) -> list[int]:
        """Seats that may act now (several while `together` declarations are open)."""
        phase = self.phase
        if phase == PLAYING:
            return [self.turn]  # type: ignore[list-item]  # a seat while playing
        if phase == DECLARING and self.turn is None:
            return [s for s in range(self.players) if not self.answered[s]]
        return [] if phase == OVER else [self.turn]  # type: ignore[list-item]  # a seat declaring in turn

    def apply(self, seat: int, action: int) -> list[dict] | None:
        """Apply a legal action in place; answer the events it caused (None when not recording)."""
        # The common case (a card from the hand on one's turn) is judged without building the legal list.
        hand = self.hands[seat] if seat == self.turn and self.phase == PLAYING else ()
        playing = action in hand
        if not playing and action not in self.legal_actions(seat):
            raise self.refusal(seat, action)
        events = self.events
        if events is not None:
            events = self.events = []
        try:
            if not playing:
                self._answer(seat, declare=action == DECLARE)
                return self.events
            # Playing a card, here rather than in a method of its own: it is most of what search does.
            hand.remove(action)  # type: ignore[union-attr]  # a hand: the empty tuple never holds the action
            in_hands = self.cards_in_hands = self.cards_in_hands - 1
            self.answered[seat] = True
            if not in_hands and not self.stock:
                self.last_card = True
            if events is not None:
                events.append({"type": "play", "seat": seat, "card": CARD_IDS[action]})
            rank = RANK_OF[action]
            dropped, self.dropped = self.dropped, -1
            took = self._play_card(self, seat, action, rank, dropped)
            if not took:  # the card stays face up on the table
                self.table.append(action)
                self.table_count[rank] += 1
                self.dropped = action
                if events is not None:
                    events.append({"type": "drop", "card": CARD_IDS[action]})
            self.prev_rank = rank
            if in_hands:
                self.turn = NEXT_SEAT[self.players][seat]
                return events
            if self.last_card:  # the dealer's last card (§6) is the only play looked back at
                self.last_play = (seat, took, rank)
            rounds.end_of_deal(self)
        except Won:
            pass
        return self.events

    def refusal(self, seat: int, action: int) -> IllegalAction:
        """Why `action` is not among `legal_actions(seat)`."""
        if self.phase == OVER:
            return GameOver("the game is over")
        if seat not in self.awaiting():
            return NotYourTurn(f"seat {seat} cannot act now; waiting for seat(s) {self.awaiting()}")
        if action == DECLARE:
            return DeclarationNotHeld(f"seat {seat} has nothing to declare now")
        if 0 <= action < DECLARE and self.phase == PLAYING:
            return CardNotInHand(f"card {CARD_IDS[action]} is not in seat {seat}'s hand")
        return IllegalAction(f"that action is not possible now (phase: {self.phase})")

    # ----- dealing ---------------------------------------------------------------------
    def deal(self) -> None:
        index = self.deal_index = self.deal_index + 1
        n, stock, first = self.players, self.stock, index == 0
        count = self.cards_in_hands = self.hand_sizes[index] * n
        dealt = stock[:count]  # one card at a time from the front, from the seat after the dealer
        del stock[:count]
        hands, announce, order = self.hands, self.rules.announce, PLAYING_ORDERS[n][self.dealer]
        holdings = self.holdings = [None] * n
        for i, seat in enumerate(order):
            hand = hands[seat]
            hand += dealt[i::n]
            hand.sort()
            holdings[seat] = combination(hand, announce, first)
        if first and self.rules.deal == "table4":
            self._lay_table()
        self.declarations, self.answered = [], [False] * n
        self.declarations_open = self.revealed = False
        self.turn = order[0]
        if self.events is not None:
            self.events.append({"type": "deal", "round": self.round_index, "deal": index,
                                "dealer": self.dealer, "hands": list(map(ids, hands)),
                                "table": ids(self.table), "stock": len(stock), "last_deal": not stock})
        when = announce.when
        if when == "on_turn":
            self.phase = PLAYING
        elif when == "automatic":
            self.phase = PLAYING
            for seat in order:
                if holdings[seat]:
                    self._declare(seat)
        elif when == "together":
            self.phase, self.turn = DECLARING, None
        else:  # in_turn_first_deal
            self.phase = DECLARING if first else PLAYING

    def _lay_table(self) -> None:
        """table_restriction (§2): a card that completes a forbidden pattern goes back mid-stock."""
        stock, table, count, restricted = self.stock, self.table, self.table_count, self.rules.table_restriction
        rejected = 0
        while len(table) < 4:
            card = stock.pop(0)
            rank = RANK_OF[card]
            # Forbidden: a second card of a rank, or the fourth of four ranks in a row.
            if restricted and (count[rank] or (len(table) == 3 and _four_in_a_row(table, rank))):
                stock.insert(len(stock) // 2, card)
                rejected += 1
                if rejected > len(stock):  # the front half cycled through: no legal table exists
                    raise rounds.NoLegalTable()
            else:
                table.append(card)
                count[rank] += 1
                rejected = 0

    # ----- declarations ----------------------------------------------------------------
    def _declare(self, seat: int) -> None:
        held = self.holdings[seat]
        assert held is not None  # declare is legal only with a holding
        kind, rank = held
        self.declarations.append(Declaration(seat, kind, rank))
        self.answered[seat] = True
        self.declarations_open = True
        if self.events is not None:
            self.events.append({"type": "declaration", "seat": seat, "camp": self.camp_of[seat],
                                "kind": kind, "rank": RANKS[rank],
                                "shown": self.rules.announce.when == "in_turn_first_deal"})

    def _answer(self, seat: int, declare: bool) -> None:
        if declare:
            self._declare(seat)
        else:
            self.answered[seat] = True
            if self.events is not None:
                self.events.append({"type": "pass", "seat": seat})
        if self.phase != DECLARING:
            return  # on_turn: the declaration is made before the card; the turn stays
        if all(self.answered):
            rounds.close_declaring(self)
        elif self.turn is not None:
            self.turn = NEXT_SEAT[self.players][seat]

    # ----- scores ------------------------------------------------------------------------
    def score_event(self, entries: Iterable[ScoreEntry], group: str = "play") -> None:
        """The only place scores change (a camp's score is the sum of its score events): one
        scoring event of §10, its entries (camp, points, reason, details) applied whole before
        the target is checked. `group` places it in a round_end replay (§7)."""
        if not entries:
            return
        scores, events = self.scores, self.events
        for camp, points, reason, details in entries:
            scores[camp] += points
            if events is not None:
                events.append({"type": "score", "camp": camp, "points": points, "reason": reason, **details})
        if self.round_log is not None:
            self.round_log.append((group, [(camp, points) for camp, points, _, _ in entries]))
        # Only a camp at the target after a gain, or a loss that may break a tie above it, can win now.
        if self.live_win_check:
            target = self.rules.target
            for camp, points, _, _ in entries:
                if points < 0 or scores[camp] >= target:
                    rounds.check_winner(self)
                    break

    # ----- copies ------------------------------------------------------------------------
    def clone(self, record_events: bool = False, deal_next_round: bool = True) -> "Game":
        """A copy to search in; a search that only looks to the end of the round can skip the next deal."""
        other = object.__new__(Game)
        _copy_state(self, other)
        other.round_log = None if self.round_log is None else self.round_log.copy()
        other.events = [] if record_events else None
        other.deal_next_round = deal_next_round
        return other


def _state_copier(slots: Sequence[str], lists: Sequence[str], lists_of_lists: Sequence[str]) -> Callable:
    """One function that copies the state slot by slot, written out once (`written_out`):
    cloning is most of a search bot's time, and a getattr/setattr loop over the slots took
    three times as long. Lists changed in place are copied (lists of lists one level deeper);
    every other slot holds a value that is only ever replaced."""
    def copy_of(name: str) -> str:
        if name in lists_of_lists:
            return f"list(map(list.copy, game.{name}))"
        return f"game.{name}.copy()" if name in lists else f"game.{name}"
    assignments = "".join(f"\n    other.{name} = {copy_of(name)}" for name in slots)
    return defined(f"def copy_state(game, other):{assignments}", "copy_state")


_copy_state = _state_copier(
    # clone sets round_log, events and deal_next_round itself
    [name for name in GameState.__slots__ if name not in ("round_log", "events", "deal_next_round")],
    lists=("scores", "stock", "table", "table_count", "pile", "answered", "declarations", "holdings"),
    lists_of_lists=("hands", "captured"))


def _four_in_a_row(table: list[int], rank: int) -> bool:
    """Three table cards of distinct ranks and `rank` make four ranks in a row."""
    ranks = [RANK_OF[c] for c in table]
    return max(*ranks, rank) - min(*ranks, rank) == 3


def _parse_deck(deck: object) -> list[int]:
    if not isinstance(deck, (list, tuple)) or len(deck) != 40:
        raise InvalidSetup("deck", "must list all 40 card ids")
    try:
        cards = parse_cards(deck)
    except Exception as error:
        raise InvalidSetup("deck", str(error)) from None
    if len(set(cards)) != 40:
        raise InvalidSetup("deck", "every card must appear exactly once")
    return cards
