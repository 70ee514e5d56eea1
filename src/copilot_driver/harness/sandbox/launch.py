"""Setting the sandbox up: checks, the CLI's execute-only copy, sockets, bubblewrap.

`Sandbox.prepare` does everything that can fail before a process starts and
raises `SandboxError` with the fix: no bubblewrap, user namespaces
restricted (a probe runs bubblewrap with the real namespaces), a bad
`--allow-domain`, a proxy variable the egress proxy cannot go through.
`Sandbox.command` then wraps the sidecar's command line; the harness starts
it as usual and reads its ready line as usual.

Where the driver runs: outside, beside the harness. It runs no tool and holds
the connection token and the provider key, which a tool must never read; it
reaches the sidecar through a listening socket the harness makes on the
host's 127.0.0.1 and hands to the helper inside (see `inside.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from copilot_driver.errors import CopilotDriverError
from copilot_driver.harness.sandbox import inside
from copilot_driver.harness.sandbox.cli_copy import (
    cli_package_cache,
    execute_only_copy,
    native_binary,
    warm_once,
)
from copilot_driver.harness.sandbox.egress_proxy import EgressProxy
from copilot_driver.harness.sandbox.egress_rules import Allowlist, EgressRuleError, build_allowlist
from copilot_driver.harness.sandbox.host import (
    git_redirects,
    host_unix_sockets,
    path_kind,
    runner_directories,
    submodule_git_files,
)
from copilot_driver.harness.sandbox.mounts import Layout, bwrap_arguments
from copilot_driver.harness.sandbox.upstream import Upstream, UpstreamProxyError

INSIDE_PROXY_PORT = 3128
"""The proxy port on the sandbox's own loopback (no host port is involved)."""
TRUSTED_CA_VARIABLES = ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE")
"""Files of extra certificate authorities (a TLS-intercepting proxy): the CLI reads them,
so they are visible read-only inside, wherever they are on the host."""
INSIDE_COPILOT_HOME = "/tmp/copilot-home"
"""The sandboxed CLI's state folder: private, gone with the run."""
PROBE_TIMEOUT_S = 10.0
USERNS_SYSCTL = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
APPARMOR_FIX = (
    "allow bubblewrap to create user namespaces: on Ubuntu 24.04 install an AppArmor "
    "profile for it (`printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap "
    "/usr/bin/bwrap flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/bwrap "
    "&& sudo apparmor_parser -r /etc/apparmor.d/bwrap`), or allow them for every program "
    "(`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; elsewhere "
    "`kernel.unprivileged_userns_clone=1`)"
)
OFF_FIX = (
    "or run without the sandbox (`--sandbox off`), knowing that tools then reach the whole runner"
)


class SandboxError(CopilotDriverError, RuntimeError):
    """The sandbox cannot be set up here; the message names the fix."""


@dataclass(frozen=True)
class SandboxSettings:
    """The harness's `--sandbox`, `--allow-domain` and `--pass-env`."""

    enabled: bool = True
    allow_domains: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()

    @property
    def mode(self) -> str:
        return "workspace" if self.enabled else "off"


@dataclass
class WrappedCommand:
    """The sidecar's command under bubblewrap, and what goes with it."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    public_port: int
    """Where the driver connects: the harness's listening socket on the host."""
    _after_start: list[int] = field(default_factory=list)

    def started(self) -> None:
        """Close the harness's copies of what only the sandbox keeps (after Popen)."""
        for fd in self._after_start:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._after_start.clear()


class Sandbox:
    """A prepared sandbox for one sidecar (see the module docstring)."""

    def __init__(
        self,
        bwrap: str,
        binary: Path,
        layout: Layout,
        allowlist: Allowlist,
        on_denied: Callable[[str, str], None] | None,
        upstream: Upstream | None = None,
    ) -> None:
        self.bwrap = bwrap
        self.binary = binary
        self.layout = layout
        self.arguments = bwrap_arguments(layout, path_kind)
        """bubblewrap's arguments, read off the host once: the probe runs exactly these."""
        self.allowlist = allowlist
        self.upstream = upstream or Upstream()
        """The harness's own proxy, which the egress proxy goes through."""
        self.proxy: EgressProxy | None = None
        self.warnings: list[str] = []
        """What the harness should say about this sandbox's limits before the run."""
        self.compile_cache: Path | None = None
        """Node's compile cache for this CLI, filled outside, read-only inside."""
        self.git_redirects: dict[Path, bool] = {}
        """Files that would point later git commands elsewhere, and whether each existed."""
        self._on_denied = on_denied

    @classmethod
    def prepare(
        cls,
        binary: Path,
        env: Mapping[str, str],
        settings: SandboxSettings,
        *,
        workspace: Path,
        state_base: Path,
        cache_home: Path,
        on_denied: Callable[[str, str], None] | None = None,
    ) -> Sandbox:
        """Check and build everything; raises SandboxError naming the fix."""
        try:
            allowlist = build_allowlist(env, settings.allow_domains)
        except EgressRuleError as error:
            raise SandboxError(f"--allow-domain {error}") from error
        try:
            upstream = Upstream.from_env(env)
        except UpstreamProxyError as error:
            raise SandboxError(str(error)) from error
        bwrap = shutil.which("bwrap", path=env.get("PATH"))
        if bwrap is None:
            raise SandboxError(
                "the sandbox needs bubblewrap, and no `bwrap` is on PATH: install it "
                f"(`sudo apt-get install bubblewrap`), {OFF_FIX}"
            )
        _check_workspace(workspace)
        home = env.get("HOME") or None
        copy, compile_cache, warning = _cli_for_sandbox(binary, env, cache_home)
        warnings = [warning] if warning else []
        git = workspace / ".git"
        layout = Layout(
            workspace=str(workspace),
            home=home,
            read_only_inside=tuple(
                dict.fromkeys(
                    str(path)
                    for path in (
                        Path(inside.__file__).resolve(),
                        Path(os.path.realpath(sys.executable)),
                        Path(sys.base_prefix),
                        copy,
                        cli_package_cache(env),
                        compile_cache,
                        *_trusted_ca_files(env),
                    )
                    if path is not None
                )
            ),
            hidden_directories=runner_directories(env),
            hidden_files=host_unix_sockets(),
            read_only_in_workspace=(str(state_base), *submodule_git_files(git)),
        )
        sandbox = cls(bwrap, copy, layout, allowlist, on_denied, upstream)
        sandbox.compile_cache = compile_cache
        sandbox.warnings = warnings
        sandbox.git_redirects = {path: path.exists() for path in git_redirects(git)}
        sandbox.probe()
        return sandbox

    def probe(self) -> None:
        """Run `true` in these very namespaces and mounts: a restricted host fails here."""
        argv = [self.bwrap, *self.arguments, "--", "true"]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SandboxError(f"bubblewrap could not run ({error}): {OFF_FIX}") from error
        if done.returncode != 0:
            said = " ".join(done.stderr.split())[:300] or f"exit status {done.returncode}"
            raise SandboxError(f"bubblewrap cannot set the sandbox up ({said}): {_fix(said)}")

    def command(
        self,
        argv: Sequence[str],
        plain_env: Mapping[str, str],
        credentials: Mapping[str, str],
        *,
        port: int,
    ) -> WrappedCommand:
        """The sidecar's `argv` (whose binary is replaced by its execute-only copy) under
        bubblewrap, its environment, and the descriptors it inherits. Starts the egress
        proxy; `close()` stops it."""
        listener = socket.create_server(("127.0.0.1", port))
        public_port: int = listener.getsockname()[1]
        control_out, control_in = socket.socketpair()
        secrets_read, secrets_write = os.pipe()
        # The credentials wait in the pipe (far below its capacity) for the helper.
        os.write(secrets_write, json.dumps(dict(credentials)).encode())
        os.close(secrets_write)
        self.proxy = EgressProxy(
            control_out, self.allowlist, on_denied=self._on_denied, upstream=self.upstream
        ).start()
        inherited = (secrets_read, listener.fileno(), control_in.fileno())
        for fd in inherited:
            os.set_inheritable(fd, True)
        proxy_url = f"http://127.0.0.1:{INSIDE_PROXY_PORT}"
        env = {
            **plain_env,
            "COPILOT_HOME": INSIDE_COPILOT_HOME,
            "TMPDIR": "/tmp",
            **({"NODE_COMPILE_CACHE": str(self.compile_cache)} if self.compile_cache else {}),
            **{
                name: proxy_url
                for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
            },
        }
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            env.pop(name, None)
        wrapped = [
            self.bwrap,
            *self.arguments,
            "--",
            os.path.realpath(sys.executable),
            "-I",
            str(Path(inside.__file__).resolve()),
            "--secrets-fd", str(secrets_read),
            "--listen-fd", str(listener.fileno()),
            "--control-fd", str(control_in.fileno()),
            "--sidecar-port", str(public_port),
            "--proxy-port", str(INSIDE_PROXY_PORT),
            "--",
            str(self.binary),
            *_with_port(argv[1:], public_port),
        ]  # fmt: skip
        # The listener and the control end live on in the sandbox; the harness's copies
        # are closed once it has started (their Python objects must not close them twice).
        fds = [secrets_read, listener.detach(), control_in.detach()]
        return WrappedCommand(wrapped, env, tuple(fds), public_port, fds)

    def close(self) -> list[str]:
        """Stop the proxy, and undo what no mount can forbid: a new `.git/commondir` or
        `.git/config.worktree` would make a later git command outside the sandbox read
        another configuration (and run its hooks). Returns what was removed, in words."""
        if self.proxy is not None:
            self.proxy.close()
        removed = []
        for path, existed in self.git_redirects.items():
            if not existed and (path.exists() or path.is_symlink()):
                with contextlib.suppress(OSError):
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
                    removed.append(
                        f"removed {path}, written in the sandbox: git would read another "
                        "configuration through it outside"
                    )
        self.git_redirects = {}
        return removed

    def denied_per_host(self) -> list[tuple[str, int]]:
        return self.proxy.denied_per_host() if self.proxy is not None else []

    def allowed_per_host(self) -> list[tuple[str, int]]:
        return self.proxy.allowed_per_host() if self.proxy is not None else []


def _trusted_ca_files(env: Mapping[str, str]) -> list[Path]:
    """The extra CA files the environment names that exist (a missing one is the
    CLI's to report, as it would be outside)."""
    named = (env.get(name, "").strip() for name in TRUSTED_CA_VARIABLES)
    return [Path(os.path.realpath(value)) for value in named if value and Path(value).is_file()]


def _with_port(args: Sequence[str], port: int) -> list[str]:
    """The CLI listens inside on the port the driver's door leads to."""
    out = list(args)
    for index, arg in enumerate(out[:-1]):
        if arg == "--port":
            out[index + 1] = str(port)
    return out


def _fix(said: str) -> str:
    if any(
        sign in said for sign in ("uid map", "Operation not permitted", "RTM_NEWADDR", "namespace")
    ):
        restricted = USERNS_SYSCTL.exists() and USERNS_SYSCTL.read_text().strip() == "1"
        where = " (this host restricts them: kernel.apparmor_restrict_unprivileged_userns=1)"
        return f"{APPARMOR_FIX}{where if restricted else ''}; {OFF_FIX}"
    return f"check that bubblewrap works here (`bwrap --ro-bind / / true`); {OFF_FIX}"


def _check_workspace(workspace: Path) -> None:
    if not workspace.is_dir():
        raise SandboxError(
            f"the workspace {workspace} is not a directory: set GITHUB_WORKSPACE to the "
            "folder the tools may change, or run the harness in it"
        )
    if workspace == Path("/"):
        raise SandboxError(
            "the workspace is / (the whole file system would be writable): run the harness "
            "in the project's folder, or set GITHUB_WORKSPACE to it"
        )
    git = workspace / ".git"
    if git.is_dir():  # an empty hooks folder, read-only inside, as `git init` makes it
        with contextlib.suppress(OSError):
            (git / "hooks").mkdir(exist_ok=True)


def _cli_for_sandbox(
    binary: Path, env: Mapping[str, str], cache_home: Path
) -> tuple[Path, Path | None, str | None]:
    """The CLI the sandbox runs, its compile cache, and what to say about its limits."""
    native = native_binary(binary)
    if native is None:  # a script or a stand-in: it runs as it is, and is readable
        return (
            binary,
            None,
            (
                f"the Copilot CLI {binary} is not the native binary (a script?): inside the "
                "sandbox a tool can read the sidecar's environment (its credentials) from "
                "/proc; give the native binary (`--copilot .../@github/copilot-linux-x64/copilot`)"
            ),
        )
    try:
        copy = execute_only_copy(native, cache_home)
    except OSError as error:
        raise SandboxError(
            f"cannot copy the Copilot CLI to {cache_home / 'copilot-driver'} "
            f"({error.strerror or error}): make that folder writable (XDG_CACHE_HOME), "
            f"{OFF_FIX}"
        ) from error
    return copy, warm_once(copy.parent, native, env), None
