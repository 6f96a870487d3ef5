"""Game events as a union discriminated by `type`: one schema per kind, so typed clients narrow.

`Event` dumps each event with the schema of its kind; the spec documents `Event` as the `oneOf`
of those schemas with a `discriminator` on `type` (`document_event_union`).
"""

from marshmallow import Schema, fields, post_dump, validate

from .schemas import DECLARATION_KINDS, Answer, Award, DeclarationInfo, GameView


def required(field_class, *args, **kwargs):
    """A field every event of the kind carries."""
    return field_class(*args, required=True, **kwargs)


# kind: (what it means, its fields besides `id` and `type`)
EVENT_KINDS = {
    "round_start": ("A round begins; `dealer` deals it.", {
        "round": required(fields.Integer), "dealer": required(fields.Integer)}),
    "deal": ("Cards are dealt: `hand` is the viewer's own (null for spectators), the rest is public.", {
        "round": required(fields.Integer), "deal": required(fields.Integer), "dealer": required(fields.Integer),
        "hand": required(fields.List, fields.String(), allow_none=True),
        "hand_counts": required(fields.List, fields.Integer()),
        "table": required(fields.List, fields.String()), "stock": required(fields.Integer),
        "last_deal": required(fields.Boolean)}),
    "play": ("A seat plays `card` from its hand.", {
        "seat": required(fields.Integer), "card": required(fields.String)}),
    "drop": ("The played card captures nothing and stays on the table.", {
        "card": required(fields.String)}),
    "capture": ("`card` takes `taken` from the table (`reason`: match or run).", {
        "seat": required(fields.Integer), "camp": required(fields.Integer), "card": required(fields.String),
        "taken": required(fields.List, fields.String()), "reason": required(fields.String)}),
    "pile_formed": ("The played card and its match start a pile (pile streaks).", {
        "seat": required(fields.Integer), "camp": required(fields.Integer),
        "cards": required(fields.List, fields.String())}),
    "pile_joined": ("A card of the pile's rank joins it; `step` names the chain's length.", {
        "seat": required(fields.Integer), "camp": required(fields.Integer), "card": required(fields.String),
        "step": required(fields.String)}),
    "pile_collected": ("The pile goes to the camp that ended its chain.", {
        "seat": required(fields.Integer), "camp": required(fields.Integer),
        "cards": required(fields.List, fields.String())}),
    "declaration": ("A seat declares; `rank` is null while hidden from this viewer.", {
        "seat": required(fields.Integer), "camp": required(fields.Integer),
        "kind": required(fields.String, validate=validate.OneOf(DECLARATION_KINDS)),
        "rank": required(fields.Integer, allow_none=True), "shown": required(fields.Boolean)}),
    "pass": ("A seat declines to declare.", {"seat": required(fields.Integer)}),
    "reveal": ("The deal's declarations are shown.", {
        "declarations": required(fields.List, fields.Nested(DeclarationInfo))}),
    "declarations_resolved": ("The deal's declaration pot is awarded.", {
        "awards": required(fields.List, fields.Nested(Award))}),
    "score": ("A camp scores (or loses, negative) `points` for `reason`.", {
        "camp": required(fields.Integer), "points": required(fields.Integer), "reason": required(fields.String),
        "seat": fields.Integer(), "kind": fields.String(), "rank": fields.Integer(allow_none=True),
        "card_count": fields.Integer()}),
    "table_swept": ("The last capturer takes what is left on the table at the round's end.", {
        "seat": required(fields.Integer), "camp": required(fields.Integer),
        "cards": required(fields.List, fields.String())}),
    "round_end": ("A round ends: scores and cards captured per camp.", {
        "round": required(fields.Integer), "scores": required(fields.List, fields.Integer()),
        "captured": required(fields.List, fields.Integer())}),
    "game_over": ("The game is won by camp `winner` (null: nobody, an aborted game); `seed` is revealed. "
                  "`reason` and `seat` when it ended off the table: `forfeit` or `aborted` by that seat's "
                  "absence, `resigned` (or `aborted`, before its first move) when that seat gave it up, "
                  "`declined` (a rematch that seat said no to), `abandoned` (every person left it), `cancelled` "
                  "(its tournament was called off; no seat).", {
        "winner": required(fields.Integer, allow_none=True), "scores": required(fields.List, fields.Integer()),
        "seed": required(fields.String),
        "reason": fields.String(validate=validate.OneOf(("forfeit", "aborted", "resigned", "declined", "abandoned",
                                                         "cancelled"))),
        "seat": fields.Integer(allow_none=True)}),
    "turn_timeout": ("A human's turn ran out; `bot` plays this move for the seat; `missed`: its timers run "
                     "out in a row.", {
        "seat": required(fields.Integer), "bot": required(fields.String), "missed": fields.Integer()}),
    "seat_left": ("A player left; `bot` plays the seat from now on.", {
        "seat": required(fields.Integer), "bot": required(fields.String)}),
    "seat_taken": ("A player took an open seat, under `name`.", {
        "seat": required(fields.Integer), "name": required(fields.String)}),
}


def schema_name(kind: str) -> str:
    return "".join(word.capitalize() for word in kind.split("_")) + "Event"


def _kind_schema(kind: str, description: str, kind_fields: dict) -> type[Schema]:
    return type(schema_name(kind), (Schema,), {
        "__doc__": description,
        "Meta": type("Meta", (), {"description": description}),
        "id": required(fields.Integer, metadata={"description": "the event's position in the game's log, from 1"}),
        "type": required(fields.String, validate=validate.OneOf([kind])),
        **kind_fields,
    })


KIND_SCHEMAS = {kind: _kind_schema(kind, *spec) for kind, spec in EVENT_KINDS.items()}


class Event(Schema):
    """One game event; its `type` says which schema of the union it follows."""

    @post_dump(pass_original=True)
    def as_its_kind(self, _, event, **kwargs):
        return KIND_SCHEMAS[event["type"]]().dump(event)


class ActionResult(Answer):
    game = fields.Nested(GameView, required=True)
    events = fields.List(fields.Nested(Event), required=True)


def document_event_union(spec) -> None:
    """Documents `Event` as the oneOf its kinds, discriminated by `type`; call before any route."""
    for kind, schema in KIND_SCHEMAS.items():
        spec.components.schema(schema_name(kind), schema=schema)
    spec.components.schema("Event", schema=Event)  # the resolver now refers to "Event" by that name
    spec.components.schemas["Event"] = {
        "description": Event.__doc__,
        "oneOf": [{"$ref": f"#/components/schemas/{schema_name(kind)}"} for kind in KIND_SCHEMAS],
        "discriminator": {"propertyName": "type",
                          "mapping": {kind: f"#/components/schemas/{schema_name(kind)}" for kind in KIND_SCHEMAS}},
    }
