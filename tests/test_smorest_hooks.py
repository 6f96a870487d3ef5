"""flask-smorest is borrowed past its public API in one module (app/api/smorest.py): these tests
fail when the library changes any borrowed part underneath, and prove that the answers the views
send unserialised are what their schemas would have made."""

from importlib.metadata import version

import flask_smorest
import pytest
from flask import Flask
from flask.views import MethodView
from marshmallow import fields

from app.api import smorest
from app.api.schemas import Answer
from borrowed import source_digest


@pytest.mark.parametrize("name", sorted(smorest.BORROWED))
def test_each_borrowed_part_of_flask_smorest_is_the_source_the_hooks_were_written_against(name):
    digest = source_digest(flask_smorest, name)
    assert digest == smorest.BORROWED[name], (
        f"flask-smorest {version('flask-smorest')} changed {name}: read it against app/api/smorest.py, "
        f"then record its new digest {digest}")


def test_every_private_override_is_named_among_the_borrowed_parts():
    overridden = {f"{base.__name__}.{name}" for cls, base in ((smorest.Blueprint, flask_smorest.Blueprint),
                                                             (smorest.RondaApi, flask_smorest.Api))
                  for name in vars(cls) if name.startswith("_") and not name.startswith("__")}
    assert overridden and overridden <= set(smorest.BORROWED)


def test_the_pin_keeps_flask_smorest_below_its_next_breaking_release():
    from tomllib import loads
    from pathlib import Path
    project = loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    pins = [spec for spec in project["dependencies"] if spec.startswith("flask-smorest")]
    assert pins == ["flask-smorest>=0.47,<0.48"]  # 0.x: each minor release may break what is borrowed


class Greeting(Answer):
    text = fields.String(required=True)


def one_view_app(answer: dict) -> Flask:
    app = Flask(__name__)
    app.config.update(TESTING=True, API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    blp = smorest.Blueprint("greetings", __name__)

    @blp.route("/greeting")
    class Greet(MethodView):
        @blp.response(200, Greeting)
        def get(self):
            return answer

    smorest.RondaApi(app).register_blueprint(blp)
    return app


def test_an_answer_sent_as_it_is_is_checked_against_its_schema_under_test():
    """Answers skip the marshmallow dump in production (it cost more than the action itself); under
    `app.testing`, which every test client of the suite runs with, each one must equal its dump."""
    assert one_view_app({"text": "salam"}).test_client().get("/greeting").json == {"text": "salam"}
    with pytest.raises(AssertionError, match="answer differs from Greeting"):
        one_view_app({"text": "salam", "undeclared": 1}).test_client().get("/greeting")
    with pytest.raises(AssertionError, match="answer differs from Greeting"):
        one_view_app({"text": 7}).test_client().get("/greeting")
