"""The compose files wire what the code reads: names of services, the URLs that point at them."""

from pathlib import Path

import yaml

from app.ops.connection import startup_nodes

ROOT = Path(__file__).resolve().parent.parent


def test_the_cluster_shape_lists_every_node_and_each_worker_serves_one_of_the_queue_redis():
    compose = yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())
    services = compose["services"]
    api = services["api"]["environment"]
    nodes = {node.host for node in startup_nodes(api["REDIS_CLUSTER_URL"])}
    assert nodes == {name for name in services if name.startswith("node-")} and len(nodes) == 6
    assert all("--cluster-enabled yes" in services[name]["command"][-1] for name in nodes)
    queues = api["REDIS_QUEUE_URLS"].split(",")
    assert {url.split("//")[1].split(":")[0] for url in queues} == {"queue-a", "queue-b"} <= set(services)
    workers = [name for name in services if name.startswith("worker")]
    served = {services[name]["environment"]["REDIS_URL"] for name in workers}
    assert served == set(queues)  # every queue Redis has workers, none serves a queue the API does not fill
    assert all(services[name]["command"] == ["ronda", "worker"] for name in workers)
    assert api["RONDA_SECRET_KEY"].startswith("${RONDA_SECRET_KEY:?")  # no placeholder secret
