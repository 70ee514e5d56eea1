"""Setting the sandbox up: checks, the CLI's execute-only copy, sockets, bubblewrap.

`Sandbox.prepare` does everything that can fail before a process starts and
raises `SandboxError` with the fix (`setup_checks.py`): no bubblewrap, user
namespaces restricted (a probe runs bubblewrap with the real namespaces), a
bad `--allow-domain`, a proxy variable the egress proxy cannot go through, a
link planted under the workspace where the sandbox binds. It also snapshots
the workspace's git control files, which `close` compares after the run.
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
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from copilot_driver.harness.environment import trusted_search_path
from copilot_driver.harness.sandbox import inside
from copilot_driver.harness.sandbox.cli_copy import cli_package_cache
from copilot_driver.harness.sandbox.egress_proxy import EgressProxy
from copilot_driver.harness.sandbox.egress_rules import Allowlist, EgressRuleError, build_allowlist
from copilot_driver.harness.sandbox.git_config import hidden_git_credentials
from copilot_driver.harness.sandbox.git_controls import GitControls, neutralise, snapshot
from copilot_driver.harness.sandbox.host import (
    home_entries,
    host_unix_sockets,
    own_code_in,
    path_kind,
    runner_directories,
    submodule_git_files,
    trusted_ca_files,
)
from copilot_driver.harness.sandbox.mounts import Layout, bwrap_arguments, planted_links
from copilot_driver.harness.sandbox.setup_checks import (
    OFF_FIX,
    SandboxError,
    check_workspace,
    cli_for_sandbox,
    planted_message,
    probe_fix,
)
from copilot_driver.harness.sandbox.upstream import Upstream, UpstreamProxyError

INSIDE_PROXY_PORT = 3128
"""The proxy port on the sandbox's own loopback (no host port is involved)."""
INSIDE_COPILOT_HOME = "/tmp/copilot-home"
"""The sandboxed CLI's state folder: private, gone with the run."""
PROBE_TIMEOUT_S = 10.0


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
        self.copies: Path | None = None
        """The harness's private folder of files shown in place of others (git configs
        without their credentials); removed by `close`."""
        self.git_controls: GitControls | None = None
        """The workspace's git control files before the run (`git_controls.py`)."""
        self.git_neutralised: list[str] = []
        """What `close` did to the git control files a tool wrote, in words."""
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
        check_workspace(workspace)
        # Never a bwrap a tool left in the workspace (a PATH entry there, or a relative one).
        trusted = trusted_search_path(env.get("PATH", ""), workspace)
        bwrap = shutil.which("bwrap", path=trusted or os.devnull)
        if bwrap is None:
            raise SandboxError(
                "the sandbox needs bubblewrap, and no `bwrap` is on PATH: install it "
                f"(`sudo apt-get install bubblewrap`), {OFF_FIX}"
            )
        home = env.get("HOME") or None
        copy, compile_cache, warning = cli_for_sandbox(binary, env, cache_home)
        warnings = [warning] if warning else []
        git = workspace / ".git"
        submodules = submodule_git_files(git)
        copies = Path(tempfile.mkdtemp(prefix="copilot-driver-sandbox-"))
        hidden = hidden_git_credentials(
            workspace,
            [git / "config", *(Path(path) for path in submodules if path.endswith("/config"))],
            copies,
            home,
        )
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
                        *own_code_in(workspace),
                        copy,
                        cli_package_cache(env),
                        compile_cache,
                        *trusted_ca_files(env),
                    )
                    if path is not None
                )
            ),
            hidden_directories=runner_directories(env),
            hidden_files=(*host_unix_sockets(), *hidden.hidden_files),
            read_only_in_workspace=(str(state_base), *submodules),
            home_entries=home_entries(home),
            bind_sources=hidden.replacements,
        )
        links = planted_links(layout, path_kind)
        if links:
            shutil.rmtree(copies, ignore_errors=True)
            raise SandboxError(planted_message(links))
        sandbox = cls(bwrap, copy, layout, allowlist, on_denied, upstream)
        sandbox.copies = copies
        sandbox.compile_cache = compile_cache
        sandbox.warnings = warnings
        sandbox.git_controls = snapshot(workspace)
        try:
            sandbox.probe()
        except SandboxError:
            sandbox.close()
            raise
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
            raise SandboxError(f"bubblewrap cannot set the sandbox up ({said}): {probe_fix(said)}")

    def command(
        self,
        argv: Sequence[str],
        plain_env: Mapping[str, str],
        credentials: Mapping[str, str],
        *,
        port: int,
        output_fds: tuple[int, int],
    ) -> WrappedCommand:
        """The sidecar's `argv` (whose binary is replaced by its execute-only copy) under
        bubblewrap, its environment, and the descriptors it inherits. The CLI's stdout
        and stderr are `output_fds`, which only the helper inside receives (bubblewrap's
        own process, visible to tools, keeps none of them). Starts the egress proxy;
        `close()` stops it."""
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
        inherited = (secrets_read, listener.fileno(), control_in.fileno(), *output_fds)
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
            "--stdout-fd", str(output_fds[0]),
            "--stderr-fd", str(output_fds[1]),
            "--",
            str(self.binary),
            *_with_port(argv[1:], public_port),
        ]  # fmt: skip
        # The listener and the control end live on in the sandbox; the harness's copies
        # are closed once it has started (their Python objects must not close them twice).
        fds = [secrets_read, listener.detach(), control_in.detach(), *output_fds]
        return WrappedCommand(wrapped, env, tuple(fds), public_port, fds)

    def close(self) -> list[str]:
        """Stop the proxy, and undo what no mount can forbid: every git control file a
        tool added or changed in the workspace is put out of a later host git command's
        reach (`git_controls.neutralise`). Returns what was done, in words."""
        if self.proxy is not None:
            self.proxy.close()
        if self.copies is not None:
            shutil.rmtree(self.copies, ignore_errors=True)
            self.copies = None
        if self.git_controls is None:
            return []
        done = neutralise(self.git_controls, Path(self.layout.workspace))
        self.git_controls = None
        self.git_neutralised += done
        return done

    def denied_per_host(self) -> list[tuple[str, int]]:
        return self.proxy.denied_per_host() if self.proxy is not None else []

    def allowed_per_host(self) -> list[tuple[str, int]]:
        return self.proxy.allowed_per_host() if self.proxy is not None else []


def _with_port(args: Sequence[str], port: int) -> list[str]:
    """The CLI listens inside on the port the driver's door leads to."""
    out = list(args)
    for index, arg in enumerate(out[:-1]):
        if arg == "--port":
            out[index + 1] = str(port)
    return out
