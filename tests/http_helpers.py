"""HTTP stories: small helpers so API tests read as requests and answers."""

import time

from app.ops.window_counts import WINDOW_SECONDS


def in_one_window(seconds_needed: float):
    """A rate budget is per minute window: wait for the next window when this one has fewer than
    `seconds_needed` left, so a budget is spent and checked in one window."""
    if time.time() % WINDOW_SECONDS > WINDOW_SECONDS - seconds_needed:
        time.sleep(WINDOW_SECONDS - time.time() % WINDOW_SECONDS)


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def create(client, players=2, preset="classic", token=None, **body):
    """A game of humans (or `seats`); `token`, a player token for the seat marked `mine`."""
    seats = body.pop("seats", [{"type": "human", "name": f"P{i}"} for i in range(players)])
    rv = client.post("/games", json={"players": players, "rules": {"preset": preset}, "seats": seats, **body},
                     headers=bearer(token) if token else {})
    assert rv.status_code == 201, rv.json
    return rv.json["game"], {t["seat"]: t["token"] for t in rv.json["tokens"]}


def seat_view(client, game_id, token):
    rv = client.get(f"/games/{game_id}/view", headers=bearer(token))
    assert rv.status_code == 200, rv.json
    return rv.json


def act(client, game_id, token, action, version):
    return client.post(f"/games/{game_id}/actions", json=action,
                       headers={**bearer(token), "If-Match": f'"{version}"'})


def play_to_the_end(client, game, tokens, chooser, limit=5000):
    """Random legal actions, each chosen from the acting seat's own view, until game over."""
    actions = []
    game_id = game["id"]
    spectator = client.get(f"/games/{game_id}").json
    while spectator["status"] != "finished":
        seat = spectator["awaiting"][0]
        view = seat_view(client, game_id, tokens[seat])
        action = chooser.choice(view["legal_actions"])
        rv = act(client, game_id, tokens[seat], action, view["version"])
        assert rv.status_code == 200, rv.json
        actions.append((seat, action))
        spectator = client.get(f"/games/{game_id}").json
        assert len(actions) < limit
    return spectator, actions
