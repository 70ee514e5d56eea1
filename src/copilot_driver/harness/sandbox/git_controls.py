"""After a sandboxed run, no git command on the host runs anything a tool wrote.

Inside the sandbox the workspace's `.git/config` and `.git/hooks` are read-only,
but git finds code to run in more places than a mount can pin down, all of them
writable by a tool: a nested repository's own `.git` (which `git status` enters
when it is committed as a gitlink), a new `.git/modules/<name>` (which `git
submodule update` adopts), a `.git` file in a subfolder pointing anywhere, a
folder git itself takes for a repository (HEAD, objects, refs), a worktree's
admin folder, and a repository's `commondir` or `config.worktree`.

`snapshot` records every such control location before the sandbox starts, with
a digest of what in it leads git to code (config, hooks, the files that point
elsewhere); `neutralise` looks again after the run and puts each one a tool
added or changed out of git's reach (`plan` decides how, without I/O):

    a new `commondir` / `config.worktree`     removed
    a changed small file or link              the original put back, the tool's
                                              version beside it as `<name>.sandboxed`
    a `.git` folder, file or link             renamed `.git.sandboxed` (`-2`, ...)
    `modules/<name>`, `worktrees/<name>`      moved to `<git folder>/sandboxed/...`:
                                              git reads any name under modules/
    a folder git takes for a repository       its HEAD renamed `HEAD.sandboxed`
    the workspace's own `.git`, changed       left in place, and said

What existed before and is unchanged is left alone; nothing is deleted but a new
redirect file. The walk uses `os.scandir` without following symbolic links (a
`.git` that is one is a control file itself) and stops after MAX_ENTRIES names:
the sentence then says the workspace was not all searched. After the run a
folder a tool made unreadable is made readable to search it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from copilot_driver.errors import CopilotDriverError
from copilot_driver.harness.sandbox.git_control_plan import (
    ADMIN,
    BARE,
    DISARM,
    GITFILE,
    KEEP,
    REDIRECT,
    REDIRECTS,
    REMOVE,
    REPOSITORY,
    RESTORE,
    WHY_REDIRECT,
    WHY_RUN,
    Control,
    GitControls,
    Step,
    plan,
)

__all__ = ["MAX_ENTRIES", "GitControls", "neutralise", "snapshot"]

MAX_ENTRIES = 2_000_000
"""Names the walk looks at before it gives up (and says so)."""
MAX_DEPTH = 8
"""How deep submodule names (`a/b/c`) and modules of modules are followed; deeper
still is put away whole."""
KEPT_BYTES = 64 * 1024
"""A control file up to this size is kept whole, to be put back if a tool changes it."""
HASHED_BYTES = 16 << 20


def snapshot(workspace: Path, limit: int = MAX_ENTRIES) -> GitControls:
    """Every git control location under `workspace`, before the run."""
    return _Walk(workspace, limit, reopen=None).run()


def neutralise(before: GitControls, workspace: Path, limit: int = MAX_ENTRIES) -> list[str]:
    """Put every control location a tool added or changed since `before` out of a
    later host git command's reach; one sentence per thing done, naming the path."""
    after = _Walk(workspace, limit, reopen=before.unreadable).run()
    done = [
        f"made {workspace / path} readable to search it for git control files "
        "(it was unreadable after the run)"
        for path in after.opened
    ]
    done += [_apply(step, workspace, before) for step in plan(before, after)]
    done += [
        f"could not search {workspace / path} for git control files a tool wrote: "
        "check it before running git in it"
        for path in sorted(after.unreadable - before.unreadable)
    ]
    if not (before.complete and after.complete):
        done.append(
            f"the workspace holds more than {limit:,} files and folders, so only part of "
            "it was searched for git control files a tool wrote: a later git command in "
            "the rest may still run one (what was found and not seen before the run was "
            "put away)"
        )
    return done


# -- the walk ---------------------------------------------------------------------------


class _TooManyError(CopilotDriverError):
    """The walk reached its limit (caught inside this module)."""


@dataclass
class _Walk:
    workspace: Path
    limit: int
    reopen: frozenset[str] | None
    """After the run: the folders unreadable before it; any other is made readable."""
    controls: dict[str, Control] = field(default_factory=dict)
    unreadable: set[str] = field(default_factory=set)
    opened: list[str] = field(default_factory=list)
    seen: int = 0

    def run(self) -> GitControls:
        complete = True
        try:
            self._walk()
        except _TooManyError:
            complete = False
        return GitControls(
            dict(self.controls), complete, frozenset(self.unreadable), tuple(self.opened)
        )

    def _walk(self) -> None:
        pending = [self.workspace]
        while pending:
            folder = pending.pop()
            entries = self._list(folder)
            if entries is None:
                continue
            names = {entry.name for entry in entries}
            if "HEAD" in names and ({"objects", "refs"} <= names or "commondir" in names):
                self._git_folder(folder, BARE, MAX_DEPTH)
                if folder != self.workspace:
                    continue  # its objects are not searched
            for entry in sorted(entries, key=lambda found: found.name, reverse=True):
                if entry.name == ".git":
                    self._dot_git(Path(entry.path))
                elif _is_folder(entry):
                    pending.append(Path(entry.path))

    def _list(self, folder: Path) -> list[os.DirEntry[str]] | None:
        """The folder's entries, counted against the limit; None when unreadable."""
        relative = self._relative(folder)
        try:
            entries = _scan(folder)
        except OSError:
            if self.reopen is None or relative in self.reopen or not _make_searchable(folder):
                self.unreadable.add(relative)
                return None
            try:
                entries = _scan(folder)
            except OSError:
                self.unreadable.add(relative)
                return None
            self.opened.append(relative)
        self.seen += len(entries)
        if self.seen > self.limit:
            raise _TooManyError
        return entries

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.workspace)) if path != self.workspace else "."

    def _dot_git(self, path: Path) -> None:
        try:
            is_folder = stat.S_ISDIR(os.lstat(path).st_mode)
        except OSError:
            return
        if is_folder:
            self._git_folder(path, REPOSITORY, MAX_DEPTH)
        else:
            self.controls[self._relative(path)] = _file_control(GITFILE, path)

    def _git_folder(self, git: Path, kind: str, depth: int) -> None:
        """A git folder, its redirects, and the modules and worktrees inside it."""
        self.controls[self._relative(git)] = Control(kind, self._code_digest(git))
        for name in REDIRECTS:
            if os.path.lexists(git / name):
                self.controls[self._relative(git / name)] = _file_control(REDIRECT, git / name)
        self._admin_folder(git / "modules", depth, modules=True)
        self._admin_folder(git / "worktrees", depth, modules=False)

    def _admin_folder(self, folder: Path, depth: int, *, modules: bool) -> None:
        """Under `modules/` a repository per (possibly nested) submodule name; under
        `worktrees/` one admin folder per name. A link anywhere here is put away whole."""
        try:
            mode = os.lstat(folder).st_mode
        except OSError:
            return
        if stat.S_ISLNK(mode):
            self.controls[self._relative(folder)] = Control(ADMIN, _entry_digest(folder))
            return
        entries = self._list(folder) if stat.S_ISDIR(mode) else None
        for entry in sorted(entries or [], key=lambda found: found.name):
            path = Path(entry.path)
            if entry.is_symlink():
                self.controls[self._relative(path)] = Control(ADMIN, _entry_digest(path))
            elif not _is_folder(entry):
                continue
            elif depth <= 0 or not modules or _looks_like_repository(path):
                self._git_folder(path, ADMIN, depth - 1)
            else:  # a component of a submodule name with a slash in it
                self._admin_folder(path, depth - 1, modules=True)

    def _code_digest(self, git: Path) -> str:
        """What in a git folder leads git to code: its config and its hooks."""
        digest = hashlib.sha256()
        hooks = git / "hooks"
        digest.update(f"config\0{_entry_digest(git / 'config')}\0".encode())
        digest.update(f"hooks\0{_entry_digest(hooks)}\0".encode())
        if os.path.isdir(hooks) and not os.path.islink(hooks):
            for entry in sorted(self._list(hooks) or [], key=lambda found: found.name):
                digest.update(f"{entry.name}\0{_entry_digest(Path(entry.path))}\0".encode())
        return digest.hexdigest()


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as listing:
        return list(listing)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _looks_like_repository(path: Path) -> bool:
    return any(os.path.lexists(path / name) for name in ("HEAD", "config", "gitdir"))


def _make_searchable(folder: Path) -> bool:
    """Give the owner read, write and search on a folder a tool locked (the harness runs
    as the same user as the tools)."""
    try:
        mode = os.lstat(folder).st_mode
        if not stat.S_ISDIR(mode):
            return False
        os.chmod(folder, stat.S_IMODE(mode) | stat.S_IRWXU)
    except OSError:
        return False
    return True


def _file_control(kind: str, path: Path) -> Control:
    """A `.git` file or link, or a redirect: its digest, and the original when small."""
    try:
        found = os.lstat(path)
        if stat.S_ISLNK(found.st_mode):
            target = os.readlink(path)
            return Control(kind, "link:" + target, os.fsencode(target), link=True)
        if stat.S_ISREG(found.st_mode) and found.st_size <= KEPT_BYTES:
            content = _read(path, KEPT_BYTES + 1)
            if len(content) <= KEPT_BYTES:
                digest = hashlib.sha256(content).hexdigest()
                return Control(kind, f"{digest}:{found.st_mode:o}", content)
    except OSError:
        pass
    return Control(kind, _entry_digest(path))


def _entry_digest(path: Path) -> str:
    """A file's content and mode, a link's target, a folder's mode; "-" when absent."""
    try:
        found = os.lstat(path)
    except OSError:
        return "-"
    if stat.S_ISLNK(found.st_mode):
        try:
            return "link:" + os.readlink(path)
        except OSError:
            return f"link?:{found.st_ctime_ns}"
    if not stat.S_ISREG(found.st_mode):
        kind = "dir" if stat.S_ISDIR(found.st_mode) else "special"
        return f"{kind}:{found.st_mode:o}"
    mark = f"{found.st_mode:o}:{found.st_size}"
    if found.st_size > HASHED_BYTES:  # ctime moves on every write, and no tool can set it
        return f"large:{mark}:{found.st_ctime_ns}"
    try:
        return hashlib.sha256(_read(path, HASHED_BYTES)).hexdigest() + ":" + mark
    except OSError:
        return f"unreadable:{mark}:{found.st_ctime_ns}"


def _read(path: Path, most: int) -> bytes:
    """At most `most` bytes of a regular file, never blocking on a pipe put in its place."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        chunks, left = [], most
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# -- the steps, done ----------------------------------------------------------------------


def _apply(step: Step, workspace: Path, before: GitControls) -> str:
    path = workspace / step.path if step.path != "." else workspace
    why = WHY_REDIRECT if step.kind == REDIRECT else WHY_RUN
    tail = f"{step.what} in the sandbox: {why}"
    if step.action == KEEP:
        return (
            f"left {path} in place although its configuration or hooks changed during the "
            "run: check them before running git in the workspace"
        )
    try:
        if step.action == REMOVE:
            _remove(path)
            return f"removed {path}, {tail}"
        target = _free(workspace / step.target)
        if step.action == DISARM:
            _rename(path / "HEAD", target)
            return (
                f"renamed {path / 'HEAD'} to {target.name}, so that git no longer takes "
                f"{path} for a repository, {tail}"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        _rename(path, target)
        if step.action == RESTORE:
            _put_back(path, before.controls[step.path])
            return (
                f"restored {path} as it was before the run (the sandbox's version is now "
                f"{target.name} beside it), {tail}"
            )
        shown = target.name if target.parent == path.parent else str(target)
        return f"moved {path} to {shown}, {tail}"
    except OSError as error:
        return (
            f"could not put {path} out of git's reach ({error.strerror or error}), {tail}; "
            "remove it before running git in the workspace"
        )


def _free(target: Path) -> Path:
    """`target`, or `target-2`, `-3`, ... when taken."""
    number, found = 2, target
    while os.path.lexists(found):
        found = target.with_name(f"{target.name}-{number}")
        number += 1
    return found


def _rename(source: Path, target: Path) -> None:
    """Rename, first giving the owner write access to a parent a tool made read-only."""
    try:
        os.rename(source, target)
    except PermissionError:
        for folder in {source.parent, target.parent}:
            _make_searchable(folder)
        os.rename(source, target)


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
        return
    try:
        os.unlink(path)  # a link goes, never what it points at
    except PermissionError:
        _make_searchable(path.parent)
        os.unlink(path)


def _put_back(path: Path, control: Control) -> None:
    original = control.original or b""
    if control.link:
        os.symlink(os.fsdecode(original), path)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with contextlib.closing(os.fdopen(fd, "wb")) as file:
        file.write(original)
