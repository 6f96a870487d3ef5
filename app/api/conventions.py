"""What the spec says of the HTTP conventions every operation keeps, written once here rather than
on each view: the headers a client sends or reads where they apply, `security: []` on public
operations, the servers, and the Server-Sent Events each stream sends as named schemas."""

import json

from apispec import BasePlugin

from .idempotency import IDEMPOTENT_ENDPOINTS
from .notices import NOTICE_SCHEMAS
from .tenancy import OUTSIDE_APPS, SERVER_ONLY
from .schemas import PaginationMetadata

RATE_LIMITED_EXEMPT = {"getLiveness", "getReadiness"}
VERSIONED = {"createGame", "getGame", "getSeatView", "claimSeat", "leaveSeat", "playAction"}
SERVERS = [{"url": "http://localhost:8000", "description": "`ronda serve` on your machine; use your deployment's URL"}]

HEADERS = {
    "ETag": {"description": "the game's version, quoted: send it back as If-Match or If-None-Match",
             "schema": {"type": "string", "examples": ['"7"']}},
    "Location": {"description": "the created resource", "schema": {"type": "string", "format": "uri-reference"}},
    "Retry-After": {"description": "seconds to wait before trying again (at least 1)",
                    "schema": {"type": "integer", "minimum": 1}},
    "Idempotent-Replayed": {"description": "`true` when this is the stored answer to an earlier request with "
                                           "the same Idempotency-Key; `applied` when that answer was lost (the "
                                           "server stopped between the write and its record) and the request is "
                                           "found applied: the game as it is now, with the events it caused",
                            "schema": {"type": "string", "enum": ["true", "applied"]}},
    "X-Pagination": {"description": "where this page sits in the listing, as JSON text: total, total_pages, "
                                    "first_page, last_page, page, previous_page, next_page",
                     "schema": {"type": "string", "contentMediaType": "application/json",
                                "contentSchema": {"$ref": "#/components/schemas/PaginationMetadata"},
                                "examples": ['{"total": 42, "total_pages": 3, "first_page": 1, "last_page": 3, '
                                             '"page": 1, "next_page": 2}']}},
    "X-RateLimit-Limit": {"description": "requests a minute in the budget that applies (the token's, when one is "
                                         "sent; else the address's)", "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "requests left in this minute's window", "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "when the window resets, in seconds since the epoch",
                          "schema": {"type": "integer"}},
}
IDEMPOTENCY_KEY = {"in": "header", "name": "Idempotency-Key", "required": False,
                   "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                   "description": "any unique string: a retry with the same key (and body) gets the first answer, "
                                  "marked Idempotent-Replayed, and changes nothing (kept a day)"}

# Each stream's messages: (event name, the data's schema, what the id is).
STREAMS = {
    "GameStreamMessage": ("Server-Sent Events of a game", {
        "snapshot": ("GameView", "the viewer's view, first (id: the events so far)"),
        "event": ("Event", "each event as this viewer may see it (id: the event's id)"),
        "problem": ("Problem", "the store refused the stream (no such game, a token that holds none of its "
                               "seats); the stream ends: do not reconnect"),
    }),
    "BotStreamMessage": ("Server-Sent Events of a registered bot", {
        "turn": ("Turn", "a game version that awaits the bot (id: the notice's id)"),
        "game_over": ("GameOver", "a game the bot played ended"),
        "match_over": ("MatchOver", "a match the bot played ended"),
    }),
    "PlayerStreamMessage": ("Server-Sent Events of a player: each notice named by its type (Last-Event-ID "
                            "resumes after its id)", {
        kind: (schema.__name__, f"a {kind} notice (id: the notice's id)") for kind, schema in NOTICE_SCHEMAS.items()
    }),
    "TournamentStreamMessage": ("Server-Sent Events of a tournament (Last-Event-ID resumes after an id)", {
        "round": ("TournamentRoundEvent", "a round paired: its tables"),
        "standings": ("TournamentStandingsEvent", "after every change, whole: the last one is all a late reader "
                                                  "needs"),
    }),
}
STREAM_OF = {"streamGame": "GameStreamMessage", "streamTurns": "BotStreamMessage",
             "streamNotices": "PlayerStreamMessage", "streamTournament": "TournamentStreamMessage"}
# A message's schema is named after its event, prefixed in a stream whose event names another's too.
MESSAGE_PREFIX = {"PlayerStreamMessage": "Notice", "TournamentStreamMessage": "Tournament"}


def in_an_app(security: list[dict]) -> list[dict]:
    """An operation's security within an app: each way it is called (none: a public call) without
    an app key (the public app), with the app's client key, or with its server key."""
    keys: tuple[dict[str, list], ...] = ({}, {"appClientKey": []}, {"appServerKey": []})
    ways = [{**way, **key} for way in (security or [{}]) for key in keys]
    if any("playerToken" in way for way in security or ()):  # the app's server, acting for its player
        ways.append({"appServerKey": [], "onBehalfOf": []})
    return ways


def _ref(kind: str, name: str) -> dict:
    return {"$ref": f"#/components/{kind}/{name}"}


class HttpConventions(BasePlugin):
    def init_spec(self, spec):
        super().init_spec(spec)
        self.spec = spec
        spec.components.schema("PaginationMetadata", schema=PaginationMetadata)
        for name, header in HEADERS.items():
            spec.components.header(name, header)
        for union, (title, messages) in STREAMS.items():
            names = []
            for event, (data, meaning) in messages.items():
                name = MESSAGE_PREFIX.get(union, "") + "".join(part.title() for part in event.split("_")) + "Message"
                spec.components.schema(name, {
                    "type": "object", "description": f"`event: {event}`: {meaning}",
                    "required": ["event", "data"],
                    "properties": {"event": {"type": "string", "enum": [event]}, "id": {"type": "string"},
                                   "data": _ref("schemas", data)}})
                names.append(name)
            spec.components.schema(union, {
                "description": f"{title}, one of these messages each (its `event`, `id` and JSON `data` "
                               "fields); `: keep-alive` comments while idle. Ignore an event you do not know.",
                "oneOf": [_ref("schemas", name) for name in names],
                "discriminator": {"propertyName": "event",
                                  "mapping": {event: f"#/components/schemas/{name}"
                                              for event, name in zip(messages, names, strict=True)}}})

    def operation_helper(self, path=None, operations=None, rule=None, **kwargs):
        for method, operation in operations.items():
            name = operation.get("operationId")
            idempotent = method == "post" and rule is not None and rule.endpoint in IDEMPOTENT_ENDPOINTS
            operation.setdefault("security", [])  # public unless the view names a token
            blueprint = rule.endpoint.split(".", 1)[0] if rule is not None else ""
            if blueprint not in OUTSIDE_APPS + SERVER_ONLY:
                operation["security"] = in_an_app(operation["security"])
            if idempotent:
                operation.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
            for status, response in operation.get("responses", {}).items():
                if not isinstance(response, dict):
                    continue  # a reference to a shared response (the default error)
                code = int(status) if str(status).isdigit() else 0  # keys are ints or strings by then
                headers = response.setdefault("headers", {})
                if code in (429, 503):
                    headers["Retry-After"] = _ref("headers", "Retry-After")
                if 200 <= code < 300:
                    if name not in RATE_LIMITED_EXEMPT:
                        for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
                            headers[header] = _ref("headers", header)
                    if name in VERSIONED:
                        headers["ETag"] = _ref("headers", "ETag")
                    if code in (201, 202):
                        headers["Location"] = _ref("headers", "Location")
                    if idempotent:
                        headers["Idempotent-Replayed"] = _ref("headers", "Idempotent-Replayed")
                if not headers:
                    del response["headers"]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is not None:
                self._defaults_in_words(body)
            if name in STREAM_OF:
                stream = operation["responses"][200 if 200 in operation["responses"] else "200"]
                stream["content"] = {"text/event-stream": {"schema": _ref("schemas", STREAM_OF[name])}}

    def _defaults_in_words(self, schema):
        """A request body's defaults go in each field's description, not `default`: openapi-typescript,
        with its default options, types a property that has a `default` as required (its
        `--default-non-nullable`), so a client leaving out `rated` would not compile."""
        if isinstance(schema, dict) and "$ref" in schema:
            schema = self.spec.components.schemas.get(schema["$ref"].rsplit("/", 1)[-1])
        elif isinstance(schema, str):
            schema = self.spec.components.schemas.get(schema)
        for field in (schema or {}).get("properties", {}).values():
            if "default" in field:
                default = json.dumps(field.pop("default"))
                field["description"] = f"{field['description'].rstrip('.')}. " if "description" in field else ""
                field["description"] += f"Default: `{default}`."
            self._defaults_in_words(field)
            self._defaults_in_words(field.get("items"))
