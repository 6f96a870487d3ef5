"""A player as the store keeps it: the document under `{player:<id>}:doc` and each device token
under `{player:<id>}:tokens`, when each was last used under `{player:<id>}:token-uses`
(app/ops/keys.py)."""

from typing import NotRequired, TypedDict


class PlayerDocument(TypedDict):
    id: str  # `<app id>~<name>` outside the public app (ops/scope.py)
    name: str
    created_at: str
    token_salt: str  # the first token (createPlayer's) is derived again from it
    token_hash: str | None  # that first token's SHA-256; None once it was revoked
    external_id: NotRequired[str]  # the app's own id for this person (sign-in by the app's server)
    suspended_at: NotRequired[str | None]  # set by the app's server: every token answers 403 meanwhile
    deleting_at: NotRequired[str]  # an erasure under way: every token answers 401 from then on


class TokenRecord(TypedDict):
    """A device's token (sign-in): only its SHA-256 is kept, beside what its owner is shown."""
    id: str
    label: str  # the device it was made for
    hash: str
    created_at: str
    expires_at: float | None  # seconds since the epoch, or None: until revoked
