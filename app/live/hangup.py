"""A stream let go as its client closes its connection, in a gevent process (the stream gateway,
and the API under gunicorn's gevent worker).

A stream writes only what its game sends, so a stream that a client left (its page closed, a
reconnect on a new connection) was otherwise held to its next keep-alive or the one after: a
storm's clients that went held thousands of descriptors, and the next storm's accepts waited for
them (bench/streams.py: p99 13 s at 10,000). Imported only where gevent runs the process.
"""

import errno
import socket
from collections.abc import Callable, Generator

import gevent


class ClientGone(BrokenPipeError):
    """What ends a stream in a server that treats a broken pipe as a client gone (gunicorn: quietly)."""

    def __init__(self):
        super().__init__(errno.EPIPE, "the client closed its stream")


# redis-py makes an error raised inside its read its own ConnectionError, which a stream's read
# then retries (app/live/streams.py's _patiently): an ending the stream swallowed so is raised
# again where it next waits, this many times more at most.
RAISED_AGAIN = 3


class Hangup:
    """A watch on a stream's socket that ends the calling greenlet (`ending()` is raised where it
    waits) once the client closes the connection. Bytes a client sends instead are left unread, and
    the watch stops: clients send nothing on a stream. The stream closes it first thing as it ends,
    so its own cleanup is never cut short."""

    def __init__(self, sock, ending: Callable[[], BaseException]):
        self.sock, self.ending, self.stream, self.closed = sock, ending, gevent.getcurrent(), False
        self.readable = gevent.get_hub().loop.io(sock.fileno(), 1)
        self.readable.start(self._woken)

    def _woken(self):
        self.readable.stop()  # one look: bytes left unread would wake it again and again
        gevent.spawn(self._look)

    def _look(self):
        try:
            gone = not self.sock.recv(1, socket.MSG_PEEK)
        except OSError:
            gone = True
        if gone:
            gevent.get_hub().loop.run_callback(self._end)

    def _end(self, again: int = RAISED_AGAIN):  # in the loop, as gevent's kill: the stream waits, or has closed this
        if self.closed or self.stream.dead:
            return
        self.stream.throw(self.ending())
        if not self.closed and again:  # swallowed: the stream waits again, still open
            gevent.get_hub().loop.run_callback(self._end, again - 1)

    def close(self):
        self.closed = True
        self.readable.close()


def until_hangup(chunks: Generator[str, None, None], sock,
                 ending: Callable[[], BaseException] = ClientGone) -> Generator[str, None, None]:
    """`chunks`, ended (`ending()` raised where the stream waits) as soon as the client closes
    `sock`; watched from the first chunk on, in the greenlet that writes them."""
    hangup = Hangup(sock, ending)
    try:
        yield from chunks
    finally:
        hangup.close()
        chunks.close()
