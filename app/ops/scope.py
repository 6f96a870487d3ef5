"""Which app a game, player, ticket or ladder belongs to, read from its name alone.

An app's games, players and pools are named `<app id>~<name>`; the public app's (requests that
send no app key, and everything made before apps existed) carry no prefix. So a request is kept
inside its app by comparing names, with no read of the store, and every index and ladder keyed
by those names is the app's own.
"""

PUBLIC_APP = "public"
SEPARATOR = "~"  # unreserved in URLs (RFC 3986), never in a token_urlsafe id or a pool name


def in_app(app_id: str, name: str) -> str:
    return name if app_id == PUBLIC_APP else f"{app_id}{SEPARATOR}{name}"


def app_of(scoped: str) -> str:
    app_id, separator, _ = scoped.partition(SEPARATOR)
    return app_id if separator else PUBLIC_APP


def unscoped(scoped: str) -> str:
    return scoped.partition(SEPARATOR)[2] if SEPARATOR in scoped else scoped
