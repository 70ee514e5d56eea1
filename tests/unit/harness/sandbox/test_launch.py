"""Setting the sandbox up: failing closed, the wrapped command, the sweep after the run."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.harness.sandbox import inside
from copilot_driver.harness.sandbox.egress_rules import Allowlist, parse_rule
from copilot_driver.harness.sandbox.git_controls import snapshot
from copilot_driver.harness.sandbox.launch import (
    INSIDE_COPILOT_HOME,
    INSIDE_PROXY_PORT,
    Sandbox,
    SandboxSettings,
    _with_port,
)
from copilot_driver.harness.sandbox.mounts import Layout
from copilot_driver.harness.sandbox.setup_checks import SandboxError
from helpers.cli_stand_ins import NATIVE_SOURCE, native_file, script_file

# -- small pieces ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--headless", "--port", "0", "--log-level", "info"], ["--headless", "--port", "4321"]),
        (["--port", "1", "--port", "2"], ["--port", "4321", "--port", "4321"]),
        (["--headless"], ["--headless"]),
        (["--port"], ["--port"]),
        ([], []),
    ],
)
def test_the_cli_listens_on_the_doors_port(args: list[str], expected: list[str]) -> None:
    assert _with_port(args, 4321)[: len(expected)] == expected
    assert len(_with_port(args, 4321)) == len(args)


def test_the_settings_name_their_mode() -> None:
    assert SandboxSettings().mode == "workspace"
    assert SandboxSettings(enabled=False).mode == "off"


# -- Sandbox.close --------------------------------------------------------------------------


def bare_sandbox(tmp_path: Path) -> Sandbox:
    layout = Layout(workspace=str(tmp_path), home=None)
    return Sandbox("/usr/bin/bwrap", NATIVE_SOURCE, layout, Allowlist(()), None)


def test_close_removes_a_new_redirect_and_puts_a_changed_one_back(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    (git / "config.worktree").write_text("[core]\n")  # there before the run
    sandbox = bare_sandbox(tmp_path)
    sandbox.git_controls = snapshot(tmp_path)
    (git / "commondir").write_text("/elsewhere/.git\n")
    (git / "config.worktree").write_text("[core]\n\thooksPath = /elsewhere\n")
    done = sandbox.close()
    assert not (git / "commondir").exists()
    assert (git / "config.worktree").read_text() == "[core]\n"
    assert (git / "config.worktree.sandboxed").read_text().endswith("/elsewhere\n")
    assert len(done) == 2
    assert done[0].startswith(f"removed {git / 'commondir'}, written in the sandbox")
    assert done[1].startswith(f"restored {git / 'config.worktree'} as it was before the run")
    assert sandbox.git_neutralised == done  # for the session's sandbox.json
    assert sandbox.close() == []


def test_close_removes_a_new_redirect_folder_or_link(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    sandbox = bare_sandbox(tmp_path)
    sandbox.git_controls = snapshot(tmp_path)
    (git / "commondir").mkdir()
    (git / "commondir" / "inner").write_text("x")
    (git / "config.worktree").symlink_to(target)
    assert len(sandbox.close()) == 2
    assert not (git / "commondir").exists()
    assert not (git / "config.worktree").is_symlink()
    assert (target / "keep").is_file()  # the link goes, never what it points at


def test_close_leaves_a_redirect_that_was_there_before(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    (git / "commondir").write_text("../main/.git\n")  # a linked worktree's own
    sandbox = bare_sandbox(tmp_path)
    sandbox.git_controls = snapshot(tmp_path)
    assert sandbox.close() == []
    assert (git / "commondir").read_text() == "../main/.git\n"


# -- Sandbox.prepare ------------------------------------------------------------------------


class Host:
    """A made-up host for `Sandbox.prepare`: a PATH, a workspace, a home, a cache."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.workspace = root / "work space"
        self.workspace.mkdir()
        self.home = root / "home"
        self.home.mkdir()
        self.cache = root / "cache"
        self.copilot = native_file(root / "cli" / "copilot")

    @property
    def env(self) -> dict[str, str]:
        return {"PATH": str(self.bin), "HOME": str(self.home), "XDG_CACHE_HOME": str(self.cache)}

    def bwrap(self, script: str) -> Path:
        """A `bwrap` on PATH running `script` (sh), which records its arguments."""
        record = f'printf "%s\\n" "$@" > "{self.root}/bwrap-args"\n'
        return script_file(self.bin / "bwrap", f"#!/bin/sh\n{record}{script}\n")

    def bwrap_arguments(self) -> list[str]:
        return (self.root / "bwrap-args").read_text().splitlines()

    def prepare(
        self,
        settings: SandboxSettings | None = None,
        *,
        workspace: Path | None = None,
        binary: Path | None = None,
        cache_home: Path | None = None,
    ) -> Sandbox:
        return Sandbox.prepare(
            binary or self.copilot,
            self.env,
            settings or SandboxSettings(),
            workspace=workspace or self.workspace,
            state_base=self.workspace / ".state",
            cache_home=cache_home or self.cache,
        )


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


def test_no_bubblewrap_names_the_package_and_the_way_out(host: Host) -> None:
    with pytest.raises(SandboxError) as error:
        host.prepare()
    assert "apt-get install bubblewrap" in str(error.value)
    assert "--sandbox off" in str(error.value)


def test_restricted_user_namespaces_name_apparmor_and_the_way_out(host: Host) -> None:
    host.bwrap("echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1")
    with pytest.raises(SandboxError) as error:
        host.prepare()
    message = str(error.value)
    assert "setting up uid map: Permission denied" in message
    assert "AppArmor profile" in message
    assert "/etc/apparmor.d/bwrap" in message
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in message
    assert "--sandbox off" in message


def test_another_bubblewrap_failure_names_a_check_and_the_way_out(host: Host) -> None:
    host.bwrap("echo 'bwrap: Can not mount tmpfs' >&2\nexit 1")
    with pytest.raises(
        SandboxError, match=r"Can not mount tmpfs.*bwrap --ro-bind / / true.*--sandbox off"
    ):
        host.prepare()


def test_a_silent_bubblewrap_failure_gives_its_status(host: Host) -> None:
    host.bwrap("exit 7")
    with pytest.raises(SandboxError, match="exit status 7"):
        host.prepare()


def test_a_bubblewrap_that_cannot_run_is_a_sandbox_error(host: Host) -> None:
    (host.bin / "bwrap").write_bytes(b"\x00not a program")
    (host.bin / "bwrap").chmod(0o755)
    with pytest.raises(SandboxError, match=r"bubblewrap could not run.*--sandbox off"):
        host.prepare()


def test_the_root_as_workspace_is_refused(host: Host) -> None:
    host.bwrap("exit 0")
    with pytest.raises(SandboxError, match="the workspace is /"):
        host.prepare(workspace=Path("/"))


def test_a_missing_workspace_is_refused(host: Host) -> None:
    host.bwrap("exit 0")
    with pytest.raises(SandboxError, match="is not a directory"):
        host.prepare(workspace=host.root / "missing")


def test_a_bad_allowed_domain_is_refused_before_anything_else(host: Host) -> None:
    with pytest.raises(SandboxError, match=r"--allow-domain 'https://pypi.org/simple'"):
        host.prepare(SandboxSettings(allow_domains=("pypi.org", "https://pypi.org/simple")))


def test_a_prepared_sandbox_probes_its_own_mounts(host: Host) -> None:
    host.bwrap("exit 0")
    git = host.workspace / ".git"
    git.mkdir()
    (git / "config").write_text("[core]\n")
    sandbox = host.prepare(SandboxSettings(allow_domains=("pypi.org",)))

    assert sandbox.warnings == []
    assert stat.S_IMODE(sandbox.binary.stat().st_mode) == 0o111
    assert sandbox.binary.is_relative_to(host.cache)
    assert (git / "hooks").is_dir()  # made, so that it is mounted read-only
    assert sandbox.git_controls is not None
    assert set(sandbox.git_controls.controls) == {".git"}
    assert sandbox.allowlist.allows("files.pypi.org", 443)
    assert sandbox.allowlist.allows("api.githubcopilot.com", 443)  # no provider: Copilot's API

    probe = host.bwrap_arguments()
    assert probe[-2:] == ["--", "true"]
    assert "--unshare-net" in probe
    bound = probe.index(str(host.workspace))
    assert probe[bound - 1 : bound + 2] == ["--bind", str(host.workspace), str(host.workspace)]
    assert str(sandbox.binary) in sandbox.layout.read_only_inside
    assert str(host.workspace / ".state") in sandbox.layout.read_only_in_workspace


def test_a_script_cli_runs_as_it_is_with_a_warning(host: Host) -> None:
    host.bwrap("exit 0")
    script = script_file(host.root / "cli" / "copilot.js")
    sandbox = host.prepare(binary=script)
    assert sandbox.binary == script
    assert len(sandbox.warnings) == 1
    assert "not the native binary" in sandbox.warnings[0]
    assert not host.cache.exists()


# -- Sandbox.command ------------------------------------------------------------------------


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    layout = Layout(workspace=str(tmp_path), home=None)
    allowlist = Allowlist((parse_rule("pypi.org"),))
    made = Sandbox("/usr/bin/bwrap", tmp_path / "copilot-copy", layout, allowlist, None)
    yield made
    made.close()


def test_the_command_runs_the_helper_under_bubblewrap(sandbox: Sandbox, tmp_path: Path) -> None:
    plain = {"PATH": "/usr/bin", "NO_PROXY": "*", "no_proxy": "*", "ALL_PROXY": "socks5://x"}
    credentials = {"COPILOT_GITHUB_TOKEN": "canary-token-7c1e"}
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    wrapped = sandbox.command(
        ["/usr/lib/copilot", "--headless", "--port", "0"],
        plain,
        credentials,
        port=0,
        output_fds=(out_write, err_write),
    )
    try:
        argv = wrapped.argv
        assert argv[0] == "/usr/bin/bwrap"
        helper = argv.index("--") + 1
        assert argv[helper : helper + 3] == [
            os.path.realpath(sys.executable),
            "-I",
            str(Path(inside.__file__).resolve()),
        ]
        assert argv[-4:] == [
            str(tmp_path / "copilot-copy"),
            "--headless",
            "--port",
            str(wrapped.public_port),
        ]
        assert not any("canary-token" in arg for arg in argv)

        env = wrapped.env
        assert env["PATH"] == "/usr/bin"
        assert env["COPILOT_HOME"] == INSIDE_COPILOT_HOME
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            assert env[name] == f"http://127.0.0.1:{INSIDE_PROXY_PORT}"
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "COPILOT_GITHUB_TOKEN"):
            assert name not in env

        secrets_fd, listen_fd, _, stdout_fd, stderr_fd = wrapped.pass_fds
        assert (stdout_fd, stderr_fd) == (out_write, err_write)
        helper_args = argv[argv.index("--") + 4 : argv.index("--", argv.index("--") + 1)]
        assert helper_args[-4:] == ["--stdout-fd", str(out_write), "--stderr-fd", str(err_write)]
        assert all(os.get_inheritable(fd) for fd in wrapped.pass_fds)
        assert json.loads(os.read(secrets_fd, 4096)) == credentials
        with socket.socket(fileno=os.dup(listen_fd)) as listener:
            assert listener.getsockname() == ("127.0.0.1", wrapped.public_port)
        assert sandbox.proxy is not None
    finally:
        wrapped.started()
    os.close(out_read)
    os.close(err_read)
    for fd in wrapped.pass_fds:
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(fd)
    assert sandbox.denied_per_host() == []


def test_a_cache_that_cannot_be_made_is_a_sandbox_error(host: Host) -> None:
    host.bwrap("exit 0")
    blocker = host.root / "blocked-cache"
    blocker.write_text("a file where the cache folder would go")
    with pytest.raises(SandboxError, match=r"XDG_CACHE_HOME.*--sandbox off"):
        host.prepare(cache_home=blocker)
