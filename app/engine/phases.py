"""Where a game stands, and the signal that ends it mid-action."""

DECLARING, PLAYING, OVER = "declaring", "playing", "over"


class Won(Exception):
    """Raised by `Game.score_event` when a camp wins: the rest of the action is not played."""
