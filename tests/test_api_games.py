"""The game API as HTTP stories: create, seats, views, actions, errors, provable fairness."""

import hashlib
import json
import random
import time
import uuid

import pytest

from app.engine import CARD_IDS, PRESETS, Game, shuffled_deck
from builders import deck_for
from http_helpers import act, bearer, create, play_to_the_end, seat_view

PROBLEM = "application/problem+json"


def test_create_answers_201_with_location_tokens_and_etag(client):
    rv = client.post("/games", json={"players": 2, "rules": {"preset": "classic"},
                                     "seats": [{"type": "human", "name": "Amina"}, {"type": "human", "name": "Omar"}]})
    assert rv.status_code == 201
    assert rv.headers["Location"] == f"/games/{rv.json['game']['id']}"
    assert rv.headers["ETag"] == '"1"'
    assert [t["seat"] for t in rv.json["tokens"]] == [0, 1]
    assert rv.json["game"]["hand"] is None and rv.json["game"]["seed"] is None


def test_each_seat_sees_its_own_hand_and_nobody_elses(client):
    game, tokens = create(client, seed="views")
    reference = Game(PRESETS["classic"], 2, seed="views")
    for seat in (0, 1):
        view = seat_view(client, game["id"], tokens[seat])
        assert view["seat"] == seat
        assert view["hand"] == [CARD_IDS[c] for c in reference.hands[seat]]
        other = [CARD_IDS[c] for c in reference.hands[1 - seat]]
        assert not set(other) & set(str(view))  # no card of the other hand anywhere in the body


def test_the_spectator_view_shows_no_hand_no_stock_and_only_the_seed_commitment(client):
    game, _ = create(client, seed="spectator")
    rv = client.get(f"/games/{game['id']}")
    assert rv.status_code == 200 and rv.json["hand"] is None and rv.json["seed"] is None
    assert rv.json["seed_salt"] is None and rv.json["dealing"] == "creator_seed"
    assert rv.json["seed_commitment"] != hashlib.sha256(b"spectator").hexdigest()  # salted
    assert "spectator" not in rv.get_data(as_text=True).replace(rv.json["seed_commitment"], "")


def test_if_none_match_gives_304(client):
    game, tokens = create(client)
    rv = client.get(f"/games/{game['id']}", headers={"If-None-Match": '"1"'})
    assert rv.status_code == 304
    rv = client.get(f"/games/{game['id']}/view", headers={**bearer(tokens[0]), "If-None-Match": '"1"'})
    assert rv.status_code == 304
    assert client.get(f"/games/{game['id']}", headers={"If-None-Match": '"9"'}).status_code == 200


def test_an_action_answers_the_new_view_and_its_events(client):
    game, tokens = create(client)
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    card = view["hand"][0]
    rv = act(client, game["id"], tokens[seat], {"type": "play", "card": card}, view["version"])
    assert rv.status_code == 200
    assert rv.headers["ETag"] == f'"{view["version"] + 1}"'
    assert rv.json["events"][0] == {"id": rv.json["events"][0]["id"], "type": "play", "seat": seat, "card": card}
    assert card not in rv.json["game"]["hand"]


def test_if_match_is_required_and_a_stale_version_is_refused(client):
    game, tokens = create(client)
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    action = view["legal_actions"][0]
    rv = client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(tokens[seat]))
    assert rv.status_code == 428 and rv.content_type == PROBLEM and rv.json["code"] == "if_match_required"
    assert act(client, game["id"], tokens[seat], action, view["version"]).status_code == 200
    rv = act(client, game["id"], tokens[seat], action, view["version"])
    assert rv.status_code == 412 and rv.json["current_version"] == view["version"] + 1


def test_not_your_turn_is_409_with_the_legal_actions(client):
    game, tokens = create(client)
    waiting = 1 - game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[waiting])
    rv = act(client, game["id"], tokens[waiting], {"type": "play", "card": view["hand"][0]}, view["version"])
    assert rv.status_code == 409 and rv.json["code"] == "not_your_turn" and rv.json["legal_actions"] == []


@pytest.mark.parametrize("action, code", [
    ({"type": "play", "card": "99x"}, None),
    ({"type": "declare"}, "declaration_not_held"),
    ({"type": "pass"}, "illegal_action"),
    ({"type": "dance"}, None),
])
def test_illegal_or_malformed_actions_are_422_and_change_nothing(client, action, code):
    deck = deck_for(2, 1, [[["1o", "2o", "3o"], ["4o", "5o", "6o"]]], ["7o", "10c", "11e", "12b"])
    game, tokens = create(client, deck=deck, first_dealer=1)
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    rv = act(client, game["id"], tokens[seat], action, view["version"])
    assert rv.status_code == 422 and rv.content_type == PROBLEM
    if code:
        assert rv.json["code"] == code and rv.json["legal_actions"] == view["legal_actions"]
    assert seat_view(client, game["id"], tokens[seat])["version"] == view["version"]


def test_a_card_not_in_hand_is_422_card_not_in_hand(client):
    game, tokens = create(client)
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    missing = next(c for c in CARD_IDS if c not in view["hand"])
    rv = act(client, game["id"], tokens[seat], {"type": "play", "card": missing}, view["version"])
    assert rv.status_code == 422 and rv.json["code"] == "card_not_in_hand"


def test_a_token_cannot_act_or_read_in_another_game(client):
    game, _tokens = create(client)
    _other, other_tokens = create(client)
    rv = client.get(f"/games/{game['id']}/view", headers=bearer(other_tokens[0]))
    assert rv.status_code == 401 and rv.json["code"] == "invalid_token"
    assert client.get(f"/games/{game['id']}/view").status_code == 401
    rv = act(client, game["id"], other_tokens[game["awaiting"][0]], {"type": "pass"}, 1)
    assert rv.status_code == 401


def test_open_seats_are_claimed_and_the_game_starts_when_all_are_filled(client):
    rv = client.post("/games", json={"players": 2, "seats": [{"type": "human", "name": "Host"}, {"type": "open"}]})
    game, host = rv.json["game"], rv.json["tokens"][0]["token"]
    assert game["status"] == "open"
    listed = client.get("/games?status=open&page_size=100").json
    assert game["id"] in [g["id"] for g in listed]
    rv = act(client, game["id"], host, {"type": "pass"}, 1)
    assert rv.status_code == 409 and rv.json["code"] == "game_not_started"
    rv = client.post(f"/games/{game['id']}/seats/1", json={"name": "Guest"})
    assert rv.status_code == 201 and rv.json["game"]["status"] == "active" and rv.json["game"]["seat"] == 1
    assert client.post(f"/games/{game['id']}/seats/1", json={}).json["code"] == "seat_taken"
    assert client.post(f"/games/{game['id']}/seats/7", json={}).status_code == 404


def test_listing_paginates(client):
    for _ in range(3):
        create(client)
    rv = client.get("/games?status=active&page=1&page_size=2")
    assert rv.status_code == 200 and len(rv.json) == 2
    page = json.loads(rv.headers["X-Pagination"])  # JSON text, as the spec's header schema says
    assert page["page"] == 1 and page["total"] >= 3 and page["next_page"] == 2


def test_presets_list_every_preset_with_its_options(client):
    presets = {p["name"]: p for p in client.get("/rules/presets").json}
    assert set(presets) == set(PRESETS)
    assert presets["traditional"]["players"] == [2, 4]
    assert presets["runda"]["options"]["announce"]["when"] == "in_turn_first_deal"


def test_bad_rules_are_422_naming_the_option(client):
    rv = client.post("/games", json={"players": 3, "rules": {"preset": "traditional"}})
    assert rv.status_code == 422 and rv.json["option"] == "deal"
    rv = client.post("/games", json={"players": 2, "rules": {"preset": "classic", "jokers": 2}})
    assert rv.status_code == 422
    assert rv.json["errors"] == [{"location": "json", "field": "rules.jokers", "message": "Unknown field."}]


@pytest.mark.parametrize("method, path, body, headers, status", [
    ("get", "/games/unknown", None, {}, 404),
    ("get", "/nowhere", None, {}, 404),
    ("delete", "/games", None, {}, 405),
    ("post", "/games", "{not json", {"Content-Type": "application/json"}, 400),
    ("post", "/games", "players=2", {"Content-Type": "text/plain"}, 415),
    ("post", "/games", '{"players": 2, "seed": "' + "x" * 70000 + '"}', {"Content-Type": "application/json"}, 413),
    ("get", "/games//view", None, {}, 404),  # no redirect in HTML for a doubled slash
    ("post", "/games", '{"players": 2}', {"Content-Type": "application/json", "Idempotency-Key": ""}, 422),
    ("get", "/bots/me/turns", None, {}, 401),  # the missing token first, not the query
    ("get", "/bots/me/turns?after=", None, {}, 401),
    ("get", "/games/g/view?after_version=x", None, {}, 401),
    ("post", "/games/g/actions", '{"type": "pass"}', {"Content-Type": "application/json"}, 401),
])
def test_every_error_is_problem_json_with_a_code(client, method, path, body, headers, status):
    rv = getattr(client, method)(path, data=body, headers=headers)
    assert rv.status_code == status and rv.content_type == PROBLEM
    assert rv.json["status"] == status and rv.json["code"]
    if status == 405:
        assert "GET" in rv.headers["Allow"]


def test_events_after_n_are_the_log_as_this_viewer_may_see_it(client):
    game, tokens = create(client)
    all_events = client.get(f"/games/{game['id']}/events").json
    assert [e["id"] for e in all_events] == list(range(1, len(all_events) + 1))
    assert client.get(f"/games/{game['id']}/events?after=1").json == all_events[1:]
    deal = next(e for e in all_events if e["type"] == "deal")
    assert deal["hand"] is None
    own = client.get(f"/games/{game['id']}/events", headers=bearer(tokens[0])).json
    assert next(e for e in own if e["type"] == "deal")["hand"] == seat_view(client, game["id"], tokens[0])["hand"]


def test_provably_fair_the_seed_revealed_at_game_over_redeals_every_round(client):
    game, tokens = create(client, preset="elaborate")
    final, _ = play_to_the_end(client, game, tokens, random.Random(5))
    seed, salt = final["seed"], final["seed_salt"]
    assert game["dealing"] == "server" and len(salt) == 32
    assert hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest() == game["seed_commitment"]
    deals = [e for e in client.get(f"/games/{game['id']}/events?limit=2000").json if e["type"] == "deal"]
    first_deals = [e for e in deals if e["deal"] == 0]
    for deal in first_deals:
        deck = shuffled_deck(seed, deal["round"])
        assert deal["hand_counts"] == [4, 4]
        assert deck  # the order re-deals: seat after the dealer gets the first card
        seat_first = (deal["dealer"] + 1) % 2
        own = client.get(f"/games/{game['id']}/events?after={deal['id'] - 1}&limit=1",
                         headers=bearer(tokens[seat_first])).json[0]
        assert own["hand"] == sorted((CARD_IDS[c] for c in deck[0:8:2]), key=CARD_IDS.index)


def test_a_numeric_seed_is_taken_as_its_text(client):
    game, tokens = create(client, preset="elaborate", seed=1234)
    final, _ = play_to_the_end(client, game, tokens, random.Random(3))
    assert final["seed"] == "1234" and final["dealing"] == "creator_seed"


def test_a_short_seed_cannot_be_searched_out_of_the_commitment(client):
    """The commitment covers a 128-bit salt drawn by the server: trying every short seed finds nothing."""
    game, _ = create(client, seed=1234)
    assert game["dealing"] == "creator_seed"
    assert all(hashlib.sha256(text.encode()).hexdigest() != game["seed_commitment"]
               for n in range(10_000) for text in (str(n), f":{n}"))


def test_a_game_dealt_from_a_creators_deck_says_so_in_listings_before_anyone_joins(client):
    from app.engine import CARD_IDS
    game, _ = create(client, deck=list(CARD_IDS), seats=[{"type": "human"}, {"type": "open"}])
    listed = [g for g in client.get("/games?status=open&page_size=100").json if g["id"] == game["id"]]
    assert game["dealing"] == "creator_deck" and listed[0]["dealing"] == "creator_deck"


def test_finished_games_expire_kept_as_one_compressed_value(app, client):
    """Issue 42: nothing grows with a finished game: its document and events become one value,
    read through the same API, and it expires; beside it, the line a listing shows (issue 50)."""
    from app.ops.keys import events_key, state_key
    game, tokens = create(client, preset="elaborate", seed="expiry")
    _, _ = play_to_the_end(client, game, tokens, random.Random(2))
    redis = app.services.store.redis
    ttl = app.config["FINISHED_GAME_TTL"]
    assert 0 < redis.ttl(state_key(game["id"])) <= ttl and not redis.exists(events_key(game["id"]))
    assert set(redis.hkeys(state_key(game["id"]))) == {b"version", b"packed", b"listing"}
    events = client.get(f"/games/{game['id']}/events?limit=2000").json
    assert [e["id"] for e in events] == list(range(1, len(events) + 1)) and events[-1]["type"] == "game_over"
    assert client.get(f"/games/{game['id']}/events?after=3&limit=2").json == events[3:5]
    view = client.get(f"/games/{game['id']}").json
    assert view["status"] == "finished" and view["event_count"] == len(events)
    assert app.services.store.event_counts([game["id"]]) == {game["id"]: len(events)}
    assert redis.memory_usage(state_key(game["id"])) < 12_000


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("body", [
    "[" * 30_000 + "]" * 30_000,                             # deeper than the parser can go
    '{"players": 2, "rules": ' + '{"a": ' * 40 + "1" + "}" * 41,  # deeper than 32 levels
    '{"players": ' + "2" * 5000 + "}",                       # more digits than int() reads
    '{"players": 2, "seed": ' + "7" * 5000 + "}",
])
def test_bodies_no_parser_can_read_safely_are_422_problems(client, body):
    rv = client.post("/games", data=body, headers=JSON)
    assert rv.status_code == 422 and rv.content_type == PROBLEM and rv.json["field"] == "body"


def test_huge_integers_in_an_action_are_422_and_change_nothing(client):
    game, tokens = create(client)
    rv = client.post(f"/games/{game['id']}/actions", data='{"type": "declare", "rank": ' + "1" * 5000 + "}",
                     headers={**JSON, **bearer(tokens[game["awaiting"][0]]), "If-Match": '"1"'})
    assert rv.status_code == 422 and client.get(f"/games/{game['id']}").json["version"] == 1


@pytest.mark.parametrize("if_match", ["²", '"¹"', "³", "9" * 40])
def test_an_if_match_that_is_no_ascii_version_is_stale(client, if_match):
    game, tokens = create(client)
    rv = client.post(f"/games/{game['id']}/actions", json={"type": "pass"},
                     headers={**bearer(tokens[game["awaiting"][0]]), "If-Match": if_match})
    assert rv.status_code == 412 and rv.content_type == PROBLEM


@pytest.mark.parametrize("if_match, matches", [
    ('"{v}"', True),
    ('"{before}", "{v}"', True),            # a list matches when one tag names the version
    ('"{v}", "{before}"', True),
    ('"{before}", "{later}"', False),
    ('W/"{v}"', False),                     # RFC 9110 §13.1.1: If-Match compares strongly
    ('W/"{v}", "{before}"', False),
    ('W/"{before}", "{v}"', True),
    ("*", True),                            # any current version; the write itself still races (412)
])
def test_if_match_compares_entity_tags_strongly_as_rfc_9110_says(client, if_match, matches):
    game, tokens = create(client, preset="traditional")  # both seats decide first: a pass is legal
    version = game["version"]
    rv = client.post(f"/games/{game['id']}/actions", json={"type": "pass"}, headers={
        **bearer(tokens[game["awaiting"][0]]),
        "If-Match": if_match.format(v=version, before=version - 1, later=version + 1)})
    assert rv.status_code == (200 if matches else 412), rv.json
    assert client.get(f"/games/{game['id']}").json["version"] == version + (1 if matches else 0)


def test_if_none_match_compares_weakly(client):
    game, _ = create(client)
    for header in (f'W/"{game["version"]}"', f'"0", "{game["version"]}"', "*"):
        assert client.get(f"/games/{game['id']}", headers={"If-None-Match": header}).status_code == 304
    assert client.get(f"/games/{game['id']}", headers={"If-None-Match": '"0"'}).status_code == 200


@pytest.mark.parametrize("last_event_id", ["²", "99999999999999999999", "-1"])
def test_a_last_event_id_that_is_no_event_id_is_422_before_the_stream_starts(client, last_event_id):
    game, _ = create(client)
    rv = client.get(f"/games/{game['id']}/stream", headers={"Last-Event-ID": last_event_id})
    assert rv.status_code == 422 and rv.content_type == PROBLEM and rv.json["field"] == "Last-Event-ID"


def test_leaving_a_seat_after_game_over_is_409_and_changes_nothing(client):
    game, tokens = create(client, preset="elaborate", seed="leave-late")
    final, _ = play_to_the_end(client, game, tokens, random.Random(1))
    rv = client.post(f"/games/{game['id']}/seats/0/leave", json={"bot": "greedy"}, headers=bearer(tokens[0]))
    assert rv.status_code == 409 and rv.json["code"] == "game_over"
    assert client.get(f"/games/{game['id']}").json["version"] == final["version"]


@pytest.mark.parametrize("body, field", [
    ({"players": "2"}, "players"),
    ({"players": 2.5}, "players"),
    ({"players": True}, "players"),
    ({"players": 2, "rules": {"teams": "yes"}}, "rules.teams"),
    ({"players": 2, "rules": {"capture_runs": 1}}, "rules.capture_runs"),
    ({"players": 2, "rules": {"target": 1001}}, "rules.target"),
    ({"players": 2, "rules": {"target": 10**18}}, "rules.target"),
    ({"players": 2, "rules": {"missa_points": 101}}, "rules.missa_points"),
    ({"players": 2, "rules": {"announce": {"ronda_points": "1"}}}, "rules.announce.ronda_points"),
    ({"players": 2, "rules": {"preset": "c" * 41}}, "rules.preset"),
    ({"players": 2, "seats": [{"type": "bot", "bot": "b" * 41}, {"type": "open"}]}, "seats.0.bot"),
    ({"players": 2, "turn_timeout_seconds": "30"}, "turn_timeout_seconds"),
])
def test_out_of_bounds_or_wrongly_typed_fields_are_422_naming_the_field(client, body, field):
    """Every request's work is bounded, and nothing is coerced: the creator asks for what it means."""
    rv = client.post("/games", json=body)
    assert rv.status_code == 422 and rv.content_type == PROBLEM
    assert field in [error["field"] for error in rv.json["errors"]]


def test_the_largest_target_is_accepted(client):
    rv = client.post("/games", json={"players": 2, "rules": {"preset": "classic", "target": 1000}})
    assert rv.status_code == 201 and rv.json["game"]["rules"]["target"] == 1000


def test_http_conventions_location_www_authenticate_if_match_any_and_idempotent_matches(client):
    created = client.post("/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "open"}]})
    game_id, token = created.json["game"]["id"], created.json["tokens"][0]["token"]
    claimed = client.post(f"/games/{game_id}/seats/1", json={"name": "Omar"})
    assert claimed.status_code == 201 and claimed.headers["Location"] == f"/games/{game_id}/view"
    refused = client.get(f"/games/{game_id}/view", headers={"Authorization": "Bearer not-a-token"})
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
    seat = client.get(f"/games/{game_id}").json["awaiting"][0]
    tokens = {0: token, 1: claimed.json["token"]}
    view = client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {tokens[seat]}"}).json
    acted = client.post(f"/games/{game_id}/actions", json=view["legal_actions"][0],
                        headers={"Authorization": f"Bearer {tokens[seat]}", "If-Match": "*"})
    assert acted.status_code == 200 and acted.headers["ETag"] == f'"{view["version"] + 1}"'  # * matched
    body = {"bots": ["random", "random"], "games": 1, "rules": {"preset": "simple"}}
    key = {"Idempotency-Key": f"match-{game_id}"}
    first, again = client.post("/matches", json=body, headers=key), client.post("/matches", json=body, headers=key)
    assert first.status_code == 202 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json["id"] == first.json["id"]


@pytest.mark.slow
def test_opening_a_table_reads_the_same_bytes_at_50_and_at_8000_actions(app, client):
    """What the web client reads to open a game (app/static/client/game.js): the seat's view and
    the log from the current deal's first event (`deal_event_id`), never the whole log."""
    from app.engine import action_to_dict, game_from_dict
    service = app.services.games

    def opened_after(actions):  # the seed and choices of a game that lasts 8,464 actions
        game, tokens = create(client, rules={"preset": "classic", "target": 1000}, seed="long-0", first_dealer=0)
        rng = random.Random(8)
        for _ in range(actions):
            loaded = service.load(game["id"])
            engine = game_from_dict(loaded.doc["engine"], record_events=False)
            seat = engine.awaiting()[0]
            service.act_as(loaded, seat, loaded.version, action_to_dict(rng.choice(engine.legal_actions(seat))))
        view = client.get(f"/games/{game['id']}/view", headers=bearer(tokens[0]))
        log = client.get(f"/games/{game['id']}/events?after={view.json['deal_event_id'] - 1}&limit=2000",
                         headers=bearer(tokens[0]))
        assert view.json["event_count"] > actions and log.json[-1]["id"] == view.json["event_count"]
        return len(view.data) + len(log.data), view.json["event_count"]

    short, long_ = opened_after(50), opened_after(8000)
    print(
        f"bytes to open a game: {short[0]} at 50 actions ({short[1]} events), {long_[0]} at 8,000 ({long_[1]} events)"
    )
    assert 1 / 1.5 <= long_[0] / short[0] <= 1.5


def test_a_match_retried_after_its_idempotency_record_was_lost_is_the_same_match(app, client):
    """A first run whose answer was lost (a killed worker process, Redis losing its last second)
    leaves a match but no record of its answer: the retry with the same key finds that match
    instead of starting a second one, whose games would run and be rated unseen."""
    body = {"bots": ["random", "greedy"], "games": 1, "rules": {"preset": "simple"}}
    key = {"Idempotency-Key": f"lost-{uuid.uuid4().hex}"}
    first = client.post("/matches", json=body, headers=key)
    assert first.status_code == 202
    redis = app.services.store.redis
    records = [
        name for name in redis.scan_iter("idempotency:*") if first.json["id"].encode() in (redis.get(name) or b"")
    ]
    assert len(records) == 1
    redis.delete(*records)
    again = client.post("/matches", json=body, headers=key)
    assert again.status_code == 202 and "Idempotent-Replayed" not in again.headers
    assert again.json["id"] == first.json["id"]


@pytest.mark.parametrize("preset, players", [("classic", 2), ("traditional", 4), ("runda", 3), ("elaborate", 2)])
def test_a_finished_game_replays_from_its_seed_with_every_hand_after_each_action(client, preset, players):
    """Issue 43: the replay is the engine playing the log over (docs/rules.md §12: the seed makes
    every deck): a frame after the deal and after each action, ending at the final scores."""
    import random

    from http_helpers import play_to_the_end
    game, tokens = create(client, players=players, preset=preset)
    assert client.get(f"/games/{game['id']}/replay").json["code"] == "game_not_over"
    final, actions = play_to_the_end(client, game, tokens, random.Random(players))
    frames = client.get(f"/games/{game['id']}/replay").json
    steps = sum(2 if action.get("declare") else 1 for _, action in actions)
    assert len(frames) == steps + 1
    events = client.get(f"/games/{game['id']}/events?limit=2000").json
    first_deal = next(e for e in events if e["type"] == "deal")
    seat_zero_hand = client.get(f"/games/{game['id']}/events?limit=2000", headers={
        "Authorization": f"Bearer {tokens[0]}"}).json[first_deal["id"] - 1]["hand"]
    assert frames[0]["hands"][0] == seat_zero_hand and frames[0]["table"] == first_deal["table"]
    assert frames[-1]["scores"] == final["scores"] and frames[-1]["event_id"] == events[-1]["id"]
    for event in (e for e in events if e["type"] == "play"):  # the frame after a play: the card left the hand
        frame = next(f for f in frames if f["event_id"] >= event["id"])
        before = [f for f in frames if f["event_id"] < event["id"]][-1]
        assert event["card"] in before["hands"][event["seat"]]
        dealt_again = any(e["type"] == "deal" and event["id"] < e["id"] <= frame["event_id"] for e in events)
        assert dealt_again or event["card"] not in frame["hands"][event["seat"]]


def test_the_view_carries_the_turn_clock_of_the_person_awaited_and_none_without_a_timer(client):
    before = time.time()
    timed = client.post("/games", json={"players": 2, "turn_timeout_seconds": 600, "seats": [
        {"type": "human", "name": "Amina"}, {"type": "human", "name": "Omar"}]}).json["game"]
    assert before + 600 <= timed["move_due_at"] <= time.time() + 600
    untimed, _ = create(client, turn_timeout_seconds=None)  # opted out of the people's default timer
    assert untimed["move_due_at"] is None and untimed["turn_timeout_seconds"] is None
    defaulted, _ = create(client)  # two people: a day's timer unless opted out (issue 61, 3)
    assert defaulted["turn_timeout_seconds"] == 24 * 3600 and defaulted["move_due_at"] is not None
    against_bot = client.post("/games", json={"players": 2, "turn_timeout_seconds": 600, "first_dealer": 0, "seats": [
        {"type": "human", "name": "Amina"}, {"type": "bot", "bot": "random"}]}).json["game"]
    assert against_bot["awaiting"] == [1] and against_bot["move_due_at"] is None  # the bot's turn: no clock
