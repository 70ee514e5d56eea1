"""Confining every path the model names to the project root (pure).

The seed's `safe_path` only refuses `..` components, so an absolute path
(`/etc/passwd` joined to a root is `/etc/passwd`) or a symlink inside the
project that points out of it escapes. Here a path is accepted only when:

- it is a non-empty string without NUL bytes;
- it is relative (no leading `/`) and has no `..` component at all, even one
  that would stay inside (`a/../b`): the model has no reason to write one,
  and refusing it keeps the rule easy to state to the model;
- its real location, with every symlink followed (also a dangling one, for a
  file about to be created), is the root or inside it.

The check runs on the resolved path, and the tools then act on that
resolved path, so a symlink is never followed again after the check. What
remains is a race with another process swapping a directory for a symlink
between the check and the use; the model cannot do that (it has no tool
that makes symlinks), and nothing else is meant to write the workspace
during a turn.

Errors are `PathError` whose message is written for the model: it is
sent back as the tool's result so the model can correct itself.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath


class PathError(ValueError):
    """A path the model may not use; the message tells the model why."""


def resolve_root(root: Path) -> Path:
    """The root as every check compares against: absolute, symlinks resolved."""
    return root.resolve(strict=True)


def resolve_path(root: Path, relative: object) -> Path:
    """The real path of `relative` under `root` (already `resolve_root`-ed).

    Raises PathError for anything that is, or might lead, outside.
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
        resolved = (root / pure).resolve(strict=False)
    except RuntimeError:  # Python 3.11 reports a symlink loop this way
        raise PathError(f"path {relative!r} runs into a symlink loop") from None
    except (OSError, ValueError) as exc:  # e.g. a name the file system cannot encode
        raise PathError(f"path {relative!r} cannot be used: {exc}") from None
    if resolved != root and not resolved.is_relative_to(root):
        raise PathError(
            f"path {relative!r} resolves outside the project root (through a symlink); "
            "only files inside the project can be used"
        )
    return resolved


def display_path(root: Path, resolved: Path) -> str:
    """How a resolved path is named to the model and in events: relative, `/`-separated."""
    return resolved.relative_to(root).as_posix()
