"""What a game holds, and the changes of state every rule makes through.

`Game` (game.py) adds the legality, the reducer and the deals; the rule modules it calls on
(rounds.py, streaks.py) take a `GameState`, so that each is typed without importing the class
that imports it. The slots hold the values (the annotations add no class attribute).
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .cards import CARD_IDS, RANK_OF, ids
from .declarations import Declaration
from .rules import Rules

# A scoring event's entries (docs/rules.md §10): camp, points, reason, the event's details.
ScoreEntry = tuple[int, int, str, dict[str, Any]]


class GameState(ABC):
    __slots__ = (
        "rules", "players", "seed", "camp_of", "camps", "hand_sizes", "events", "dealer",
        "round_index", "deal_index", "scores", "winner", "phase", "turn", "stock", "hands",
        "cards_in_hands", "table", "table_count", "pile", "captured", "holdings", "declarations",
        "answered", "declarations_open", "revealed", "undeclared", "prev_rank", "dropped",
        "last_capturer", "last_play", "last_card", "streak", "streak_step", "chain_len",
        "chain_rank", "chain_seat", "chain_missa", "caida_rank", "caida_k", "live_win_check",
        "round_start_scores", "round_log", "deal_next_round", "_play_card")

    rules: Rules
    players: int
    seed: str
    camp_of: tuple[int, ...]
    camps: int
    hand_sizes: tuple[int, ...]
    events: list[dict] | None
    dealer: int
    round_index: int
    deal_index: int
    scores: list[int]
    winner: int | None
    phase: str
    turn: int | None
    stock: list[int]
    hands: list[list[int]]
    cards_in_hands: int
    table: list[int]
    table_count: list[int]
    pile: list[int]
    captured: list[list[int]]
    holdings: list[tuple[str, int] | None]  # what each hand as dealt declares: kind, rank
    declarations: list[Declaration]
    answered: list[bool]
    declarations_open: bool
    revealed: bool
    undeclared: list[tuple[int, tuple]]
    prev_rank: int  # -1: none yet, as for the other ranks and seats below
    dropped: int
    last_capturer: int
    last_play: tuple[int, bool, int] | None  # the dealer's last card: seat, took, rank
    last_card: bool
    streak: Any
    streak_step: tuple[int, int] | None  # camp, points
    chain_len: int
    chain_rank: int
    chain_seat: int
    chain_missa: bool
    caida_rank: int
    caida_k: int
    live_win_check: bool
    round_start_scores: list[int]
    round_log: list[tuple[str, list[tuple[int, int]]]] | None
    deal_next_round: bool
    _play_card: Callable[["GameState", int, int, int, int], bool]

    @abstractmethod
    def deal(self) -> None:
        """The next deal of the round (§2)."""

    @abstractmethod
    def score_event(self, entries: Iterable[ScoreEntry], group: str = "play") -> None:
        """The only place scores change (§10)."""

    def position(self, seat: int) -> int:
        return (seat - self.dealer - 1) % self.players

    # ----- the table and the piles ------------------------------------------------------
    def take_from_table(self, rank: int) -> Sequence[int]:
        """The cards of `rank` and, with capture_runs, the unbroken run above it (§3)."""
        count = self.table_count
        if not count[rank]:
            return ()
        top = rank + 1
        if self.rules.capture_runs:
            while top < 10 and count[top]:
                top += 1
        table, in_run = self.table, _IN_RUN[rank][top]
        if top == rank + 1 and count[rank] == 1:  # one card, no run: most captures
            for card in table:
                if in_run[card]:
                    table.remove(card)
                    count[rank] = 0
                    return [card]
        taken, kept = [], []
        for c in table:
            if in_run[c]:
                taken.append(c)
            else:
                kept.append(c)
        self.table = kept
        for r in range(rank, top):
            count[r] = 0
        return taken

    def capture(self, seat: int, card: int, taken: Sequence[int], reason: str | None = None) -> None:
        camp = self.camp_of[seat]
        pile = self.captured[camp]
        pile.append(card)
        pile.extend(taken)
        self.last_capturer = seat
        if self.events is not None:
            # A run goes up from the played rank, so the highest card taken tells a run from a match.
            reason = reason or ("run" if RANK_OF[max(taken)] != RANK_OF[card] else "match")
            self.events.append({"type": "capture", "seat": seat, "camp": camp, "card": CARD_IDS[card],
                                "taken": ids(taken), "reason": reason})

    def collect(self, seat: int, cards: list[int]) -> None:
        camp = self.camp_of[seat]
        self.captured[camp].extend(cards)
        self.last_capturer = seat
        if self.events is not None:
            self.events.append({"type": "pile_collected", "seat": seat, "camp": camp, "cards": ids(cards)})

    def missa_allowed(self) -> bool:
        return self.rules.missa_last_card or not self.last_card

    def score_missa(self, seat: int) -> None:
        """A capture left the table empty (§3): a missa, where the rules score one now."""
        if self.rules.missa_points and self.missa_allowed():
            self.score(self.camp_of[seat], self.rules.missa_points, "missa")

    # ----- scores ------------------------------------------------------------------------
    def score(self, camp: int, points: int, reason: str, **details: Any) -> None:
        """A scoring event of one entry."""
        self.score_event(((camp, points, reason, details),))


# _IN_RUN[low][high][card]: is the card of a rank from low up to, not including, high? (A lookup
# costs a third of the comparisons it replaces.)
_IN_RUN = tuple(tuple(tuple(low <= RANK_OF[card] < high for card in range(40)) for high in range(11))
                for low in range(10))
