"""Request and response schemas: the OpenAPI spec, and so the generated SDKs, come from these."""

import re
import unicodedata

from flask_smorest.pagination import PaginationMetadataSchema
from marshmallow import INCLUDE, Schema, ValidationError, fields, pre_load, validate

from ..accounts.ratings import PROVISIONAL_DEVIATION
from ..bots import LEVELS
from ..engine.rules import DEAL, SCORING, STREAK, TIE, WHEN, WIN
from ..games.moves import MISSED_TURNS_TO_FORFEIT

ACTION_TYPES = ("play", "declare", "pass")
DECLARATION_KINDS = ("ronda", "double_ronda", "tringa")
MAX_COUNTER = 2**31 - 1  # versions and event ids stay far below; Redis indexes are 64-bit
MAX_TARGET = 1000  # the largest preset target (docs/rules.md §8) is 81; a game to 1,000 still ends
MAX_POINTS = 100  # any one option's points
NAME = validate.Length(max=40)
MAX_PERSON_NAME = 40
# Joiners inside emoji sequences and Persian/Arabic words; never a name on their own.
_JOINERS = {"\u200c", "\u200d"}


class Answer(Schema):
    """A response body. Open to fields added later (`additionalProperties: true` in the spec): within
    a major version the API only grows, so a generated client must accept a field it does not know.
    Request bodies stay closed (an unknown field is a 422), so a typo never passes silently."""

    class Meta:
        unknown = INCLUDE


class Integer(fields.Integer):
    """An integer in the JSON body, never coerced: "2", 2.5 and true are refused."""

    def __init__(self, **kwargs):
        super().__init__(strict=True, **kwargs)


class Boolean(fields.Boolean):
    """true or false, never coerced: "yes", 1 and "true" are refused."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


# Characters that render as nothing or break a line: controls and formats, line and paragraph
# separators, private use, unassigned code points (noncharacters too); and the fillers, letters of
# their scripts that draw a blank (Hangul fillers, the blank Braille pattern).
_UNSEEN = ("Cc", "Cf", "Zl", "Zp", "Co", "Cn")
_FILLERS = frozenset("\u3164\u2800\u115f\u1160\uffa0")


class PersonName(fields.String):
    """A name a person types (a player, a seat, a bot, an app): NFC-normalised, 1 to 40 characters,
    no control, format (bidi overrides, zero-width spaces), line-breaking, private-use, unassigned,
    filler or unpaired surrogate characters, and something visible in it. Arabic, accents and
    emoji (joiners included) are names like any other."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).setdefault(
            "description", f"1 to {MAX_PERSON_NAME} characters, NFC, no control or format characters, not blank")
        super().__init__(validate=validate.Length(min=1, max=MAX_PERSON_NAME), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if any(unicodedata.category(c) == "Cs" for c in text):
            raise ValidationError("a name may not hold an unpaired surrogate")
        text = unicodedata.normalize("NFC", text)
        unwanted = sorted({f"U+{ord(c):04X}" for c in text
                           if (unicodedata.category(c) in _UNSEEN and c not in _JOINERS) or c in _FILLERS})
        if unwanted:
            raise ValidationError("a name may not hold control, format, line-breaking, private-use, unassigned or "
                                  f"filler characters ({', '.join(unwanted)})")
        if all(c.isspace() or c in _JOINERS for c in text):
            raise ValidationError("a name needs a visible character")
        return text


CARD_ID = validate.Regexp(r"^(1|2|3|4|5|6|7|10|11|12)[oceb]$", error="not a card id such as '7o' or '12b'")


class AnnounceOptions(Schema):
    when = fields.String(validate=validate.OneOf(WHEN))
    scoring = fields.String(validate=validate.OneOf(SCORING))
    tie = fields.String(validate=validate.OneOf(TIE))
    double_ronda = Boolean()
    all_four_lowest = Boolean()
    undeclared_penalty = Boolean()
    ronda_points = Integer(validate=validate.Range(min=0, max=MAX_POINTS))
    tringa_points = Integer(validate=validate.Range(min=0, max=MAX_POINTS))


class RuleOptions(Schema):
    """A preset and the options that override it (the rules page, `/static/rules.md`, explains each)."""
    preset = fields.String(validate=NAME, metadata={"example": "classic"})
    teams = Boolean()
    deal = fields.String(validate=validate.OneOf(DEAL))
    table_restriction = Boolean()
    capture_runs = Boolean()
    streak = fields.String(validate=validate.OneOf(STREAK))
    missa_points = Integer(validate=validate.Range(min=0, max=MAX_POINTS))
    missa_last_card = Boolean()
    announce = fields.Nested(AnnounceOptions)
    dealer_last_card = Boolean()
    target = Integer(validate=validate.Range(min=1, max=MAX_TARGET))
    win = fields.String(validate=validate.OneOf(WIN))


class AnnounceRules(Answer):
    """How a game's declarations work (ronda and tringa), every option set."""
    when = fields.String(required=True, validate=validate.OneOf(WHEN))
    scoring = fields.String(required=True, validate=validate.OneOf(SCORING))
    tie = fields.String(required=True, validate=validate.OneOf(TIE))
    double_ronda = fields.Boolean(required=True)
    all_four_lowest = fields.Boolean(required=True)
    undeclared_penalty = fields.Boolean(required=True)
    ronda_points = fields.Integer(required=True)
    tringa_points = fields.Integer(required=True)


class Rules(Answer):
    """A game's complete rules: its preset and every option."""
    preset = fields.String(required=True)
    teams = fields.Boolean(required=True)
    deal = fields.String(required=True, validate=validate.OneOf(DEAL))
    table_restriction = fields.Boolean(required=True)
    capture_runs = fields.Boolean(required=True)
    streak = fields.String(required=True, validate=validate.OneOf(STREAK))
    missa_points = fields.Integer(required=True)
    missa_last_card = fields.Boolean(required=True)
    announce = fields.Nested(AnnounceRules, required=True)
    dealer_last_card = fields.Boolean(required=True)
    target = fields.Integer(required=True)
    win = fields.String(required=True, validate=validate.OneOf(WIN))


class SeatRequest(Schema):
    type = fields.String(required=True, validate=validate.OneOf(("human", "bot", "open")))
    name = PersonName(metadata={"example": "Amina"})
    bot = fields.String(validate=NAME, metadata={"description": "bot kind, for type bot", "example": "greedy"})
    level = Integer(validate=validate.Range(min=1, max=len(LEVELS)), metadata={
        "description": f"for type bot, instead of `bot`: 1 (weakest) to {len(LEVELS)}, see listLevels"})
    mine = Boolean(metadata={"description": "for type human: the seat of the player whose token is sent "
                                            "(`Authorization: Bearer <player token>`); it belongs to that player"})


class CreateGameRequest(Schema):
    @pre_load
    def seed_as_text(self, data, **kwargs):
        """A number is accepted as a seed and kept as its text."""
        if isinstance(data, dict) and isinstance(data.get("seed"), int) and not isinstance(data["seed"], bool):
            data = {**data, "seed": str(data["seed"])}
        return data

    players = Integer(required=True, validate=validate.Range(min=2, max=4), metadata={"example": 2})
    rules = fields.Nested(RuleOptions, metadata={"example": {"preset": "classic"}})
    seats = fields.List(fields.Nested(SeatRequest), validate=validate.Length(min=2, max=4),
                        metadata={"example": [{"type": "human", "name": "Amina"}, {"type": "open"}]})
    seed = fields.String(validate=validate.Length(min=1, max=128))
    deck = fields.List(fields.String(validate=CARD_ID), validate=validate.Length(equal=40), metadata={
        "uniqueItems": True,
        "description": "the first round's deck, front first: each of the 40 cards once. Still 422 "
                       "`invalid_setup` when the rules cannot deal it: with `table_restriction`, a deck "
                       "whose table can never be dealt as the rule asks (docs/rules.md)"})
    first_dealer = Integer(validate=validate.Range(min=0, max=3), metadata={
        "description": "the first dealer's seat: below `players` (else 422 `invalid_setup`); without it, "
                       "it follows from the seed"})
    turn_timeout_seconds = Integer(allow_none=True, validate=validate.Range(min=1, max=14 * 86400), metadata={
        "description": "when a human's turn lasts longer, a fallback bot plays for that seat: up to 14 days "
                       "(correspondence play; a `turn_reminder` notice comes first on long turns, and the game "
                       "is kept as long as its turns last). Every game between people ends: without it, a rated "
                       "game gets the deployment's rated timer (RONDA_RATED_TURN_SECONDS, 60 s) and a game with "
                       "two people or more (human and open seats) a day (RONDA_PEOPLE_TURN_SECONDS); `null` "
                       "opts an unrated game out (a rated one: 422)"})
    rated = Boolean(load_default=False, metadata={
        "description": "counted on the leaderboard of its pool (the preset and the player count): a preset's "
                       "rules unchanged, no seed or deck of the creator's, and every human seat a player's "
                       "(yours marked `mine`, the open ones claimed with player tokens)"})


class LeaveSeatRequest(Schema):
    bot = fields.String(load_default="greedy", validate=NAME,
                        metadata={"description": "the bot that takes the seat over"})


class ClaimSeatRequest(Schema):
    name = PersonName(metadata={"example": "Youssef"})


class ActionRequest(Schema):
    type = fields.String(required=True, validate=validate.OneOf(ACTION_TYPES), metadata={"example": "play"})
    card = fields.String(validate=CARD_ID, metadata={"example": "7o"})
    declare = Boolean(metadata={"description": "with play, on_turn timing: declare before the card"})
    kind = fields.String(validate=validate.OneOf(DECLARATION_KINDS),
                         metadata={"description": "with declare: optional, must be what the hand holds"})
    rank = Integer(validate=validate.Range(min=1, max=12),
                   metadata={"description": "with declare: optional, must be what the hand holds"})


class Action(Answer):
    type = fields.String(required=True, validate=validate.OneOf(ACTION_TYPES))
    card = fields.String()


class Holding(Answer):
    kind = fields.String(required=True, validate=validate.OneOf(DECLARATION_KINDS))
    rank = fields.Integer(required=True)


class DeclarationInfo(Answer):
    seat = fields.Integer(required=True)
    camp = fields.Integer(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(DECLARATION_KINDS))
    rank = fields.Integer(allow_none=True, metadata={"description": "null while hidden from this viewer"})


class StreakState(Answer):
    system = fields.String(required=True, validate=validate.OneOf(STREAK))
    rank = fields.Integer(allow_none=True)
    length = fields.Integer(required=True)


class SeatInfo(Answer):
    seat = fields.Integer(required=True)
    type = fields.String(required=True, validate=validate.OneOf(("human", "bot", "open")))
    name = fields.String(allow_none=True)
    bot = fields.String(allow_none=True, metadata={
        "description": "the built-in bot kind of a bot seat; bot:<id> on a human-type seat played by a "
                       "registered bot over HTTP"})
    player = fields.String(allow_none=True, metadata={"description": "the player the seat belongs to (getPlayer)"})
    kept_for = fields.String(allow_none=True, metadata={
        "description": "an open seat of a rematch, kept for this player until they take it or decline"})
    missed_turns = fields.Integer(required=True, metadata={
        "description": f"the seat's turn timers run out in a row: at {MISSED_TURNS_TO_FORFEIT} a person forfeits "
                       "(docs/players.md)"})


class Outcome(Answer):
    reason = fields.String(required=True, validate=validate.OneOf(
        ("target", "forfeit", "aborted", "resigned", "declined", "abandoned", "cancelled")), metadata={
        "description": f"`target`: won at the table; `forfeit`: `seat` missed {MISSED_TURNS_TO_FORFEIT} turns "
                       "in a row; `aborted`: `seat`'s timer ran out, or it resigned, before its first move (nobody "
                       "wins, nothing is rated); `resigned`: `seat` gave the game up (resignGame); `declined`: a "
                       "rematch `seat` said no to before it began; `abandoned`: every person left it (nobody wins, "
                       "nothing is rated); `cancelled`: its tournament was called off (nobody wins, nothing is "
                       "rated; no seat)"})
    seat = fields.Integer(allow_none=True, required=True, metadata={"description": "the absent or resigning seat"})


class GameSummary(Answer):
    id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("open", "active", "finished")))
    version = fields.Integer(required=True)
    players = fields.Integer(required=True)
    preset = fields.String(required=True)
    rated = fields.Boolean(required=True, metadata={"description": "counted on its pool's leaderboard"})
    seats = fields.List(fields.Nested(SeatInfo), required=True)
    scores = fields.List(fields.Integer(), required=True)
    winner = fields.Integer(allow_none=True, required=True)
    dealing = fields.String(required=True, validate=validate.OneOf(("server", "creator_seed", "creator_deck")),
                            metadata={"description": "who chose the deal: the server's random seed, or the "
                                                     "creator's own seed or deck (which a creator could stack)"})
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)
    outcome = fields.Nested(Outcome, allow_none=True, required=True, metadata={
        "description": "how the game ended (null until it is finished)"})
    rematch_of = fields.String(allow_none=True, required=True, metadata={
        "description": "the finished game this one is the rematch of"})


class GameView(GameSummary):
    """A game as one viewer may see it: a seat (own hand) or a spectator (seat null, hand null)."""
    seat = fields.Integer(allow_none=True, required=True)
    rules = fields.Nested(Rules, required=True)
    seed_commitment = fields.String(required=True, metadata={
        "description": "SHA-256 (hex) of \"<seed_salt>:<seed>\", fixed when the game is created"})
    seed = fields.String(allow_none=True, metadata={"description": "revealed at game over"})
    seed_salt = fields.String(allow_none=True, metadata={
        "description": "the server's secret salt in the commitment, revealed with the seed"})
    event_count = fields.Integer(required=True)
    deal_event_id = fields.Integer(required=True, metadata={
        "description": "the id of the current deal's first event: a table reads the log from there (listEvents "
                       "`after` = this - 1), so opening a game costs the same at any length"})
    turn_timeout_seconds = fields.Integer(allow_none=True)
    move_due_at = fields.Float(allow_none=True, required=True, metadata={
        "description": "when the awaited person's turn timer runs out and a fallback bot moves (seconds since "
                       "the epoch): a table's turn clock; null when no timer runs"})
    camps = fields.List(fields.Integer(), required=True)
    round = fields.Integer(required=True)
    deal = fields.Integer(required=True)
    deals_in_round = fields.Integer(required=True)
    dealer = fields.Integer(required=True)
    last_deal = fields.Boolean(required=True)
    phase = fields.String(required=True, validate=validate.OneOf(("declaring", "playing", "over")))
    turn = fields.Integer(allow_none=True, required=True)
    awaiting = fields.List(fields.Integer(), required=True)
    hand = fields.List(fields.String(), allow_none=True, required=True)
    holding = fields.Nested(Holding, allow_none=True, required=True, metadata={
        "description": "what this seat's hand, as dealt in this deal, declares (null for none and for spectators)"})
    table = fields.List(fields.String(), required=True)
    pile = fields.List(fields.String(), required=True)
    stock_count = fields.Integer(required=True)
    hand_counts = fields.List(fields.Integer(), required=True)
    captured_counts = fields.List(fields.Integer(), required=True)
    declarations = fields.List(fields.Nested(DeclarationInfo), required=True)
    streak = fields.Nested(StreakState, required=True)
    legal_actions = fields.List(fields.Nested(Action), required=True)


class SeatToken(Answer):
    seat = fields.Integer(required=True)
    token = fields.String(required=True, metadata={"description": "shown once; send as Bearer"})


class GameCreated(Answer):
    game = fields.Nested(GameView, required=True)
    tokens = fields.List(fields.Nested(SeatToken), required=True)


class SeatClaimed(Answer):
    seat = fields.Integer(required=True)
    token = fields.String(required=True)
    game = fields.Nested(GameView, required=True)


class ReplayFrame(Answer):
    """The table after the deal or after one action of a finished game: every hand shown."""
    event_id = fields.Integer(required=True, metadata={"description": "the last event this frame follows (listEvents)"})
    hands = fields.List(fields.List(fields.String()), required=True, metadata={"description": "each seat's hand"})
    table = fields.List(fields.String(), required=True)
    pile = fields.List(fields.String(), required=True)
    stock_count = fields.Integer(required=True)
    scores = fields.List(fields.Integer(), required=True, metadata={"description": "by camp"})


class Award(Answer):
    camp = fields.Integer(required=True)
    points = fields.Integer(required=True)


class EventsQuery(Schema):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_COUNTER))
    limit = fields.Integer(load_default=500, validate=validate.Range(min=1, max=2000))


class ConditionalHeaders(Schema):
    if_none_match = fields.String(data_key="If-None-Match",
                                  metadata={"description": "a version you hold, e.g. \"7\": 304 if unchanged"})


class LongPollQuery(Schema):
    after_version = fields.Integer(validate=validate.Range(min=0, max=MAX_COUNTER),
                                   metadata={"description": "wait until the game is past this version"})
    wait_seconds = fields.Float(load_default=25, validate=validate.Range(min=0, max=30),
                                metadata={"description": "longest wait, at most 30 s"})


class ListGamesQuery(Schema):
    status = fields.String(load_default="active", validate=validate.OneOf(("open", "active", "finished")))


class Preset(Answer):
    name = fields.String(required=True)
    summary = fields.String(required=True, metadata={"description": "the preset in one line"})
    players = fields.List(fields.Integer(), required=True)
    options = fields.Nested(Rules, required=True)


class FieldError(Answer):
    """One reason a request does not match the schema."""
    location = fields.String(allow_none=True, metadata={"example": "json"})
    field = fields.String(allow_none=True, metadata={"example": "rules.jokers"})
    message = fields.String(required=True, metadata={"example": "Unknown field."})


class Problem(Answer):
    """RFC 9457 problem details; `code` is stable and machine-readable."""
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    code = fields.String(required=True)
    detail = fields.String()
    errors = fields.List(fields.Nested(FieldError))
    legal_actions = fields.List(fields.Nested(Action))
    current_version = fields.Integer()
    option = fields.String()
    field = fields.String()
    ticket_id = fields.String(metadata={"description": "ticket_exists: the player's live ticket in the pool"})
    status_now = fields.String(metadata={"description": "ticket_done: the ticket's status"})
    game_id = fields.String(allow_none=True, metadata={"description": "ticket_done: the game it was matched to"})
    seat = fields.Integer(allow_none=True)


class PaginationMetadata(PaginationMetadataSchema, Answer):
    """A page's place in a listing, sent as JSON text in the X-Pagination header."""


_TURN_ID = re.compile(r"^\d{1,20}(-\d{1,20})?$")
TURN_ID_PATTERN = validate.Regexp(_TURN_ID, error="a turn id: <ms>-<n> or <ms>")
_MAX_TURN_ID_PART = 2 ** 64 - 1  # a Redis stream id is two unsigned 64-bit numbers


def valid_turn_id(text: str) -> bool:
    return bool(_TURN_ID.fullmatch(text)) and all(int(part) <= _MAX_TURN_ID_PART for part in text.split("-"))


def _turn_id_in_range(text: str):
    if not valid_turn_id(text):
        raise ValidationError("a turn id: <ms>-<n> or <ms>, each at most 2^64 - 1")


class TurnsQuery(Schema):
    after = fields.String(validate=[TURN_ID_PATTERN, _turn_id_in_range], metadata={
        "description": "the last turn id already seen; without it, the turns of the last minute "
                       "(an older one is past every time limit)"})
    wait_seconds = fields.Float(load_default=25, validate=validate.Range(min=0, max=30))


class Record(Answer):
    rating = fields.Float(required=True, metadata={
        "description": "the rating's mean (Weng-Lin, openskill: 1500 at the start, docs/ratings.md)"})
    deviation = fields.Float(required=True, metadata={
        "description": "how unsure the rating is (350 at the start; the true level is within about twice it)"})
    games = fields.Integer(required=True, metadata={"description": "rated games played"})
    wins = fields.Integer(required=True)
    losses = fields.Integer(required=True)
    provisional = fields.Boolean(required=True, metadata={
        "description": f"the deviation is above {PROVISIONAL_DEVIATION:.0f}: too few clear results yet"})


class EntrantResult(Answer):
    entrant = fields.Integer(required=True)
    bot = fields.String(required=True)
    wins = fields.Integer(required=True)
    win_rate = fields.Float(allow_none=True, required=True)
    win_rate_low = fields.Float(required=True, metadata={"description": "Wilson 95% interval, low end"})
    win_rate_high = fields.Float(required=True, metadata={"description": "Wilson 95% interval, high end"})
    mean_points = fields.Float(allow_none=True, required=True)
    mean_ms_per_move = fields.Float(allow_none=True, required=True, metadata={
        "description": "a built-in bot's compute time; a registered bot's time from its turn's issue to its "
                       "action (the network included)"})
    timeouts = fields.Integer(required=True, metadata={"description": "turn timers run out (registered bots)"})


class SeatNamed(Answer):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
