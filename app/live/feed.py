"""The Redis side of live fan-out: one process's subscriptions to the change channels of the games
and bots its streams watch (app/live/hub.py hands their notices on)."""

import logging
import queue
import threading
import time

import redis

from ..ops.connection import StoreUnavailable
from ..ops.keys import bot_turns_channel, changes_channel, player_notices_channel, tournament_changes_channel

log = logging.getLogger(__name__)
RETRY_SECONDS = 0.5
# A watched topic is a game id, or an inbox: `bot:<id>`, `player:<id>` or `tournament:<id>` (game ids
# hold no colon).
INBOX_CHANNELS = {"bot": bot_turns_channel, "player": player_notices_channel, "tournament": tournament_changes_channel}


def bot_topic(bot_id: str) -> str:
    return f"bot:{bot_id}"


def player_topic(player_id: str) -> str:
    return f"player:{player_id}"


def tournament_topic(tournament_id: str) -> str:
    return f"tournament:{tournament_id}"


def is_inbox(topic: str) -> bool:
    """An inbox's watchers read it themselves when woken; a game's are handed its new events."""
    return ":" in topic


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
        self._notices: queue.SimpleQueue[tuple] = queue.SimpleQueue()
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
        self.topics: set[str] = set()
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
                                       None if is_inbox(topic) else int(message["data"])))


NOTICE_KINDS = {"subscribe": "subscribed", "ssubscribe": "subscribed", "message": "changed", "smessage": "changed"}


def _channel_of(topic: str) -> str:
    if is_inbox(topic):
        kind, _, owner = topic.partition(":")
        return INBOX_CHANNELS[kind](owner)
    return changes_channel(topic)


def _topic_of(channel) -> str:
    """`{game:<id>}:changes` → the game id; `{bot:<id>}:turns` → bot:<id>; `{player:<id>}:notices` → player:<id>."""
    text = channel.decode() if isinstance(channel, bytes) else channel
    tag = text[1:text.index("}")]
    return tag[len("game:"):] if tag.startswith("game:") else tag
