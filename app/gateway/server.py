"""`ronda streams`: the gateway's server. One gevent loop reads each request's head itself and
writes the gateway's answer to the socket: a stream costs a greenlet, a socket and its writes, as
a fan-out server's does, with no WSGI server or framework in between (bench/streams.py measures it
beside a bare socket server). One request a connection: a stream holds its connection to its end,
and every other answer closes it.

Heads are bounded as gunicorn bounds them (a line of 8,190 bytes: 414; 100 fields of 8,190
bytes, 16 KiB in all: 431); what cannot be read is a 400, each a problem+json answer. On SIGTERM the server stops
accepting, ends every stream with a reconnect hint, and exits once they are written (5 s at most).
"""

import logging
import signal
from http import HTTPStatus

import gevent
import gevent.event
from gevent.server import StreamServer

from ..api.problems import http_problem
from ..live.hangup import until_hangup
from .routes import Answer, Request, StreamGateway

log = logging.getLogger(__name__)
LINE_LIMIT = 8190
FIELDS_LIMIT = 100
HEAD_LIMIT = 16384
STOP_SECONDS = 5.0
STORE_CONNECTIONS_AHEAD = 16  # about what a storm of 10,000 streams held (bench/streams.py: 17 in all)


class HeadFields(dict):
    """A request's header fields, found by name whatever its case (a field sent twice: its values
    joined by ", "): a lookup is a dict's, where werkzeug's Headers scans them all, a cost a storm
    pays on each of the dozen lookups a request's judgement makes."""

    def add(self, name: str, value: str):
        key = name.lower()
        dict.__setitem__(self, key, f"{dict.__getitem__(self, key)}, {value}" if dict.__contains__(self, key)
                         else value)

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name):
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name):
        return dict.__contains__(self, name.lower())


class HeadRefused(Exception):
    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


class GatewayServer:
    def __init__(self, gateway: StreamGateway, host: str, port: int, trusted_proxies: int, head_seconds: float,
                 backlog: int):
        """`head_seconds`: how long a connection may take to send its request's head (gunicorn's
        keep-alive, as the API's: a storm's greenlets reach their sockets late)."""
        self.gateway, self.trusted_proxies, self.head_seconds = gateway, trusted_proxies, head_seconds
        self.server = StreamServer((host, port), self._serve, backlog=backlog)

    @property
    def port(self) -> int:
        return self.server.server_port

    def start(self):
        self.server.start()

    def stop(self, close_streams):
        """Accept no more; `close_streams()` ends every stream (with a reconnect hint), which then finishes."""
        self.server.close()
        close_streams()
        self.server.stop(timeout=STOP_SECONDS)

    def _serve(self, sock, peer):
        try:
            request = self._read(sock, peer)
            if request is not None:
                _write(sock, self.gateway.answer(request), head_only=request.method == "HEAD", outlet=request.outlet)
        except HeadRefused as refused:
            _send(sock, http_problem(refused.status, refused.detail))
        except OSError:
            pass  # the client went
        finally:
            sock.close()

    def _read(self, sock, peer) -> Request | None:
        """The request, with its connection as an outlet (an HTTP/1.1 one's answers are chunked);
        None: the client went."""
        sock.settimeout(self.head_seconds)
        data = b""
        while b"\r\n\r\n" not in data and len(data) <= HEAD_LIMIT:
            chunk = sock.recv(8192)
            if not chunk:
                return None
            data += chunk
        sock.settimeout(None)
        head = data.partition(b"\r\n\r\n")[0].decode("latin-1")
        line, *fields = head.split("\r\n")
        if len(line) > LINE_LIMIT:
            raise HeadRefused(414, "the request line is too long")
        if len(head) > HEAD_LIMIT or len(fields) > FIELDS_LIMIT or any(len(field) > LINE_LIMIT for field in fields):
            raise HeadRefused(431, "the request's header fields are too large")
        method, target, version = line.split(" ") if line.count(" ") == 2 else ("", "", "")
        if not method or not target.startswith("/") or version not in ("HTTP/1.0", "HTTP/1.1"):
            raise HeadRefused(400, "not an HTTP/1.x request line")
        headers = HeadFields()
        for field in fields:
            name, colon, value = field.partition(":")
            if not colon or not name or name != name.strip() or " " in name:
                raise HeadRefused(400, "a header field is malformed")
            headers.add(name, value.strip(" \t"))
        return Request(method, target, headers, self._address(headers, peer),
                       ConnectionOutlet(sock, chunked=version == "HTTP/1.1"))

    def _address(self, headers: HeadFields, peer) -> str:
        """The client's address: the peer's, or behind `trusted_proxies` proxies the one the first of
        them saw (as werkzeug's ProxyFix reads X-Forwarded-For for the API)."""
        if self.trusted_proxies:
            hops = [hop.strip() for hop in headers.get("X-Forwarded-For", "").split(",") if hop.strip()]
            if len(hops) >= self.trusted_proxies:
                return hops[-self.trusted_proxies]
        return peer[0] if isinstance(peer, tuple) else str(peer)


def _write(sock, answer: Answer, head_only: bool, outlet: "ConnectionOutlet"):
    lines = [f"HTTP/1.1 {answer.status} {HTTPStatus(answer.status).phrase}", *(f"{k}: {v}" for k, v in answer.headers),
             "Connection: close"]
    if isinstance(answer.body, bytes):
        lines.append(f"Content-Length: {len(answer.body)}")
    elif outlet.chunked:
        lines.append("Transfer-Encoding: chunked")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    body = answer.body
    if isinstance(body, bytes):
        _send(sock, head if head_only else head + body)
    elif head_only:  # a HEAD's stream was closed unstarted (app/gateway/routes.py)
        _send(sock, head)
    else:
        _stream(sock, head, body, outlet)


FRAMES_KEPT = 1024
_frames: dict[str, tuple[bytes, bytes]] = {}


def framed(text: str, chunked: bool) -> bytes:
    """`text` as bytes to write, as an HTTP/1.1 chunk or bare. The hub hands one text to every stream
    of an audience (app/live/hub.py): it is encoded and framed once for all of them, here (a str
    keeps its hash, and a lookup of the same object is an identity check)."""
    frames = _frames.get(text)
    if frames is None:
        data = text.encode()
        if len(_frames) >= FRAMES_KEPT:
            _frames.clear()
        frames = _frames[text] = (b"%x\r\n%s\r\n" % (len(data), data), data)
    return frames[0] if chunked else frames[1]


class ConnectionOutlet:
    """A stream's connection as the hub's listener writes it (app/live/hub.py's Outlet): at once,
    never waiting; what the socket does not take now is kept for the stream's own greenlet, which
    writes it before anything else (until then, the hub hands the stream its changes instead)."""

    def __init__(self, sock, chunked: bool):
        self.sock, self.chunked, self.kept = sock, chunked, b""

    def write(self, text: str) -> bool:
        data = framed(text, self.chunked)
        try:
            sent = self.sock.send(data, 0, 0.0)  # a timeout of 0: never wait for the socket
        except BlockingIOError:
            sent = 0
        except OSError:
            return False  # the client went: the stream finds out when it writes
        self.kept = data[sent:]
        return True

    def flush(self):
        if self.kept:
            kept, self.kept = self.kept, b""
            self.sock.sendall(kept)


def _stream(sock, head: bytes, chunks, outlet: ConnectionOutlet):
    chunks = until_hangup(chunks, sock, gevent.GreenletExit)  # the client went: its stream ends where it waits
    try:
        first = next(chunks, "")  # its first byte comes at once: with the head, in one write
        sock.sendall(head + framed(first, outlet.chunked) if first else head)
        for chunk in chunks:
            outlet.flush()
            if chunk:
                sock.sendall(framed(chunk, outlet.chunked))
        outlet.flush()
        if outlet.chunked:
            sock.sendall(b"0\r\n\r\n")
    finally:
        chunks.close()  # a stream whose client went stops watching at once


def _send(sock, data: bytes):
    try:
        sock.sendall(data)
    except OSError:
        pass


def serve(gateway: StreamGateway, config, host: str, port: int, close_streams):
    """Serve until SIGTERM or SIGINT."""
    server = GatewayServer(gateway, host, port, config["TRUSTED_PROXIES"], config["KEEPALIVE_SECONDS"],
                           config["BACKLOG"])
    server.start()
    log.info("stream gateway on %s:%d", host, server.port)
    stopped = gevent.event.Event()

    def stop():
        server.stop(close_streams)
        stopped.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, stop)
    stopped.wait()


def run(config: dict, host: str, port: int):
    """The gateway of the deployment `config` names, on `host`:`port`, until stopped (after gevent's
    monkey patching: its one subscription and its reads wait as greenlets)."""
    from ..api.limits import Limits
    from ..live.streams import Live, render_event
    from ..ops.connection import open_ahead
    from ..ops.runtime import settle_collector
    from ..wiring import Services, close_streams, live_hub
    services = Services(config, in_process=False)
    live = Live(services, live_hub(services, render_event), config["SSE_KEEPALIVE_SECONDS"])
    limits = Limits(config, services.window_counts, exempt_blueprints=[], app_quotas=services.apps.quotas)
    open_ahead(services.store.redis, STORE_CONNECTIONS_AHEAD)
    settle_collector()
    serve(StreamGateway(live, config, limits), config, host, port, close_streams)
