"""The proxy the harness's own network goes through, if any: read from its environment. Pure.

A runner behind a corporate proxy reaches GitHub only through it
(`HTTPS_PROXY=http://user:password@proxy:3128`, `NO_PROXY=.internal`). Inside
the sandbox the CLI's proxy is the sandbox's egress proxy; that proxy then
goes out through the harness's, so the allowlist is checked first and the
corporate proxy still carries the traffic:

    CLI -> egress proxy (allowlist) -> upstream proxy -> GitHub

Tunnels (`CONNECT`) go through `HTTPS_PROXY`, plain `http://` requests through
`HTTP_PROXY`, each falling back to `ALL_PROXY`; lower-case names count too, the
upper-case one first. A target `NO_PROXY` matches goes direct: `*`, a name
(itself and its subdomains, a leading dot or `*.` allowed), `name:port`, an
IP address or a CIDR block. Only `http://` proxies are supported; any other
proxy URL stops the run before it starts, naming the variable.
"""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from copilot_driver.errors import CopilotDriverError


class UpstreamProxyError(CopilotDriverError, ValueError):
    """A proxy variable the egress proxy cannot use; the message names it and the fix."""


@dataclass(frozen=True)
class UpstreamProxy:
    host: str
    port: int
    authorization: str | None = field(default=None, repr=False)
    """`Basic ...` from the URL's user and password, sent as Proxy-Authorization."""
    variable: str = ""
    """Where it came from, for messages."""

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class Upstream:
    """The harness's proxies; `Upstream()` means a direct connection to every host."""

    tunnel: UpstreamProxy | None = None
    plain: UpstreamProxy | None = None
    no_proxy: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Upstream:
        """Raises UpstreamProxyError for a proxy URL that is not `http://host[:port]`."""
        tunnel, plain = _proxy(env, "HTTPS_PROXY"), _proxy(env, "HTTP_PROXY")
        if tunnel is None or plain is None:  # ALL_PROXY is read only where it is used
            everything = _proxy(env, "ALL_PROXY")
            tunnel, plain = tunnel or everything, plain or everything
        return cls(tunnel, plain, _no_proxy(_first(env, "NO_PROXY")[1]))

    def for_target(self, host: str, port: int, *, tunnel: bool) -> UpstreamProxy | None:
        """The proxy to reach `host:port` through (a CONNECT tunnel, or a plain http://
        request), or None to connect directly."""
        proxy = self.tunnel if tunnel else self.plain
        if proxy is None or any(_bypasses(entry, host, port) for entry in self.no_proxy):
            return None
        return proxy


def proxy_passwords(env: Mapping[str, str]) -> tuple[str, ...]:
    """The passwords in the environment's proxy URLs, to be masked wherever written."""
    found = []
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        for variable in (name, name.lower()):
            userinfo, _ = _split_userinfo(env.get(variable, "").strip())
            _, has_password, password = (userinfo or "").partition(":")
            if has_password and password:
                found += [password, unquote(password)]
    return tuple(dict.fromkeys(found))


def _split_userinfo(value: str) -> tuple[str | None, str]:
    """(`user:password`, the URL without it): the userinfo ends at the last `@` before
    the host, so a password holding `/`, `?` or `#` (which it should have percent-encoded)
    is still read whole, never taken for a host or a path."""
    scheme, has_scheme, rest = value.partition("://")
    if not has_scheme:
        scheme, rest = "", value
    userinfo, at, host = rest.rpartition("@")
    if not at:
        return None, value
    return userinfo, f"{scheme}://{host}" if has_scheme else host


def _first(env: Mapping[str, str], name: str) -> tuple[str, str]:
    for variable in (name, name.lower()):
        value = env.get(variable, "").strip()
        if value:
            return variable, value
    return name, ""


def _proxy(env: Mapping[str, str], name: str) -> UpstreamProxy | None:
    variable, value = _first(env, name)
    if not value:
        return None
    userinfo, address = _split_userinfo(value)
    if "://" not in address:
        address = f"http://{address}"  # curl's reading of `host:port`
    try:
        parts = urlsplit(address)
        port = 80 if parts.port is None else parts.port
    except ValueError as error:  # the message never repeats the value: it may hold a password
        raise UpstreamProxyError(
            f"{variable}: cannot read the proxy address (not http://[user:password@]host:port)"
        ) from error
    if not parts.hostname or port == 0:
        raise UpstreamProxyError(
            f"{variable}: the proxy address names no host and port: give "
            "http://[user:password@]host:port"
        )
    if parts.scheme != "http":
        raise UpstreamProxyError(
            f"{variable}: the sandbox's egress proxy reaches an upstream proxy over plain "
            f"http:// only, not {parts.scheme or 'this'}:// (CONNECT tunnels carry the TLS): "
            "give http://[user:password@]host:port, or unset it"
        )
    authorization = None
    if userinfo is not None:
        user, _, password = userinfo.partition(":")
        pair = f"{unquote(user)}:{unquote(password)}"
        authorization = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    return UpstreamProxy(parts.hostname.lower(), port, authorization, variable)


def _no_proxy(value: str) -> tuple[str, ...]:
    entries = value.replace(" ", ",").split(",")
    return tuple(entry.strip().lower() for entry in entries if entry.strip())


def _bypasses(entry: str, host: str, port: int) -> bool:
    """Whether one NO_PROXY entry sends `host:port` direct."""
    if entry == "*":
        return True
    try:
        network = ipaddress.ip_network(entry.strip("[]"), strict=False)
    except ValueError:
        network = None
    if network is not None:
        try:
            return ipaddress.ip_address(host) in network
        except ValueError:
            return False
    if entry.startswith("[") and "]:" in entry:  # [IPv6]:port
        address, _, wanted = entry[1:].partition("]:")
        return wanted.isdigit() and int(wanted) == port and _bypasses(address, host, port)
    name, _, wanted = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
    if wanted and (not wanted.isdigit() or int(wanted) != port):
        return False
    name = name.removeprefix("*").removeprefix(".").removesuffix(".")
    return bool(name) and (host == name or host.endswith("." + name))
