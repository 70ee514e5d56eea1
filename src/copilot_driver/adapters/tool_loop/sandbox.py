"""Confining every path the model names to the project root, without following symlinks.

A path is accepted only when it is a non-empty string without NUL bytes,
relative (no leading `/`), and has no `..` component at all, even one that
would stay inside (`a/../b`): the model has no reason to write one, and
refusing it keeps the rule easy to state to the model. These checks are
pure (`split_path`).

Then the path is opened, not resolved: `locate` opens the root as a
directory file descriptor and walks down one component at a time, each
with `openat(parent_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW)`, closing
the parent once the child is open. The last component is never opened by
the walk: the tools open it themselves through `Target`, relative to the
open parent directory and with `O_NOFOLLOW`, and then work on that file
descriptor only (read, write, `fstat`, `scandir`); an `lstat` of the name
before the open only picks a clearer message, every check that matters
is repeated on the open descriptor. No path is resolved from the root
again after a check, so there is no window between the check and the
use: a directory swapped for a symlink after the walk has opened it does
not move the open descriptor, and a symlink put in place before the walk
reaches it makes `openat` fail. With `..` refused and no symlink followed,
every directory the walk opens is a descendant of the root's descriptor.

A symlink anywhere in the path, pointing inside or outside, dangling or
looping, is refused with a message that says so: following one inside the
project is never needed (the model can name the real path), and telling a
harmless symlink from a dangerous one needs a resolution that could race.

A regular file with more than one hard link is refused for reading and
writing: another of its names may be outside the project (anyone who can
write the project can link a file of theirs into it), and neither the
name nor the descriptor tells where the other names are. The check is
made on the open descriptor (`fstat`), before any byte is written.

Why a walk rather than `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`:
the guarantee is the same here (with `..` refused and symlinks not
followed, `RESOLVE_BENEATH` has nothing more to catch), the walk also
creates missing parent directories for `write_file` (`mkdirat` relative
to the open parent) and names the component that is a symlink, and it
works wherever `openat2` is missing or filtered by a seccomp profile, so
there is one code path instead of a primary and a rarely run fallback.
It costs one system call per component.

What stays outside this guarantee: the root's own path (the operator's
choice, opened by name, with `O_NOFOLLOW` on its last component), and a
directory that another process moves out of the project while a tool
holds it open (the tool then acts on that moved directory, which holds
the project's own files, not on whatever replaced it).

Errors are `PathError` whose message is written for the model: it is
sent back as the tool's result so the model can correct itself. An
`OSError` raised inside `locate` is re-raised with the project-relative
path as its file name, so the model never sees the root's absolute path.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from copilot_driver.errors import CopilotDriverError

_WALK = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A directory on the way: only looked up beneath (O_PATH needs no read permission)."""
_LIST = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A directory to list: readable, for `os.scandir(fd)`."""
_FILE = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
"""Added to every file open: O_NONBLOCK keeps a FIFO swapped in at the last
moment from blocking the open; it changes nothing for a regular file."""
_NEW_FILE_MODE = 0o666
_NEW_DIR_MODE = 0o777
"""Both narrowed by the umask, as `open()` and `Path.mkdir()` do."""


class PathError(CopilotDriverError, ValueError):
    """A path the model may not use; the message tells the model why."""


def resolve_root(root: Path) -> Path:
    """The root every path is opened beneath: absolute, symlinks resolved."""
    return root.resolve(strict=True)


def split_path(relative: object) -> tuple[str, ...]:
    """The components of `relative` (`.` and empty ones dropped; `()` is the root).

    Raises PathError for anything that is not a plain relative path.
    """
    if not isinstance(relative, str):
        raise PathError(f"path must be a string, got {type(relative).__name__}")
    if not relative.strip():
        raise PathError("path is empty; give a path relative to the project root")
    if "\x00" in relative:
        raise PathError(f"path {relative!r} contains a NUL byte")
    pure = PurePosixPath(relative)
    if pure.is_absolute():
        raise PathError(
            f"absolute path {relative!r} rejected: give a path relative to the project root"
        )
    if ".." in pure.parts:
        raise PathError(f"path traversal rejected: {relative!r} contains '..'")
    try:
        os.fsencode(relative)
    except UnicodeEncodeError as exc:  # e.g. a lone surrogate from the model's JSON
        raise PathError(f"path {relative!r} cannot be used: {exc}") from None
    return pure.parts


def display(parts: Sequence[str]) -> str:
    """How a path is named to the model and in events: relative, `/`-separated."""
    return "/".join(parts) or "."


def symlink_refusal(shown: str, link: str) -> PathError:
    where = "is a symlink" if link == shown else f"goes through the symlink {link!r}"
    return PathError(
        f"path {shown!r} {where}; symlinks are not followed (one can lead outside the "
        "project root): use the real path of the file or directory inside the project"
    )


def check_regular(status: os.stat_result, shown: str) -> None:
    """PathError unless `status` is a regular file with a single name.

    Anything else than a plain file is refused (a FIFO would block the tool
    forever), and so is a hard-linked file (another name may be outside).
    """
    if not stat.S_ISREG(status.st_mode):
        raise PathError(f"{shown} is not a regular file (a device, socket or pipe)")
    if status.st_nlink > 1:
        raise PathError(
            f"{shown} has {status.st_nlink} hard links (the same file under other names, "
            "which may be outside the project root); hard-linked files are neither read "
            "nor written: use another file"
        )


@dataclass(frozen=True)
class Target:
    """A path the model named, its parent directory held open beneath the root.

    Every method acts relative to `parent_fd` and never follows a symlink;
    the descriptors it returns are the caller's to close.
    """

    shown: str
    """The path as the model is told it (`display`)."""
    name: str | None
    """The last component; None when the path is the root itself."""
    parent_fd: int | None
    """The open directory holding `name` (for the root, the root itself);
    None when a directory on the way does not exist."""

    def lstat(self) -> os.stat_result | None:
        """The status of the path itself (not followed); None when it does not exist.

        PathError when it is a symlink.
        """
        if self.parent_fd is None:
            return None
        if self.name is None:
            return os.fstat(self.parent_fd)
        try:
            status = os.stat(self.name, dir_fd=self.parent_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(status.st_mode):
            raise symlink_refusal(self.shown, self.shown)
        return status

    def open_file(self, flags: int) -> tuple[int, os.stat_result]:
        """The existing regular file, opened with `flags` (O_RDONLY, O_RDWR, O_WRONLY).

        Never truncates on open: the hard-link check must come before any
        change. FileNotFoundError when it does not exist.
        """
        name, parent = self._file_name()
        try:
            fd = os.open(name, flags | _FILE, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise symlink_refusal(self.shown, self.shown) from None
            raise
        return fd, self._checked(fd)

    def create_file(self) -> tuple[int, os.stat_result]:
        """A new, empty regular file, open for writing; FileExistsError if the name is taken
        (by anything, a symlink included)."""
        name, parent = self._file_name()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE
        fd = os.open(name, flags, _NEW_FILE_MODE, dir_fd=parent)
        return fd, self._checked(fd)

    def open_directory(self) -> int:
        """The directory, open for listing (`os.scandir(fd)`)."""
        if self.parent_fd is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        name = "." if self.name is None else self.name
        try:
            return os.open(name, _LIST, dir_fd=self.parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                self.lstat()  # a symlink is refused as such
            raise

    def _file_name(self) -> tuple[str, int]:
        if self.parent_fd is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        if self.name is None:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        return self.name, self.parent_fd

    def _checked(self, fd: int) -> os.stat_result:
        """The status of the open file, which is what the tool acts on; the fd
        is closed when it is refused."""
        try:
            status = os.fstat(fd)
            check_regular(status, self.shown)
        except BaseException:
            os.close(fd)
            raise
        return status


@contextmanager
def locate(root: Path, relative: object, *, make_parents: bool = False) -> Iterator[Target]:
    """`relative` beneath `root` (already `resolve_root`-ed), its parent directory open.

    Directories on the way are opened one by one without following
    symlinks; with `make_parents`, missing ones are created (as `write_file`
    needs). PathError for a path that is malformed or goes through a
    symlink. OSErrors raised here or in the `with` body name the path as the
    model gave it, relative to the root.
    """
    parts = split_path(relative)
    shown = display(parts)
    held: int | None = None
    try:
        held = os.open(root, _WALK)
        parent: int | None = held
        for depth in range(len(parts) - 1):
            parent = _open_directory(held, parts, depth, shown, create=make_parents)
            if parent is None:
                break
            os.close(held)
            held = parent
        yield Target(shown, parts[-1] if parts else None, parent)
    except OSError as exc:
        if exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, shown) from None
    finally:
        if held is not None:
            os.close(held)


def _open_directory(
    parent: int, parts: Sequence[str], depth: int, shown: str, *, create: bool
) -> int | None:
    """One step of the walk: the directory `parts[depth]` in `parent`, opened.

    None when it does not exist and is not to be created; PathError when
    it is a symlink; NotADirectoryError when it is something else.
    """
    name = parts[depth]
    for _ in range(3):
        try:
            return os.open(name, _WALK, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            try:
                status = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone since the open: look again
            if stat.S_ISLNK(status.st_mode):
                raise symlink_refusal(shown, display(parts[: depth + 1])) from None
            raise
        # Made meanwhile, or a symlink: the next open tells which.
        with suppress(FileExistsError):
            os.mkdir(name, _NEW_DIR_MODE, dir_fd=parent)
    # Three rounds of appearing and vanishing: someone else is busy with this name.
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
