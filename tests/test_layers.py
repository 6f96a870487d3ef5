"""The house keeps its shape: imports go one way (engine ← bots; engine ← stores ← services ←
HTTP), and every typed error reaches HTTP with a status of its own, never a guessed one."""

import ast
import re
import inspect
from pathlib import Path

from app import errors
from app.api.problems import ENGINE_STATUS
from app.engine import errors as engine_errors

APP = Path(__file__).resolve().parent.parent / "app"
STORES = ("games.store", "matches.store", "accounts.store")


def imports_of(path: Path) -> set[str]:
    """The modules a file imports, as absolute names."""
    package = ".".join(path.relative_to(APP.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_the_engine_and_the_bots_import_nothing_of_the_service():
    for room in ("engine", "bots"):
        for path in (APP / room).glob("*.py"):
            outside = {m for m in imports_of(path) if m.startswith("app.") and not m.startswith(f"app.{room}")
                       and not m.startswith("app.engine")}
            assert not outside, f"{path.name} imports {outside}"


def test_http_views_reach_the_stores_only_through_services():
    for path in (APP / "api").glob("*.py"):
        stores = {m for m in imports_of(path) if any(m.startswith(f"app.{store}") for store in STORES)}
        assert not stores, f"api/{path.name} imports {stores}"


def raw_store_uses(path: Path) -> list[str]:
    """Where a module reaches a Redis client itself, or looks a service up by a string key."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in ("redis", "pipeline", "pubsub"):
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "extensions":
            found.append(f"line {node.lineno}: app.extensions[...]")
    return found


def test_http_modules_ask_services_and_the_hub_never_redis_itself():
    """STYLE 16: idempotency records, health probes and subscriptions go through the stores' own
    methods; services are handed to the app once, typed (app.services, app.live)."""
    http = [*(APP / "api").glob("*.py"), APP / "web.py"]
    for path in [*http, APP / "live" / "hub.py", APP / "live" / "streams.py"]:
        assert not raw_store_uses(path), f"{path.relative_to(APP)}: {raw_store_uses(path)}"
    for path in http:
        assert not {m for m in imports_of(path) if m.split(".")[0] == "redis"}, f"{path.name} imports redis"


def test_every_engine_error_has_its_http_status():
    codes = {cls.code for _, cls in inspect.getmembers(engine_errors, inspect.isclass)
             if issubclass(cls, engine_errors.RondaError) and cls is not engine_errors.RondaError}
    assert codes <= set(ENGINE_STATUS), codes - set(ENGINE_STATUS)


def test_every_service_error_carries_its_own_status_and_code():
    for _, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, errors.ServiceError) and cls is not errors.ServiceError:
            assert 400 <= cls.status < 600 and cls.code != errors.ServiceError.code, cls
            assert cls.status != errors.ServiceError.status, f"{cls.__name__} would be a 500"


CLIENT = APP / "static" / "client"
CLIENT_STATE = ("api.js", "session.js", "game.js", "sse.js")  # state and HTTP: no drawing


def test_the_web_clients_state_modules_draw_nothing():
    for name in CLIENT_STATE:
        source = (CLIENT / name).read_text()
        assert "document." not in source and '"./dom.js"' not in source, f"{name} touches the page"
    assert "localStorage" not in (CLIENT / "api.js").read_text(), "api.js is HTTP only"


def test_the_web_client_takes_bots_and_rules_from_the_server():
    sources = {path.name: path.read_text() for path in CLIENT.glob("*.js")}
    assert not any("BOTS" in source for source in sources.values()), "a bot list of the client's own"
    assert all('"/bots/levels"' in sources[page] for page in ("lobby.js", "matches.js"))
    # No rule of the game in the client: it never works out what a capture or a pile leaves on the table.
    assert not any(re.search(r"table\.filter\(|event\.taken\.includes", source) for source in sources.values())
