"""The storm's middle floor for bench/streams.py (`--wsgi-floor`): a bare WSGI app, no Flask and
no app, run by gunicorn under the production conf as the app is, answering `GET /stream` with the
first comment and a snapshot, then holding the stream. The app against it is what Flask and the
service cost a stream; it against bench/sse_floor.py is what gunicorn's request handling costs
(what a dispatch in front of Flask, in the same worker, would still pay)."""

import gevent


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
    return _held()


def _held():
    yield b": connected\n\n"
    yield b"event: snapshot\ndata: {}\n\n"
    while True:  # held as a stream is; a keep-alive each second ends it once its client has gone
        gevent.sleep(1)
        yield b": keep-alive\n\n"
