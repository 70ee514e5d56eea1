"""bubblewrap's arguments from a layout, with a made-up host: which mounts, in which order."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from copilot_driver.harness.sandbox.inside import HOME_FILES_INSIDE
from copilot_driver.harness.sandbox.mounts import (
    CREDENTIAL_STORES,
    PRIVATE_DIRECTORIES,
    HomeEntry,
    Layout,
    bwrap_arguments,
    planted_links,
)

HOME = "/home/runner"
WORKSPACE = "/home/runner/work/project"
HOST: dict[str, str] = {
    "/tmp": "dir",
    "/run": "dir",
    "/var/tmp": "dir",
    "/dev/shm": "dir",
    "/var/run": "link",
    HOME: "dir",
    WORKSPACE: "dir",
}


def fake_host(paths: Mapping[str, str]) -> Callable[[str], str | None]:
    """`kind` for a host holding exactly `paths` (path -> "dir", "file" or "link")."""
    return lambda path: paths.get(path)


def arguments(layout: Layout, **extra: str) -> list[str]:
    return bwrap_arguments(layout, fake_host({**HOST, **extra}))


def mount(args: list[str], *words: str) -> int:
    """Where `words` appear in `args`, in a row (each mount is looked for exactly once)."""
    found = [
        index
        for index in range(len(args) - len(words) + 1)
        if tuple(args[index : index + len(words)]) == words
    ]
    assert len(found) == 1, f"{words} appears {len(found)} times in {args}"
    return found[0]


def has(args: list[str], *words: str) -> bool:
    return any(
        tuple(args[index : index + len(words)]) == words
        for index in range(len(args) - len(words) + 1)
    )


def test_the_namespaces_are_all_unshared() -> None:
    args = arguments(Layout(WORKSPACE, HOME))
    for flag in (
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
    ):
        assert flag in args
    mount(args, "--cap-drop", "ALL")
    assert "--share-net" not in args


def test_the_root_is_read_only_and_the_private_folders_empty() -> None:
    args = arguments(Layout(WORKSPACE, HOME))
    root = mount(args, "--ro-bind", "/", "/")
    mount(args, "--dev", "/dev")
    mount(args, "--proc", "/proc")
    for private in ("/tmp", "/run", "/var/tmp", "/dev/shm"):
        assert mount(args, "--tmpfs", private) > root
    assert not has(args, "--tmpfs", "/var/run")  # a link to /run, which is already private
    assert mount(args, "--bind", WORKSPACE, WORKSPACE) > root


def test_a_private_folder_the_host_lacks_is_left_alone() -> None:
    args = bwrap_arguments(Layout(WORKSPACE, HOME), fake_host({WORKSPACE: "dir"}))
    for private in PRIVATE_DIRECTORIES:
        assert not has(args, "--tmpfs", private)


def test_a_workspace_under_tmp_is_bound_after_the_private_tmp() -> None:
    workspace = "/tmp/job/project"
    args = arguments(Layout(workspace, HOME), **{workspace: "dir"})
    assert mount(args, "--bind", workspace, workspace) > mount(args, "--tmpfs", "/tmp")


def test_a_home_under_tmp_stays_visible_read_only() -> None:
    home = "/tmp/home"
    args = arguments(Layout(WORKSPACE, home), **{home: "dir", f"{home}/.ssh": "dir"})
    bound = mount(args, "--ro-bind", home, home)
    assert bound > mount(args, "--tmpfs", "/tmp")
    assert mount(args, "--tmpfs", f"{home}/.ssh") > bound


def test_the_workspace_is_the_working_directory_at_the_end() -> None:
    args = arguments(Layout(WORKSPACE, HOME))
    assert args[-2:] == ["--chdir", WORKSPACE]


def test_a_credential_store_folder_is_emptied_and_read_only() -> None:
    ssh = f"{HOME}/.ssh"
    args = arguments(Layout(WORKSPACE, HOME), **{ssh: "dir"})
    emptied = mount(args, "--tmpfs", ssh)
    assert args[emptied + 2 : emptied + 4] == ["--remount-ro", ssh]


def test_a_credential_store_file_is_replaced_by_dev_null() -> None:
    netrc = f"{HOME}/.netrc"
    args = arguments(Layout(WORKSPACE, HOME), **{netrc: "file"})
    mount(args, "--ro-bind", "/dev/null", netrc)


def test_a_link_to_a_folder_is_hidden_as_a_folder() -> None:
    aws = f"{HOME}/.aws"
    args = arguments(Layout(WORKSPACE, HOME), **{aws: "link", f"{aws}/.": "dir"})
    mount(args, "--tmpfs", aws)
    mount(args, "--remount-ro", aws)
    assert not has(args, "--ro-bind", "/dev/null", aws)


def test_a_link_to_a_file_is_hidden_as_a_file() -> None:
    npmrc = f"{HOME}/.npmrc"
    args = arguments(Layout(WORKSPACE, HOME), **{npmrc: "link"})
    mount(args, "--ro-bind", "/dev/null", npmrc)


def test_a_missing_credential_store_gets_no_mount() -> None:
    args = arguments(Layout(WORKSPACE, HOME))
    for name in CREDENTIAL_STORES:
        assert f"{HOME}/{name}" not in args


def test_every_credential_store_is_hidden() -> None:
    stores = {f"{HOME}/{name}": "file" for name in CREDENTIAL_STORES}
    args = bwrap_arguments(Layout(WORKSPACE, HOME), fake_host({**HOST, **stores}))
    for path in stores:
        mount(args, "--ro-bind", "/dev/null", path)


def test_no_home_means_no_credential_masks() -> None:
    args = arguments(Layout(WORKSPACE, None), **{f"{HOME}/.ssh": "dir"})
    assert f"{HOME}/.ssh" not in args


def test_a_workspace_that_is_home_keeps_the_credential_stores_hidden() -> None:
    ssh = f"{HOME}/.ssh"
    args = arguments(Layout(HOME, HOME), **{ssh: "dir"})
    assert mount(args, "--tmpfs", ssh) > mount(args, "--bind", HOME, HOME)


def test_git_is_pinned_and_its_config_and_hooks_read_only_after_the_workspace() -> None:
    git = f"{WORKSPACE}/.git"
    args = arguments(
        Layout(WORKSPACE, HOME),
        **{git: "dir", f"{git}/config": "file", f"{git}/hooks": "dir"},
    )
    workspace = mount(args, "--bind", WORKSPACE, WORKSPACE)
    pinned = mount(args, "--bind", git, git)
    assert workspace < pinned < mount(args, "--ro-bind", f"{git}/config", f"{git}/config")
    assert pinned < mount(args, "--ro-bind", f"{git}/hooks", f"{git}/hooks")


def test_a_git_file_or_a_missing_git_gets_no_git_mounts() -> None:
    git = f"{WORKSPACE}/.git"
    for host in ({}, {git: "file"}, {git: "link"}):
        args = arguments(Layout(WORKSPACE, HOME), **host)
        assert git not in args
    args = arguments(Layout(WORKSPACE, HOME), **{git: "dir"})
    assert f"{git}/config" not in args  # what is not there is not mounted


def test_hidden_folders_are_emptied_after_the_workspace() -> None:
    runner_temp = "/home/runner/work/_temp"
    file_commands = "/home/runner/work/_temp/_runner_file_commands"
    layout = Layout(WORKSPACE, HOME, hidden_directories=(runner_temp, file_commands, "/gone"))
    args = arguments(layout, **{runner_temp: "dir", file_commands: "dir"})
    workspace = mount(args, "--bind", WORKSPACE, WORKSPACE)
    assert mount(args, "--tmpfs", runner_temp) > workspace
    assert mount(args, "--tmpfs", file_commands) > workspace
    assert "/gone" not in args


def test_a_hidden_folder_that_holds_the_workspace_is_not_emptied() -> None:
    layout = Layout(WORKSPACE, HOME, hidden_directories=("/home/runner/work", WORKSPACE))
    args = arguments(layout, **{"/home/runner/work": "dir"})
    assert not has(args, "--tmpfs", "/home/runner/work")
    assert not has(args, "--tmpfs", WORKSPACE)


def test_host_sockets_are_hidden_outside_the_private_folders() -> None:
    docker = "/var/lib/docker.sock"
    layout = Layout(WORKSPACE, HOME, hidden_files=(docker, "/run/dbus/system_bus_socket"))
    args = arguments(layout, **{docker: "file", "/run/dbus/system_bus_socket": "file"})
    assert mount(args, "--ro-bind", "/dev/null", docker) > mount(
        args, "--bind", WORKSPACE, WORKSPACE
    )
    assert "/run/dbus/system_bus_socket" not in args  # /run is private already


def test_read_only_files_in_the_workspace_come_after_it() -> None:
    state = f"{WORKSPACE}/.copilot-state"
    module_config = f"{WORKSPACE}/.git/modules/lib/config"
    layout = Layout(
        WORKSPACE, HOME, read_only_in_workspace=(state, module_config, "/elsewhere/state")
    )
    args = arguments(layout, **{state: "dir", module_config: "file", "/elsewhere/state": "dir"})
    workspace = mount(args, "--bind", WORKSPACE, WORKSPACE)
    assert mount(args, "--ro-bind", state, state) > workspace
    assert mount(args, "--ro-bind", module_config, module_config) > workspace
    assert "/elsewhere/state" not in args


def test_what_the_sandbox_runs_stays_visible_even_in_a_hidden_folder() -> None:
    runner_temp = "/home/runner/work/_temp"
    helper = f"{runner_temp}/venv/lib/inside.py"
    cli = "/tmp/cache/copilot"
    layout = Layout(
        WORKSPACE,
        HOME,
        read_only_inside=(helper, cli, "/missing/python"),
        hidden_directories=(runner_temp,),
        hidden_files=("/var/lib/docker.sock",),
    )
    args = arguments(
        layout, **{runner_temp: "dir", helper: "file", cli: "file", "/var/lib/docker.sock": "file"}
    )
    shown = mount(args, "--ro-bind", helper, helper)
    assert shown > mount(args, "--tmpfs", runner_temp)
    assert shown > mount(args, "--ro-bind", "/dev/null", "/var/lib/docker.sock")
    assert mount(args, "--ro-bind", cli, cli) > mount(args, "--tmpfs", "/tmp")
    assert "/missing/python" not in args
    assert args[-2:] == ["--chdir", WORKSPACE]


@pytest.mark.parametrize("workspace", [WORKSPACE, HOME, "/tmp/w", "/srv/a b"])
def test_every_mount_is_complete(workspace: str) -> None:
    """Each option is followed by its arguments, never by another option."""
    args = arguments(Layout(workspace, HOME), **{workspace: "dir"})
    takes = {"--ro-bind": 2, "--bind": 2, "--tmpfs": 1, "--remount-ro": 1, "--dev": 1}
    index = 0
    while index < len(args):
        count = takes.get(args[index], 0)
        for value in args[index + 1 : index + 1 + count]:
            assert value.startswith("/"), (args[index], value)
        index += 1 + count


# -- links planted under the workspace -------------------------------------------------


def test_a_protected_path_through_a_link_is_named_down_to_the_link() -> None:
    git = f"{WORKSPACE}/.git"
    layout = Layout(
        WORKSPACE,
        HOME,
        read_only_in_workspace=(f"{git}/modules/evil/config", f"{git}/modules/evil/hooks"),
        hidden_files=(f"{WORKSPACE}/.netrc", "/var/run/docker.sock"),
    )
    host = {
        **HOST,
        git: "dir",
        f"{git}/modules": "dir",
        f"{git}/modules/evil": "link",
        f"{WORKSPACE}/.netrc": "link",
    }
    assert planted_links(layout, fake_host(host)) == [f"{git}/modules/evil", f"{WORKSPACE}/.netrc"]


def test_a_layout_without_links_under_the_workspace_has_none_planted() -> None:
    layout = Layout(WORKSPACE, HOME, read_only_in_workspace=(f"{WORKSPACE}/.git/modules/m/config",))
    host = {**HOST, f"{WORKSPACE}/.git": "dir", f"{WORKSPACE}/.git/modules": "dir"}
    # A link outside the workspace is the host's own (the masks follow it on purpose).
    assert planted_links(layout, fake_host({**host, f"{HOME}/.aws": "link"})) == []


def test_a_git_folder_that_is_a_link_is_planted() -> None:
    host = {**HOST, f"{WORKSPACE}/.git": "link"}
    assert planted_links(Layout(WORKSPACE, HOME), fake_host(host)) == [f"{WORKSPACE}/.git"]


# -- a private, writable $HOME -----------------------------------------------------------


HOME_ENTRIES = (
    HomeEntry(".bashrc", "file"),
    HomeEntry(".cache", "dir"),
    HomeEntry(".dotfiles", "dir"),
    HomeEntry(".profile", "link", ".dotfiles/profile"),
    HomeEntry(".ssh", "dir"),
    HomeEntry("work", "dir"),
    HomeEntry(".cache/pip", "dir"),
)


def test_home_is_private_with_the_hosts_entries_read_only() -> None:
    args = arguments(Layout(WORKSPACE, HOME, home_entries=HOME_ENTRIES), **{f"{HOME}/.ssh": "dir"})
    home = mount(args, "--tmpfs", HOME)
    beside = f"{HOME_FILES_INSIDE}/.bashrc"
    assert home < mount(args, "--ro-bind", f"{HOME}/.bashrc", beside, "--symlink", beside)
    assert home < mount(args, "--dir", f"{HOME}/.cache")
    assert mount(args, "--dir", f"{HOME}/.cache") < mount(
        args, "--ro-bind", f"{HOME}/.cache/pip", f"{HOME}/.cache/pip"
    )
    assert has(args, "--symlink", ".dotfiles/profile", f"{HOME}/.profile")
    assert has(args, "--ro-bind", f"{HOME}/work", f"{HOME}/work")
    # The workspace under $HOME comes after it; a credential store is never bound, only masked.
    assert mount(args, "--ro-bind", f"{HOME}/work", f"{HOME}/work") < mount(
        args, "--bind", WORKSPACE, WORKSPACE
    )
    assert not has(args, "--ro-bind", f"{HOME}/.ssh", f"{HOME}/.ssh")
    assert has(args, "--tmpfs", f"{HOME}/.ssh", "--remount-ro", f"{HOME}/.ssh")


@pytest.mark.parametrize("home", [WORKSPACE, f"{WORKSPACE}/home", "/"])
def test_a_home_that_is_or_lies_in_the_workspace_is_left_as_the_host_has_it(home: str) -> None:
    args = arguments(Layout(WORKSPACE, home, home_entries=HOME_ENTRIES), **{home: "dir"})
    assert not has(args, "--tmpfs", home)


def test_a_git_config_with_a_persisted_credential_is_shown_from_its_copy() -> None:
    config = f"{WORKSPACE}/.git/config"
    host = {f"{WORKSPACE}/.git": "dir", config: "file"}
    args = arguments(
        Layout(WORKSPACE, HOME, bind_sources=((config, "/tmp/copy/config-0"),)), **host
    )
    assert has(args, "--ro-bind", "/tmp/copy/config-0", config)
    assert not has(args, "--ro-bind", config, config)
