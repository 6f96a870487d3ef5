"""Actions at the engine's edge: `{"type": "play", "card": "7o"}` and `"play 7o"` both round-trip."""

from .cards import CARD_IDS, RANKS, parse_card
from .errors import DeclarationNotHeld, InvalidAction
from .game import DECLARE, PASS, Game

ACTION_TYPES = ("play", "declare", "pass")


def action_to_dict(action: int) -> dict:
    if action == DECLARE:
        return {"type": "declare"}
    if action == PASS:
        return {"type": "pass"}
    return {"type": "play", "card": CARD_IDS[action]}


def action_text(action: int) -> str:
    data = action_to_dict(action)
    return f"play {data['card']}" if data["type"] == "play" else data["type"]


def parse_text(text: str) -> dict:
    """'play 7o', 'play 7o declare', 'declare', 'pass' → the action's dict form."""
    words = text.split() if isinstance(text, str) else []
    if words[:1] == ["play"] and len(words) in (2, 3) and words[2:] in ([], ["declare"]):
        return {"type": "play", "card": words[1], **({"declare": True} if len(words) == 3 else {})}
    if words in (["declare"], ["pass"]):
        return {"type": words[0]}
    raise InvalidAction(f"cannot read action {text!r}; say 'play 7o', 'play 7o declare', 'declare' or 'pass'")


def engine_steps(game: Game, seat: int, action: dict) -> list[int]:
    """The engine actions a public action stands for; `play` with `declare` is two."""
    kind = action.get("type") if isinstance(action, dict) else None
    if kind == "play":
        card = parse_card(action.get("card"))
        return [DECLARE, card] if action.get("declare") else [card]
    if kind == "declare":
        _check_named_declaration(game, seat, action)
        return [DECLARE]
    if kind == "pass":
        return [PASS]
    raise InvalidAction(f"unknown action type {kind!r}; types: {', '.join(ACTION_TYPES)}")


def _check_named_declaration(game: Game, seat: int, action: dict) -> None:
    """A client may name what it declares; it must be exactly what the dealt hand makes (§10)."""
    named_kind, named_rank = action.get("kind"), action.get("rank")
    if named_kind is None and named_rank is None:
        return
    holding = game.holdings[seat] if 0 <= seat < game.players else None
    if holding is None or (named_kind not in (None, holding[0])) or (
            named_rank is not None and named_rank != RANKS[holding[1]]):
        raise DeclarationNotHeld(f"seat {seat} does not hold a {named_kind or 'declaration'}"
                                 f"{'' if named_rank is None else f' of {named_rank}'} to declare")


def perform(game: Game, seat: int, action: dict) -> list[dict] | None:
    """Apply one public action atomically: every step is checked before any is applied."""
    steps = engine_steps(game, seat, action)
    if steps[0] not in game.legal_actions(seat):
        raise game.refusal(seat, steps[0])
    if len(steps) == 2 and steps[1] not in game.hands[seat]:
        raise game.refusal(seat, steps[1])
    events = []
    for step in steps:
        step_events = game.apply(seat, step)
        if step_events is not None:
            events.extend(step_events)
    return events if game.events is not None else None
