"""Every request example in the spec, sent as it is to a live server, gets its documented success."""

import json
from itertools import product
from pathlib import Path

import pytest
import requests

from app.engine import Game, RondaError, perform, rules_from_request
from app.engine.rules import PRESETS
from conftest import LIVE_OPERATOR_KEY

SPEC = json.loads((Path(__file__).resolve().parent.parent / "openapi" / "openapi.json").read_text())


def documented_examples():
    for operations in SPEC["paths"].values():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            examples = content.get("examples") or (
                {"example": {"value": content["example"]}} if "example" in content else {}
            )
            for name, example in examples.items():
                success = next(status for status in operation["responses"] if status.startswith("2"))
                yield pytest.param(operation["operationId"], example["value"], int(success),
                                   id=f"{operation['operationId']}: {name}")


def test_every_request_body_has_an_example():
    with_body = {op["operationId"] for ops in SPEC["paths"].values() for op in ops.values()
                 if isinstance(op, dict) and "requestBody" in op}
    assert with_body == {operation for operation, _, _ in (p.values for p in documented_examples())}


def two_humans(base, **extra):
    created = requests.post(f"{base}/games", json={"players": 2, **extra, "seats": [
        {"type": "human", "name": "A"}, {"type": "human", "name": "B"}]})
    assert created.status_code == 201, created.text
    body = created.json()
    return body["game"], {t["seat"]: t["token"] for t in body["tokens"]}


def a_game_where_it_is_legal(action):
    """A preset and seed whose first awaited seat may take `action` (tried on the engine)."""
    for preset, seed in product(PRESETS, range(400)):
        game = Game(rules_from_request({"preset": preset}), 2, seed=str(seed))
        try:
            perform(game, game.awaiting()[0], action)
        except RondaError:
            continue
        return preset, str(seed)
    raise AssertionError(f"no preset and seed makes {action} legal")


def send(base, operation, example):
    if operation == "createGame":
        return requests.post(f"{base}/games", json=example)
    if operation == "createMatch":
        return requests.post(f"{base}/matches", json=example)
    if operation == "createTournament":
        return requests.post(f"{base}/tournaments", json=example)
    if operation == "createBot":
        return requests.post(f"{base}/bots", json=example)
    if operation == "createPlayer":
        return requests.post(f"{base}/players", json=example)
    if operation in ("renameMe", "createMyToken"):
        mine = {"Authorization": f"Bearer {requests.post(f'{base}/players', json={'name': 'Q'}).json()['token']}"}
        return requests.request("PATCH" if operation == "renameMe" else "POST",
                                f"{base}/players/me{'/tokens' if operation == 'createMyToken' else ''}",
                                json=example, headers=mine)
    if operation == "createTicket":
        token = requests.post(f"{base}/players", json={"name": "Q"}).json()["token"]
        answer = requests.post(
            f"{base}/matchmaking/tickets", json=example, headers={"Authorization": f"Bearer {token}"}
        )
        requests.delete(
            f"{base}/matchmaking/tickets/{answer.json()['id']}", headers={"Authorization": f"Bearer {token}"}
        )
        return answer
    if operation == "claimSeat":
        game = requests.post(
            f"{base}/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "open"}]}
        ).json()
        return requests.post(f"{base}/games/{game['game']['id']}/seats/1", json=example)
    if operation == "leaveSeat":
        game, tokens = two_humans(base)
        return requests.post(f"{base}/games/{game['id']}/seats/0/leave", json=example,
                             headers={"Authorization": f"Bearer {tokens[0]}"})
    if operation == "playAction":
        preset, seed = a_game_where_it_is_legal(example)
        game, tokens = two_humans(base, rules={"preset": preset}, seed=seed)
        seat = game["awaiting"][0]
        return requests.post(f"{base}/games/{game['id']}/actions", json=example, headers={
            "Authorization": f"Bearer {tokens[seat]}", "If-Match": f'"{game["version"]}"'})
    operator = {"Authorization": f"Bearer {LIVE_OPERATOR_KEY}"}
    if operation == "createApp":
        return requests.post(f"{base}/admin/apps", json=example, headers=operator)
    if operation in ("rotateAppKey", "setAppQuotas", "createWebhook", "updateWebhook", "rotateWebhookSecret",
                     "recoverDeliveries", "signInPlayer"):
        made = requests.post(f"{base}/admin/apps", json={"name": "Examples"}, headers=operator).json()
        if operation == "rotateAppKey":
            return requests.post(f"{base}/admin/apps/{made['app']['id']}/rotate", json=example, headers=operator)
        if operation == "setAppQuotas":
            return requests.patch(f"{base}/admin/apps/{made['app']['id']}/quotas", json=example, headers=operator)
        server = {"X-Ronda-App": made["server_key"]}
        if operation == "signInPlayer":
            return requests.post(f"{base}/apps/me/players/sign-in", json=example, headers=server)
        if operation == "createWebhook":
            return requests.post(f"{base}/apps/me/webhooks", json=example, headers=server)
        endpoint = requests.post(f"{base}/apps/me/webhooks", headers=server, json={
            "url": "https://hooks.example.com/ronda", "events": ["your_turn"]}).json()["id"]
        if operation == "updateWebhook":
            return requests.patch(f"{base}/apps/me/webhooks/{endpoint}", json=example, headers=server)
        if operation == "rotateWebhookSecret":
            return requests.post(f"{base}/apps/me/webhooks/{endpoint}/secret", json=example, headers=server)
        return requests.post(f"{base}/apps/me/webhooks/{endpoint}/recover", json=example, headers=server)
    raise AssertionError(f"no way to send an example of {operation}: add one here")


@pytest.mark.parametrize("operation, example, success", list(documented_examples()))
def test_each_documented_request_example_succeeds_on_a_live_server(live_server, operation, example, success):
    answer = send(live_server, operation, example)
    assert answer.status_code == success, answer.text
