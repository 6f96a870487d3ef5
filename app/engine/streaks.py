"""The three same-rank streak systems of docs/rules.md §4, one function each.

Each takes the game, the seat, the card (already out of the hand), its rank and the card the
previous play dropped (-1 when it dropped nothing), resolves the play, and answers
whether the card took something (a capture, a self pick-up or a pile play): the
dealer's last-card bonus needs that. A card that took nothing is dropped on the table by
`Game.apply`, after all the system did: most plays are drops, and that saves a call each.
"""

from .cards import CARD_IDS, RANK_OF, ids
from .phases import Won
from .state import GameState, ScoreEntry

DARBA_STEPS = {2: (1, "darba"), 3: (5, "hbel"), 4: (10, "joj_hbal")}
PILE_STEPS = {2: (1, "bwahed"), 3: (5, "bkhemsa"), 4: (10, "b3echra")}
CAIDA_STEPS = {3: (5, "bkhamsa"), 4: (10, "bachra")}
CAIDA_POINTS = 1


def play_darba(g: GameState, seat: int, card: int, rank: int, dropped: int) -> bool:
    follows = rank == g.prev_rank
    if not follows and not g.table_count[rank]:  # most plays: no streak, nothing to take
        g.streak = 1
        return False
    streak = g.streak = g.streak + 1 if follows else 1
    taken = g.take_from_table(rank)
    # §4: a streak card with nothing to take is picked up by its player.
    g.capture(seat, card, taken, None if taken else "streak")
    if streak >= 2:
        _score_darba_step(g, seat, streak)
    if taken and not g.table:
        g.score_missa(seat)
    return True


def _score_darba_step(g: GameState, seat: int, streak: int) -> None:
    points, reason = DARBA_STEPS[streak]
    camp = g.camp_of[seat]
    previous = g.streak_step
    g.streak_step = (camp, points)
    if streak >= 3:
        assert previous is not None  # the step before it
        # §10: the step and the removal it causes are one scoring event
        g.score_event(((camp, points, reason, {}), (previous[0], -previous[1], "streak_removed", {})))
    else:
        g.score(camp, points, reason)


def play_pile(g: GameState, seat: int, card: int, rank: int, dropped: int) -> bool:
    if g.chain_len:
        if rank == g.chain_rank:
            _extend_chain(g, seat, card)
            return True
        try:
            resolve_chain(g)  # another rank ends the chain before this card is resolved
        except Won:
            g.table.append(card)  # the game ended first: the card stays face up, unresolved
            g.table_count[rank] += 1
            raise
    if dropped >= 0 and RANK_OF[dropped] == rank:
        _start_chain(g, seat, card, rank)
        return True
    if not g.table_count[rank]:  # most plays: nothing to take
        return False
    g.capture(seat, card, g.take_from_table(rank))
    if not g.table:
        g.score_missa(seat)
    return True


def _start_chain(g: GameState, seat: int, card: int, rank: int) -> None:
    """B'wahed: both cards and the run above them leave the table for the pending pile."""
    taken = g.take_from_table(rank)
    g.pile = [card, *taken]
    g.chain_len, g.chain_rank, g.chain_seat = 2, rank, seat
    g.chain_missa = not g.table and g.missa_allowed()
    if g.events is not None:
        g.events.append({"type": "pile_formed", "seat": seat, "camp": g.camp_of[seat], "cards": ids(g.pile)})


def _extend_chain(g: GameState, seat: int, card: int) -> None:
    g.pile.append(card)
    g.chain_len += 1
    g.chain_seat = seat
    if g.events is not None:
        g.events.append({"type": "pile_joined", "seat": seat, "camp": g.camp_of[seat], "card": CARD_IDS[card],
                         "step": PILE_STEPS[g.chain_len][1]})
    if g.chain_len == 4:
        resolve_chain(g)


def resolve_chain(g: GameState) -> None:
    """Only the chain's last player scores (1, 5 or 10, never added up) and collects the pile."""
    seat, cards, missa = g.chain_seat, g.pile, g.chain_missa
    points, reason = PILE_STEPS[g.chain_len]
    g.pile, g.chain_len, g.chain_rank, g.chain_seat, g.chain_missa = [], 0, -1, -1, False
    camp = g.camp_of[seat]
    g.collect(seat, cards)
    entries: list[ScoreEntry] = [(camp, points, reason, {})]
    if missa and g.rules.missa_points:  # §10: the chain's bonus and its missa are one scoring event
        entries.append((camp, g.rules.missa_points, "missa", {}))
    g.score_event(entries)


def play_caida(g: GameState, seat: int, card: int, rank: int, dropped: int) -> bool:
    if g.caida_k and rank == g.caida_rank:
        g.caida_k += 1
        g.capture(seat, card, (), "streak")
        points, reason = CAIDA_STEPS[g.caida_k]
        g.score(g.camp_of[seat], points, reason)
        return True
    if not g.table_count[rank]:  # most plays: nothing to take
        g.caida_k = 0
        return False
    g.caida_k = 1 + g.table_count[rank]  # the card and the cards of its rank it takes
    taken = g.take_from_table(rank)
    g.capture(seat, card, taken)
    g.caida_rank = rank
    if dropped >= 0 and dropped in taken:
        g.score(g.camp_of[seat], CAIDA_POINTS, "caida")
    if not g.table:
        g.score_missa(seat)
    return True


PLAYS = {"darba": play_darba, "pile": play_pile, "caida": play_caida}
