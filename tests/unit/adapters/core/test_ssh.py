"""Unit tests for `copilot_driver.adapters.core.ssh`: quoting, the remote command, ssh's argv.

The quoting is checked against the real `/bin/sh`: whatever the arguments and
the workspace name, the remote shell must see them as literal words.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.core.ssh import (
    HOST_KEY_CHECKING_VALUES,
    SshSettings,
    remote_command,
    shell_quote,
    ssh_argv,
)

SH = "/bin/sh"
# Characters a workspace directory name may hold: anything but NUL and `/`.
NAME_CHARS = st.characters(codec="utf-8", exclude_characters="\x00/")
# Characters an argument may hold: anything but NUL (which no argv can carry).
ARG_CHARS = st.characters(codec="utf-8", exclude_characters="\x00")
NASTY_WORKSPACE_NAME = "work space 'quoted' $HOME `id` ;&|<>*?"


def _sh(command: str, *, cwd: str | Path = "/") -> bytes:
    """Run `command` the way sshd hands it to the remote user's shell."""
    completed = subprocess.run(
        [SH, "-c", command], cwd=cwd, capture_output=True, timeout=10, check=False
    )
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    return completed.stdout


def _nul_separated(args: list[str]) -> bytes:
    return b"".join(arg.encode() + b"\0" for arg in args)


# -- shell_quote ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("plain", "'plain'"),
        ("", "''"),
        ("two words", "'two words'"),
        ("it's", "'it'\\''s'"),
        ("''", "''\\'''\\'''"),
        ('say "hi"', "'say \"hi\"'"),
        ("$HOME", "'$HOME'"),
        ("`id`", "'`id`'"),
        ("$(id)", "'$(id)'"),
        ("line1\nline2", "'line1\nline2'"),
        ("a;b&&c|d", "'a;b&&c|d'"),
        ("back\\slash", "'back\\slash'"),
    ],
)
def test_shell_quote_always_single_quotes(value: str, quoted: str) -> None:
    assert shell_quote(value) == quoted


@pytest.mark.parametrize(
    "value",
    ["plain", "", "it's", "$HOME", "`echo injected`", "$(echo injected)", "a\nb", "*", "-n"],
)
def test_shell_quote_round_trips_through_sh(value: str) -> None:
    assert _sh(f"printf '%s' {shell_quote(value)}") == value.encode()


# -- remote_command ------------------------------------------------------------


def test_remote_command_shape() -> None:
    assert remote_command("/w s", ["copilot", "-p", "it's"]) == (
        "cd '/w s' && 'copilot' '-p' 'it'\\''s'"
    )


def test_remote_command_quotes_environment_values_not_names() -> None:
    command = remote_command(
        "/w", ["env"], environment=[("A", "x y"), ("B", "$HOME"), ("C", "it's")]
    )
    assert command == "cd '/w' && A='x y' B='$HOME' C='it'\\''s' 'env'"


def test_remote_command_environment_reaches_the_command_literally(tmp_path: Path) -> None:
    value = "a b 'c' $HOME `id` $(id) ;\n"
    command = remote_command(
        str(tmp_path),
        ["/bin/sh", "-c", 'printf "%s" "$SECRET_THING"'],
        environment=[("SECRET_THING", value)],
    )
    assert _sh(command) == value.encode()


def test_remote_command_changes_into_a_workspace_with_spaces_and_quotes(tmp_path: Path) -> None:
    workspace = tmp_path / NASTY_WORKSPACE_NAME
    workspace.mkdir()
    assert _sh(remote_command(str(workspace), ["pwd"])) == f"{workspace}\n".encode()


def test_remote_command_fails_when_the_workspace_is_missing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = remote_command(str(tmp_path / "missing dir"), ["touch", str(marker)])
    completed = subprocess.run([SH, "-c", command], capture_output=True, timeout=10, check=False)
    assert completed.returncode != 0
    assert not marker.exists()  # `&&`: the agent never runs in the wrong directory


@settings(max_examples=50, deadline=None)
@given(
    args=st.lists(st.text(alphabet=ARG_CHARS, max_size=40), max_size=8),
    name=st.text(alphabet=NAME_CHARS, min_size=1, max_size=20).filter(
        lambda n: n not in (".", "..")
    ),
)
def test_remote_command_never_lets_the_shell_interpret_anything(args: list[str], name: str) -> None:
    with tempfile.TemporaryDirectory() as base:
        workspace = Path(base) / f"ws 'q' {name}"
        workspace.mkdir()
        command = remote_command(str(workspace), ["printf", "%s\\0", *args])
        # printf applies its format at least once: no arguments print one empty field.
        assert _sh(command) == _nul_separated(args or [""])


# -- ssh_argv ------------------------------------------------------------------


def test_ssh_argv_exact() -> None:
    settings_ = SshSettings(("build-1",))
    argv = ssh_argv("/usr/bin/ssh", settings_, "build-1", "/srv/ws", ["copilot", "-p", "hi"])
    assert argv == [
        "/usr/bin/ssh",
        "-o", "StrictHostKeyChecking=accept-new",
        "-o", "BatchMode=yes",
        "-o", "ConnectTimeout=30",
        "-o", "ServerAliveInterval=15",
        "-o", "ServerAliveCountMax=3",
        "--",
        "build-1",
        "cd '/srv/ws' && 'copilot' '-p' 'hi'",
    ]  # fmt: skip


@pytest.mark.parametrize("checking", HOST_KEY_CHECKING_VALUES)
def test_ssh_argv_uses_the_configured_host_key_checking(checking: str) -> None:
    settings_ = SshSettings(("h",), checking)  # type: ignore[arg-type]
    argv = ssh_argv("ssh", settings_, "h", "/w", ["x"])
    assert argv[1:3] == ["-o", f"StrictHostKeyChecking={checking}"]


def test_ssh_argv_host_that_looks_like_an_option_stays_a_host() -> None:
    argv = ssh_argv("ssh", SshSettings(("h",)), "-oProxyCommand=evil", "/w", ["x"])
    assert argv.index("--") == argv.index("-oProxyCommand=evil") - 1
    assert argv[-1] == "cd '/w' && 'x'"


def test_ssh_argv_passes_the_environment_into_the_remote_command() -> None:
    argv = ssh_argv("ssh", SshSettings(("h",)), "h", "/w", ["x"], environment=[("K", "v v")])
    assert argv[-1] == "cd '/w' && K='v v' 'x'"


# -- SshSettings ---------------------------------------------------------------


def test_settings_defaults() -> None:
    settings_ = SshSettings(("a",))
    assert settings_.strict_host_key_checking == "accept-new"
    assert HOST_KEY_CHECKING_VALUES == ("accept-new", "yes", "no")


def test_settings_reject_empty_hosts() -> None:
    with pytest.raises(ValueError, match="at least one host"):
        SshSettings(())


@pytest.mark.parametrize("checking", ["maybe", "", "ask", "YES"])
def test_settings_reject_bad_host_key_checking(checking: str) -> None:
    with pytest.raises(ValueError, match="ssh_strict_host_key_checking must be one of"):
        SshSettings(("a",), checking)  # type: ignore[arg-type]


def test_pick_host_round_robin() -> None:
    settings_ = SshSettings(("a", "b", "c"))
    assert [settings_.pick_host() for _ in range(7)] == ["a", "b", "c", "a", "b", "c", "a"]


def test_pick_host_single_host() -> None:
    settings_ = SshSettings(("only",))
    assert {settings_.pick_host() for _ in range(3)} == {"only"}


def test_pick_host_is_balanced_across_threads() -> None:
    settings_ = SshSettings(("a", "b", "c"))
    picks: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = [settings_.pick_host() for _ in range(300)]
        with lock:
            picks.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert Counter(picks) == {"a": 400, "b": 400, "c": 400}


def test_settings_are_equal_by_value_not_by_cursor() -> None:
    one, two = SshSettings(("a", "b")), SshSettings(("a", "b"))
    one.pick_host()
    assert one == two
    assert "_next" not in repr(one)
