"""Where an action's time goes, layer by layer, beside the bare app bench/api_load.py measures
against: both Flask apps called in-process through WSGI on a real Redis (no gunicorn, no client
in the same CPU), real two-seat games played with random legal moves, the layers taking turns
so that all see the same machine.

Prints the median microseconds an action costs at each layer:
  store      the bare app's Redis calls alone: read the game, write it back (compare-and-set)
  bare app   those calls behind a bare Flask route (api_load's ceiling)
  service    GameService.act and the answer's JSON, no HTTP: the engine, the seat's view, the
             events, the write and its effects
  no hooks   the whole app with its before/after request hooks taken off (a measurement only:
             limits, app scope, idempotency, request id, JSON checks, metrics)
  action     the whole app, limits on
and what follows: the HTTP layer each app adds to its Redis or service work, the hooks' share,
and the best share of the bare app an action could reach if its HTTP layer cost no more than
the bare app's (bare app / (service + the bare app's HTTP layer)).

Run: .venv/bin/python bench/action_cost.py [--rounds 5] [--actions 600]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from werkzeug.test import EnvironBuilder  # noqa: E402

TWO_PEOPLE = {"players": 2, "seats": [{"type": "human"}] * 2}


def timed_call(wsgi_app, method: str, path: str, body=None, headers=None) -> tuple[int, dict | None, float]:
    """(status, answer, seconds the app took): the environ is built before the clock starts."""
    environ = EnvironBuilder(path=path, method=method, json=body, headers=headers).get_environ()
    status = []
    started = time.perf_counter()
    chunks = wsgi_app(environ, lambda line, _headers, _exc=None: status.append(int(line.split()[0])))
    data = b"".join(chunks)
    getattr(chunks, "close", lambda: None)()
    took = time.perf_counter() - started
    return status[0], (json.loads(data) if data else None), took


class Layers:
    def __init__(self, app, bare_app, seed: int):
        self.app, self.bare_app, self.rng = app, bare_app, random.Random(seed)
        self.games = app.services.games
        self.hooks = (dict(app.before_request_funcs), dict(app.after_request_funcs))

    def _games(self, actions: int):
        """(game id, seat token, version, a random legal action) for `actions` moves of new games."""
        played = 0
        while played < actions:
            _, created, _ = timed_call(self.app.wsgi_app, "POST", "/games", TWO_PEOPLE)
            tokens = {t["seat"]: t["token"] for t in created["tokens"]}
            game = created["game"]
            while game["status"] != "finished" and played < actions:
                token = tokens[game["awaiting"][0]]
                with self.app.app_context():
                    view, version = self.games.view(game["id"], token)
                action = (self.rng.choice(view["legal_actions"]) if view["phase"] != "playing"
                          else {"type": "play", "card": self.rng.choice(view["hand"])})
                game = yield game["id"], token, version, action
                played += 1

    def _over_http(self, actions: int) -> float:
        moves, spent = self._games(actions), 0.0
        move = next(moves)
        try:
            while True:
                game_id, token, version, action = move
                status, answer, took = timed_call(self.app.wsgi_app, "POST", f"/games/{game_id}/actions", action,
                                                  {"Authorization": f"Bearer {token}", "If-Match": f'"{version}"'})
                assert status == 200, answer
                spent += took
                move = moves.send(answer["game"])
        except StopIteration:
            return spent / actions

    def action(self, actions: int) -> float:
        return self._over_http(actions)

    def no_hooks(self, actions: int) -> float:
        self.app.before_request_funcs.clear()
        self.app.after_request_funcs.clear()
        try:
            return self._over_http(actions)
        finally:
            self.app.before_request_funcs.update(self.hooks[0])
            self.app.after_request_funcs.update(self.hooks[1])

    def service(self, actions: int) -> float:
        moves, spent = self._games(actions), 0.0
        move = next(moves)
        with self.app.app_context():
            try:
                while True:
                    game_id, token, version, action = move
                    started = time.perf_counter()
                    acted = self.games.act(game_id, token, version, action)
                    json.dumps({"game": acted.view, "events": acted.events}, separators=(",", ":"))
                    spent += time.perf_counter() - started
                    move = moves.send(acted.view)
            except StopIteration:
                return spent / actions

    def _a_game(self) -> str:
        _, created, _ = timed_call(self.app.wsgi_app, "POST", "/games", TWO_PEOPLE)
        return created["game"]["id"]

    def store(self, actions: int) -> float:
        game_id, store, spent = self._a_game(), self.games.store, 0.0
        for _ in range(actions):
            started = time.perf_counter()
            version, doc = store.load(game_id)
            store.compare_and_set(game_id, version, doc, [], doc["status"])
            spent += time.perf_counter() - started
        return spent / actions

    def bare(self, actions: int) -> float:
        game_id = self._a_game()
        return sum(timed_call(self.bare_app.wsgi_app, "POST", f"/ceiling/{game_id}", {})[2]
                   for _ in range(actions)) / actions


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every layer, taking turns")
    parser.add_argument("--actions", type=int, default=600, help="actions per layer per round")
    args = parser.parse_args()
    from redis_server import RedisServer
    server = None if os.environ.get("REDIS_URL") else RedisServer()
    if server:
        os.environ["REDIS_URL"] = server.start()
    for limit in ("RONDA_RATE_LIMIT_PER_ADDRESS", "RONDA_RATE_LIMIT_PER_TOKEN"):
        os.environ[limit] = "1000000000"  # counted on every request, never refusing here
    try:
        from api_load import ceiling_app

        from app import create_app
        layers = Layers(create_app(), ceiling_app(), seed=1)
        names = ("store", "bare", "service", "no_hooks", "action")
        layers.action(100)  # warm: connections, caches, the scripts loaded
        rounds = [{name: getattr(layers, name)(args.actions) * 1e6 for name in names} for _ in range(args.rounds)]
    finally:
        if server:
            server.stop()
    cost = {name: statistics.median(r[name] for r in rounds) for name in names}
    print(f"Redis at {os.environ['REDIS_URL']}, {args.rounds} rounds x {args.actions} actions a layer, "
          "medians, microseconds an action")
    labels = {"store": "store: read + compare-and-set", "bare": "bare app (api_load's ceiling)",
              "service": "service: act + the answer's JSON", "no_hooks": "the app without its hooks",
              "action": "action: the whole app"}
    for name in names:
        spread = ", ".join(f"{r[name]:.0f}" for r in rounds)
        print(f"  {labels[name]:<36}{cost[name]:>7.0f}   ({spread})")
    bare_http = cost["bare"] - cost["store"]
    print(f"HTTP layer: the bare app's {bare_http:.0f}, the app's {cost['action'] - cost['service']:.0f} "
          f"(hooks {cost['action'] - cost['no_hooks']:.0f}); the service beyond the store's calls "
          f"{cost['service'] - cost['store']:.0f}")
    print(f"action / bare app: {cost['bare'] / cost['action']:.2f}; with an HTTP layer costing no more than the "
          f"bare app's: {cost['bare'] / (cost['service'] + bare_http):.2f} at best")


if __name__ == "__main__":
    main()
