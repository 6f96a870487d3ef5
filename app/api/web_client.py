"""The web client at `/`: static files of the package (app/static/client), calling only the public API."""

from flask import Blueprint, current_app

blp = Blueprint("web_client", __name__)


@blp.get("/")
def index():
    return current_app.send_static_file("index.html")
