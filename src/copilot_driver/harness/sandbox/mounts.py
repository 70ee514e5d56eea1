"""What the sandbox's file system is: bubblewrap's arguments from a layout. Pure.

    /                 read-only (the host's root, so every toolchain is there)
    /dev, /proc       a minimal /dev; a /proc of the sandbox's own processes
    /tmp, /run        private and empty (/run holds the host's service sockets)
    $HOME             private and writable, gone with the run: each host entry
                      in it (and in .cache, .config, .local, .local/share,
                      .local/state) is there read-only, but the credential stores
    the runner's temp and file-command folders   empty (GITHUB_ENV and friends)
    host Unix sockets each hidden under /dev/null (docker, systemd, ...)
    the workspace     writable; its .git pinned in place, .git/config (without
                      a persisted credential) and .git/hooks read-only (what
                      later steps' git would run)
    the CLI           its execute-only copy and its unpacked package, read-only

The order matters: bubblewrap applies the arguments in turn, and a later
mount covers an earlier one: the workspace comes after the private folders
(it may lie under /tmp) and $HOME (it may lie there), the masks after the
workspace (it may hold them).

bubblewrap follows symbolic links at both ends of a bind. Under the
workspace a tool may have planted one (in an earlier run), so a layout whose
bind there goes through a link is refused (`planted_links`), never mounted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from copilot_driver.harness.sandbox.inside import HOME_FILES_INSIDE

CREDENTIAL_STORES = (
    ".ssh",
    ".gnupg",
    ".git-credentials",
    ".config/gh",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".docker",
    ".aws",
    ".azure",
    ".kube",
    ".copilot",
    ".config/gcloud",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".yarnrc.yml",
    ".terraform.d",
)
"""Under $HOME: never readable in the sandbox (the CLI's own `.copilot` too: the
sandboxed CLI gets a private state folder, so no stored login or setting of the
host reaches a tool, and nothing a tool writes there outlives the run)."""
PRIVATE_DIRECTORIES = ("/tmp", "/run", "/var/run", "/var/tmp", "/dev/shm")
WRITABLE_HOME = ("", ".cache", ".config", ".local", ".local/share", ".local/state")
"""The folders of $HOME (relative; "" is $HOME itself) where a tool may create files:
each is private inside, holding the host's entries read-only (tools keep caches and
settings there: `~/.cache/pip`, `~/.config/git/config`, `~/.local/share/...`)."""

NAMESPACES = (
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)
"""Own user (no nested ones), PID, network, IPC, host name and cgroup namespaces;
no capabilities; the whole tree dies with the harness; no controlling terminal.
bubblewrap sets no-new-privileges itself."""


@dataclass(frozen=True)
class Layout:
    """The paths the sandbox is built around (absolute, as on the host)."""

    workspace: str
    home: str | None
    read_only_inside: tuple[str, ...] = ()
    """Files and folders that must be visible read-only even under a private folder
    (the helper, the CLI copy, the CLI's package cache, the interpreter)."""
    hidden_directories: tuple[str, ...] = ()
    """Host folders a tool must not see (the runner's temp and file-command folders)."""
    hidden_files: tuple[str, ...] = ()
    """Host files a tool must not reach (Unix sockets outside the private folders)."""
    read_only_in_workspace: tuple[str, ...] = field(default=())
    """Under the workspace, read-only: the session state folder when it is there, and
    the configuration and hooks of the submodules' repositories (`.git/modules/...`)."""
    home_entries: tuple[HomeEntry, ...] = ()
    """What the host has in the WRITABLE_HOME folders (absent: $HOME stays read-only)."""
    bind_sources: tuple[tuple[str, str], ...] = ()
    """(destination, source): a read-only bind under the workspace that shows another
    host file (a git config without its persisted credential)."""


@dataclass(frozen=True)
class HomeEntry:
    """One name in a WRITABLE_HOME folder of the host."""

    path: str
    """Relative to $HOME."""
    kind: str
    """"dir", "file" or "link"."""
    target: str = ""
    """A link's target, as written."""


def bwrap_arguments(layout: Layout, kind: Callable[[str], str | None]) -> list[str]:
    """bubblewrap's arguments for `layout`, before the command.

    `kind(path)` says what is at a host path, not following a last symbolic
    link: "dir", "link", "file" (anything else) or None (nothing); it is the only
    window on the host.
    """
    args = [*NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for private in PRIVATE_DIRECTORIES:
        if kind(private) == "dir":
            args += ["--tmpfs", private]
    workspace = layout.workspace
    args += _home(layout, kind)
    args += ["--bind", workspace, workspace]
    sources = dict(layout.bind_sources)
    args += _git_protection(workspace, kind, sources)
    # The masks come after the workspace, so they hold even inside it (a workspace
    # that is $HOME keeps its ~/.ssh hidden).
    for hidden in layout.hidden_directories:
        if kind(hidden) == "dir" and not _within(workspace, hidden):
            args += ["--tmpfs", hidden]
    if layout.home:
        args += _masks((str(PurePosixPath(layout.home, name)) for name in CREDENTIAL_STORES), kind)
    args += _masks(
        (
            path
            for path in layout.hidden_files
            if _within(path, workspace) or not _under_any(path, PRIVATE_DIRECTORIES)
        ),
        kind,
    )
    for path in layout.read_only_in_workspace:
        if _within(path, workspace) and kind(path):
            args += ["--ro-bind", sources.get(path, path), path]
    # Last: what the sandbox itself runs, even from a hidden folder (the Action's
    # virtualenv lives in the runner's temp folder).
    for path in layout.read_only_inside:
        if kind(path):
            args += ["--ro-bind", path, path]
    return [*args, "--chdir", workspace]


def planted_links(layout: Layout, kind: Callable[[str], str | None]) -> list[str]:
    """Every path under the workspace the layout would bind or mask that goes through a
    symbolic link, named down to the link: bubblewrap would follow it, so a link a tool
    left behind would mount what it points at (`~/.ssh`, a host socket) inside."""
    workspace = PurePosixPath(layout.workspace)
    git = workspace / ".git"
    protected = [
        str(git),
        str(git / "config"),
        str(git / "hooks"),
        *layout.read_only_in_workspace,
        *layout.hidden_files,
        *layout.read_only_inside,
    ]
    found: list[str] = []
    for path in dict.fromkeys(protected):
        if not _within(path, str(workspace)) or path == str(workspace):
            continue
        below = workspace
        for part in PurePosixPath(path).relative_to(workspace).parts:
            below = below / part
            step = kind(str(below))
            if step == "link" and str(below) not in found:
                found.append(str(below))
            if step != "dir":
                break
    return found


def _home(layout: Layout, kind: Callable[[str], str | None]) -> list[str]:
    """$HOME private and writable, the host's entries in it read-only (see WRITABLE_HOME).
    Not when $HOME is or holds the workspace (the workspace is writable anyway)."""
    home = layout.home
    if not home or home == "/" or kind(home) != "dir" or _within(home, layout.workspace):
        return []
    if not layout.home_entries:  # nothing read: read-only, as the host has it
        return ["--ro-bind", home, home] if _under_any(home, PRIVATE_DIRECTORIES) else []
    stores = set(CREDENTIAL_STORES)
    args = ["--tmpfs", home]
    for entry in layout.home_entries:
        path = str(PurePosixPath(home, entry.path))
        if entry.path in stores:
            continue  # never shown; the masks below make it an empty one
        if entry.path in WRITABLE_HOME and entry.kind == "dir":
            args += ["--dir", path]
        elif entry.kind == "dir":
            args += ["--ro-bind", path, path]
        elif entry.kind == "link":
            args += ["--symlink", entry.target, path]
        else:
            beside = str(PurePosixPath(HOME_FILES_INSIDE, entry.path))
            args += ["--ro-bind", path, beside, "--symlink", beside, path]
    return args


def _git_protection(
    workspace: str, kind: Callable[[str], str | None], sources: dict[str, str]
) -> list[str]:
    """`.git` bound onto itself (a mount point cannot be renamed or removed, so no
    other repository can take its place), its config and hooks read-only."""
    git = str(PurePosixPath(workspace, ".git"))
    if kind(git) != "dir":
        return []
    args = ["--bind", git, git]
    for name in ("config", "hooks"):
        path = str(PurePosixPath(git, name))
        if kind(path):
            args += ["--ro-bind", sources.get(path, path), path]
    return args


def _masks(paths: Iterable[str], kind: Callable[[str], str | None]) -> list[str]:
    args: list[str] = []
    for path in paths:
        found = kind(path)
        if found == "link":  # bubblewrap mounts on the link's target: hide that
            found = "dir" if kind(f"{path}/.") == "dir" else "file"
        if found == "dir":
            args += ["--tmpfs", path, "--remount-ro", path]
        elif found == "file":
            args += ["--ro-bind", "/dev/null", path]
    return args


def _within(path: str, folder: str) -> bool:
    """`path` is `folder` or inside it."""
    return PurePosixPath(path).is_relative_to(folder)


def _under_any(path: str, folders: Iterable[str]) -> bool:
    return any(_within(path, folder) for folder in folders)
