"""The OS sandbox around the sidecar, and so around every tool the model runs.

The permission policy decides which tool requests run; this bounds what a
run tool can do, whatever the policy said (a rule for git, node or make
grants running code by design). The sidecar runs under bubblewrap:

    harness (host) ── bwrap ── inside.py (non-dumpable) ── copilot (execute-only, non-dumpable)
      │ listening socket on 127.0.0.1 ──> relayed to the CLI on the sandbox's loopback
      │ egress proxy <── descriptors over a socket pair <── HTTP(S)_PROXY on the sandbox's loopback
      driver (host, no tool ever runs there)

- files: `mounts.py` (the workspace writable, its .git config and hooks not;
  everything else read-only, private or hidden);
- network: `egress_rules.py` (which hosts) and `egress_proxy.py` (the only way out);
- processes: own PID, user, IPC, UTS namespaces, no capabilities, no new
  privileges, the tree dies with the harness;
- the CLI as it runs there (native, execute-only, unpacked and compiled once
  outside): `cli_copy.py`; what the host holds that must be hidden: `host.py`;
- setting it up: `launch.py`, failing closed with the fix: `setup_checks.py`;
- nothing a run leaves behind reaches the next or the host: the workspace's
  persisted credentials hidden (`git_config.py`), planted links refused
  (`mounts.planted_links`), git control files a tool wrote put away after the
  run (`git_controls.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from copilot_driver.env import WORKSPACE
from copilot_driver.harness.sandbox.launch import Sandbox, SandboxSettings
from copilot_driver.harness.sandbox.setup_checks import SandboxError

__all__ = [
    "Sandbox",
    "SandboxError",
    "SandboxSettings",
    "sandbox_cache_home",
    "workspace_of",
]


def workspace_of(env: Mapping[str, str], cwd: Path) -> Path:
    """The folder tools may write: the session's working directory, by the driver's
    rule (GITHUB_WORKSPACE when set, else the current directory)."""
    given = env.get(WORKSPACE.name, "").strip()
    return Path(given).resolve() if given else cwd.resolve()


def sandbox_cache_home(env: Mapping[str, str]) -> Path:
    """Where the harness keeps the CLI's execute-only copy (the user's cache)."""
    given = env.get("XDG_CACHE_HOME", "").strip()
    if given:
        return Path(given)
    home = env.get("HOME", "").strip()
    return Path(home, ".cache") if home else Path.home() / ".cache"
