"""What the host holds that the sandbox hides or protects."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from copilot_driver.harness.sandbox.host import (
    home_entries,
    host_unix_sockets,
    path_kind,
    runner_directories,
    submodule_git_files,
)


def test_path_kind_does_not_follow_a_last_link(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    assert path_kind(str(tmp_path / "dir")) == "dir"
    assert path_kind(str(tmp_path / "file")) == "file"
    assert path_kind(str(tmp_path / "link")) == "link"
    assert path_kind(str(tmp_path / "link") + "/.") == "dir"
    assert path_kind(str(tmp_path / "missing")) is None


# -- the host's sockets, folders and repositories -------------------------------------------

UNIX_TABLE = """\
Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20001 /run/systemd/private
0000000000000000: 00000002 00000000 00010000 0001 01 20002 /var/run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20003 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 20004
0000000000000000: 00000002 00000000 00010000 0001 01 20005 /home/runner/a socket
0000000000000000: 00000003 00000000 00000000 0001 03 20006 /run/systemd/private
0000000000000000: 00000002 00000000 00010000 0001 01 20007 @abstract
"""


def test_the_hosts_unix_sockets_are_read_by_path(tmp_path: Path) -> None:
    table = tmp_path / "unix"
    table.write_text(UNIX_TABLE)
    assert host_unix_sockets(table) == (
        "/run/systemd/private",
        "/var/run/docker.sock",
        "/home/runner/a socket",
    )
    assert host_unix_sockets(table, limit=2) == ("/run/systemd/private", "/var/run/docker.sock")


def test_no_socket_table_means_no_sockets(tmp_path: Path) -> None:
    assert host_unix_sockets(tmp_path / "missing") == ()
    (tmp_path / "header").write_text(UNIX_TABLE.splitlines()[0] + "\n")
    assert host_unix_sockets(tmp_path / "header") == ()


def test_the_runner_directories_are_its_temp_and_file_command_folders() -> None:
    env = {
        "RUNNER_TEMP": "/home/runner/work/_temp",
        "GITHUB_ENV": "/home/runner/work/_temp/_runner_file_commands/set_env_1",
        "GITHUB_OUTPUT": "/home/runner/work/_temp/_runner_file_commands/set_output_1",
        "GITHUB_STEP_SUMMARY": "/home/runner/work/_temp/_runner_file_commands/step_summary_1",
        "GITHUB_EVENT_PATH": "/home/runner/work/_temp/_github_workflow/event.json",
        "GITHUB_PATH": "relative/add_path",
        "GITHUB_STATE": "",
    }
    assert runner_directories(env) == (
        "/home/runner/work/_temp",
        "/home/runner/work/_temp/_runner_file_commands",
        "/home/runner/work/_temp/_github_workflow",
    )
    assert runner_directories({}) == ()


def make_repository(git: Path, *, hooks: bool = True) -> None:
    git.mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "config").write_text("[core]\n")
    if hooks:
        (git / "hooks").mkdir()


def test_the_submodules_config_and_hooks_are_found(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    make_repository(git)
    make_repository(git / "modules" / "lib")
    make_repository(git / "modules" / "lib" / "modules" / "nested", hooks=False)
    (git / "modules" / "notes").mkdir()
    (git / "modules" / "notes" / "config").write_text("not a repository")
    assert submodule_git_files(git) == (
        str(git / "modules" / "lib" / "config"),
        str(git / "modules" / "lib" / "hooks"),
        str(git / "modules" / "lib" / "modules" / "nested" / "config"),
    )
    assert submodule_git_files(git, limit=1) == (
        str(git / "modules" / "lib" / "config"),
        str(git / "modules" / "lib" / "hooks"),
    )


def test_no_submodules_means_nothing(tmp_path: Path) -> None:
    assert submodule_git_files(tmp_path / ".git") == ()
    make_repository(tmp_path / ".git")
    assert submodule_git_files(tmp_path / ".git") == ()


def test_home_entries_list_the_writable_folders_parents_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cache" / "pip").mkdir(parents=True)
    (home / ".local" / "share" / "app").mkdir(parents=True)
    (home / ".bashrc").write_text("")
    (home / ".profile").symlink_to(".bashrc")
    (home / "project").mkdir()
    (home / "project" / "deep").mkdir()  # not a writable folder: not listed
    found = {(entry.path, entry.kind, entry.target) for entry in home_entries(str(home))}
    assert found == {
        (".bashrc", "file", ""),
        (".cache", "dir", ""),
        (".cache/pip", "dir", ""),
        (".local", "dir", ""),
        (".local/share", "dir", ""),
        (".local/share/app", "dir", ""),
        (".profile", "link", ".bashrc"),
        ("project", "dir", ""),
    }
    paths = [entry.path for entry in home_entries(str(home))]
    assert paths.index(".local") < paths.index(".local/share") < paths.index(".local/share/app")


def test_a_crowded_or_missing_home_is_left_as_the_host_has_it(tmp_path: Path) -> None:
    for number in range(5):
        (tmp_path / f"f{number}").write_text("")
    assert home_entries(str(tmp_path), limit=4) == ()
    assert home_entries(str(tmp_path / "missing")) == ()
    assert home_entries(None) == ()


def test_a_socket_in_home_is_never_listed(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "agent.sock"))
        os.mkfifo(tmp_path / "pipe")
        (tmp_path / "plain").write_text("")
        assert [entry.path for entry in home_entries(str(tmp_path))] == ["plain"]
