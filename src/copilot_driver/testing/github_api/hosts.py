"""Which host names the fake answers for, what each one serves, and the
`endpoints` the user answer hands back from each.

GitHub splits the subscription path over several hosts: the GitHub API
(`api.github.com`, which answers `copilot_internal/user`), the Copilot API
named by that answer's `endpoints.api` (`api.<plan>.githubcopilot.com`), and
the telemetry host (`endpoints.telemetry`). A GitHub Enterprise Cloud host
(`<name>.ghe.com`) has its own set: `api.<name>.ghe.com` for the GitHub API
and `copilot-api.<name>.ghe.com` and friends for Copilot.

Plain mode has one host, `127.0.0.1:PORT`, that serves every role; the
HTTPS mode routes by the `Host` header, so a path asked of the wrong host
gets the 404 GitHub would give.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["github", "copilot", "telemetry", "other"]
"""What a host serves: the GitHub API, the Copilot API, telemetry, or nothing
(a host the CLI may reach that answers 404 to everything here)."""

ALL_ROLES: frozenset[Role] = frozenset({"github", "copilot", "telemetry"})

PLANS = ("individual", "business", "enterprise")
"""The `copilot_plan` values, each with its own `*.githubcopilot.com` hosts."""

GITHUB_API_HOST = "api.github.com"

_FIXED_HOSTS: dict[str, Role] = {
    GITHUB_API_HOST: "github",
    "github.com": "other",
    "api.githubcopilot.com": "copilot",
    "copilot-proxy.githubusercontent.com": "other",
    "origin-tracker.githubusercontent.com": "other",
    "copilot-telemetry.githubusercontent.com": "telemetry",
}
_PLAN_PREFIXES: dict[str, Role] = {
    "api": "copilot",
    "telemetry": "telemetry",
    "proxy": "other",
    "origin-tracker": "other",
}
_GHE_PREFIXES: dict[str, Role] = {
    "api": "github",
    "copilot-api": "copilot",
    "copilot-telemetry-service": "telemetry",
    "copilot-proxy": "other",
    "origin-tracker": "other",
}


def plan_endpoints(plan: str) -> dict[str, str]:
    """The `endpoints` GitHub gives an account on `plan`."""
    return {
        "api": f"https://api.{plan}.githubcopilot.com",
        "telemetry": f"https://telemetry.{plan}.githubcopilot.com",
        "proxy": f"https://proxy.{plan}.githubcopilot.com",
        "origin-tracker": f"https://origin-tracker.{plan}.githubcopilot.com",
    }


def ghe_endpoints(ghe_host: str) -> dict[str, str]:
    """The `endpoints` of an account on the GitHub Enterprise Cloud host `ghe_host`."""
    return {
        "api": f"https://copilot-api.{ghe_host}",
        "telemetry": f"https://copilot-telemetry-service.{ghe_host}",
        "proxy": f"https://copilot-proxy.{ghe_host}",
        "origin-tracker": f"https://origin-tracker.{ghe_host}",
    }


def self_endpoints(base_url: str) -> dict[str, str]:
    """Plain mode: every endpoint is the fake itself."""
    return {name: base_url for name in ("api", "telemetry", "proxy", "origin-tracker")}


def bare_host(host_header: str) -> str:
    """A `Host` header without its port, lower-cased (`[::1]:443` keeps its brackets)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@dataclass(frozen=True)
class HostMap:
    """The HTTPS mode's host names and their roles.

    `ghe_host` (`acme.ghe.com`) adds an Enterprise Cloud host set; `extra`
    adds any other host with the role it plays.
    """

    ghe_host: str | None = None
    extra: Mapping[str, Role] = field(default_factory=dict)

    def roles(self) -> dict[str, Role]:
        """Every served host name and its role."""
        hosts = dict(_FIXED_HOSTS)
        for plan in PLANS:
            for prefix, role in _PLAN_PREFIXES.items():
                hosts[f"{prefix}.{plan}.githubcopilot.com"] = role
        if self.ghe_host:
            hosts[self.ghe_host.lower()] = "other"
            for prefix, role in _GHE_PREFIXES.items():
                hosts[f"{prefix}.{self.ghe_host.lower()}"] = role
        hosts.update({host.lower(): role for host, role in self.extra.items()})
        return hosts

    def names(self) -> list[str]:
        """The names the certificate must cover, sorted."""
        return sorted(self.roles())

    def role(self, host: str) -> Role | None:
        """The role of `host` (a bare name), or None when the fake does not serve it."""
        return self.roles().get(host.lower())

    def endpoints(self, github_host: str, plan: str) -> dict[str, str]:
        """The `endpoints` of the user answer the GitHub API host `github_host`
        gives an account on `plan`."""
        if self.ghe_host and github_host.lower() == f"api.{self.ghe_host.lower()}":
            return ghe_endpoints(self.ghe_host.lower())
        return plan_endpoints(plan)
