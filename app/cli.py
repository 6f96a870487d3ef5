"""The `ronda` command: serve the API, run a bot worker, write the OpenAPI spec."""

import argparse
import json
import sys


def serve(args):
    from . import create_app
    app = create_app()
    mode = app.config["REDIS_URL"] or "embedded in-process store (set REDIS_URL for a real Redis)"
    print(f"Ronda API on http://{args.host}:{args.port}  docs: /docs  store: {mode}", file=sys.stderr)
    app.run(host=args.host, port=args.port, threaded=True)


def openapi(args):
    from . import create_app
    app = create_app()
    text = spec_text(app)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as out:
            out.write(text)


def spec_text(app) -> str:
    """The spec exactly as committed under openapi/: sorted keys, two-space indent."""
    with app.app_context():
        spec = app.extensions["ronda.api"].spec.to_dict()
    return json.dumps(spec, indent=2, sort_keys=True) + "\n"


def worker(args):
    import logging
    import os
    from workers.runner import run_worker
    from .config import Config
    logging.basicConfig(level=logging.INFO)
    url = os.environ.get("REDIS_URL")
    if not url:
        sys.exit("ronda worker needs REDIS_URL (the embedded mode runs bot moves inside `ronda serve`)")
    run_worker(url, Config.BOT_QUEUE, Config.BOT_STALL_SECONDS, burst=args.burst)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ronda", description="Ronda as a service")
    commands = parser.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser("serve", help="start the HTTP API",
                              description="Start the HTTP API. Without REDIS_URL it keeps games in an embedded "
                                          "in-process store: fine for one machine and trying things, not for production.")
    cmd.add_argument("--host", default="127.0.0.1")
    cmd.add_argument("--port", type=int, default=8000)
    cmd.set_defaults(run=serve)
    cmd = commands.add_parser("worker", help="run an RQ worker that computes bot moves",
                              description="Run an RQ worker for bot moves on REDIS_URL, with a sweeper that "
                                          "re-dispatches a bot turn whose job was lost (RONDA_BOT_STALL_SECONDS).")
    cmd.add_argument("--burst", action="store_true", help="stop when the queue is empty")
    cmd.set_defaults(run=worker)
    cmd = commands.add_parser("openapi", help="write the OpenAPI spec the code generates",
                              description="Write the OpenAPI document (JSON) that the running code serves.")
    cmd.add_argument("--output", default="-", help="file to write, '-' for standard output")
    cmd.set_defaults(run=openapi)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()
