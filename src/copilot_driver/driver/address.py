"""The sidecar's address: `COPILOT_SDK_URI` in any of the forms people write, as the
`HOST:PORT` the SDK connects to.

A refusal says what is missing (the port, the brackets of an IPv6 address) in the
form to write; credentials in the address are refused and never echoed.
"""

from __future__ import annotations

import ipaddress
import re

from copilot_driver.driver.quoting import Quote, shorten
from copilot_driver.env import CONNECTION_TOKEN
from copilot_driver.redaction import mask_url_userinfo


def normalise_sdk_uri(raw: str, *, quote: Quote = shorten) -> str:
    """Accept `PORT`, `HOST:PORT` and `http(s)://HOST:PORT[/]`; return `HOST:PORT`.

    A bare port means 127.0.0.1 (not `localhost`, which may resolve to ::1
    while the sidecar listens on IPv4 only). A refusal says what is missing
    (the port, the brackets of an IPv6 address) in the form to write.
    """
    value = raw.strip()
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", value)
    prefix = ""
    if scheme:
        if scheme.group(1).lower() not in ("http", "https"):
            raise ValueError(f"unsupported scheme {quote(scheme.group(1))!r}: use http://HOST:PORT")
        prefix = value[: scheme.end()]
        value = value[scheme.end() :].rstrip("/")
    if "@" in value:
        raise ValueError(
            f"credentials are not allowed in it ({quote(mask_url_userinfo(raw.strip()))}): "
            f"write HOST:PORT; the connection token is {CONNECTION_TOKEN.name}"
        )
    if scheme and ("/" in value or "?" in value or "#" in value):
        raise ValueError("a path is not allowed: use http://HOST:PORT")
    if value.isdigit():
        return f"127.0.0.1:{_port(value, quote)}"
    bracketed = re.fullmatch(r"\[([^\]]+)\](?::([^:]*))?", value)
    if bracketed:
        return _ipv6_address(bracketed.group(1), bracketed.group(2), prefix, quote)
    if value.count(":") > 1:
        raise ValueError(_unbracketed_ipv6(value, prefix, quote))
    host, _, port = value.partition(":")
    if not host:
        raise ValueError(
            "there is no host before `:`: write HOST:PORT, or the port alone for 127.0.0.1"
        )
    if not re.fullmatch(r"[A-Za-z0-9.-]+", host):
        raise ValueError(f"{quote(host)!r} is not a host name or address")
    if not port:
        raise ValueError(
            f"{quote(value)!r} has no port: write {prefix}{quote(host)}:PORT, with the port "
            "the sidecar listens on"
        )
    return f"{host}:{_port(port, quote)}"


def _ipv6_address(host: str, port: str | None, prefix: str, quote: Quote) -> str:
    """`[HOST]:PORT`, once HOST is an IPv6 address and the port is there."""
    if not _is_ipv6(host):
        raise ValueError(f"{quote(host)!r} is not an IPv6 address")
    if not port:
        raise ValueError(
            f"[{quote(host)}] has no port: write {prefix}[{quote(host)}]:PORT, with the port "
            "the sidecar listens on"
        )
    return f"[{host}]:{_port(port, quote)}"


def _unbracketed_ipv6(value: str, prefix: str, quote: Quote) -> str:
    """What to write for an IPv6 address with a port but without brackets."""
    host, _, port = value.rpartition(":")
    fixes = []
    if _is_ipv6(host) and _is_port(port):
        fixes.append(f"{prefix}[{quote(host)}]:{port}")
    if _is_ipv6(value):
        fixes.append(f"{prefix}[{quote(value)}]:PORT if all of it is the address")
    if not fixes:
        return f"{quote(value)!r} is not PORT, HOST:PORT or [IPv6]:PORT"
    return (
        f"{quote(value)!r}: an IPv6 address needs brackets around it before the port: "
        f"write {' or '.join(fixes)}"
    )


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _is_port(text: str) -> bool:
    return len(text) <= 5 and text.isdigit() and 0 < int(text) <= 65535


def _port(text: str, quote: Quote) -> int:
    if not text:
        raise ValueError("the port after `:` is missing: write HOST:PORT")
    if not _is_port(text):
        raise ValueError(f"port {quote(text)!r} is not a number from 1 to 65535")
    return int(text)
