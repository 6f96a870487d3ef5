import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from redis_server import RedisServer  # noqa: E402


@pytest.fixture(scope="session")
def redis_url():
    server = RedisServer()
    yield server.start()
    server.stop()


@pytest.fixture(scope="session")
def app(redis_url):
    from app import create_app
    return create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})


@pytest.fixture
def client(app):
    return app.test_client()
