"""Where flask-smorest is used past its public API, in one place.

Each hook below overrides or reads a private part of flask-smorest (a leading underscore, or what a
public decorator does inside). `BORROWED` names them with a digest of the library's own source for
the version pinned in pyproject.toml; tests/test_smorest_hooks.py fails when an upgrade changes any
of them underneath, so the upgrade is read here before it ships.
"""

import json
from functools import wraps

import flask_smorest
from flask import Response, current_app
from flask_smorest.utils import resolve_schema_instance, unpack_tuple_response

from .bodies import BodyOnceParser
from .problems import PROBLEM_MEDIA_TYPE
from .schemas import Problem

# What each borrowed part of flask-smorest 0.47.0 hashes to (sha256 of its inspect.getsource, the
# first 16 hex digits), and how it is used.
BORROWED: dict[str, str] = {
    "Api._register_responses": "42ac780261644c27",  # wrapped: errors in problem+json
    "Api._register_pagination_header": "9ab8194a5ee639f7",  # replaced: X-Pagination is documented by conventions.py
    "Blueprint._document_pagination_metadata": "f74e04b2225ed10e",  # replaced: the header is a string, not an object
    "Blueprint.response": "ae08ddc829d44d0f",  # its decorator's `_apidoc` is taken without its call layer
    "Blueprint.alt_response": "9e28e610950681e7",  # likewise
    "Blueprint._store_endpoint_docs": "48af2e784ebf1c8b",  # reads `_apidoc` off each view
    "utils.resolve_schema_instance": "3858aaed522f4cc6",  # a schema built once
    "utils.unpack_tuple_response": "80aa53ec922719ce",  # a view's (body, status, headers)
}


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint at a lower cost per request: argument schemas are built once
    (given a class, webargs builds one on every request), answers skip the marshmallow dump,
    and documenting an answer adds no call layer (flask-smorest adds one per documented answer);
    a JSON body is parsed once (app/api/bodies.py)."""

    ARGUMENTS_PARSER = BodyOnceParser()

    def arguments(self, schema, *args, **kwargs):
        return super().arguments(resolve_schema_instance(schema), *args, **kwargs)

    def response(self, status_code, schema=None, **kwargs):
        """Documents `schema`, and sends the view's answer as JSON as it is.

        The service builds every answer in its schema's exact shape, and a marshmallow dump of an
        action's answer cost more than applying the action. Under `app.testing` each answer is still
        dumped and must come out unchanged, so the suite catches any drift between schema and answer.
        """
        document = super().response(status_code, schema, **kwargs)
        shape = resolve_schema_instance(schema) if schema is not None else None

        def decorator(view):
            @wraps(view)
            def send_as_json(*args, **view_kwargs):
                body, status, headers = unpack_tuple_response(view(*args, **view_kwargs))
                if isinstance(body, Response):
                    return body, status, headers
                if shape is not None and current_app.testing and shape.dump(body) != body:
                    raise AssertionError(f"answer differs from {type(shape).__name__}: {body!r}")
                return Response(json.dumps(body, separators=(",", ":")), status or status_code, headers,
                                mimetype="application/json")
            return _documented(send_as_json, document)
        return decorator

    def _document_pagination_metadata(self, spec, resp_doc):
        """X-Pagination is JSON text in a header: documented as the string it is, its content the
        PaginationMetadata schema (flask-smorest documents it as an object, which no header is)."""
        resp_doc.setdefault("headers", {})[self.PAGINATION_HEADER_NAME] = "X-Pagination"

    def alt_response(self, *args, **kwargs):
        document = super().alt_response(*args, **kwargs)
        return lambda view: _documented(view, document)


def _documented(view, document):
    """`view` itself, carrying the API doc that flask-smorest's `document` decorator would add."""
    view._apidoc = document(view)._apidoc
    return view


class RondaApi(flask_smorest.Api):
    """Documents every default error response as problem+json, which is what problems.py sends, and
    X-Pagination as the JSON text it is (app/api/conventions.py), not flask-smorest's object."""

    ERROR_SCHEMA = Problem

    def _register_pagination_header(self):
        pass

    def _register_responses(self):
        # flask-smorest reads the error media type from the success one; swap it for this call only.
        self.DEFAULT_RESPONSE_CONTENT_TYPE = PROBLEM_MEDIA_TYPE
        try:
            super()._register_responses()
        finally:
            del self.DEFAULT_RESPONSE_CONTENT_TYPE
