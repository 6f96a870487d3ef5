"""A player's notices, and an app's webhook events, as unions discriminated by `type`: one schema per
kind, so typed clients narrow on it (as game events do, app/api/events.py).

A notice reaches a player on their stream and long poll (`PlayerNotice`, with its inbox `id`) and
their app's endpoints as a webhook (`WebhookPayload`: its `data` is the notice less the inbox id,
with the player's id). `document_notices` puts both unions in the spec, each webhook in the OpenAPI
`webhooks` section; docs/apps.md's catalog is written from that section (`ronda openapi --catalog`).
"""

from typing import ClassVar

from marshmallow import Schema, fields, post_dump, validate

from ..apps.webhooks import ENDPOINT_DISABLED, WEBHOOK_TEST
from ..games.moves import MISSED_TURNS_TO_FORFEIT
from .events import required
from .schemas import Answer, Outcome, SeatNamed


def _game(**kind_fields) -> dict:
    """A notice of a game: the game, its version when told, and the player's seat in it."""
    return {"game_id": required(fields.String, metadata={"description": "the game concerned"}),
            "version": required(fields.Integer, metadata={"description": "the game's version: your_turn's If-Match"}),
            "seat": required(fields.Integer, metadata={"description": "the player's seat in that game"}),
            **kind_fields}


DEADLINE = {"description": "when a fallback bot moves instead (seconds since the epoch), or null: no timer"}
MISSED = {"description": f"the seat's turn timers run out in a row (at {MISSED_TURNS_TO_FORFEIT} it forfeits)"}

# kind: (when it is sent, its fields besides `id`, `type` and `at`)
NOTICE_KINDS: dict[str, tuple[str, dict]] = {
    "your_turn": ("A version of a game awaits the player's move.", _game(
        deadline=required(fields.Float, allow_none=True, metadata=DEADLINE))),
    "turn_reminder": ("A long turn of the player's is mostly gone (correspondence play).", _game(
        deadline=required(fields.Float, allow_none=True, metadata=DEADLINE),
        seconds_left=required(fields.Float, metadata={"description": "how long the turn has left"}))),
    "turn_timeout": ("The player's turn ran out; `bot` played that move for their seat.", _game(
        bot=required(fields.String), missed=required(fields.Integer, metadata=MISSED))),
    "opponent_absent": ("Another seat's turn ran out: it forfeits at `forfeit_at` if it stays away.", _game(
        absent_seat=required(fields.Integer, metadata={"description": "the seat whose turn timer ran out"}),
        missed=required(fields.Integer, metadata=MISSED),
        forfeit_at=required(fields.Float, allow_none=True, metadata={
            "description": "when that seat forfeits if it stays away (seconds since the epoch)"}))),
    "seat_left": ("Another person left their seat to `bot`.", _game(
        left_seat=required(fields.Integer), bot=required(fields.String))),
    "seat_taken": ("Someone took an open seat of the player's game.", _game(
        taken_seat=required(fields.Integer), name=required(fields.String, metadata={"description": "who took it"}))),
    "game_over": ("A game of the player's ended.", _game(
        won=required(fields.Boolean, metadata={"description": "whether the player's side won"}),
        scores=required(fields.List, fields.Integer(), metadata={"description": "the final scores by camp"}),
        outcome=required(fields.Nested, Outcome, metadata={"description": "how it ended"}))),
    "matched": ("The player's ticket found its game.", {
        "ticket_id": required(fields.String), "game_id": required(fields.String),
        "seat": required(fields.Integer)}),
    "ticket_expired": ("The player's ticket ended unmatched.", {
        "ticket_id": required(fields.String),
        "why": required(fields.String, validate=validate.OneOf(("deadline", "absent")), metadata={
            "description": "its wait ended, or its player was gone (getTicket's `expired_because`)"})}),
    "rematch_offered": ("Someone of a finished game asks the player for a rematch: `game_id` is its game.", {
        "game_id": required(fields.String), "seat": required(fields.Integer),
        "previous_game_id": required(fields.String), "asked_by": required(fields.Nested, SeatNamed)}),
    "rematch_declined": ("A rematch was declined or taken back: `game_id` is called off.", {
        "game_id": required(fields.String), "seat": required(fields.Integer),
        "previous_game_id": required(fields.String), "declined_by": required(fields.Nested, SeatNamed)}),
    "tournament_round": ("A tournament paired the player: one game of their table.", {
        "tournament_id": required(fields.String),
        "round": required(fields.Integer, metadata={"description": "the round (from 0)"}),
        "game": required(fields.Integer, metadata={"description": "which game of the pairing (from 0)"}),
        "game_id": required(fields.String), "seat": required(fields.Integer),
        "opponent": required(fields.String, metadata={"description": "who the player meets"})}),
    "tournament_started": ("A tournament the player entered began.", {
        "tournament_id": required(fields.String),
        "entrants": required(fields.Integer, metadata={"description": "how many it began with"})}),
    "tournament_over": ("A tournament the player entered ended, or its owner cancelled it.", {
        "tournament_id": required(fields.String),
        "status": required(fields.String, validate=validate.OneOf(("finished", "cancelled"))),
        "rank": required(fields.Integer, allow_none=True, metadata={"description": "the player's place (null: "
                                                                                  "cancelled)"}),
        "points": required(fields.Float, metadata={"description": "the player's points"})}),
}

# The app's own events: sent to its endpoints, never to a player.
APP_EVENT_KINDS: dict[str, tuple[str, dict]] = {
    ENDPOINT_DISABLED: ("Another endpoint of the app kept failing and was disabled.", {
        "endpoint_id": required(fields.String), "url": required(fields.String)}),
    WEBHOOK_TEST: ("Sent by testWebhook to one endpoint.", {"endpoint_id": required(fields.String)}),
}


def _title(kind: str) -> str:
    return "".join(word.capitalize() for word in kind.split("_"))


def _kind_schema(name: str, kind: str, description: str, kind_fields: dict) -> type[Schema]:
    return type(name, (Answer,), {"__doc__": description, "Meta": type("Meta", (Answer.Meta,), {}),
                                  "type": required(fields.String, validate=validate.OneOf([kind])), **kind_fields})


AT = {"at": required(fields.Float, metadata={"description": "when, seconds since the epoch"})}
NOTICE_ID = {"id": required(fields.String, metadata={"description": "resume after it (`after`, Last-Event-ID)"})}
PLAYER_ID = {"player_id": required(fields.String, metadata={"description": "the player of your app it concerns"})}

NOTICE_SCHEMAS = {kind: _kind_schema(f"{_title(kind)}Notice", kind, description, {**NOTICE_ID, **AT, **kind_fields})
                  for kind, (description, kind_fields) in NOTICE_KINDS.items()}
WEBHOOK_DATA_SCHEMAS = {
    **{kind: _kind_schema(f"{_title(kind)}WebhookData", kind, description, {**PLAYER_ID, **AT, **kind_fields})
       for kind, (description, kind_fields) in NOTICE_KINDS.items()},
    **{kind: type(f"{_title(kind)}WebhookData", (Answer,), {"__doc__": description, **kind_fields})
       for kind, (description, kind_fields) in APP_EVENT_KINDS.items()}}
WEBHOOK_SCHEMAS = {kind: type(f"{_title(kind)}Webhook", (Answer,), {
    "__doc__": f"`{kind}`: {data.__doc__} The body each delivery posts (Standard Webhooks' shape).",
    "type": required(fields.String, validate=validate.OneOf([kind])),
    "timestamp": required(fields.String, metadata={"description": "when it happened (RFC 3339)"}),
    "data": required(fields.Nested, data)}) for kind, data in WEBHOOK_DATA_SCHEMAS.items()}


class _Union(Answer):
    """Dumps each item with the schema of its `type`; a type added later passes as it is."""
    KINDS: ClassVar[dict[str, type[Schema]]] = {}

    @post_dump(pass_original=True)
    def as_its_kind(self, _, item, **kwargs):
        kind = self.KINDS.get(item["type"])
        return kind().dump(item) if kind else item


class PlayerNotice(_Union):
    """Something in one of the player's games, or of their tickets: its `type` says which schema it
    follows. Ignore a type you do not know."""
    KINDS = NOTICE_SCHEMAS


class WebhookPayload(_Union):
    """What a delivery posts: its `type` says which schema it follows. Ignore a type you do not know."""
    KINDS = WEBHOOK_SCHEMAS


def _union(description: str, schemas: dict[str, type[Schema]]) -> dict:
    names = {kind: schema.__name__ for kind, schema in schemas.items()}
    return {"description": description,
            "oneOf": [{"$ref": f"#/components/schemas/{name}"} for name in names.values()],
            "discriminator": {"propertyName": "type",
                              "mapping": {kind: f"#/components/schemas/{name}" for kind, name in names.items()}}}


def document_notices(spec) -> None:
    """Each notice's and each webhook's schema; `PlayerNotice` and `WebhookPayload` as their unions;
    each webhook in the spec's `webhooks` section. Call before any route."""
    for union, schemas in ((PlayerNotice, NOTICE_SCHEMAS), (WebhookPayload, WEBHOOK_SCHEMAS)):
        for schema in schemas.values():
            spec.components.schema(schema.__name__, schema=schema)
        spec.components.schema(union.__name__, schema=union)  # the resolver now refers to it by that name
        spec.components.schemas[union.__name__] = _union(" ".join((union.__doc__ or "").split()), schemas)
    spec.options["webhooks"] = {kind: {"post": {
        "operationId": f"{_title(kind)[0].lower()}{_title(kind)[1:]}Webhook",
        "summary": description,
        "description": f"Posted to each endpoint of the app that takes `{kind}`, signed (Standard Webhooks).",
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{WEBHOOK_SCHEMAS[kind].__name__}"}}}},
        "security": [],  # the receiver verifies the webhook-signature header with the endpoint's secret
        "responses": {"2XX": {"description": "received: any 2xx whose head arrives within the deadline"},
                      "4XX": {"description": "not received: attempted again on the retry schedule (so is a "
                                             "5xx, or no answer in time)"}}}}
        for kind, (description, _) in {**NOTICE_KINDS, **APP_EVENT_KINDS}.items()}


CATALOG_START = ("<!-- The webhook catalog: written from openapi/openapi.json by "
                 "`ronda openapi --catalog docs/apps.md` -->")
CATALOG_END = "<!-- The end of the webhook catalog -->"


def catalog(spec: dict) -> str:
    """docs/apps.md's catalog of webhook events, from the spec's `webhooks` section: each event,
    when it is sent, and its `data` fields with their types."""
    schemas = spec["components"]["schemas"]

    def type_of(field: dict) -> str:
        if "$ref" in field:
            return field["$ref"].rsplit("/", 1)[-1]
        kinds = field.get("type", "object")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        named = [f"{type_of(field['items'])}[]" if kind == "array" else kind for kind in kinds]
        return " or ".join(named)

    rows = ["| event | sent when | `data` fields (all present; ignore ones you do not know) |", "|---|---|---|"]
    for kind, path in spec["webhooks"].items():
        operation = path["post"]
        payload = schemas[operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]]
        data = schemas[payload["properties"]["data"]["$ref"].rsplit("/", 1)[-1]]
        shown = ", ".join(f"`{name}` {type_of(field)}" for name, field in data["properties"].items() if name != "type")
        rows.append(f"| `{kind}` | {operation['summary']} | {shown} |")
    return "\n".join([CATALOG_START, "", *rows, "", CATALOG_END])


def with_catalog(text: str, spec: dict) -> str:
    """A document's text with its catalog block written again from `spec`."""
    before, _, rest = text.partition(CATALOG_START)
    _, _, after = rest.partition(CATALOG_END)
    return before + catalog(spec) + after
