"""An endpoint that never finishes answering: it takes a request, then answers a byte every half
second, each within any socket timeout (tests/test_webhooks.py and bench/webhooks.py use it)."""

import socket
import threading


class TricklingReceiver:
    """An endpoint that takes a request, then answers a byte every half second: each within the
    socket timeout, the whole answer never. It counts the requests it was sent."""

    def __init__(self, head: bytes = b""):
        """`head`: sent at once before the trickle (a status line, say: the head then never ends)."""
        self.head = head
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        self.requests = 0
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection):
        with connection:
            connection.recv(65536)
            if self.head:
                connection.sendall(self.head)
            for byte in (b"X-Slow: 1\r\n" if self.head else b"HTTP/1.1 204 No Content\r\n") * 10:
                if self.stop.wait(0.5):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:  # cut off by the attempt's deadline
                    return

    def close(self):
        self.stop.set()
        self.listener.close()
