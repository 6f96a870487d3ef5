"""What a seat (or a spectator, seat None) may know (docs/rules.md §9), for REST, events and bots alike."""

from collections.abc import Iterable

from .actions import action_to_dict
from .cards import RANKS, ids
from .declarations import Declaration
from .game import Game
from .phases import OVER


def observation(game: Game, seat: int | None = None) -> dict:
    g = game
    view = {
        "seat": seat,
        "players": g.players,
        "camps": list(g.camp_of),
        "round": g.round_index,
        "deal": g.deal_index,
        "deals_in_round": len(g.hand_sizes),
        "dealer": g.dealer,
        "last_deal": not g.stock,
        "phase": g.phase,
        "turn": g.turn,
        "awaiting": g.awaiting(),
        "table": ids(g.table),
        "pile": ids(g.pile),
        "stock_count": len(g.stock),
        "hand_counts": [len(h) for h in g.hands],
        "captured_counts": [len(c) for c in g.captured],
        "scores": list(g.scores),
        "declarations": [_declaration(g, d, seat) for d in g.declarations],
        "streak": _streak(g),
        "winner": g.winner,
        "hand": ids(g.hands[seat]) if seat is not None else None,
        "holding": _holding(g, seat),
        "legal_actions": [action_to_dict(a) for a in g.legal_actions(seat)] if seat is not None else [],
    }
    if g.phase == OVER:
        view["seed"] = g.seed
    return view


def _holding(g: Game, seat: int | None) -> dict | None:
    """What the seat's hand as dealt in this deal declares (its own knowledge): what `declare` would say."""
    held = g.holdings[seat] if seat is not None else None
    return {"kind": held[0], "rank": RANKS[held[1]]} if held else None


def _declaration(g: Game, d: Declaration, viewer: int | None) -> dict:
    shown = g.rules.announce.when == "in_turn_first_deal" or g.revealed or viewer == d.seat
    return {"seat": d.seat, "camp": g.camp_of[d.seat], "kind": d.kind, "rank": RANKS[d.rank] if shown else None}


def _streak(g: Game) -> dict:
    system = g.rules.streak
    if system == "darba":
        rank, length = g.prev_rank, g.streak
    elif system == "pile":
        rank, length = g.chain_rank, g.chain_len
    else:
        rank, length = g.caida_rank, g.caida_k
    return {"system": system, "rank": RANKS[rank] if rank >= 0 and length else None, "length": length}


def visible_event(event: dict, viewer: int | None) -> dict:
    """The event as `viewer` may see it: own hand only, declaration ranks only once shown."""
    kind = event["type"]
    if kind == "deal":
        visible = {k: v for k, v in event.items() if k != "hands"}
        visible["hand_counts"] = [len(h) for h in event["hands"]]
        visible["hand"] = event["hands"][viewer] if viewer is not None else None
        return visible
    if kind == "declaration" and not event["shown"] and viewer != event["seat"]:
        return {**event, "rank": None}
    return event


def seat_knowledge(game: Game, seat: int, history: Iterable[dict] = ()) -> dict:
    """The state as `seat` may know it (§9), in the serialised form: what bots reason from.

    Other hands and the stock are emptied (their sizes kept), the seed and other seats'
    holdings are removed, and a declaration's rank is None until it is shown. `history` is
    the deal's events so far (from its `deal` event, see `deal_events`), kept as `seat` sees them.
    """
    from .serialize import game_to_dict
    data = game_to_dict(game)
    shown = game.rules.announce.when == "in_turn_first_deal" or game.revealed
    data.update(
        seat=seat, seed=None, stock=[], stock_count=len(game.stock),
        hands=[hand if s == seat else [] for s, hand in enumerate(data["hands"])],
        hand_counts=[len(h) for h in game.hands],
        holdings=[held if s == seat else None for s, held in enumerate(data["holdings"])],
        declarations=[[s, kind, rank if shown or s == seat else None] for s, kind, rank in data["declarations"]],
        undeclared=[entry for entry in data["undeclared"] if entry[0] == seat],
        history=[visible_event(event, seat) for event in history],
    )
    return data


def deal_events(events: list[dict]) -> list[dict]:
    """The events from the last `deal` on: the public history of the deal being played."""
    starts = [i for i, event in enumerate(events) if event["type"] == "deal"]
    return events[starts[-1]:] if starts else events
