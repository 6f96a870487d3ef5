"""The house keeps its shape: imports go one way, bottom to top in the order written below, with no
cycle anywhere; and every typed error reaches HTTP with a status of its own, never a guessed one."""

import ast
import inspect
import re
import sys
from pathlib import Path

from app import errors
from app.api.problems import ENGINE_STATUS
from app.engine import errors as engine_errors

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
STORES = ("games.store", "matches.store", "accounts.store")

# Bottom to top. A module imports modules of its own layer or of layers below, never above: an
# import inside a function or under TYPE_CHECKING counts as much as one at the top of a file.
LAYERS = [
    ("app.errors", "app.ops"),  # typed errors; config, connections, key and scope names, logs, metrics
    ("app.engine",),  # the rules: a pure library
    ("app.bots",),  # the built-in bots' policies, on the engine alone
    ("app.games",),  # a game's store, service, seats, records and writes
    ("app.accounts",),  # outside bots and the rating ladders
    ("app.apps",),  # apps, their keys, quotas and webhooks
    ("app.matches",),  # bot matches
    ("app.review",),  # finished games' and matches' analyses, on the workers
    ("app.players",),  # people across games
    ("app.tournaments",),  # tournaments of bots and people: each pairing a match or people's games
    ("app.matchmaking",),  # quick play: tickets that become games
    ("app.people",),  # a person's account across the rooms: suspension, export, erasure
    ("app.live", "app.jobs"),  # streams and long polls; bot moves and sweeps queued for workers
    ("app.wiring",),  # the services built once and handed out
    ("app.api",),  # HTTP: blueprints, schemas, problems
    ("app.gateway",),  # the live streams served by a server of their own (`ronda streams`)
    ("app.web", "app"),  # the Flask app (`app.create_app` builds it)
    ("workers",),  # the RQ worker process
    ("app.cli", "app.gunicorn_conf", "app.embedded"),  # process entry points: `ronda`, gunicorn, embedded Redis
]


def module_files() -> dict[str, Path]:
    files = [*APP.rglob("*.py"), *(ROOT / "workers").rglob("*.py")]
    return {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
            for path in files if "static" not in path.parts}


MODULES = module_files()


def imported_names(path: Path) -> set[str]:
    """Every name a file imports, anywhere in it, as an absolute dotted name."""
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = name.removesuffix(".__init__") if path.name == "__init__.py" else name.rpartition(".")[0]
    named = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            named |= {f"{module}.{alias.name}" for alias in node.names}
    return named


def imports_of(path: Path) -> set[str]:
    """The project's modules a file imports."""
    itself = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    return {nearest_module(name) for name in imported_names(path)} - {None, itself}


def nearest_module(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def layer_of(module: str) -> int:
    for index, layer in enumerate(LAYERS):
        if any(module == room or (module.startswith(room + ".") and room != "app") for room in layer):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def import_graph() -> dict[str, set[str]]:
    return {module: imports_of(path) for module, path in MODULES.items()}


def test_every_module_has_a_layer_and_imports_none_above_it():
    climbs = [f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
              for module, targets in import_graph().items() for target in sorted(targets)
              if layer_of(target) > layer_of(module)]
    assert not climbs, "\n".join(climbs)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str):
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in graph[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for module in graph:
        if module not in order:
            visit(module)
    return found


def test_no_import_cycle_even_inside_functions_or_for_type_checking():
    assert not cycles(import_graph())


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def view_modules() -> set[str]:
    """The api modules that make a blueprint of their own."""
    return {
        module
        for module, path in MODULES.items()
        if module.startswith("app.api.")
        and any(
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Blueprint"
            for node in ast.parse(path.read_text()).body
        )
    }


def test_no_view_module_imports_another_shared_schemas_live_with_the_schemas():
    views = view_modules()
    assert {"app.api.games", "app.api.players", "app.api.bots"} <= views
    crossings = {module: imports_of(MODULES[module]) & views for module in views}
    assert not any(crossings.values()), {module: found for module, found in crossings.items() if found}


def test_the_engine_and_the_bots_import_nothing_but_the_engine_and_the_standard_library():
    for room in ("engine", "bots"):
        for path in (APP / room).glob("*.py"):
            outside = {name for name in imported_names(path) if not name.startswith(("app.engine", f"app.{room}"))
                       and name.split(".")[0] not in sys.stdlib_module_names}
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
        assert not {m for m in imported_names(path) if m.split(".")[0] == "redis"}, f"{path.name} imports redis"


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
