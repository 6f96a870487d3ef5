"""The sweep loop: a worker's (or the embedded server's) thread that keeps games from stalling."""

import logging
import threading
import time

from ..ops.connection import StoreUnavailable

log = logging.getLogger(__name__)
LISTING_PRUNE_SECONDS = 60
MATCHMAKING_SECONDS = 0.5


def sweep_forever(services, stall_seconds: float, stop: threading.Event):
    """No game or match stalls. Every MATCHMAKING_SECONDS: quick play's tickets are grouped as
    their windows widen, and expire; webhook deliveries due are queued; and so are the moves due
    (app/games/sweeper.py): a turn timer that ran out (a move's write queues nothing for it), a
    bot's move overdue by `stall_seconds` (its job lost). Every third of `stall_seconds`: a move
    whose note a failover lost is noted again from the game itself, a match that has not moved for
    as long gets what it is owed again (MatchService.reconcile), a finished game's settlement left
    noted for as long is made (app/players/effects.py), long turns' reminders are sent, running
    tournaments move on, and an analysis whose worker died goes on. Once a minute the listings
    drop the games that expired. Each part runs whatever the others met."""
    next_sweep = next_prune = 0.0
    while not stop.wait(MATCHMAKING_SECONDS):
        _swept("matchmaking", services.matchmaker.sweep)
        _swept("webhook deliveries", services.webhooks.sweep)
        _swept("moves due", services.sweeper.dispatch_due, stall_seconds)
        if time.monotonic() < next_sweep:
            continue
        next_sweep = time.monotonic() + max(0.5, stall_seconds / 3)
        renoted = _swept("notes lost with a master", services.sweeper.renote_from_listings, stall_seconds)
        if renoted:
            log.warning("noted again %d overdue move(s) read from their games", renoted)
        _swept("stalled matches", services.matches.reconcile, stall_seconds)
        _swept("tournaments", services.tournaments.reconcile, stall_seconds)
        _swept("settlements", services.settlement.settle_noted, stall_seconds)
        _swept("turn reminders", services.reminders.remind_due)
        _swept("analyses", services.reviews.redo_lapsed)
        if time.monotonic() >= next_prune:
            next_prune = time.monotonic() + LISTING_PRUNE_SECONDS
            _swept("listings", services.sweeper.prune_listings)


def _swept(what: str, sweep, *args) -> int:
    try:
        return sweep(*args)
    except StoreUnavailable as error:
        log.warning("sweep of %s skipped, the store does not answer: %s", what, error)
    except Exception:
        log.exception("sweep of %s failed", what)
    return 0
