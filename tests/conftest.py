import os
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# Every test registers its bots and makes its players from 127.0.0.1, run after run against a Redis
# that outlives the run (CI's), so the per-address limits are off here, for the processes tests start
# too; test_outside_bots checks the limits with its own settings.
os.environ["RONDA_BOT_REGISTRATIONS_PER_HOUR"] = os.environ["RONDA_BOTS_PER_ADDRESS"] = "0"
os.environ["RONDA_APP_PLAYERS_PER_ADDRESS_HOUR"] = "0"  # players too; test_apps checks the cap with its own

from redis_server import OwnRedisServer, RedisClusterServers, RedisServer


@pytest.fixture(scope="session")
def redis_url():
    server = RedisServer()
    yield server.start()
    server.stop()


def pytest_collection_modifyitems(items):
    """Every test on a Redis Cluster is slow (six servers to start and fail over), wherever it lives."""
    for item in items:
        if "cluster_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def cluster_url():
    """A real 3-master Redis Cluster, started here for the store-facing tests."""
    cluster = RedisClusterServers(masters=3)
    yield cluster.start()
    cluster.stop()


@pytest.fixture(scope="module", params=["redis", pytest.param("cluster", marks=pytest.mark.slow)])
def store_config(request, redis_url):
    """The store-facing modules run twice: games on one Redis, then on a Redis Cluster (with the
    job queues on the plain Redis, since RQ does not run on a cluster)."""
    if request.param == "cluster":
        return {"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": request.getfixturevalue("cluster_url")}
    return {"REDIS_URL": redis_url}


@pytest.fixture(scope="session")
def app(redis_url):
    from app import create_app
    return create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})


@pytest.fixture
def client(app):
    return app.test_client()


LIVE_OPERATOR_KEY = "live-server-operator-key"  # /admin/apps on live_server


@pytest.fixture(scope="session")
def live_server(redis_url):
    """The app on a real HTTP server (bots on its own threads, no rate limits), for whole clients."""
    from werkzeug.serving import make_server

    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "OPERATOR_KEY": LIVE_OPERATOR_KEY,
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0, "ANALYSIS_BUDGET_MS": 2})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def own_redis():
    """A redis-server of the test's own, to kill, freeze and restart."""
    server = OwnRedisServer()
    server.start()
    yield server
    server.thaw()
    server.stop()
