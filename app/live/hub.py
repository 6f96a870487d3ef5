"""Live fan-out: one Redis subscription per process serves every event stream and long poll in it,
games' and registered bots' turns alike.

A watcher (an SSE stream or a long poll) registers for a game; the process subscribes to that
game's change channel once, however many watch it, on its one pub/sub connection. On a change
the new events are read once, and each distinct viewer's events (each seat, the spectator) are
made visible and rendered once, then handed to the watchers, which hold no Redis connection.
A game's notices travel on its own channel (`{game:<id>}:changes`, in the game's hash slot;
sharded pub/sub on a Redis Cluster, so they stay on the game's shard: store.ChangeFeed).
A bot's new turns are announced on its inbox's channel (`{bot:<id>}:turns`): its watchers are
woken and read the inbox themselves, so a bot's stream or long poll holds no connection either.
"""

import logging
import queue
import threading
import time
from collections import defaultdict

import redis

from ..engine import visible_event
from ..games.store import GameMissing
from ..ops.connection import StoreUnavailable
from ..ops.keys import bot_turns_channel, changes_channel

log = logging.getLogger(__name__)
POLL_SECONDS = 0.05  # how soon a new subscription is made, while waiting for notices
EVENTS_PER_READ = 500
RETRY_SECONDS = 0.5
SUBSCRIBE_SECONDS = 1.5  # a feed that does not confirm a subscription by then is down: 503 within about 2 s
CLOSED = ("closed", None)
BOT_TOPIC = "bot:"  # a watched topic is a game id, or this and a bot id (game ids hold no colon)


def bot_topic(bot_id: str) -> str:
    return BOT_TOPIC + bot_id


class Watcher:
    """One stream or long poll: what it receives, in order, through its own inbox."""

    def __init__(self, game_id: str, seat: int | None, wants_events: bool):
        self.game_id, self.seat, self.wants_events = game_id, seat, wants_events
        self.inbox = queue.SimpleQueue()
        self.subscribed = threading.Event()

    def next(self, timeout: float):
        """("change", (version, [(event id, type, rendered), ...] or None)), CLOSED, or None on timeout."""
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None


class LiveHub:
    def __init__(self, store, render):
        """`render(event)` turns one visible event into what a stream sends (done once per viewer)."""
        self.store, self.render = store, render
        self._feed = ChangeFeed(store.redis, store.feed_commands)
        self._watchers = defaultdict(set)
        self._cursor = {}  # game id -> events read so far
        self._behind = set()  # topics to read again: their node was lost and they are subscribed anew
        self._requests = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = None  # started by the first watcher: most processes never stream

    # ----- watchers ------------------------------------------------------------------------
    def watch(self, game_id: str, seat: int | None = None, wants_events: bool = True,
              timeout: float = SUBSCRIBE_SECONDS) -> Watcher:
        """Register a watcher; it returns once the game's channel is subscribed, so a reader that
        reads the game after this misses no change."""
        watcher = Watcher(game_id, seat, wants_events)
        with self._lock:
            if self._closed:
                raise redis.ConnectionError("the process is stopping")
            if self._thread is None:
                self._thread = threading.Thread(target=self._listen, name="ronda-live", daemon=True)
                self._thread.start()
            first = not self._watchers[game_id]
            self._watchers[game_id].add(watcher)
            if not first and game_id in self._cursor:
                watcher.subscribed.set()
        if first:
            self._requests.put(("subscribe", game_id))
        if not watcher.subscribed.wait(timeout):
            self.unwatch(watcher)
            raise redis.ConnectionError("the change feed did not answer")
        return watcher

    def unwatch(self, watcher: Watcher):
        with self._lock:
            watchers = self._watchers.get(watcher.game_id)
            if watchers is None:
                return
            watchers.discard(watcher)
            if watchers:
                return
            del self._watchers[watcher.game_id]
        self._requests.put(("unsubscribe", watcher.game_id))

    def wait_for_change(self, game_id: str, after_version: int, timeout: float, read_version):
        """Return once the game is past `after_version` (`read_version()` reads it), or after `timeout`."""
        watcher = self.watch(game_id, wants_events=False)
        try:
            if read_version() > after_version:  # read after watching, so no change slips between
                return
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                item = watcher.next(left)
                if item is None or item == CLOSED or item[1][0] > after_version:
                    return
        finally:
            self.unwatch(watcher)

    def wait_for_turns(self, bot_id: str, timeout: float, read_turns):
        """`read_turns()` once there are turns to read, or after `timeout` (then: [])."""
        watcher = self.watch(bot_topic(bot_id), wants_events=False)
        try:
            deadline = time.monotonic() + timeout
            while not (turns := read_turns()) and (left := deadline - time.monotonic()) > 0:
                if watcher.next(left) == CLOSED:
                    break
            return turns
        finally:
            self.unwatch(watcher)

    def close(self):
        """End every watcher (streams send their clients a reconnect hint) and stop listening."""
        with self._lock:
            self._closed = True
            watchers = [w for ws in self._watchers.values() for w in ws]
        for watcher in watchers:
            watcher.inbox.put(CLOSED)

    # ----- the one listener ----------------------------------------------------------------
    def _listen(self):
        while not self._closed and not self._idle():
            try:
                self._apply_requests()
                self._catch_up_behind()
                notice = self._feed.next_notice(POLL_SECONDS)
                if notice:
                    self._on_notice(*notice)
            except StoreUnavailable as error:
                log.warning("change feed could not read the store: %s", error)
                time.sleep(RETRY_SECONDS)
            except Exception:
                log.exception("change feed failed")
                time.sleep(RETRY_SECONDS)

    def _idle(self) -> bool:
        """Nothing watched and nothing subscribed: the listener ends (the next watcher starts one)."""
        with self._lock:
            if self._watchers or self._cursor or not self._requests.empty():
                return False
            self._feed.close()
            self._thread = None
            return True

    def _apply_requests(self):
        while True:
            try:
                action, game_id = self._requests.get_nowait()
            except queue.Empty:
                return
            with self._lock:
                watched = bool(self._watchers.get(game_id))
            if action == "subscribe" and watched:
                if game_id in self._cursor:  # still subscribed: its last watcher left and a new one came
                    self._mark_subscribed(game_id)
                else:
                    self._feed.subscribe(game_id)
            elif action == "unsubscribe" and not watched and game_id in self._cursor:
                self._feed.unsubscribe(game_id)
                self._cursor.pop(game_id, None)

    def _on_notice(self, kind, topic, version):
        if kind == "subscribed" and topic in self._cursor:
            # Subscribed again after its node was lost: what changed meanwhile is read now.
            self._behind.add(topic)
        elif kind == "subscribed":
            # The game's events are counted after subscribing, so none slips; a bot's watchers read its inbox.
            self._cursor[topic] = 0 if topic.startswith(BOT_TOPIC) else self.store.event_count(topic)
            self._mark_subscribed(topic)
        elif topic in self._cursor:
            self._changed(topic, version)

    def _catch_up_behind(self):
        """Topics whose notices may have been missed: treat each as changed (until its store answers)."""
        for topic in list(self._behind):
            if topic not in self._cursor:
                self._behind.discard(topic)
                continue
            try:
                self._changed(topic, None if topic.startswith(BOT_TOPIC) else self.store.version(topic))
            except GameMissing:
                pass  # expired: its watchers end on their own timeouts
            self._behind.discard(topic)

    def _mark_subscribed(self, game_id: str):
        with self._lock:
            watchers = list(self._watchers.get(game_id, ()))
        for watcher in watchers:
            watcher.subscribed.set()

    def _changed(self, game_id: str, version: int | None):
        if game_id.startswith(BOT_TOPIC):
            with self._lock:
                watchers = list(self._watchers.get(game_id, ()))
            for watcher in watchers:
                watcher.inbox.put(("change", (None, None)))
            return
        events = []
        while True:
            batch = self.store.events(game_id, self._cursor[game_id] + len(events), EVENTS_PER_READ)
            events += batch
            if len(batch) < EVENTS_PER_READ:
                break
        self._cursor[game_id] += len(events)
        with self._lock:  # also those that came while the events were read: a stream skips what it has
            watchers = list(self._watchers.get(game_id, ()))
        rendered = {}  # each distinct viewer's events, made visible and rendered once
        for watcher in watchers:
            if watcher.wants_events and watcher.seat not in rendered:
                rendered[watcher.seat] = [
                    (event["id"], event["type"], self.render(visible))
                    for event in events for visible in (visible_event(event, watcher.seat),)]
            watcher.inbox.put(("change", (version, rendered.get(watcher.seat) if watcher.wants_events else None)))

class ChangeFeed:
    """One process's subscriptions to change channels: plain pub/sub on one Redis, sharded pub/sub
    on a cluster (a game's notices stay on its shard). One connection per node that owns a
    watched channel, each read by its own thread, so a node that dies holds up only its own
    topics: they are subscribed again, on whichever node owns them by then (after a failover,
    the promoted replica), and the confirmation tells the hub to catch them up."""

    def __init__(self, client, commands):
        self._client = client
        self._cluster = isinstance(client, redis.RedisCluster)
        _, self._subscribe, self._unsubscribe = commands
        self._notices = queue.SimpleQueue()
        self._readers = {}  # node name -> _NodeReader
        self._placed = {}  # topic -> its node's name, or None while it waits to be subscribed again
        self._retry_at = 0.0

    def subscribe(self, topic: str):
        self._placed[topic] = None
        self._place(topic)

    def unsubscribe(self, topic: str):
        reader = self._readers.get(self._placed.pop(topic, None))
        if reader is not None:
            reader.topics.discard(topic)
            try:
                reader.send(self._unsubscribe, _channel_of(topic))
            except StoreUnavailable:
                self._lose(reader)

    def next_notice(self, timeout: float):
        """("subscribed" or "changed", topic, version or None), or None when nothing came."""
        if time.monotonic() >= self._retry_at and None in self._placed.values():
            self._place_again()
        try:
            notice = self._notices.get(timeout=timeout)
        except queue.Empty:
            return None
        if notice[0] == "lost":
            self._lose(notice[1])
            return None
        return notice

    def close(self):
        for reader in list(self._readers.values()):
            reader.close()
        self._readers.clear()
        self._placed.clear()
        self._notices = queue.SimpleQueue()  # no late notice of a closed reader reaches the next ones

    def _place(self, topic: str):
        channel = _channel_of(topic)
        try:
            name, pool = self._owner(channel)
            reader = self._readers.get(name)
            if reader is None:
                reader = self._readers[name] = _NodeReader(name, pool, self._notices)
            reader.send(self._subscribe, channel)
        except StoreUnavailable as error:
            log.warning("change feed: %s waits for its node: %s", topic, error)
            self._retry_at = time.monotonic() + RETRY_SECONDS
            return
        reader.topics.add(topic)
        self._placed[topic] = name

    def _owner(self, channel: str):
        """The name of the node that owns `channel`, and the requests' pool for it."""
        if self._cluster:
            node = self._client.get_node_from_key(channel)
            return node.name, self._client.get_redis_connection(node).connection_pool
        return "redis", self._client.connection_pool

    def _place_again(self):
        if self._cluster:
            try:  # learn who owns the slots now
                self._client.nodes_manager.initialize()
            except StoreUnavailable as error:
                log.warning("change feed: the cluster's slots are not known yet: %s", error)
                self._retry_at = time.monotonic() + RETRY_SECONDS
                return
        for topic in [topic for topic, name in self._placed.items() if name is None]:
            self._place(topic)

    def _lose(self, reader: "_NodeReader"):
        if self._readers.get(reader.name) is not reader:
            return  # already replaced
        del self._readers[reader.name]
        reader.close()
        for topic in reader.topics:
            if topic in self._placed:
                self._placed[topic] = None
        self._retry_at = time.monotonic() + RETRY_SECONDS


class _NodeReader:
    """One node's pub/sub connection and the thread that reads it into the feed's notices."""

    def __init__(self, name: str, pool, notices: queue.SimpleQueue):
        """A connection of its own, made like `pool`'s: one closed while its thread reads must not go
        back to the requests' pool, and a cluster client drops its nodes' connections when it learns
        the slots again, which would cut every shard's subscriptions, not only a lost one's."""
        self.name = name
        self.topics = set()
        own = redis.ConnectionPool(connection_class=pool.connection_class, max_connections=1, **pool.connection_kwargs)
        self._pubsub = redis.Redis(connection_pool=own).pubsub()
        self._notices = notices
        self._closed = False
        threading.Thread(target=self._read, name="ronda-live-node", daemon=True).start()

    def send(self, command: str, channel: str):
        getattr(self._pubsub, command)(channel)

    def close(self):
        self._closed = True
        try:
            self._pubsub.close()
        except Exception:  # a dead connection's close may fail; it is dropped either way
            pass

    def _read(self):
        while not self._closed:
            try:
                message = self._pubsub.get_message(timeout=1.0)
            except Exception as error:  # the node died, froze or closed under us
                if not self._closed:
                    log.warning("change feed lost a node: %s", error)
                    self._notices.put(("lost", self))
                return
            if message and message["type"] in NOTICE_KINDS:
                topic = _topic_of(message["channel"])
                if NOTICE_KINDS[message["type"]] == "subscribed":
                    self._notices.put(("subscribed", topic, None))
                else:
                    self._notices.put(("changed", topic,
                                       None if topic.startswith(BOT_TOPIC) else int(message["data"])))


NOTICE_KINDS = {"subscribe": "subscribed", "ssubscribe": "subscribed", "message": "changed", "smessage": "changed"}


def _channel_of(topic: str) -> str:
    if topic.startswith(BOT_TOPIC):
        return bot_turns_channel(topic[len(BOT_TOPIC):])
    return changes_channel(topic)


def _topic_of(channel) -> str:
    """`{game:<id>}:changes` → the game id; `{bot:<id>}:turns` → bot:<id>."""
    text = channel.decode() if isinstance(channel, bytes) else channel
    tag = text[1:text.index("}")]
    return tag[len("game:"):] if tag.startswith("game:") else tag
