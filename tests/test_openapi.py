"""The committed spec is what the code serves, is valid, is SDK-ready, and holds under fuzzing."""

import json
import random
from pathlib import Path

import pytest
import schemathesis
import schemathesis.checks as checks
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate
from spec_helpers import event_validators, validator

from app.api.conventions import STREAM_OF
from app.api.events import Event
from app.cli import spec_text
from app.engine import Game, InvalidRules, InvalidSetup, observation, perform, rules_from_request, visible_event
from app.engine.rules import PRESETS

# Not response_headers_conformance: flask-smorest documents X-Pagination (a JSON string) as an object.
SPEC_CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
               checks.response_schema_conformance]

SPEC_PATH = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"


def test_the_committed_spec_is_what_the_code_generates(app):
    assert SPEC_PATH.read_text() == spec_text(app), "run: ronda openapi --output openapi/openapi.json"


def test_the_spec_validates_and_is_served(client):
    spec = json.loads(SPEC_PATH.read_text())
    validate(spec)
    assert client.get("/openapi.json").json == spec


def test_every_operation_is_named_summarised_and_documents_its_errors_as_problems():
    spec = json.loads(SPEC_PATH.read_text())
    operations = [op for path in spec["paths"].values() for method, op in path.items() if method != "parameters"]
    assert len({op["operationId"] for op in operations}) == len(operations)
    for op in operations:
        assert op.get("summary")
        for status, response in op["responses"].items():
            if "$ref" in response:
                response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
            if status.startswith(("4", "5")) or status == "default":
                assert list(response["content"]) == ["application/problem+json"], (op["operationId"], status)


@pytest.mark.parametrize("operation_id", sorted(
    op["operationId"] for path in json.loads(SPEC_PATH.read_text())["paths"].values()
    for method, op in path.items() if method != "parameters"))
def test_fuzzing_finds_no_server_error_and_no_answer_off_the_spec(app, operation_id):
    schema = schemathesis.openapi.from_path(SPEC_PATH)
    schema.app = app
    operation = schema.find_operation_by_id(operation_id)

    # The spec types a stream message's `data` as the JSON it carries, so that generated clients
    # type and narrow it; schemathesis reads it as text. A stream's messages are checked against
    # their schemas by the event tests below and tests/test_live.py; its status and type here.
    checks_of = [check for check in SPEC_CHECKS if check is not checks.response_schema_conformance] \
        if operation_id in STREAM_OF else SPEC_CHECKS

    @given(operation.as_strategy())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def call(case):
        # Semantic refusals of schema-valid input (an impossible rules mix, an unknown game id)
        # are documented 4xx answers, so "positive data acceptance" does not apply; all else does.
        case.call_and_validate(checks=checks_of)

    call()


def test_no_schema_is_anonymous_so_sdks_get_named_types():
    spec = json.loads(SPEC_PATH.read_text())
    inline = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                kind = value.get("type")
                if kind == "object" or (isinstance(kind, list) and "object" in kind):
                    inline.append(f"{path}.{key}")
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, path)

    walk(spec, "")
    assert inline == []


def _events_of_whole_games():
    """Every event of random whole games of every preset and player count, as each viewer sees it."""
    for name in PRESETS:
        for players in (2, 3, 4):
            try:
                game = Game(rules_from_request({"preset": name}), players=players, seed=f"{name}-{players}")
            except (InvalidRules, InvalidSetup):
                continue
            log, rng = list(game.events), random.Random(players)
            while game.awaiting():
                seat = game.awaiting()[0]
                log += perform(game, seat, rng.choice(observation(game, seat)["legal_actions"]))
            for number, event in enumerate(log, start=1):
                for viewer in (None, *range(players)):
                    yield {"id": number, **visible_event(event, viewer)}
    yield {"id": 1, "type": "turn_timeout", "seat": 0, "bot": "greedy"}
    yield {"id": 1, "type": "seat_left", "seat": 1, "bot": "greedy"}
    yield {"id": 1, "type": "seat_taken", "seat": 1, "name": "Youssef"}


@pytest.mark.slow
def test_every_event_is_exactly_one_kind_of_the_event_union_and_its_schema_keeps_every_field():
    spec = json.loads(SPEC_PATH.read_text())
    kinds = event_validators(spec)  # checks that matching its own kind is matching the union
    kinds_seen = set()
    for event in _events_of_whole_games():
        errors = list(kinds[event["type"]].iter_errors(event))
        assert not errors, (event, errors[0].message)
        assert Event().dump(event) == event, "a field the kind's schema does not document was dropped"
        kinds_seen.add(event["type"])
    assert kinds_seen == set(spec["components"]["schemas"]["Event"]["discriminator"]["mapping"])


def test_each_notice_kind_is_one_branch_of_the_notice_webhook_and_stream_unions():
    """Issue 62, 6: a studio types its webhooks from the spec: one schema per event in the
    `webhooks` section, `PlayerNotice` and `WebhookPayload` unions on `type`, the player's and a
    tournament's streams typed, and every notice the players' layer sends among them."""
    from app.players.notices import NOTICE_TYPES
    spec = json.loads(SPEC_PATH.read_text())
    schemas = spec["components"]["schemas"]
    notices = schemas["PlayerNotice"]["discriminator"]["mapping"]
    assert set(notices) == set(NOTICE_TYPES)
    assert set(spec["webhooks"]) == {*NOTICE_TYPES, "endpoint_disabled", "webhook_test"}
    assert set(schemas["WebhookPayload"]["discriminator"]["mapping"]) == set(spec["webhooks"])
    for kind, path in spec["webhooks"].items():
        body = path["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert schemas["WebhookPayload"]["discriminator"]["mapping"][kind] == body
    for operation, union in STREAM_OF.items():
        found = [op for path in spec["paths"].values() for op in path.values()
                 if isinstance(op, dict) and op.get("operationId") == operation]
        assert found[0]["responses"]["200"]["content"]["text/event-stream"]["schema"]["$ref"].endswith(union)
    assert set(schemas["PlayerStreamMessage"]["discriminator"]["mapping"]) == set(NOTICE_TYPES)
    your_turn = {"id": "1-0", "type": "your_turn", "at": 1.5, "game_id": "g", "version": 3, "seat": 0,
                 "deadline": None}
    assert not list(validator("PlayerNotice", spec).iter_errors(your_turn))
    assert list(validator("PlayerNotice", spec).iter_errors({**your_turn, "type": "game_over"}))


def test_the_webhook_catalog_in_the_docs_is_the_one_the_spec_writes():
    from app.api.notices import CATALOG_START, with_catalog
    document = (SPEC_PATH.parent.parent / "docs" / "apps.md").read_text()
    assert CATALOG_START in document
    assert document == with_catalog(document, json.loads(SPEC_PATH.read_text())), \
        "run: ronda openapi --output openapi/openapi.json --catalog docs/apps.md"


def test_a_request_fields_server_default_is_said_in_words_not_as_a_default_generators_would_require():
    """openapi-typescript's default options type a property with a `default` as required."""
    spec = json.loads(SPEC_PATH.read_text())
    bodies = {op["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
              for path in spec["paths"].values() for op in path.values()
              if isinstance(op, dict) and "requestBody" in op}
    rated = spec["components"]["schemas"]["CreateGameRequest"]["properties"]["rated"]
    assert "default" not in rated and rated["description"].endswith("Default: `false`.")
    for name in bodies:
        assert not [field for field in spec["components"]["schemas"][name].get("properties", {}).values()
                    if "default" in field], name
