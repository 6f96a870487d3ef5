"""The web client at `/`: static files of the package (app/static/client), calling only the public API."""

from flask import Blueprint, current_app

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
