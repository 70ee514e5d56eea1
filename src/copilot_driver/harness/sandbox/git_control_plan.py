"""How to undo the git control files a tool wrote: two snapshots in, steps out. Pure.

`git_controls` takes the snapshots (before and after a sandboxed run) and does
the steps; its docstring says what each kind of location is and why it matters.
Here: a location unchanged needs nothing; one inside a location moved away needs
nothing either (outer paths come first); a small file or link that changed is put
back as it was; the workspace's own `.git` folder is never moved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

SUFFIX = ".sandboxed"
QUARANTINE = "sandboxed"
"""The folder in a git folder that receives its modules and worktrees a tool wrote."""
REDIRECTS = ("commondir", "config.worktree")

REPOSITORY = "repository"
"""A `.git` folder."""
BARE = "bare"
"""A folder git takes for a git directory when a command runs in it."""
ADMIN = "admin"
"""`modules/<name>` or `worktrees/<name>` of a git folder (or a link there)."""
GITFILE = "gitfile"
"""A `.git` that is a file (`gitdir: ...`) or a symbolic link."""
REDIRECT = "redirect"
"""A git folder's `commondir` or `config.worktree`."""

MOVE, QUARANTINE_MOVE, DISARM, REMOVE, RESTORE, KEEP = (
    "move",
    "quarantine",
    "disarm",
    "remove",
    "restore",
    "keep",
)
WHY_RUN = "a later git command on the host would run its hooks and configuration"
WHY_REDIRECT = "a later git command on the host would read another configuration through it"


@dataclass(frozen=True)
class Control:
    """One control location: what it is and a digest of what in it leads to code."""

    kind: str
    digest: str
    original: bytes | None = None
    """A small file's content or a link's target, to put back if a tool changes it."""
    link: bool = False
    """`original` is a symbolic link's target."""


@dataclass(frozen=True)
class GitControls:
    """Every git control location of a workspace at one moment."""

    controls: Mapping[str, Control]
    """Path relative to the workspace ("." for the workspace itself) -> its control."""
    complete: bool = True
    """False when the walk stopped at its limit."""
    unreadable: frozenset[str] = frozenset()
    """Folders that could not be searched."""
    opened: tuple[str, ...] = ()
    """Folders made readable to search them (after the run only)."""


@dataclass(frozen=True)
class Step:
    """What `neutralise` does to one control location (paths relative)."""

    action: str
    path: str
    kind: str
    what: str
    """"written" (new in the run) or "changed"."""
    target: str = ""
    """Where the location (or for DISARM its HEAD) goes."""


def plan(before: GitControls, after: GitControls) -> list[Step]:
    """The steps that undo what changed from `before` to `after`, outer paths first; a
    path inside one moved away needs none. Pure."""
    steps: list[Step] = []
    moved: list[str] = []
    for path in sorted(after.controls, key=lambda name: (_depth(name), name)):
        control = after.controls[path]
        earlier = before.controls.get(path)
        if earlier == control or any(_inside(path, away) for away in moved):
            continue
        step = _step(path, control, earlier, after)
        steps.append(step)
        if step.action in (MOVE, QUARANTINE_MOVE, RESTORE):
            moved.append(path)
    return steps


def _step(path: str, control: Control, earlier: Control | None, after: GitControls) -> Step:
    what = "written" if earlier is None else "changed"
    if earlier is not None and earlier.original is not None:
        return Step(RESTORE, path, control.kind, what, _beside(path))
    if control.kind == REDIRECT and earlier is None:
        return Step(REMOVE, path, control.kind, what)
    if control.kind == REPOSITORY and path == ".git" and earlier is not None:
        return Step(KEEP, path, control.kind, what)  # the workspace's own: never moved
    if control.kind == BARE:
        return Step(DISARM, path, control.kind, what, _join(path, "HEAD" + SUFFIX))
    if control.kind == ADMIN:
        owner = _owner(path, after)
        inside = str(PurePosixPath(path).relative_to(owner)) if owner != "." else path
        return Step(QUARANTINE_MOVE, path, control.kind, what, _join(owner, QUARANTINE, inside))
    return Step(MOVE, path, control.kind, what, _beside(path))


def _owner(path: str, after: GitControls) -> str:
    """The git folder (a `.git` or a bare one) whose modules or worktrees hold `path`;
    without one recorded, the path up to its first `modules` or `worktrees`."""
    holders = [
        name
        for name, control in after.controls.items()
        if control.kind in (REPOSITORY, BARE) and _inside(path, name) and name != path
    ]
    if holders:
        return max(holders, key=_depth)
    parts = PurePosixPath(path).parts
    first = next((at for at, part in enumerate(parts) if part in ("modules", "worktrees")), 0)
    return _join(*parts[:first]) if first else "."


def _depth(path: str) -> int:
    return 0 if path == "." else len(PurePosixPath(path).parts)


def _inside(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


def _join(*parts: str) -> str:
    return str(PurePosixPath(*parts))


def _beside(path: str) -> str:
    return path + SUFFIX
