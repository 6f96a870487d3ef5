"""Whole games through HTTP only, checked against the engine; concurrency; no leak over the wire."""

import json
import random
import threading

import pytest

from app.engine import CARD_IDS, PRESETS, Game, game_from_dict, perform
from app.ops.keys import state_key
from http_helpers import act, create, play_to_the_end, seat_view
from spec_helpers import event_validators, validator
from test_properties import card_ids_in


@pytest.fixture(scope="module")
def app(store_config):
    from app import create_app
    return create_app({**store_config, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})


SETUPS = [(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]
@pytest.mark.parametrize("preset, players", SETUPS)
def test_a_whole_game_over_http_matches_the_engine_replaying_it(client, preset, players):
    game, tokens = create(client, players=players, preset=preset, seed=f"http-{preset}-{players}", first_dealer=0)
    final, actions = play_to_the_end(client, game, tokens, random.Random(players))
    replay = Game(PRESETS[preset], players, seed=f"http-{preset}-{players}", first_dealer=0)
    for seat, action in actions:
        perform(replay, seat, action)
    assert final["scores"] == replay.scores and final["winner"] == replay.winner
    assert final["status"] == "finished" and final["seed"] == f"http-{preset}-{players}"
    events, views = event_validators(), validator("GameView")
    for viewer in (None, *tokens):
        headers = {"Authorization": f"Bearer {tokens[viewer]}"} if viewer is not None else {}
        for event in client.get(f"/games/{game['id']}/events?limit=2000", headers=headers).json:
            events[event["type"]].validate(event)  # every kind of event, as every viewer sees it, matches the spec
    views.validate(final)


def test_sixteen_concurrent_actions_on_one_version_exactly_one_wins(app, client):
    game, tokens = create(client, seed="race")
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    barrier = threading.Barrier(16)
    statuses = []

    def send(action):
        local = app.test_client()
        barrier.wait()
        statuses.append(act(local, game["id"], tokens[seat], action, view["version"]).status_code)

    actions = [view["legal_actions"][i % len(view["legal_actions"])] for i in range(16)]
    threads = [threading.Thread(target=send, args=(a,)) for a in actions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] + [412] * 15
    ids = [e["id"] for e in client.get(f"/games/{game['id']}/events").json]
    assert ids == list(range(1, len(ids) + 1))
    assert seat_view(client, game["id"], tokens[seat])["version"] == view["version"] + 1


def hidden_cards(app, game_id, viewer):
    raw = app.services.store.redis.hget(state_key(game_id), "doc")
    state = game_from_dict(json.loads(raw)["engine"])
    seats = [s for s in range(state.players) if s != viewer]
    return {CARD_IDS[c] for s in seats for c in state.hands[s]} | {CARD_IDS[c] for c in state.stock}


@pytest.mark.parametrize("preset", ["classic", "traditional", "simple"])
def test_no_answer_leaks_a_hidden_card_to_a_seat_a_player_or_a_spectator(app, client, preset):
    player_token = client.post("/players", json={"name": "Leila"}).json["token"]
    seats = [{"type": "human", "name": f"P{i}", "mine": i == 2} for i in range(4)]
    # Seat 2 is the player's: their token reads that seat, and never another's hand.
    game, tokens = create(client, players=4, preset=preset, seed=f"leak-{preset}", seats=seats, token=player_token)
    viewers = {None: None, 0: tokens[0], 2: player_token}
    chooser = random.Random(3)
    for _ in range(40):
        for viewer, token in viewers.items():
            hidden = hidden_cards(app, game["id"], viewer)
            headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
            view = client.get(f"/games/{game['id']}" + ("/view" if viewer is not None else ""), headers=headers).json
            assert not card_ids_in(view) & hidden
            recent = client.get(f"/games/{game['id']}/events?after={max(0, view['event_count'] - 6)}",
                                headers=headers).json
            round_starts = [i for i, e in enumerate(recent) if e["type"] == "round_start"]
            assert not card_ids_in(recent[round_starts[-1] if round_starts else 0:]) & hidden
        spectator = client.get(f"/games/{game['id']}").json
        seat = spectator["awaiting"][0]
        own = seat_view(client, game["id"], tokens[seat])
        assert (
            act(client, game["id"], tokens[seat], chooser.choice(own["legal_actions"]), own["version"]).status_code
            == 200
        )


def test_tokens_are_random_and_never_stored_in_clear(app, client):
    game, tokens = create(client, players=4)
    assert len(set(tokens.values())) == 4
    assert all(len(t) >= 22 for t in tokens.values())  # 32 random bytes, url-safe: 256 bits
    raw = app.services.store.redis.hget(state_key(game["id"]), "doc").decode()
    assert not any(token in raw for token in tokens.values())
