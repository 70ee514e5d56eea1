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

from copilot_driver.harness.sandbox import egress_proxy
from copilot_driver.harness.sandbox.egress_proxy import HEAD_LIMIT, UNREADABLE, EgressProxy
from copilot_driver.harness.sandbox.egress_rules import Allowlist, parse_rule
from copilot_driver.harness.sandbox.upstream import Upstream as UpstreamConfig

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
    start_proxy: StartProxy, untouched: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever DNS says: a rebinding name allowed by a rule still reaches no loopback."""
    port = port_of(untouched)
    resolve = socket.getaddrinfo

    def rebinding(host: str, *args: object, **kwargs: object) -> object:
        return resolve(LOOPBACK if host == "rebind.example" else host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    under_test = start_proxy(f"rebind.example:{port}")
    answer = under_test.ask(f"CONNECT rebind.example:{port} HTTP/1.1\r\n\r\n".encode())
    assert_refused(answer, f"rebind.example:{port}", "resolves to", "keeps out of reach")
    answer = under_test.ask(f"GET http://REBIND.example:{port}/ HTTP/1.1\r\n\r\n".encode())
    assert_refused(answer, f"rebind.example:{port}", "resolves to")
    assert_never_connected(untouched)
    assert under_test.proxy.denied_per_host() == [(f"rebind.example:{port}", 2)]
    where, why = under_test.denial()
    assert where == f"rebind.example:{port}"
    assert "resolves to" in why


def test_localhost_named_by_a_rule_is_reached_as_127_0_0_1_is(start_proxy: StartProxy) -> None:
    """A provider at http://localhost:PORT: the rule names it exactly, as an IP literal."""
    with socket.create_server((LOOPBACK, 0)) as server:
        port = port_of(server)
        under_test = start_proxy(f"localhost:{port}")
        with under_test.client() as client:
            client.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
            assert client.recv(4096).startswith(b"HTTP/1.1 200")
            accepted, _ = server.accept()
            accepted.close()
    assert under_test.proxy.allowed_per_host() == [(f"localhost:{port}", 1)]
    untouched = start_proxy(f"localhost:{port}")  # another port of localhost stays refused
    assert_refused(untouched.ask(f"CONNECT localhost:{port + 1} HTTP/1.1\r\n\r\n".encode()))


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


# -- through the harness's own proxy (upstream.py) ----------------------------------------


class RecordingProxy(Upstream):
    """An upstream HTTP proxy on 127.0.0.1: records each request head, then opens the
    tunnel (answering 200 and echoing), refuses it (`status`), or answers a plain request."""

    def __init__(self, status: int = 200) -> None:
        self.heads: queue.Queue[bytes] = queue.Queue()
        self.status = status
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://user:pa55word@{LOOPBACK}:{self.port}"

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(TIMEOUT)
            head = read_until(connection, b"\r\n\r\n")
            self.heads.put(head)
            if not head.startswith(b"CONNECT "):
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                return
            if self.status != 200:
                connection.sendall(b"HTTP/1.1 %d Nope\r\nContent-Length: 0\r\n\r\n" % self.status)
                return
            connection.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            while chunk := connection.recv(65536):
                connection.sendall(chunk)


@pytest.fixture
def upstream_proxy() -> Iterator[RecordingProxy]:
    proxy = RecordingProxy()
    yield proxy
    proxy.close()


@pytest.fixture
def start_chained() -> Iterator[Callable[..., ProxyUnderTest]]:
    """start_chained(env, *rules): an EgressProxy going through the proxy `env` names."""
    started: list[ProxyUnderTest] = []

    def start(env: dict[str, str], *rules: str) -> ProxyUnderTest:
        control, helper_end = socket.socketpair()
        denials: queue.Queue[tuple[str, str]] = queue.Queue()
        proxy = EgressProxy(
            control,
            Allowlist(tuple(parse_rule(rule) for rule in rules)),
            on_denied=lambda where, why: denials.put((where, why)),
            upstream=UpstreamConfig.from_env(env),
        ).start()
        started.append(ProxyUnderTest(proxy, helper_end, denials))
        return started[-1]

    yield start
    for each in started:
        each.proxy.close()
        each.helper_end.close()


def test_an_allowed_tunnel_goes_through_the_harnesss_proxy_with_its_credentials(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"HTTPS_PROXY": upstream_proxy.url}, "api.github.com")
    with under_test.client() as client:
        client.sendall(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n")
        assert read_until(client, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")
        client.sendall(b"through the tunnel")
        assert read_until(client, b"tunnel") == b"through the tunnel"

    head = upstream_proxy.heads.get(timeout=TIMEOUT)
    assert head.startswith(b"CONNECT api.github.com:443 HTTP/1.1\r\n")
    assert b"Proxy-Authorization: Basic dXNlcjpwYTU1d29yZA==\r\n" in head  # user:pa55word
    assert under_test.proxy.allowed_per_host() == [("api.github.com:443", 1)]
    assert under_test.proxy.denied_per_host() == []


def test_a_plain_request_goes_to_the_harnesss_proxy_in_absolute_form(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"http_proxy": upstream_proxy.url}, "example.org")
    answer = under_test.ask(b"GET http://example.org/path?q=1 HTTP/1.1\r\nHost: x\r\n\r\n")

    assert answer.endswith(b"ok")
    head = upstream_proxy.heads.get(timeout=TIMEOUT)
    assert head.startswith(b"GET http://example.org:80/path?q=1 HTTP/1.1\r\n")
    assert b"Proxy-Authorization: Basic " in head
    assert b"Connection: close\r\n" in head


@pytest.mark.parametrize("status", [407, 403])
def test_a_tunnel_the_harnesss_proxy_refuses_is_refused_and_counted(
    start_chained: Callable[..., ProxyUnderTest], status: int
) -> None:
    refusing = RecordingProxy(status)
    try:
        under_test = start_chained({"HTTPS_PROXY": refusing.url}, "api.github.com")
        answer = under_test.ask(b"CONNECT api.github.com:443 HTTP/1.1\r\n\r\n")
    finally:
        refusing.close()

    reason = assert_refused(answer, "api.github.com:443", "upstream proxy", str(status))
    assert "pa55word" not in reason
    assert under_test.proxy.denied_per_host() == [("api.github.com:443", 1)]
    assert under_test.proxy.allowed_per_host() == []


def test_no_proxy_hosts_go_direct_and_a_refused_host_never_reaches_the_proxy(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy, echo: Upstream
) -> None:
    env = {"HTTPS_PROXY": upstream_proxy.url, "NO_PROXY": LOOPBACK}
    under_test = start_chained(env, f"{LOOPBACK}:{echo.port}")
    with under_test.client() as client:
        client.sendall(f"CONNECT {LOOPBACK}:{echo.port} HTTP/1.1\r\n\r\n".encode())
        assert read_until(client, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")
        client.sendall(b"direct")
        assert read_until(client, b"direct") == b"direct"
    assert_refused(under_test.ask(b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n"), "evil.example")

    assert upstream_proxy.heads.empty()
    assert under_test.proxy.allowed_per_host() == [(f"{LOOPBACK}:{echo.port}", 1)]


def test_connections_let_through_are_counted_per_host(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"HTTPS_PROXY": upstream_proxy.url}, "githubcopilot.com")
    for host, times in (
        ("api.individual.githubcopilot.com", 3),
        ("telemetry.githubcopilot.com", 1),
    ):
        for _ in range(times):
            with under_test.client() as client:
                client.sendall(f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
                read_until(client, b"\r\n\r\n")

    assert under_test.proxy.allowed_per_host() == [
        ("api.individual.githubcopilot.com:443", 3),
        ("telemetry.githubcopilot.com:443", 1),
    ]


# -- through the harness's own proxy, more -------------------------------------------------

CREDENTIALS = "Proxy-Authorization: Basic dXNlcjpwYTU1d29yZA==\r\n"
"""user:pa55word, as RecordingProxy.url gives them."""


class HangingUpProxy(Upstream):
    """An upstream proxy that reads the request head, answers `answer` (maybe nothing,
    maybe no HTTP at all), and hangs up."""

    def __init__(self, answer: bytes) -> None:
        self.heads: queue.Queue[bytes] = queue.Queue()
        self.answer = answer
        super().__init__()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(TIMEOUT)
            self.heads.put(read_until(connection, b"\r\n\r\n"))
            connection.sendall(self.answer)


def test_the_tunnel_asked_of_the_harnesss_proxy_carries_only_the_harnesss_credentials(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"HTTPS_PROXY": upstream_proxy.url}, "api.github.com")
    request = (
        b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n"
        b"Proxy-Authorization: Basic c2VjcmV0\r\nUser-Agent: tool/1.0\r\n\r\nearly "
    )
    with under_test.client() as client:
        client.sendall(request)
        answer = read_until(client, b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 Connection established\r\n\r\n")
        client.sendall(b"ping")
        answer = read_until(client, b"early ping", answer)
        assert answer.endswith(b"\r\n\r\nearly ping")
        for _ in range(3):  # a few round trips, each answered
            client.sendall(b"again")
            assert read_until(client, b"again") == b"again"

    assert (
        upstream_proxy.heads.get(timeout=TIMEOUT)
        == (
            f"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n{CREDENTIALS}\r\n"
        ).encode()
    )


def test_a_proxy_without_credentials_is_sent_none(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    url = upstream_proxy.url.replace("user:pa55word@", "")
    under_test = start_chained({"HTTPS_PROXY": url}, "api.github.com")
    with under_test.client() as client:
        client.sendall(b"CONNECT API.GitHub.com.:443 HTTP/1.1\r\n\r\n")
        assert read_until(client, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")

    assert upstream_proxy.heads.get(timeout=TIMEOUT) == (
        b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n"
    )


def test_an_ipv6_target_is_asked_for_in_brackets(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"ALL_PROXY": upstream_proxy.url}, "[2001:db8::1]:443")
    with under_test.client() as client:
        client.sendall(b"CONNECT [2001:DB8::1]:443 HTTP/1.1\r\n\r\n")
        assert read_until(client, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")

    head = upstream_proxy.heads.get(timeout=TIMEOUT)
    assert head.startswith(b"CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n")
    assert under_test.proxy.allowed_per_host() == [("[2001:db8::1]:443", 1)]


def test_a_plain_request_to_an_ip_reaches_the_harnesss_proxy_in_absolute_form(
    start_chained: Callable[..., ProxyUnderTest],
    upstream_proxy: RecordingProxy,
    untouched: socket.socket,
) -> None:
    port = port_of(untouched)
    under_test = start_chained({"HTTP_PROXY": upstream_proxy.url}, f"{LOOPBACK}:{port}")
    request = (
        f"GET http://{LOOPBACK}:{port}/path?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
        "Accept: */*\r\n\r\n"
    )
    answer = under_test.ask(request.encode())

    assert answer == b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    assert (
        upstream_proxy.heads.get(timeout=TIMEOUT)
        == (
            f"GET http://{LOOPBACK}:{port}/path?q=1 HTTP/1.1\r\n{CREDENTIALS}"
            f"Host: {LOOPBACK}:{port}\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        ).encode()
    )
    assert_never_connected(untouched)  # the harness's proxy, not the egress proxy, goes there
    assert under_test.proxy.allowed_per_host() == [(f"{LOOPBACK}:{port}", 1)]


def test_a_tunnel_proxy_alone_leaves_plain_requests_direct(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy, web: Upstream
) -> None:
    under_test = start_chained({"HTTPS_PROXY": upstream_proxy.url}, f"{LOOPBACK}:{web.port}")
    answer = under_test.ask(f"GET http://{LOOPBACK}:{web.port}/x HTTP/1.1\r\n\r\n".encode())

    assert answer.endswith(b"\r\n\r\nok")
    assert web.received.get(timeout=TIMEOUT).startswith(b"GET /x HTTP/1.1\r\n")
    assert upstream_proxy.heads.empty()


@pytest.mark.parametrize("no_proxy", [LOOPBACK, "127.0.0.0/8", "*", f"{LOOPBACK}:{{port}}"])
def test_no_proxy_sends_a_plain_request_direct(
    start_chained: Callable[..., ProxyUnderTest],
    upstream_proxy: RecordingProxy,
    web: Upstream,
    no_proxy: str,
) -> None:
    env = {"ALL_PROXY": upstream_proxy.url, "no_proxy": no_proxy.format(port=web.port)}
    under_test = start_chained(env, f"{LOOPBACK}:{web.port}")
    answer = under_test.ask(f"GET http://{LOOPBACK}:{web.port}/direct HTTP/1.1\r\n\r\n".encode())

    assert answer.endswith(b"\r\n\r\nok")
    assert web.received.get(timeout=TIMEOUT).startswith(b"GET /direct HTTP/1.1\r\n")
    assert upstream_proxy.heads.empty()


def test_no_proxy_for_another_port_still_goes_through_the_harnesss_proxy(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy, echo: Upstream
) -> None:
    env = {"HTTPS_PROXY": upstream_proxy.url, "NO_PROXY": f"{LOOPBACK}:{echo.port + 1}"}
    under_test = start_chained(env, f"{LOOPBACK}:{echo.port}")
    with under_test.client() as client:
        client.sendall(f"CONNECT {LOOPBACK}:{echo.port} HTTP/1.1\r\n\r\n".encode())
        assert read_until(client, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")

    head = upstream_proxy.heads.get(timeout=TIMEOUT)
    assert head.startswith(f"CONNECT {LOOPBACK}:{echo.port} HTTP/1.1\r\n".encode())


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"", "no answer"),
        (b"HTTP/1.1 200 OK\r\n", "no answer"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "SSH-2.0-OpenSSH_9.6"),
        (b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 502 Bad Gateway"),
        (
            b"HTTP/1.1 407 Proxy Authentication Required\r\n"
            b'Proxy-Authenticate: Basic realm="corp"\r\n\r\n',
            "HTTP/1.1 407 Proxy Authentication Required",
        ),
    ],
)
def test_a_harnesss_proxy_that_hangs_up_or_refuses_is_a_refusal_naming_it(
    start_chained: Callable[..., ProxyUnderTest], answer: bytes, said: str
) -> None:
    hanging_up = HangingUpProxy(answer)
    port = hanging_up.port
    url = f"http://user:pa55word@{LOOPBACK}:{port}"
    try:
        under_test = start_chained({"HTTPS_PROXY": url}, "api.github.com")
        reply = under_test.ask(b"CONNECT api.github.com:443 HTTP/1.1\r\n\r\n")
        where, why = under_test.denial()
    finally:
        hanging_up.close()

    named = f"the upstream proxy {LOOPBACK}:{port} refused the tunnel ({said})"
    body = assert_refused(reply, "egress to api.github.com:443 refused", named)
    assert (where, why) == ("api.github.com:443", named)
    for secret in ("pa55word", "dXNlcjpwYTU1d29yZA=="):
        assert secret not in body
        assert secret not in why
    assert under_test.proxy.denied_per_host() == [("api.github.com:443", 1)]
    assert under_test.proxy.allowed_per_host() == []


@pytest.mark.parametrize(
    "request_line", ["CONNECT {target} HTTP/1.1", "GET http://{target}/ HTTP/1.1"]
)
def test_a_harnesss_proxy_nobody_listens_on_is_a_refusal_naming_it(
    start_chained: Callable[..., ProxyUnderTest], request_line: str
) -> None:
    with socket.socket() as bound:  # bound, never listening: connecting to it is refused
        bound.bind((LOOPBACK, 0))
        port = port_of(bound)
        env = {"ALL_PROXY": f"http://user:pa55word@{LOOPBACK}:{port}"}
        under_test = start_chained(env, "example.org")
        target = "example.org:443" if request_line.startswith("CONNECT") else "example.org"
        reply = under_test.ask((request_line.format(target=target) + "\r\n\r\n").encode())

    where = "example.org:443" if request_line.startswith("CONNECT") else "example.org:80"
    body = assert_refused(reply, where, f"cannot reach the upstream proxy {LOOPBACK}:{port}")
    assert "pa55word" not in body
    assert under_test.proxy.denied_per_host() == [(where, 1)]
    assert under_test.proxy.allowed_per_host() == []


def test_a_refused_host_or_port_never_reaches_the_harnesss_proxy(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"ALL_PROXY": upstream_proxy.url}, "api.github.com:443")
    for request in (
        b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n",
        b"CONNECT api.github.com:22 HTTP/1.1\r\n\r\n",
        b"GET http://api.github.com/ HTTP/1.1\r\n\r\n",
        b"GET http://evil.example:443/ HTTP/1.1\r\n\r\n",
        b"not a proxy request\r\n\r\n",
    ):
        assert_refused(under_test.ask(request))

    assert upstream_proxy.heads.empty()
    assert under_test.proxy.allowed_per_host() == []
    assert under_test.proxy.denied_per_host() == [
        ("evil.example:443", 2),
        ("(unreadable request)", 1),
        ("api.github.com:22", 1),
        ("api.github.com:80", 1),
    ]


def test_allowed_hosts_past_the_limit_are_counted_together(
    start_chained: Callable[..., ProxyUnderTest],
    upstream_proxy: RecordingProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(egress_proxy, "MAX_COUNTED_HOSTS", 2)
    under_test = start_chained({"HTTPS_PROXY": upstream_proxy.url}, "example.org")
    for host in ("a", "b", "a", "c", "d", "c", "b"):
        with under_test.client() as client:
            client.sendall(f"CONNECT {host}.example.org:443 HTTP/1.1\r\n\r\n".encode())
            assert read_until(client, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")

    assert under_test.proxy.allowed_per_host() == [
        ("(other hosts)", 3),
        ("a.example.org:443", 2),
        ("b.example.org:443", 2),
    ]
    assert under_test.proxy.denied_per_host() == []


def test_allowed_and_denied_connections_are_counted_apart(
    start_chained: Callable[..., ProxyUnderTest], upstream_proxy: RecordingProxy
) -> None:
    under_test = start_chained({"HTTPS_PROXY": upstream_proxy.url}, "example.org:443")
    for target in ("example.org:443", "example.org:8443", "example.org:443", "x.example.org:443"):
        with under_test.client() as client:
            client.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
            read_until(client, b"\r\n\r\n")

    assert under_test.proxy.allowed_per_host() == [
        ("example.org:443", 2),
        ("x.example.org:443", 1),
    ]
    assert under_test.proxy.denied_per_host() == [("example.org:8443", 1)]


def test_direct_connections_are_counted_too(start_proxy: StartProxy, echo: Upstream) -> None:
    under_test = start_proxy(f"{LOOPBACK}:{echo.port}")
    for _ in range(3):
        with under_test.client() as client:
            client.sendall(f"CONNECT {LOOPBACK}:{echo.port} HTTP/1.1\r\n\r\n".encode())
            read_until(client, b"\r\n\r\n")

    assert under_test.proxy.allowed_per_host() == [(f"{LOOPBACK}:{echo.port}", 3)]


# -- the harness's proxy: its answers, a silent one, a request body --------------------------


class TunnelProxy(Upstream):
    """An upstream proxy on 127.0.0.1 that records each request head, answers `answer`
    in one write, then echoes what the tunnel carries until the client ends it."""

    def __init__(self, answer: bytes) -> None:
        self.heads: queue.Queue[bytes] = queue.Queue()
        self.answer = answer
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(TIMEOUT)
            self.heads.put(read_until(connection, b"\r\n\r\n"))
            connection.sendall(self.answer)
            while chunk := connection.recv(65536):
                connection.sendall(chunk)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.0 200 Connection established\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nProxy-Agent: squid/6\r\nVia: 1.1 corp\r\n\r\n",
    ],
)
def test_any_200_answer_of_the_harnesss_proxy_opens_the_tunnel(
    start_chained: Callable[..., ProxyUnderTest], answer: bytes
) -> None:
    upstream = TunnelProxy(answer)
    try:
        under_test = start_chained({"HTTPS_PROXY": upstream.url}, "api.github.com")
        with under_test.client() as client:
            client.sendall(b"CONNECT api.github.com:443 HTTP/1.1\r\n\r\n")
            reply = read_until(client, b"\r\n\r\n")
            # The client sees the egress proxy's own answer, never the upstream's headers.
            assert reply == b"HTTP/1.1 200 Connection established\r\n\r\n"
            client.sendall(b"hello")
            assert read_until(client, b"hello") == b"hello"
    finally:
        upstream.close()

    assert under_test.proxy.allowed_per_host() == [("api.github.com:443", 1)]
    assert under_test.proxy.denied_per_host() == []


def test_a_servers_first_bytes_coming_with_the_200_reach_the_client(
    start_chained: Callable[..., ProxyUnderTest],
) -> None:
    banner = b"SSH-2.0-OpenSSH_9.6\r\n"
    upstream = TunnelProxy(b"HTTP/1.1 200 Connection established\r\n\r\n" + banner)
    try:
        under_test = start_chained({"HTTPS_PROXY": upstream.url}, "github.com:22")
        with under_test.client() as client:
            client.sendall(b"CONNECT github.com:22 HTTP/1.1\r\n\r\n")
            reply = read_until(client, banner)
    finally:
        upstream.close()

    assert reply == b"HTTP/1.1 200 Connection established\r\n\r\n" + banner
    assert under_test.proxy.allowed_per_host() == [("github.com:22", 1)]


def test_a_harnesss_proxy_that_never_answers_is_given_up_on_and_counted_as_refused(
    start_chained: Callable[..., ProxyUnderTest],
    untouched: socket.socket,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its listener accepts nothing: the connection waits in the backlog, unanswered."""
    monkeypatch.setattr(egress_proxy, "CONNECT_TIMEOUT_S", 0.3)
    url = f"http://user:pa55word@{LOOPBACK}:{port_of(untouched)}"
    under_test = start_chained({"HTTPS_PROXY": url}, "api.github.com")
    reply = under_test.ask(b"CONNECT api.github.com:443 HTTP/1.1\r\n\r\n")

    named = f"the upstream proxy {LOOPBACK}:{port_of(untouched)} refused the tunnel (no answer)"
    body = assert_refused(reply, "api.github.com:443", named)
    assert "pa55word" not in body
    assert under_test.denial() == ("api.github.com:443", named)
    assert under_test.proxy.denied_per_host() == [("api.github.com:443", 1)]
    assert under_test.proxy.allowed_per_host() == []


class RequestRecorder(Upstream):
    """An upstream proxy on 127.0.0.1 that records a whole plain request, its head and
    its `Content-Length` body, then answers 200."""

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(TIMEOUT)
            data = read_until(connection, b"\r\n\r\n")
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                chunk = connection.recv(65536)
                assert chunk, f"closed before the body's end; got {body!r}"
                body += chunk
            self.received.put(head + b"\r\n\r\n" + body)
            connection.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone")


def test_a_plain_requests_body_follows_its_head_through_the_harnesss_proxy(
    start_chained: Callable[..., ProxyUnderTest],
) -> None:
    recorder = RequestRecorder()
    try:
        under_test = start_chained({"HTTP_PROXY": f"{LOOPBACK}:{recorder.port}"}, "example.org")
        with under_test.client() as client:
            client.sendall(
                b"POST http://example.org/upload HTTP/1.1\r\nHost: example.org\r\n"
                b"Proxy-Authorization: Basic c2VjcmV0\r\nContent-Length: 11\r\n\r\nhello"
            )
            client.sendall(b" world")  # the rest of the body, after the head was read
            answer = read_to_end(client)
        received = recorder.received.get(timeout=TIMEOUT)
    finally:
        recorder.close()

    assert answer == b"HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone"
    # A proxy without credentials is sent none, and the client's own never leave.
    assert received == (
        b"POST http://example.org:80/upload HTTP/1.1\r\nHost: example.org\r\n"
        b"Content-Length: 11\r\nConnection: close\r\n\r\nhello world"
    )
    assert under_test.proxy.allowed_per_host() == [("example.org:80", 1)]
