"""Nothing lives forever: open, active and finished games expire, every write renews, and the
listings drop expired games, against a real Redis with short TTLs."""

import time

import pytest

from app import create_app
from app.ops.keys import bucket_of, due_moves_key, state_key, status_index_key
from http_helpers import act, bearer, seat_view


@pytest.mark.slow
def test_games_expire_by_status_and_every_write_renews_them(redis_url):
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "OPEN_GAME_TTL": 1,
                      "ACTIVE_GAME_TTL": 2, "FINISHED_GAME_TTL": 1,
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client, sweeper, redis = app.test_client(), app.services.sweeper, app.services.store.redis
    untimed = {"turn_timeout_seconds": None}  # an active game's time starts after its turn timer: none here
    open_game = client.post("/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "open"}],
                                            **untimed}).json
    active = client.post("/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "human"}],
                                         **untimed}).json
    active_id, tokens = active["game"]["id"], {t["seat"]: t["token"] for t in active["tokens"]}
    assert 0 < redis.ttl(state_key(open_game["game"]["id"])) <= 1
    assert 0 < redis.ttl(state_key(active_id)) <= 2
    time.sleep(1.3)
    seat = client.get(f"/games/{active_id}").json["awaiting"][0]
    view = seat_view(client, active_id, tokens[seat])
    assert act(client, active_id, tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200
    time.sleep(1.0)  # 2.3 s after creation: the open game is gone, the active one renewed at 1.3 s
    assert client.get(f"/games/{open_game['game']['id']}").status_code == 404
    assert client.get(f"/games/{active_id}").status_code == 200
    assert open_game["game"]["id"].encode() in redis.zrange(
        status_index_key("open", bucket_of(open_game["game"]["id"])), 0, -1
    )
    assert sweeper.prune_listings() >= 1  # without anyone listing them
    assert open_game["game"]["id"].encode() not in redis.zrange(
        status_index_key("open", bucket_of(open_game["game"]["id"])), 0, -1
    )
    time.sleep(2.1)
    assert client.get(f"/games/{active_id}", headers=bearer(tokens[0])).status_code == 404
    listed = client.get("/games?status=active&page_size=100").json
    assert active_id not in [g["id"] for g in listed]


@pytest.mark.slow
def test_a_move_noted_as_due_goes_with_its_game(redis_url):
    """A turn timer of an hour notes a move due in an hour, and the game lives as long as its
    timer (active time after the timer). A game gone before its note (evicted under maxmemory,
    say) takes the note with it at the sweeper's prune rather than keeping it for the hour."""
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "ACTIVE_GAME_TTL": 1,
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client, sweeper, redis = app.test_client(), app.services.sweeper, app.services.store.redis
    created = client.post("/games", json={"players": 2, "turn_timeout_seconds": 3600,
                                          "seats": [{"type": "human"}, {"type": "human"}]}).json
    game_id = created["game"]["id"]
    assert redis.zscore(due_moves_key(bucket_of(game_id)), game_id) is not None
    assert 3600 < redis.ttl(state_key(game_id)) <= 3601
    redis.delete(state_key(game_id))
    time.sleep(1.3)
    sweeper.prune_listings()
    assert redis.zscore(due_moves_key(bucket_of(game_id)), game_id) is None
