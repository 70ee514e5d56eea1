"""The egress proxy on real sockets, on 127.0.0.1 only.

Each client connection is handed to the proxy as inside.py hands it: the
server end of a fresh TCP connection, sent as a descriptor over a socket pair.
"""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from copilot_driver.harness.sandbox.egress_proxy import HEAD_LIMIT, UNREADABLE, EgressProxy
from copilot_driver.harness.sandbox.egress_rules import Allowlist, parse_rule

TIMEOUT = 5.0
LOOPBACK = "127.0.0.1"


@dataclass
class ProxyUnderTest:
    proxy: EgressProxy
    helper_end: socket.socket
    """The socket pair's end inside.py holds: descriptors go in here."""
    denials: queue.Queue[tuple[str, str]] = field(default_factory=queue.Queue)
    """Every on_denied call, in order."""

    def client(self) -> socket.socket:
        """A connected client socket whose server end the proxy now serves."""
        with socket.create_server((LOOPBACK, 0)) as door:
            door.settimeout(TIMEOUT)
            client = socket.create_connection(door.getsockname(), timeout=TIMEOUT)
            server_end, _ = door.accept()
        with server_end:
            socket.send_fds(self.helper_end, [b"c"], [server_end.fileno()])
        return client

    def ask(self, request: bytes, *, half_close: bool = False) -> bytes:
        """Everything the proxy answers to `request` on a new connection, up to its close."""
        with self.client() as client:
            client.sendall(request)
            if half_close:
                client.shutdown(socket.SHUT_WR)
            return read_to_end(client)

    def denial(self) -> tuple[str, str]:
        return self.denials.get(timeout=TIMEOUT)


StartProxy = Callable[..., ProxyUnderTest]


@pytest.fixture
def start_proxy() -> Iterator[StartProxy]:
    """start_proxy(*rules): an EgressProxy allowing `rules`, stopped after the test."""
    started: list[ProxyUnderTest] = []

    def start(*rules: str) -> ProxyUnderTest:
        control, helper_end = socket.socketpair()
        denials: queue.Queue[tuple[str, str]] = queue.Queue()
        proxy = EgressProxy(
            control,
            Allowlist(tuple(parse_rule(rule) for rule in rules)),
            on_denied=lambda where, why: denials.put((where, why)),
        ).start()
        started.append(ProxyUnderTest(proxy, helper_end, denials))
        return started[-1]

    yield start
    for each in started:
        each.proxy.close()
        each.helper_end.close()


def read_to_end(connection: socket.socket) -> bytes:
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    return data


def read_until(connection: socket.socket, marker: bytes, data: bytes = b"") -> bytes:
    """`data` and what follows it, up to and including `marker` (and what came with it)."""
    while marker not in data:
        chunk = connection.recv(65536)
        assert chunk, f"closed before {marker!r}; got {data!r}"
        data += chunk
    return data


class Upstream:
    """A server on 127.0.0.1: echoes each connection, or answers one HTTP request."""

    def __init__(self, http: bool = False) -> None:
        self.listener = socket.create_server((LOOPBACK, 0))
        self.received: queue.Queue[bytes] = queue.Queue()
        self._http = http
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self) -> int:
        port: int = self.listener.getsockname()[1]
        return port

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(TIMEOUT)
            if self._http:
                self.received.put(read_until(connection, b"\r\n\r\n"))
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                return
            data = b""
            while chunk := connection.recv(65536):
                connection.sendall(chunk)
                data += chunk
            self.received.put(data)

    def close(self) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()


@pytest.fixture
def echo() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def web() -> Iterator[Upstream]:
    server = Upstream(http=True)
    yield server
    server.close()


@pytest.fixture
def untouched() -> Iterator[socket.socket]:
    """A listener nobody accepts on: a connection to it would wait in its backlog."""
    with socket.create_server((LOOPBACK, 0)) as listener:
        listener.setblocking(False)
        yield listener


def assert_never_connected(listener: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        listener.accept()


def port_of(listener: socket.socket) -> int:
    port: int = listener.getsockname()[1]
    return port


def assert_refused(answer: bytes, *words: str) -> str:
    """The answer is the proxy's 403; returns its body."""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"Content-Length: %d" % len(body) in head
    text = body.decode()
    assert "--allow-domain" in text
    for word in words:
        assert word in text
    return text


# -- allowed ----------------------------------------------------------------------------------


def test_connect_to_an_allowed_host_tunnels_both_ways(
    start_proxy: StartProxy, echo: Upstream
) -> None:
    under_test = start_proxy(f"{LOOPBACK}:{echo.port}")
    with under_test.client() as client:
        client.sendall(f"CONNECT {LOOPBACK}:{echo.port} HTTP/1.1\r\n\r\nearly ".encode())
        answer = read_until(client, b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 Connection established\r\n\r\n")
        client.sendall(b"ping")
        answer = read_until(client, b"early ping", answer)
        assert answer.endswith(b"\r\n\r\nearly ping")
        client.shutdown(socket.SHUT_WR)  # the upstream sees the end, and closes its side
        assert read_to_end(client) == b""
    assert echo.received.get(timeout=TIMEOUT) == b"early ping"
    assert under_test.proxy.denied_per_host() == []
    assert under_test.denials.empty()


@pytest.mark.parametrize(("path", "origin_form"), [("/x?y=1", "/x?y=1"), ("", "/")])
def test_an_absolute_form_request_goes_upstream_in_origin_form(
    start_proxy: StartProxy, web: Upstream, path: str, origin_form: str
) -> None:
    under_test = start_proxy(f"{LOOPBACK}:{web.port}")
    request = (
        f"GET http://{LOOPBACK}:{web.port}{path} HTTP/1.1\r\n"
        f"Host: {LOOPBACK}:{web.port}\r\n"
        "Proxy-Connection: keep-alive\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\n"
        "Connection: keep-alive\r\n"
        "Keep-Alive: timeout=5\r\n"
        "Accept: */*\r\n\r\n"
    )
    answer = under_test.ask(request.encode())
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"\r\n\r\nok")
    assert (
        web.received.get(timeout=TIMEOUT)
        == (
            f"GET {origin_form} HTTP/1.1\r\nHost: {LOOPBACK}:{web.port}\r\nAccept: */*\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
    )


def test_a_forwarded_request_names_the_allowed_host_whatever_host_it_said(
    start_proxy: StartProxy, web: Upstream
) -> None:
    """No site behind the same address can be named through an allowed one."""
    under_test = start_proxy(f"{LOOPBACK}:{web.port}")
    request = f"GET http://{LOOPBACK}:{web.port}/ HTTP/1.1\r\nHost: other.example\r\n\r\n"
    answer = under_test.ask(request.encode())
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    received = web.received.get(timeout=TIMEOUT)
    assert (
        received
        == (f"GET / HTTP/1.1\r\nHost: {LOOPBACK}:{web.port}\r\nConnection: close\r\n\r\n").encode()
    )


# -- refused ----------------------------------------------------------------------------------


def test_a_host_not_allowed_is_refused_and_counted(start_proxy: StartProxy) -> None:
    under_test = start_proxy("pypi.org")
    for target in ("evil.example.com:443", "evil.example.com:443", "b.example:443"):
        answer = under_test.ask(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
        assert_refused(answer, target, "not in the sandbox's allowed hosts")
    answer = under_test.ask(b"GET http://Evil.Example.com./x HTTP/1.1\r\n\r\n")
    assert_refused(answer, "evil.example.com:80")
    answer = under_test.ask(b"CONNECT pypi.org:22 HTTP/1.1\r\n\r\n")
    assert_refused(answer, "pypi.org:22")

    assert under_test.proxy.denied_per_host() == [
        ("evil.example.com:443", 2),
        ("b.example:443", 1),
        ("evil.example.com:80", 1),
        ("pypi.org:22", 1),
    ]
    called = sorted(under_test.denial()[0] for _ in range(4))
    assert called == ["b.example:443", "evil.example.com:443", "evil.example.com:80", "pypi.org:22"]
    assert under_test.denials.empty()  # once per host, however often it was asked for


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"hello\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
        b"",
        b"GET /relative HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
        b"GET https://pypi.org/ HTTP/1.1\r\n\r\n",
        b"GET http://user@pypi.org/ HTTP/1.1\r\n\r\n",
        b"GET http://pypi.org:0/ HTTP/1.1\r\n\r\n",
        b"CONNECT pypi.org HTTP/1.1\r\n\r\n",
        b"CONNECT pypi.org:443 SPDY/3\r\n\r\n",
        b"CONNECT  pypi.org:443 HTTP/1.1\r\n\r\n",
        b"CONNECT pyp\xc3\xad.org:443 HTTP/1.1\r\n\r\n",
        b"CONNECT *.pypi.org:443 HTTP/1.1\r\n\r\n",
        b"CONNECT 0x7f000001:443 HTTP/1.1\r\n\r\n",
    ],
)
def test_anything_but_a_proxy_request_is_refused_as_unreadable(
    start_proxy: StartProxy, request_bytes: bytes
) -> None:
    under_test = start_proxy("pypi.org", "0x7f000001.pypi.org")
    assert_refused(under_test.ask(request_bytes, half_close=True), "not an HTTP proxy request")
    assert under_test.proxy.denied_per_host() == [(UNREADABLE, 1)]
    assert under_test.denial() == (UNREADABLE, "not an HTTP proxy request")


def test_a_head_that_never_ends_is_refused_past_the_limit(start_proxy: StartProxy) -> None:
    under_test = start_proxy("pypi.org")
    # One byte past the limit: the proxy reads it all, so its close is an orderly one.
    answer = under_test.ask(b"G" * (HEAD_LIMIT + 1))
    assert_refused(answer, UNREADABLE)
    assert under_test.proxy.denied_per_host() == [(UNREADABLE, 1)]


def test_a_complete_head_over_the_limit_is_refused(
    start_proxy: StartProxy, untouched: socket.socket
) -> None:
    port = port_of(untouched)
    under_test = start_proxy(f"{LOOPBACK}:{port}")
    padding = "a" * (HEAD_LIMIT + 100)
    request = f"CONNECT {LOOPBACK}:{port} HTTP/1.1\r\nX-Padding: {padding}\r\n\r\n"
    assert_refused(under_test.ask(request.encode()), UNREADABLE)
    assert_never_connected(untouched)


def test_a_name_that_resolves_to_loopback_is_refused(
    start_proxy: StartProxy, untouched: socket.socket
) -> None:
    port = port_of(untouched)
    under_test = start_proxy(f"localhost:{port}")
    answer = under_test.ask(f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
    assert_refused(answer, f"localhost:{port}", "resolves to", "keeps out of reach")
    answer = under_test.ask(f"GET http://LOCALHOST:{port}/ HTTP/1.1\r\n\r\n".encode())
    assert_refused(answer, f"localhost:{port}", "resolves to")
    assert_never_connected(untouched)
    assert under_test.proxy.denied_per_host() == [(f"localhost:{port}", 2)]
    where, why = under_test.denial()
    assert where == f"localhost:{port}"
    assert "resolves to" in why


def test_an_allowed_host_with_no_listener_is_refused(start_proxy: StartProxy) -> None:
    with socket.socket() as bound:  # bound, never listening: connecting to it is refused
        bound.bind((LOOPBACK, 0))
        port = port_of(bound)
        under_test = start_proxy(f"{LOOPBACK}:{port}")
        answer = under_test.ask(f"CONNECT {LOOPBACK}:{port} HTTP/1.1\r\n\r\n".encode())
    assert_refused(answer, f"{LOOPBACK}:{port}", "cannot connect")
    assert under_test.proxy.denied_per_host() == [(f"{LOOPBACK}:{port}", 1)]
    assert "cannot connect" in under_test.denial()[1]


def test_allowed_and_refused_connections_are_served_side_by_side(
    start_proxy: StartProxy, echo: Upstream
) -> None:
    under_test = start_proxy(f"{LOOPBACK}:{echo.port}")
    with under_test.client() as tunnel:
        tunnel.sendall(f"CONNECT {LOOPBACK}:{echo.port} HTTP/1.1\r\n\r\n".encode())
        read_until(tunnel, b"\r\n\r\n")
        # While the tunnel is open, another connection is refused on its own.
        assert_refused(under_test.ask(b"CONNECT example.com:443 HTTP/1.1\r\n\r\n"))
        tunnel.sendall(b"still here")
        assert read_until(tunnel, b"still here") == b"still here"
