"""The player's schemas that both the players' own operations (/players) and their app's server's
(/apps/me/players) answer with."""

from marshmallow import Schema, fields, validate

from .schemas import Answer, Integer, Record


class PlayerToken(Answer):
    id = fields.String(required=True, metadata={"description": "`first` for createPlayer's token"})
    label = fields.String(required=True, metadata={"description": "the device it was made for (sign-in's `device`)"})
    created_at = fields.String(required=True)
    last_used_at = fields.String(allow_none=True, required=True, metadata={
        "description": "when it was last presented, to the minute (null: not since it was made)"})
    expires_at = fields.Float(allow_none=True, required=True, metadata={
        "description": "seconds since the epoch (sign-in's `ttl_seconds`), or null: until revoked"})
    current = fields.Boolean(required=True, metadata={"description": "the token this request came with"})


class PoolRecord(Record):
    pool = fields.String(required=True, metadata={"description": "<preset>-<players>, e.g. classic-2"})


class Player(Answer):
    id = fields.String(required=True)
    name = fields.String(required=True)
    entrant = fields.String(required=True, metadata={"description": "the player on a leaderboard: player:<id>"})
    created_at = fields.String(required=True)
    suspended = fields.Boolean(required=True, metadata={"description": "suspended by their app's server"})
    games = fields.Integer(required=True, metadata={"description": "finished games played, rated or not"})
    wins = fields.Integer(required=True)
    ratings = fields.List(fields.Nested(PoolRecord), required=True, metadata={
        "description": "one per pool the player has rated games in"})


class NewTokenRequest(Schema):
    device = fields.String(load_default="device", validate=validate.Length(min=1, max=80), metadata={
        "description": "a label for the token, e.g. the device (listMyTokens shows it)", "example": "Amina's tablet"})
    ttl_seconds = Integer(load_default=None, allow_none=True, validate=validate.Range(min=1, max=400 * 24 * 3600),
                          metadata={"description": "the token expires after this long (default: when revoked)"})


class TokenCreated(Answer):
    token = fields.String(required=True, metadata={
        "description": "a new player token for the device, shown once: hand it to the app on the device"})
    token_info = fields.Nested(PlayerToken, required=True)
