"""The committed spec is what the code serves, is valid, is SDK-ready, and holds under fuzzing."""

import json
from pathlib import Path

import pytest
import schemathesis
import schemathesis.checks as checks
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate

from app.cli import spec_text

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

    @given(operation.as_strategy())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def call(case):
        # Semantic refusals of schema-valid input (an impossible rules mix, an unknown game id)
        # are documented 4xx answers, so "positive data acceptance" does not apply; all else does.
        case.call_and_validate(checks=SPEC_CHECKS)

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
