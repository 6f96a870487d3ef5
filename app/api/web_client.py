"""The web client at `/`: static files of the package (app/static/client), calling only the public API;
and the policy of the API docs page (/docs)."""

import base64
import hashlib
import re

from flask import Blueprint, current_app, request

blp = Blueprint("web_client", __name__)


# The page loads nothing but this service's own files, and sends no address onward.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                               "frame-ancestors 'none'; form-action 'self'",
    "Referrer-Policy": "no-referrer",
}


@blp.get("/")
def index():
    page = current_app.send_static_file("index.html")
    page.headers.update(PAGE_HEADERS)
    return page


DOCS_ENDPOINT = "api-docs.openapi_swagger_ui"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def docs_policy(response):
    """/docs runs Swagger UI from the package: its scripts and styles from this origin, its one
    inline script by hash, the inline styles its components set, data: images (its icons), and
    fetches to this origin (the spec, and "Try it out")."""
    if request.endpoint != DOCS_ENDPOINT or response.status_code != 200:
        return response
    scripts = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
                       for body in _INLINE_SCRIPT.findall(response.get_data(as_text=True)))
    response.headers["Content-Security-Policy"] = (
        f"default-src 'none'; script-src 'self' {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        "form-action 'self'")
    response.headers["Referrer-Policy"] = "no-referrer"
    return response
