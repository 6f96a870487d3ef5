"""Posting to an app's webhook URL without letting it reach the deployment's own network (SSRF).

An app chooses its endpoint's URL, and the webhook worker posts from inside the deployment: a URL
naming 127.0.0.1, a cloud's metadata address or a neighbour on the private network would turn
the worker into the app's proxy. So, unless the operator allows private networks, a URL whose
host is an address that is not globally routable is refused when registered, and at every
attempt the host is resolved, each address it resolves to checked, and the connection made to
the address checked (a name that resolves again between the check and the connection, DNS
rebinding, gets nowhere else). HTTPS still verifies the certificate against the URL's host name.
Redirects are not followed: a 3xx is the endpoint's answer.
"""

import http.client
import ipaddress
import socket
import ssl
import threading
from urllib.parse import urlsplit

DEADLINE_SLACK = 0.5  # an attempt's wall-clock deadline: its socket timeout and this


class Refused(OSError):
    """The URL's host is, or resolves to, an address the deployment does not post to."""


def refused_host(url: str) -> str | None:
    """Why a URL may not be registered without private networks allowed (None: it may). Only what
    the URL says is judged here; a host name is resolved at each attempt instead (names move)."""
    host = urlsplit(url).hostname or ""
    name = host.rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return f"{host} is this machine"
    address = _numeric_address(name)
    if address is None:
        return None
    said = host if str(address) == host else f"{host} ({address})"
    return None if _routable(address) else f"{said} is not a public address"


def _numeric_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a numeric host names, in every form a resolver takes: dotted, but also one
    number (`2130706433`), hexadecimal (`0x7f000001`), octal parts (`0177.0.0.1`) or short
    (`127.1`), as inet_aton reads them; None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not host or not all(part.isalnum() for part in host.split(".")) or not host.split(".")[-1][0].isdigit():
        return None  # a name: its last label starts with a letter (a top-level domain never starts with a digit)
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def post(url: str, body: bytes, headers: dict[str, str], timeout: float, private_allowed: bool,
         context: ssl.SSLContext) -> int:
    """POST `body` to `url`: the answer's status code. Raises OSError (Refused among them) when no
    answer came: refused, unreachable, timed out.

    `timeout` bounds each socket operation, and the whole attempt has a wall-clock deadline of
    `timeout` + DEADLINE_SLACK: a receiver that trickles its answer a byte at a time (each within
    the socket timeout) is cut off then, its connection shut from a timer's thread."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url}")
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    deadline = timeout + DEADLINE_SLACK
    cut = threading.Event()
    addresses = _checked_addresses(parts.hostname, port, private_allowed)
    connection = (_PinnedHTTPS(parts.hostname, port, addresses, timeout, cut, context) if secure
                  else _PinnedHTTP(parts.hostname, port, addresses, timeout, cut))
    watchdog = threading.Timer(deadline, _cut_off, (connection, cut))
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body, headers)
        status = connection.getresponse().status  # the body is not read: only the status counts
    except (OSError, http.client.HTTPException) as error:
        if cut.is_set():
            raise TimeoutError(f"no whole answer within the attempt's deadline ({deadline:g} s)") from error
        raise
    finally:
        watchdog.cancel()
        connection.close()
    if cut.is_set():  # http.client ends a head cut short without a word and keeps its status line's code
        raise TimeoutError(f"the answer's head did not come whole within the attempt's deadline ({deadline:g} s)")
    return status


def _cut_off(connection: http.client.HTTPConnection, cut: threading.Event):
    """The attempt's deadline: a read or write under way on its connection ends now."""
    cut.set()
    if connection.sock is not None:
        try:
            connection.sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # closed meanwhile
            pass


def _checked_addresses(host: str, port: int, private_allowed: bool) -> list[str]:
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [str(info[4][0]) for info in found]
    if not private_allowed:
        for address in addresses:
            if not _routable(ipaddress.ip_address(address.split("%")[0])):
                raise Refused(f"{host} resolves to {address}, not a public address")
    return addresses


def _connected(addresses: list[str], port: int, timeout: float | None, cut: threading.Event) -> socket.socket:
    """A connection to the first of the checked addresses that answers (as a name's own lookup
    would), unless the attempt's deadline came while connecting."""
    failure: OSError = OSError("no address")
    for address in addresses:
        try:
            connection = socket.create_connection((address, port), timeout)
        except OSError as error:
            failure = error
            continue
        if cut.is_set():
            connection.close()
            raise TimeoutError("the attempt's deadline came while connecting")
        # As http.client's own connect: headers and body go out at once, not a delayed ACK apart.
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection
    raise failure


NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


def _routable(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Globally routable, and so is every IPv4 address an IPv6 one carries inside it: mapped,
    NAT64 (its last 32 bits), 6to4 (`2002:<v4>::`) and Teredo (its server and client), which Python
    calls global whatever they carry."""
    inside = _carried_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else []
    if inside:
        return all(_routable(carried) for carried in inside)
    return address.is_global and not address.is_multicast


def _carried_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    if address.ipv4_mapped:
        return [address.ipv4_mapped]
    if any(address in network for network in NAT64):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)
    return []


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, addresses: list[str], timeout: float, cut: threading.Event):
        super().__init__(host, port, timeout=timeout)
        self.addresses, self.cut = addresses, cut

    def connect(self):
        self.sock = _connected(self.addresses, self.port, self.timeout, self.cut)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, addresses: list[str], timeout: float, cut: threading.Event,
                 context: ssl.SSLContext):
        super().__init__(host, port, timeout=timeout, context=context)
        self.addresses, self.cut, self.tls = addresses, cut, context

    def connect(self):
        self.sock = self.tls.wrap_socket(_connected(self.addresses, self.port, self.timeout, self.cut),
                                         server_hostname=self.host)
