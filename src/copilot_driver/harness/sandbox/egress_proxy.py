"""The sandbox's only way out: an HTTP proxy in the harness that allows listed hosts.

Inside the sandbox's network namespace nothing routes anywhere. The helper
inside (`inside.py`) listens on the sandbox's loopback, where `HTTP_PROXY` and
`HTTPS_PROXY` point, and hands every connection it accepts to this proxy as a
file descriptor over a Unix socket pair (SCM_RIGHTS): no path, no port of the
host is reachable from inside. Each connection asks for one destination,
`CONNECT host:port` or an absolute-form `GET http://host:port/...`; the proxy
allows it only when the `Allowlist` does, refuses a name that resolves to a
loopback, link-local or unspecified address (the host's own services and cloud
metadata stay out of reach whatever DNS says), and counts refusals per host.

Absolute-form requests are forwarded with `Connection: close` and the `Host`
of their target, so a client can neither send a second request for another
host on an allowed connection nor name another site behind the same address.
Inside a CONNECT tunnel (TLS) the proxy sees nothing: there a client can name
any site the allowed address serves.

When the harness itself is behind a proxy (`upstream.py`), an allowed
connection goes through that one: a tunnel is asked for with `CONNECT`, a
plain request is sent to it in absolute form. The names are then resolved by
that proxy, on its network. Connections let through are counted per host too:
the run's record says what the tools and the CLI reached.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections import Counter
from collections.abc import Callable

from copilot_driver.harness.sandbox.egress_rules import Allowlist, is_ip_literal, normalise_host
from copilot_driver.harness.sandbox.inside import relay
from copilot_driver.harness.sandbox.upstream import Upstream, UpstreamProxy

HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 15.0
MAX_CONNECTIONS = 256
MAX_COUNTED_HOSTS = 1000
UNREADABLE = "(unreadable request)"
OTHER_HOSTS = "(other hosts)"
_DROPPED_HEADERS = (
    b"proxy-connection",
    b"proxy-authorization",
    b"connection",
    b"keep-alive",
    b"host",
)
"""Replaced when forwarding: `Host` is set from the allowed request target, so a request
cannot name another site served from the same address."""


class EgressProxy:
    """Serves the connections handed over `control` until it closes (see module doc)."""

    def __init__(
        self,
        control: socket.socket,
        allowlist: Allowlist,
        *,
        on_denied: Callable[[str, str], None] | None = None,
        upstream: Upstream | None = None,
    ) -> None:
        self.allowlist = allowlist
        self.upstream = upstream or Upstream()
        self.denied: Counter[str] = Counter()
        self.allowed: Counter[str] = Counter()
        self._control = control
        self._on_denied = on_denied
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._thread = threading.Thread(target=self._receive, name="egress-proxy", daemon=True)

    def start(self) -> EgressProxy:
        self._thread.start()
        return self

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._control.shutdown(socket.SHUT_RDWR)
        self._thread.join(2)
        self._control.close()

    def denied_per_host(self) -> list[tuple[str, int]]:
        with self._lock:
            return sorted(self.denied.items(), key=lambda item: (-item[1], item[0]))

    def allowed_per_host(self) -> list[tuple[str, int]]:
        with self._lock:
            return sorted(self.allowed.items(), key=lambda item: (-item[1], item[0]))

    # -- connections ---------------------------------------------------------------

    def _receive(self) -> None:
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(self._control, 1, 4)
            except OSError:
                return
            if not fds:
                return  # the helper inside is gone
            for fd in fds:
                client = socket.socket(fileno=fd)
                if not self._slots.acquire(blocking=False):
                    self._deny(client, OTHER_HOSTS, "too many connections at once")
                    continue
                threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            with client:
                self._handle(client)
        except OSError:
            pass
        finally:
            self._slots.release()

    def _handle(self, client: socket.socket) -> None:
        client.settimeout(HEAD_TIMEOUT_S)
        head, rest = _read_head(client)
        request = _parse(head) if head is not None else None
        if request is None:
            self._deny(client, UNREADABLE, "not an HTTP proxy request")
            return
        method, host, port, forwarded_head = request
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if not self.allowlist.allows(host, port):
            self._deny(client, where, "not in the sandbox's allowed hosts")
            return
        tunnel = method == b"CONNECT"
        via = self.upstream.for_target(host, port, tunnel=tunnel)
        early = b""
        if via is None:
            upstream, failure = _connect(host, port)
        else:
            upstream, failure, early = _through(via, host, port, tunnel=tunnel)
            if not tunnel:
                forwarded_head = _absolute_form(forwarded_head, where, via)
        if upstream is None:
            self._deny(client, where, failure)
            return
        self._count(where)
        with upstream:
            client.settimeout(None)
            if tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n" + early)
            else:
                upstream.sendall(forwarded_head)
            if rest:
                upstream.sendall(rest)
            relay(client, upstream)

    def _count(self, where: str) -> None:
        with self._lock:
            if where in self.allowed or len(self.allowed) < MAX_COUNTED_HOSTS:
                self.allowed[where] += 1
            else:
                self.allowed[OTHER_HOSTS] += 1

    def _deny(self, client: socket.socket, where: str, why: str) -> None:
        first = False
        with self._lock:
            key = (
                where
                if where in self.denied or len(self.denied) < MAX_COUNTED_HOSTS
                else OTHER_HOSTS
            )
            first = key not in self.denied
            self.denied[key] += 1
        with contextlib.suppress(OSError):
            body = (
                f"copilot-driver sandbox: egress to {where} refused ({why}); the harness's "
                "--allow-domain HOST allows a host\n"
            ).encode()
            client.sendall(
                b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                + b"Content-Length: %d\r\n\r\n" % len(body)
                + body
            )
            client.close()
        if first and self._on_denied is not None:
            self._on_denied(key, why)


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    """The request head (through the blank line) and whatever came after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            return None, b""
        try:
            chunk = client.recv(65536)
        except (OSError, TimeoutError):
            return None, b""
        if not chunk:
            return None, b""
        data += chunk
    end = data.index(b"\r\n\r\n") + 4
    if end > HEAD_LIMIT:  # the last read may have carried it past the limit
        return None, b""
    return data[:end], data[end:]


def _parse(head: bytes) -> tuple[bytes, str, int, bytes] | None:
    """(method, host, port, the head to send upstream) for CONNECT or an absolute-form
    http:// request; None for anything else."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        return None
    method, target, version = parts
    try:
        text = target.decode("ascii")
    except UnicodeDecodeError:
        return None
    if method == b"CONNECT":
        found = _host_port(text, default=None)
        return None if found is None else (method, *found, b"")
    if not text.lower().startswith("http://"):
        return None
    authority, slash, path = text[len("http://") :].partition("/")
    found = _host_port(authority, default=80)
    if found is None or "@" in authority:
        return None
    headers = [
        line for line in lines[1:] if line.split(b":", 1)[0].strip().lower() not in _DROPPED_HEADERS
    ]
    first = b" ".join((method, ("/" + path if slash else "/").encode("ascii"), version))
    host = authority.encode("ascii")
    forwarded = b"\r\n".join([first, b"Host: " + host, *headers, b"Connection: close", b"", b""])
    return method, found[0], found[1], forwarded


def _host_port(text: str, default: int | None) -> tuple[str, int] | None:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = text.rpartition(":") if ":" in text else (text, "", "")
    if port_text:
        if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
            return None
        port = int(port_text)
    elif default is None:
        return None
    else:
        port = default
    normal = normalise_host(host)
    return None if normal is None else (normal, port)


def _through(
    proxy: UpstreamProxy, host: str, port: int, *, tunnel: bool
) -> tuple[socket.socket | None, str, bytes]:
    """A connection through the harness's proxy: a tunnel to host:port it agreed to open
    (with what the server sent right behind the proxy's answer), or, for a plain request,
    the connection to the proxy itself; or None and why not."""
    try:
        upstream = socket.create_connection((proxy.host, proxy.port), CONNECT_TIMEOUT_S)
    except OSError as error:
        return None, f"cannot reach the upstream proxy {proxy} ({error.strerror or error})", b""
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if not tunnel:
        upstream.settimeout(None)
        return upstream, "", b""
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if proxy.authorization:
        head += f"Proxy-Authorization: {proxy.authorization}\r\n"
    try:
        upstream.sendall((head + "\r\n").encode("ascii"))
        answer, rest = _read_head(upstream)
    except OSError as error:
        upstream.close()
        return None, f"the upstream proxy {proxy} failed ({error.strerror or error})", b""
    status = answer.split(b"\r\n", 1)[0].decode("latin-1") if answer else "no answer"
    if answer is None or status.split(" ")[1:2] != ["200"]:
        upstream.close()
        return None, f"the upstream proxy {proxy} refused the tunnel ({status})", b""
    upstream.settimeout(None)
    return upstream, "", rest  # a server that speaks first (SSH) may be in the same read


def _absolute_form(head: bytes, where: str, proxy: UpstreamProxy) -> bytes:
    """A forwarded plain request as a proxy takes it: the absolute URL on its first line,
    and the proxy's credentials."""
    first, _, rest = head.partition(b"\r\n")
    method, path, version = first.split(b" ")
    line = b" ".join((method, f"http://{where}".encode("ascii") + path, version))
    if proxy.authorization:
        rest = f"Proxy-Authorization: {proxy.authorization}\r\n".encode("ascii") + rest
    return line + b"\r\n" + rest


def _connect(host: str, port: int) -> tuple[socket.socket | None, str]:
    """A connection to host:port, or None and why not. A name that resolves to an
    address the sandbox keeps out of reach is refused (an IP literal was allowed as
    written, and so was `localhost`, which only a rule naming it exactly lets through:
    a provider at `http://localhost:PORT` works as one at `127.0.0.1:PORT` does)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        return None, f"cannot resolve it ({error.strerror or error})"
    if not is_ip_literal(host) and host != "localhost":
        for *_, address in infos:
            ip = ipaddress.ip_address(address[0])
            if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast:
                return None, f"it resolves to {ip}, which the sandbox keeps out of reach"
    failure = "no address answered"
    for family, kind, proto, _, address in infos:
        upstream = socket.socket(family, kind, proto)
        upstream.settimeout(CONNECT_TIMEOUT_S)
        try:
            upstream.connect(address)
        except OSError as error:
            upstream.close()
            failure = f"cannot connect ({error.strerror or error})"
            continue
        upstream.settimeout(None)
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return upstream, ""
    return None, failure
