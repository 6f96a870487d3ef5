"""A Redis Cluster master killed while games are played on it: acknowledged moves lost, and what
the durability setting (RONDA_WRITE_REPLICAS: WAIT for a replica before answering) costs.

Starts its own cluster (3 masters, a replica each) per run, plays 12 two-human games on
threads of one API process (the plain Redis for queues as the tests do), kills the master of
the first game's shard after 3 s, restarts it once its replica has taken over, and prints,
per setting: acknowledged moves lost, refused requests, seconds to fail over, action latency
p50/p99. Run: .venv/bin/python bench/failover.py [--runs 3]
"""

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from app import create_app
    from failover import play_through_a_failover
    from redis_server import RedisClusterServers, RedisServer
    queues = RedisServer()
    queues_url = queues.start()
    print(f"{'WRITE_REPLICAS':>14} {'run':>4} {'acked':>6} {'lost':>5} {'refused':>8} {'failover s':>11} "
          f"{'p50 ms':>7} {'p99 ms':>7}")
    try:
        for replicas in (0, 1):
            for run in range(args.runs):
                cluster = RedisClusterServers(masters=3, replicas=1)
                try:
                    app = create_app({"REDIS_URL": queues_url, "REDIS_CLUSTER_URL": cluster.start(),
                                      "WRITE_REPLICAS": replicas, "BOT_DISPATCH": "inprocess",
                                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
                    m = play_through_a_failover(app, cluster)
                    cuts = statistics.quantiles(m["latencies"], n=100)
                    print(f"{replicas:>14} {run + 1:>4} {m['acknowledged']:>6} {m['lost']:>5} {m['refused']:>8} "
                          f"{m['seconds_to_failover']:>11.1f} {cuts[49] * 1000:>7.1f} {cuts[98] * 1000:>7.1f}",
                          flush=True)
                finally:
                    cluster.stop()
    finally:
        queues.stop()


if __name__ == "__main__":
    main()
