"""The fan-out floor for bench/streams.py: a bare gevent server, outside Flask and the app, that
holds SSE sockets and, on `POST /send/<id>`, writes one payload to every one of them, answering
the wall time its write began. Run: python bench/sse_floor.py PORT [HOST]"""

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from gevent.server import StreamServer  # noqa: E402

held = set()


def handle(sock, _address):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            return
        head += chunk
    path = head.split(b" ", 2)[1]
    if path == b"/stream":
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                     b": connected\n\nevent: snapshot\ndata: {}\n\n")
        held.add(sock)
        sock.recv(1)  # until the client goes
        held.discard(sock)
        return
    event_id, written = int(path.rsplit(b"/", 1)[1]), time.time()
    payload = b"id: %d\nevent: event\ndata: {}\n\n" % event_id
    for client in list(held):
        try:
            client.sendall(payload)
        except OSError:
            held.discard(client)
    body = json.dumps({"written": written}).encode()
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    sock.close()


if __name__ == "__main__":
    StreamServer((sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", int(sys.argv[1])), handle,
                 backlog=16384).serve_forever()
