"""Python's own settings for a long-running server process (the API's workers, the stream gateway)."""

import gc

# Allocations between two collections of the youngest generation (Python's default: 700). A storm
# of streams allocates a few hundred objects a stream, and its long-lived ones (greenlets, sockets,
# watchers) were traversed again by every older collection: a quarter of the gateway's time in a
# storm of 2,000 went to the collector (perf, issue 65).
YOUNG_COLLECTION_EVERY = 50_000


def settle_collector():
    """Once the process has loaded what it serves with: what is alive now (modules, the app, its
    clients) is left out of every later collection, and the young generation is collected less often."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, middle, old)
