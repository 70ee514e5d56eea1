"""`FakeGitHubCopilot`: GitHub's API and the Copilot API on 127.0.0.1.

Plain mode (always on) is one HTTP listener that plays every host; the CLI
reaches it with `COPILOT_DEBUG_GITHUB_API_URL`, and the user answer's
`endpoints` point back at it. The HTTPS mode (`https=True`) adds a TLS
listener for the real host names and a CONNECT proxy in front of it; the
CLI reaches it with `HTTPS_PROXY` and `NODE_EXTRA_CA_CERTS` and no
debug variable at all, so it resolves every host exactly as in production.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Mapping
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import Any

from copilot_driver.testing.github_api.account import new_token
from copilot_driver.testing.github_api.handler import handler_for
from copilot_driver.testing.github_api.hosts import (
    ALL_ROLES,
    HostMap,
    Role,
    self_endpoints,
)
from copilot_driver.testing.github_api.proxy import connect_handler
from copilot_driver.testing.github_api.records import ApiRequest, RequestLog
from copilot_driver.testing.github_api.serving import QuietHTTPServer, QuietTCPServer, Serving
from copilot_driver.testing.github_api.switches import RateLimitCounter, Switches
from copilot_driver.testing.github_api.tls import TestCertificates
from copilot_driver.testing.script import Script

TOKEN_VARIABLE = "COPILOT_GITHUB_TOKEN"  # noqa: S105 - a variable name, not a secret
"""The variable the sidecar reads its GitHub token from."""

LOGIN_ARGS = ("--auth-token-env", TOKEN_VARIABLE)
"""The CLI arguments naming that variable (with `--no-auto-login`, the sidecar's default)."""


class _TlsHTTPServer(QuietHTTPServer):
    """Wraps each accepted socket for TLS; the handshake itself happens on
    the request thread (`ApiHandler.handle`), not in the accept loop."""

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext,
    ) -> None:
        self.context = context
        super().__init__(address, handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        wrapped = self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return wrapped, address


class FakeGitHubCopilot:
    """Serve GitHub and Copilot as CLI 1.0.102 expects until `close()`.

    `script` answers the model calls (like `ScriptedModelServer.script`);
    `switches` (a frozen `Switches`) says how the account and the service
    behave. Both are plain attributes a test may replace while the fake
    runs. Every request needs `Authorization: Bearer <token>` with an
    accepted token (`token`, a fresh random one by default, plus any
    `accept()`ed), telemetry aside.

    `https=True` also starts the TLS listener and the proxy; it needs the
    `openssl` command (FileNotFoundError without it). `ghe_host` and
    `extra_hosts` add host names to its certificate (see `hosts.HostMap`).
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        token: str | None = None,
        switches: Switches | None = None,
        https: bool = False,
        ghe_host: str | None = None,
        extra_hosts: Mapping[str, Role] | None = None,
        port: int = 0,
    ) -> None:
        self.script = script or Script()
        self.switches = switches or Switches()
        self.token = token or new_token()
        self.log = RequestLog()
        self.hosts = HostMap(ghe_host=ghe_host, extra=dict(extra_hosts or {}))
        self._tokens = {self.token}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._rate_limits = RateLimitCounter()
        self._certificates: TestCertificates | None = None
        self._plain = Serving("fake-github-http")
        self._tls: Serving | None = None
        self._proxy: Serving | None = None
        try:
            bound = handler_for(self, self._plain, secure=False)
            self._plain.start(QuietHTTPServer(("127.0.0.1", port), bound))
            if https:
                self._start_https()
        except BaseException:
            self.close()
            raise

    def _start_https(self) -> None:
        self._certificates = TestCertificates(self.hosts.names())
        self._tls = Serving("fake-github-tls")
        bound = handler_for(self, self._tls, secure=True)
        context = self._certificates.server_context()
        self._tls.start(_TlsHTTPServer(("127.0.0.1", 0), bound, context))
        self._proxy = Serving("fake-github-proxy")
        handler = connect_handler(self._proxy, self.log, self._serves, self._tls.port)
        self._proxy.start(QuietTCPServer(("127.0.0.1", 0), handler))

    # -- addresses and environments ---------------------------------------

    @property
    def port(self) -> int:
        return self._plain.port

    @property
    def github_api_url(self) -> str:
        """The plain mode's GitHub API base (`COPILOT_DEBUG_GITHUB_API_URL`)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def https(self) -> bool:
        return self._proxy is not None

    @property
    def ca_file(self) -> Path:
        """The throw-away authority to trust (`NODE_EXTRA_CA_CERTS`)."""
        return self._need_https()[0].ca_file

    @property
    def proxy_url(self) -> str:
        """The CONNECT proxy (`HTTPS_PROXY`)."""
        return f"http://127.0.0.1:{self._need_https()[1].port}"

    @property
    def tls_port(self) -> int:
        """The TLS listener the proxy tunnels to (tests may talk to it directly)."""
        tls = self._tls
        if tls is None:
            raise RuntimeError("this fake runs without https=True")
        return tls.port

    def _need_https(self) -> tuple[TestCertificates, Serving]:
        if self._certificates is None or self._proxy is None:
            raise RuntimeError("this fake runs without https=True")
        return self._certificates, self._proxy

    def sidecar_env(self, token: str | None = None) -> dict[str, str]:
        """The sidecar variables of the plain mode (with `LOGIN_ARGS`)."""
        return {
            TOKEN_VARIABLE: token or self.token,
            "COPILOT_DEBUG_GITHUB_API_URL": self.github_api_url,
        }

    def https_sidecar_env(self, token: str | None = None) -> dict[str, str]:
        """The sidecar variables of the HTTPS mode: the proxy and the
        authority, and no debug URL, so the CLI uses the real host names."""
        proxy = self.proxy_url
        return {
            TOKEN_VARIABLE: token or self.token,
            "HTTPS_PROXY": proxy,
            "https_proxy": proxy,
            "NODE_EXTRA_CA_CERTS": str(self.ca_file),
        }

    # -- tokens and switches ----------------------------------------------

    def accept(self, token: str) -> None:
        """Accept `token` too."""
        with self._lock:
            self._tokens.add(token)

    def new_token(self) -> str:
        """A fresh random token, accepted from now on (one per session keeps
        the CLI's user cache from answering for an earlier one)."""
        token = new_token()
        self.accept(token)
        return token

    def accepts(self, token: str) -> bool:
        with self._lock:
            return token in self._tokens

    def switch(self, **changes: Any) -> Switches:
        """Replace some switches (`fake.switch(token_refused=True)`); returns the new set."""
        with self._lock:
            self.switches = replace(self.switches, **changes)
            return self.switches

    # -- what the request handler reads -----------------------------------

    @property
    def rate_limits(self) -> RateLimitCounter:
        return self._rate_limits

    def endpoints_for(self, host: str, secure: bool) -> dict[str, str]:
        """The user answer's `endpoints`: real names on TLS, else this fake."""
        if secure:
            return self.hosts.endpoints(host, self.switches.plan)
        return self_endpoints(self.github_api_url)

    def roles_for(self, host: str, secure: bool) -> frozenset[Role]:
        if not secure:
            return ALL_ROLES
        role = self.hosts.role(host)
        return frozenset() if role is None else frozenset({role})

    def _serves(self, host: str, port: int) -> bool:
        return port == 443 and self.hosts.role(host) is not None

    def wait(self, seconds: float | None) -> bool:
        """Sleep `seconds` (None: until closed); False when the fake closes first."""
        return not self._closing.wait(seconds)

    # -- records ------------------------------------------------------------

    def requests(self, token: str | None = None) -> list[ApiRequest]:
        """Every request received, in order; with `token`, only those that
        carried it (tests sharing one fake and one CLI tell theirs apart so)."""
        found = self.log.requests()
        return found if token is None else [r for r in found if r.token == token]

    def paths(self, token: str | None = None) -> list[str]:
        """`METHOD path` of every request (carrying `token`), in order."""
        return [f"{r.method} {r.path}" for r in self.requests(token)]

    def requests_to(
        self, path: str, method: str | None = None, token: str | None = None
    ) -> list[ApiRequest]:
        """The requests for `path` (by `method`, carrying `token`), in order."""
        found = self.log.requests_to(path, method)
        return found if token is None else [r for r in found if r.token == token]

    def wait_for(self, path: str, count: int = 1, timeout: float = 10.0) -> list[ApiRequest]:
        return self.log.wait_for(path, count, timeout)

    def connected_hosts(self) -> list[str]:
        """Every CONNECT target's host, in order, tunnelled or refused."""
        return [record.host for record in self.log.connects()]

    def refused_hosts(self) -> list[str]:
        """The CONNECT targets the proxy refused, in order."""
        return [record.host for record in self.log.connects() if not record.tunnelled]

    def active_requests(self) -> int:
        """Connections whose thread still runs, over every listener."""
        return sum(s.active() for s in (self._plain, self._tls, self._proxy) if s is not None)

    # -- closing --------------------------------------------------------------

    def close(self) -> None:
        """Stop every listener, end every connection and tunnel (a delay or a
        held reply gives up at once), and delete the certificates."""
        self._closing.set()
        for serving in (self._proxy, self._tls, self._plain):
            if serving is not None:
                serving.close()
        if self._certificates is not None:
            self._certificates.remove()

    def __enter__(self) -> FakeGitHubCopilot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
