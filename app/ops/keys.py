"""Every Redis key and channel name, made here and only here.

One game's keys share the hash tag `{game:<id>}` (a match's `{match:<id>}`, a bot's `{bot:<id>}`)
so a Redis Cluster keeps them in one slot and one script can touch them all. Indexes over many
games are split in buckets, each a key of its own, so on a cluster they spread over the shards.
"""

import zlib

from .scope import PUBLIC_APP


def write_probe_key() -> str:
    """Written by readiness probes: a Redis that takes no write (full, read-only) says so here."""
    return "ronda:health:write-probe"


def state_key(game_id: str) -> str:
    return f"{{game:{game_id}}}:state"


def events_key(game_id: str) -> str:
    return f"{{game:{game_id}}}:events"


def rematch_key(game_id: str) -> str:
    """The rematch of this game, decided in its slot (games/rematch.py): the next game's id, who asked
    for it, who was offered it, and whether it was declined (a hash)."""
    return f"{{game:{game_id}}}:rematch-decision"


def changes_channel(game_id: str) -> str:
    return f"{{game:{game_id}}}:changes"


def idempotency_key(scope: str) -> str:
    return f"idempotency:{scope}"


def match_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:state"


def match_stats_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:stats"


def match_done_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:done"


def match_games_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:games"


def match_results_key(match_id: str) -> str:
    """The match's rated games (game id, winner, loser), written with its standings: the ladder's
    source, so a rating lost with Redis's last second is applied again from here."""
    return f"{{match:{match_id}}}:results"


def running_matches_key(queue: str) -> str:
    """A deployment's running matches (its bot queue names it): match id -> when it last moved (ms),
    what its reconciler watches."""
    return f"matches:running:{queue}"


def match_games_running_key(client: str) -> str:
    return f"matches:running:{client}"


# Indexes over many games (listings by status, moves due) are split in buckets, each a key of
# its own, so on a Redis Cluster they spread over the shards; a read merges the buckets.
INDEX_BUCKETS = 16


def bot_key(bot_id: str) -> str:
    return f"{{bot:{bot_id}}}:doc"


def bot_inbox_key(bot_id: str) -> str:
    """A registered bot's turns to play, a Redis stream (its own slot: written after the game's write)."""
    return f"{{bot:{bot_id}}}:inbox"


def bot_turns_channel(bot_id: str) -> str:
    """Where a new turn in a bot's inbox is announced (the inbox's slot: one script does both)."""
    return f"{{bot:{bot_id}}}:turns"


def bot_registrations_key(client: str) -> str:
    """The bots one client (address) registered lately, for its limits."""
    return f"bots:registered_by:{client}"


BOT_INDEX_KEY = "bots:registered"
MATCH_POOL = "matches"  # the ladder of match games between bots (listRatings), kept as it always was


def ratings_key(pool: str) -> str:
    """A pool's ladder, one hash (entrant:field -> value): each game's update is one transaction.
    The match ladder keeps its first name, `ratings`; every key of a pool shares its hash slot."""
    return "ratings" if pool == MATCH_POOL else f"{{ratings:{pool}}}:records"


def _pool_tag(pool: str) -> str:
    return "{ratings}" if pool == MATCH_POOL else f"{{ratings:{pool}}}"


def rated_games_key(pool: str) -> str:
    """The games a pool's ladder counted (id -> when): in the ladder's slot."""
    return f"{_pool_tag(pool)}:rated"


def leaderboard_key(pool: str) -> str:
    """A pool's entrants by rating (a sorted set, for paged leaderboards), in the ladder's slot."""
    return f"{_pool_tag(pool)}:board"


def player_key(player_id: str) -> str:
    return f"{{player:{player_id}}}:doc"


def player_games_key(player_id: str) -> str:
    """A player's games (game id -> when the player took a seat, ms): their listing, newest first."""
    return f"{{player:{player_id}}}:games"


def player_record_key(player_id: str) -> str:
    """A player's finished games counted (games, wins) and the ids counted, so each counts once."""
    return f"{{player:{player_id}}}:record"


def player_counted_key(player_id: str) -> str:
    return f"{{player:{player_id}}}:counted"


def player_inbox_key(player_id: str) -> str:
    """A player's notices for every game (your_turn, game_over, matched...), a Redis stream."""
    return f"{{player:{player_id}}}:inbox"


def player_told_key(player_id: str) -> str:
    """The keys of the notices told once whoever tells them (a tournament's rounds, its start and
    end): a second telling, after a fault or by a second process, finds its key here and adds nothing."""
    return f"{{player:{player_id}}}:told"


def player_notices_channel(player_id: str) -> str:
    return f"{{player:{player_id}}}:notices"


def player_tokens_key(player_id: str) -> str:
    """A player's device tokens (token id -> its record: label, hash, times), in the player's slot."""
    return f"{{player:{player_id}}}:tokens"


def player_token_uses_key(player_id: str) -> str:
    """When each of a player's tokens was last presented (token id -> ISO time, to the minute)."""
    return f"{{player:{player_id}}}:token-uses"


def player_tournaments_key(player_id: str) -> str:
    """The tournaments a player entered (id -> when, ms): what their export lists and their erasure reaches."""
    return f"{{player:{player_id}}}:tournaments"


def player_keys(player_id: str) -> list[str]:
    """Every key a player has, all in their slot: what erasing the player deletes."""
    return [player_key(player_id), player_games_key(player_id), player_record_key(player_id),
            player_counted_key(player_id), player_inbox_key(player_id), player_told_key(player_id),
            player_tokens_key(player_id), player_token_uses_key(player_id), player_tournaments_key(player_id)]


def matchmaking_key(app_id: str, part: str) -> str:
    """One app's quick play, every pool of it (app/matchmaking/store.py): all in one slot, so one
    script decides a ticket with the player's other pools in view."""
    return f"{{mm:{app_id}}}:{part}"


MATCHMAKING_APPS_KEY = "matchmaking:apps"  # apps that queued a ticket (-> when, ms), for the sweep


def settlement_owed_key(bucket: int) -> str:
    """Games with players or a rating whose final write was noted before it was made: the sweeper
    settles (counts and rates) any the after-write effect did not (id -> when noted, ms)."""
    return f"games:settlement_owed:{bucket}"


def analysis_key(game_id: str) -> str:
    """A finished game's analysis (app/review), kept with the game in its slot."""
    return f"{{game:{game_id}}}:analysis"


def analyses_due_key(bucket: int) -> str:
    """Analyses under way (game id -> when their lease ends, ms): one whose worker died is queued again."""
    return f"games:analyses_due:{bucket}"


def bucket_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % INDEX_BUCKETS


def status_index_key(status: str, bucket: int, app_id: str = PUBLIC_APP) -> str:
    """An app's games by status (the public app's keep their first names)."""
    return f"games:status:{status}:{bucket}" if app_id == PUBLIC_APP else f"games:status:{app_id}:{status}:{bucket}"


def due_moves_key(bucket: int) -> str:
    return f"games:due_moves:{bucket}"


def window_count_key(name: str, window: int) -> str:
    """A rate-limit budget's count in one minute's window (`name`: its scope and whom it counts)."""
    return f"ratelimit:{name}:{window}"


# ----- apps (app/apps/) ----------------------------------------------------------------------------
APPS_KEY = "apps:all"  # every app's id -> when it was created (ms)


def app_key(app_id: str) -> str:
    """An app's document: name, quotas, key hashes (current, and the previous one in its grace)."""
    return f"{{app:{app_id}}}:doc"


def app_players_key(app_id: str) -> str:
    """How many players the app has made (its players quota)."""
    return f"{{app:{app_id}}}:players"


def app_hour_count_key(app_id: str, scope: str, hour: int) -> str:
    """How many players `scope` (an address, the client key) made in the app in one hour, or
    (`analyses`) how many game analyses it asked for."""
    return f"{{app:{app_id}}}:players-made:{scope}:{hour}" if scope != "analyses" else \
        f"{{app:{app_id}}}:analyses-asked:{hour}"


def app_external_ids_key(app_id: str) -> str:
    """The app's own ids of its people (external id -> player id), in the app's slot: sign-in finds
    or makes one player per external id."""
    return f"{{app:{app_id}}}:external-ids"


def webhooks_key(app_id: str) -> str:
    """An app's webhook endpoints (endpoint id -> endpoint), in the app's slot."""
    return f"{{app:{app_id}}}:webhooks"


def endpoint_pause_key(app_id: str, endpoint_id: str) -> str:
    """Set while an endpoint that did not answer gets no attempt (it expires with the pause)."""
    return f"{{app:{app_id}}}:webhook_paused:{endpoint_id}"


def endpoint_failing_key(app_id: str, endpoint_id: str) -> str:
    """Since when an endpoint's attempts have all failed (set at the first, removed at a success)."""
    return f"{{app:{app_id}}}:webhook_failing:{endpoint_id}"


def delivery_key(app_id: str, delivery_id: str) -> str:
    """One delivery of one message to one endpoint: its payload, status and attempts."""
    return f"{{app:{app_id}}}:delivery:{delivery_id}"


def deliveries_key(app_id: str, endpoint_id: str) -> str:
    """An endpoint's deliveries (delivery id -> created, ms), newest last: its listing."""
    return f"{{app:{app_id}}}:deliveries:{endpoint_id}"


def delivery_counts_key(app_id: str) -> str:
    """An app's deliveries by status now (pending, failed, delivered): what getMyApp answers."""
    return f"{{app:{app_id}}}:delivery_counts"


def tenant_figures_key(bucket: int) -> str:
    """Every app's figures for the operator's scrape (`<app id>|<figure>` -> count), in buckets."""
    return f"metrics:tenants:{bucket}"


def deliveries_due_key(bucket: int) -> str:
    """Deliveries to attempt (`<app id>/<delivery id>` -> when, ms): the webhook sweep's, in buckets."""
    return f"webhooks:due:{bucket}"


def reminders_due_key(bucket: int) -> str:
    """Turn reminders owed (`<game id>/<version>` -> when, ms): a long turn's nudge before its timer."""
    return f"games:reminders_due:{bucket}"


def tournament_key(tournament_id: str) -> str:
    """A tournament's document (its entrants, rounds, pairings and their results), in its own slot."""
    return f"{{tournament:{tournament_id}}}:doc"


def tournament_revision_key(tournament_id: str) -> str:
    """The revision of its document: a change is saved only over the revision it was made from."""
    return f"{{tournament:{tournament_id}}}:revision"


def tournament_events_key(tournament_id: str) -> str:
    """Its changes (rounds paired, standings), a Redis stream: streamTournament reads it."""
    return f"{{tournament:{tournament_id}}}:events"


def tournament_owed_key(tournament_id: str) -> str:
    """The notices its people are owed (their key -> the notice), written by the save that owes
    them and paid by whichever look comes next: a notice a crash or a lost second left unsaid is
    said by the next look, and said once (player_told_key)."""
    return f"{{tournament:{tournament_id}}}:owed"


def tournament_changes_channel(tournament_id: str) -> str:
    return f"{{tournament:{tournament_id}}}:changes"


def tournaments_key(app_id: str) -> str:
    """An app's tournaments (id -> created, ms), newest last: listTournaments."""
    return "tournaments" if app_id == PUBLIC_APP else f"tournaments:app:{app_id}"


def running_tournaments_key(queue: str) -> str:
    """A deployment's running tournaments (its bot queue names it: their matches' games go there):
    tournament id -> when last looked at (ms), what its workers' sweeps move on."""
    return f"tournaments:running:{queue}"
