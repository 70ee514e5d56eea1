"""Which hosts the sandbox's egress proxy lets through: pure, tested without sockets.

A rule is `HOST` (that host and its subdomains, on ports 80 and 443) or
`HOST:PORT` (that host and its subdomains, on that port only); an IP literal
matches only itself. Names are compared lower-cased without a trailing dot;
anything that is not a plain host name or IP literal is refused when the rule
is given, and never matches when it is asked for (fail closed). A refusal
(`EgressRuleError`) names the rule to write instead where one is meant (a URL's
host, a wildcard's domain, which already covers its subdomains), in the form of
whoever reads it: `--allow-domain HOST` for the harness, `- HOST` for the Action.

The model endpoint the sidecar needs is added by the harness itself: the
configured providers' `host:port`, and the Copilot API hosts when the sidecar
has a GitHub credential or no provider: github.com's, or those of the GitHub
Enterprise host `GH_HOST` / `COPILOT_GH_HOST` names (it and its subdomains,
e.g. `api.acme.ghe.com`, `copilot-api.acme.ghe.com`), and the exact
`host:port` of `COPILOT_API_URL` and `COPILOT_DEBUG_GITHUB_API_URL` when set.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from copilot_driver.env import PROVIDER_BASE_URL, PROVIDER_CATALOG
from copilot_driver.env_commands import (
    COPILOT_API_URL,
    COPILOT_DEBUG_GITHUB_API_URL,
    COPILOT_GH_HOST,
    GH_HOST,
    PLATFORM_TOKENS,
)
from copilot_driver.errors import CopilotDriverError

WEB_PORTS = (80, 443)
COPILOT_API_HOSTS = (
    "githubcopilot.com:443",
    "api.github.com:443",
    "copilot-proxy.githubusercontent.com:443",
    "origin-tracker.githubusercontent.com:443",
    "copilot-telemetry.githubusercontent.com:443",
)
"""Where the Copilot CLI sends its model and token requests (`githubcopilot.com`
covers `api.githubcopilot.com` and the individual, business and enterprise hosts).
Not `github.com` itself, nor its other subdomains (`codeload.`, `uploads.`): the CLI
does not need them, and a tool would reach git remotes there."""

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)\Z")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")


class EgressRuleError(CopilotDriverError, ValueError):
    """An `--allow-domain` value that is not a host or host:port: what it is, and the
    rule to write instead. `str()` says it as the harness's option takes it; `said`
    in another form (the Action's `- HOST` list items)."""

    def __init__(
        self, given: str, what: str, fix: str, instead: tuple[str, ...], note: str = ""
    ) -> None:
        self.given = given
        self.what = what
        """What the value is: `is a URL`, `is a wildcard, which a rule cannot hold`."""
        self.fix = fix
        """What to do, before the rules to write: `give the host (and :port) alone`."""
        self.instead = instead
        """The rules that would do (the meant one, else examples)."""
        self.note = note
        """After them: what the rule written instead allows, when that needs saying."""
        super().__init__(self.said(repr(given), lambda rule: f"--allow-domain {rule}"))

    def said(self, subject: str, write: Callable[[str], str]) -> str:
        """The refusal of `subject` (how the value is quoted), each rule as `write`
        puts it."""
        rules = " or ".join(write(rule) for rule in self.instead)
        note = f" ({self.note})" if self.note else ""
        return f"{subject} {self.what}: {self.fix}: {rules}{note}"


EXAMPLE_RULES = ("pypi.org", "registry.npmjs.org:443")


@dataclass(frozen=True)
class Rule:
    host: str
    ports: tuple[int, ...]
    subdomains: bool
    """Whether names under `host` match too (never for an IP literal or a provider URL)."""

    def __str__(self) -> str:
        ports = "" if self.ports == WEB_PORTS else f":{self.ports[0]}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}{ports}"

    def allows(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        return host == self.host or (self.subdomains and host.endswith("." + self.host))


def parse_rule(text: str) -> Rule:
    """`HOST` or `HOST:PORT` (`[IPv6]:PORT` for an IPv6 literal); raises EgressRuleError."""
    given = text.strip()
    mistake = _common_mistake(given)
    if mistake is not None:
        raise mistake
    host, port = _split_host_port(given)
    normal = normalise_host(host)
    if normal is None:
        raise EgressRuleError(
            given, "is not a host name or IP address", "give HOST or HOST:PORT", EXAMPLE_RULES
        )
    ports = WEB_PORTS if port is None else (port,)
    return Rule(normal, ports, subdomains=not is_ip_literal(normal))


def _common_mistake(given: str) -> EgressRuleError | None:
    """A value people write for a host that is something else (empty, a URL, a path, a
    wildcard), with the rule meant when it can be told."""
    if not given:
        return EgressRuleError(given, "is empty", "give a host", EXAMPLE_RULES)
    if "://" in given:
        meant = _url_host_port(given)
        instead = (meant,) if meant else EXAMPLE_RULES
        return EgressRuleError(
            given, "is a URL", "give the host (and :port) alone, without scheme or path", instead
        )
    if "/" in given:
        meant = _meant(given.split("/", 1)[0])
        return EgressRuleError(
            given,
            "holds a path",
            "the proxy allows hosts, never paths: give the host alone",
            (meant,) if meant else EXAMPLE_RULES,
        )
    if "@" in given:
        meant = _meant(given.rsplit("@", 1)[1])
        return EgressRuleError(
            given,
            "holds a user name",
            "give the host alone (the proxy passes no credentials)",
            (meant,) if meant else EXAMPLE_RULES,
        )
    if given.startswith(("*", ".")):
        meant = _meant(given.lstrip("*").lstrip("."))
        if meant is None:
            return EgressRuleError(
                given,
                "is a wildcard, which a rule cannot hold",
                "name each host the tools need",
                EXAMPLE_RULES,
            )
        domain = _split_host_port(meant)[0]
        return EgressRuleError(
            given,
            "is a wildcard, which a rule cannot hold",
            "the plain name already covers every subdomain",
            (meant,),
            f"it allows {domain} and every name under it; no rule allows the subdomains alone",
        )
    return None


def _meant(text: str) -> str | None:
    """`text` when it is a valid rule, else None."""
    try:
        return str(parse_rule(text)) if text and text.strip() == text else None
    except EgressRuleError:
        return None


def _url_host_port(url: str) -> str | None:
    """The rule a URL means: its host, and its port when one is written."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = normalise_host(parts.hostname or "")
    if host is None:
        return None
    shown = f"[{host}]" if ":" in host else host
    return _meant(f"{shown}:{port}" if port else shown)


def normalise_host(host: str) -> str | None:
    """The host as compared (lower case, no trailing dot, IPv6 unbracketed), or None."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    host = host.removesuffix(".")
    labels = host.split(".")
    if not host or len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        return None
    if _NUMERIC_LABEL.fullmatch(labels[-1]):  # 127.1, 0x7f.1, 0x7f000001: the resolver
        return None  # reads these as IP addresses, yet none is a canonical IP literal
    return host


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _split_host_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, closed, rest = text[1:].partition("]")
        if not closed or ":" not in host:
            meant = _meant(host + rest) if closed and host else None
            raise EgressRuleError(
                text,
                "holds brackets, which are for an IPv6 address alone",
                "write a name or IPv4 address without them",
                (meant,) if meant else ("[2001:db8::1]:443", *EXAMPLE_RULES),
            )
        if not rest:
            return host, None
        if not rest.startswith(":"):
            raise EgressRuleError(
                text,
                "has something other than :PORT after the brackets",
                "write the address alone, or with a port",
                (f"[{host}]", f"[{host}]:443"),
            )
        return host, _port(rest[1:], text)
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, _port(port, text)
    return text, None  # a bare name, or an IPv6 literal without brackets


def _port(text: str, whole: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 65536:
        host = whole[: len(whole) - len(text) - 1]
        meant = _meant(host)
        raise EgressRuleError(
            whole,
            "has no valid port (1-65535) after the colon",
            "give a port from 1 to 65535, or none for ports 80 and 443",
            (f"{meant}:443", meant) if meant else EXAMPLE_RULES,
        )
    return int(text)


@dataclass(frozen=True)
class Allowlist:
    """The proxy's rules: the model endpoint's, then the user's `--allow-domain` ones."""

    rules: tuple[Rule, ...]

    def allows(self, host: str, port: int) -> bool:
        normal = normalise_host(host)
        return normal is not None and any(rule.allows(normal, port) for rule in self.rules)

    def hosts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(rule) for rule in self.rules))


def model_endpoints(env: Mapping[str, str]) -> tuple[Rule, ...]:
    """What the sidecar needs to reach its model, read from the harness's environment:
    each configured provider's host:port, and the Copilot API hosts when the sidecar
    has a GitHub credential or no provider at all."""
    urls = [env.get(PROVIDER_BASE_URL.name, "")]
    urls += _catalog_urls(env.get(PROVIDER_CATALOG.name))
    rules = [rule for rule in (_url_rule(url) for url in urls if url.strip()) if rule]
    has_token = any(env.get(name, "").strip() for name in PLATFORM_TOKENS)
    if has_token or not rules:
        rules += [parse_rule(host) for host in COPILOT_API_HOSTS]
        rules += github_host_rules(env)
    return tuple(rules)


def github_host_rules(env: Mapping[str, str]) -> list[Rule]:
    """The hosts the CLI's GitHub settings name (see the module docstring); a value
    that is not a host or URL adds nothing (the CLI cannot use it either)."""
    rules = []
    enterprise = (env.get(COPILOT_GH_HOST.name) or env.get(GH_HOST.name) or "").strip()
    if "://" in enterprise:  # a URL where a host name belongs: its host
        try:
            enterprise = urlsplit(enterprise).hostname or ""
        except ValueError:
            enterprise = ""
    host = normalise_host(enterprise) if enterprise else None
    if host is not None and host != "github.com":
        rules.append(Rule(host, WEB_PORTS, subdomains=not is_ip_literal(host)))
    for variable in (COPILOT_API_URL, COPILOT_DEBUG_GITHUB_API_URL):
        url = env.get(variable.name, "").strip()
        rule = _url_rule(url) if url else None
        if rule is not None:
            rules.append(rule)
    return rules


def build_allowlist(env: Mapping[str, str], allow_domains: Iterable[str]) -> Allowlist:
    """The model endpoint's rules and the user's; raises EgressRuleError for a bad one."""
    return Allowlist((*model_endpoints(env), *(parse_rule(text) for text in allow_domains)))


def _url_rule(url: str) -> Rule | None:
    """A provider URL's exact host:port (the scheme's port when none is given)."""
    try:
        parts = urlsplit(url.strip())
        given = parts.port
        port = {"http": 80, "https": 443}.get(parts.scheme) if given is None else given or None
    except ValueError:
        return None
    host = normalise_host(parts.hostname or "")
    if host is None or port is None:
        return None  # the driver refuses such a URL itself; nothing is opened for it
    return Rule(host, (port,), subdomains=False)


def _catalog_urls(raw: str | None) -> list[str]:
    """Every provider `baseUrl` of gh-aw's catalog; nothing when it is unreadable (the
    driver then refuses the catalog, so no session starts)."""
    if not raw or not raw.strip():
        return []
    try:
        catalog = json.loads(raw)
    except ValueError:
        return []
    providers = catalog.get("providers") if isinstance(catalog, dict) else None
    if not isinstance(providers, list):
        return []
    return [
        entry["baseUrl"]
        for entry in providers
        if isinstance(entry, dict) and isinstance(entry.get("baseUrl"), str)
    ]
