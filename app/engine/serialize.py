"""The full state as a JSON-compatible dict for the store; loading it back never changes a game."""

from itertools import groupby

from .cards import CARD_IDS, ids, parse_card, parse_cards
from .declarations import Declaration
from .game import Game
from .rules import rules_from_dict
from .streaks import PLAYS

SCHEMA_VERSION = 1
_SCALARS = ("players", "seed", "dealer", "round_index", "deal_index", "winner", "phase", "turn",
            "answered", "declarations_open", "revealed", "prev_rank", "last_capturer", "last_card",
            "streak", "chain_len", "chain_rank", "chain_seat", "chain_missa", "caida_rank", "caida_k",
            "live_win_check")


def game_to_dict(g: Game) -> dict:
    data = {name: getattr(g, name) for name in _SCALARS}
    data.update(
        schema_version=SCHEMA_VERSION,
        rules=g.rules.to_dict(),
        scores=list(g.scores),
        round_start_scores=list(g.round_start_scores),
        stock=ids(g.stock), hands=[ids(h) for h in g.hands], table=ids(g.table), pile=ids(g.pile),
        captured=[ids(c) for c in g.captured],
        holdings=[list(h) if h else None for h in g.holdings],
        declarations=[[d.seat, d.kind, d.rank] for d in g.declarations],
        undeclared=[[seat, list(holding)] for seat, holding in g.undeclared],
        dropped=CARD_IDS[g.dropped] if g.dropped >= 0 else None,
        last_play=list(g.last_play) if g.last_play else None,
        streak_step=list(g.streak_step) if g.streak_step else None,
        round_log=[[group, [list(entry) for entry in entries]] for group, entries in g.round_log]
        if g.round_log is not None else None,
    )
    return data


def game_from_dict(data: dict, record_events: bool = True) -> Game:
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"unsupported schema_version {data.get('schema_version')!r}")
    g = object.__new__(Game)
    for name in _SCALARS:
        setattr(g, name, data[name])
    g.rules = rules_from_dict(data["rules"])
    g.camp_of = tuple(s % 2 if g.rules.teams and g.players == 4 else s for s in range(g.players))
    g.camps = max(g.camp_of) + 1
    g.hand_sizes = g.rules.hand_sizes(g.players)
    g._play_card = PLAYS[g.rules.streak]
    g.events = [] if record_events else None
    g.deal_next_round = True
    g.answered = list(g.answered)
    g.scores, g.round_start_scores = list(data["scores"]), list(data["round_start_scores"])
    g.stock, g.table, g.pile = parse_cards(data["stock"]), parse_cards(data["table"]), parse_cards(data["pile"])
    g.hands = [parse_cards(h) for h in data["hands"]]
    g.captured = [parse_cards(c) for c in data["captured"]]
    g.table_count = [0] * 10
    for card in g.table:
        g.table_count[card >> 2] += 1
    g.cards_in_hands = sum(len(h) for h in g.hands)
    g.holdings = [tuple(h) if h else None for h in data["holdings"]]
    g.declarations = [Declaration(*d) for d in data["declarations"]]
    g.undeclared = [(seat, tuple(holding)) for seat, holding in data["undeclared"]]
    g.dropped = parse_card(data["dropped"]) if data["dropped"] else -1
    g.last_play = tuple(data["last_play"]) if data["last_play"] else None
    g.streak_step = tuple(data["streak_step"]) if data["streak_step"] else None
    g.round_log = _round_log(data["round_log"]) if data["round_log"] is not None else None
    return g


def _round_log(stored: list) -> list[tuple[str, list[tuple[int, int]]]]:
    """The round's scoring events as (group, [(camp, points), ...]). Documents stored before
    events were grouped hold one row per score, (group, the event's first row index, camp,
    points): they are grouped here, so games in play across a deploy load unchanged."""
    if stored and len(stored[0]) == 4:
        return [(group, [(camp, points) for _, _, camp, points in rows])
                for (group, _), rows in groupby(stored, key=lambda row: row[:2])]
    return [(group, [tuple(entry) for entry in entries]) for group, entries in stored]
