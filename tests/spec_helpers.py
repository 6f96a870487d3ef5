"""The committed spec as JSON Schema (OpenAPI 3.1 is JSON Schema 2020-12), for tests that check answers against it."""

import json
from pathlib import Path

from jsonschema import Draft202012Validator

SPEC = json.loads((Path(__file__).resolve().parent.parent / "openapi" / "openapi.json").read_text())


def validator(schema_name: str, spec: dict = SPEC) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"#/components/schemas/{schema_name}", "components": spec["components"]})


def event_validators(spec: dict = SPEC) -> dict[str, Draft202012Validator]:
    """A validator per event type, for the `Event` union. Each kind's schema requires `type` and
    allows one value of it, a different one per kind, so an event matches exactly one branch of the
    union if and only if it matches its own kind's schema: checking that one is checking the union
    (and twenty times faster than jsonschema trying every branch of the oneOf)."""
    schemas, union = spec["components"]["schemas"], spec["components"]["schemas"]["Event"]
    mapping = union["discriminator"]["mapping"]
    assert sorted(branch["$ref"] for branch in union["oneOf"]) == sorted(mapping.values())
    for kind, ref in mapping.items():
        schema = schemas[ref.rsplit("/", 1)[1]]
        assert schema["properties"]["type"]["enum"] == [kind] and "type" in schema["required"], kind
    return {kind: validator(ref.rsplit("/", 1)[1], spec) for kind, ref in mapping.items()}
