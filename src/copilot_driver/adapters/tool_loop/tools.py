"""The four file tools the model may call, bound to one project root (pure, synchronous).

Every result is a string sent back to the model as a `role: tool` message.
A failing tool never raises: its error becomes the result (`error: ...`),
written so the model can correct itself (an `edit_file` whose `old_str` is
missing or ambiguous says so, the model reads the file again and retries).

- Paths go through `sandbox.locate` (`..`, absolute paths, symlinks and
  hard-linked files are refused). Each tool works on the file descriptors
  `locate` opens beneath the root, never on a path string resolved again,
  so nothing swapped in meanwhile is followed. Writes replace a file's
  content in place (file_writes.py).
- Results longer than `max_result_chars` are cut, with a note saying how
  much was cut (a whole large file could fill the context window).
  `read_file` cuts at a line boundary and says which `start_line` reads
  on; it also takes an optional line range so the model can page, and it
  streams the file (line_reader.py).
- `edit_file` wants exactly one match of `old_str` (file_writes.py).

The tools' schemas, their arguments and results are in tool_calls.py.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from copilot_driver.adapters.tool_loop.file_writes import (
    edited_content,
    encode,
    open_for_writing,
    replace_content,
)
from copilot_driver.adapters.tool_loop.line_reader import numbered_lines
from copilot_driver.adapters.tool_loop.sandbox import PathError, Target, check_regular, locate
from copilot_driver.adapters.tool_loop.tool_calls import (
    TOOL_NAMES,
    ToolError,
    ToolOutcome,
    optional_int,
    parse_arguments,
    path_value,
    string_argument,
    truncate,
)


class Toolbox:
    """The tools, bound to one project root and one result limit."""

    def __init__(self, root: Path, *, max_result_chars: int) -> None:
        self.root = root
        """Already resolved (`sandbox.resolve_root`): every check compares against it."""
        self.max_result_chars = max_result_chars
        self._tools: dict[str, Callable[[dict[str, Any]], ToolOutcome]] = {
            "read_file": self.read_file,
            "write_file": self.write_file,
            "edit_file": self.edit_file,
            "list_directory": self.list_directory,
        }

    def execute(self, name: str, arguments: str) -> ToolOutcome:
        """Run one call; any failure is an error result, never an exception."""
        tool = self._tools.get(name)
        if tool is None:
            outcome = ToolOutcome(
                f"unknown tool {name!r}; the tools are: {', '.join(TOOL_NAMES)}", is_error=True
            )
        else:
            try:
                outcome = tool(parse_arguments(arguments))
            except (ToolError, PathError) as exc:
                outcome = ToolOutcome(str(exc), is_error=True)
            except OSError as exc:
                outcome = ToolOutcome(self._os_error(exc), is_error=True)
            except Exception as exc:  # a tool bug must not end the turn: the model is told
                outcome = ToolOutcome(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
        result = f"error: {outcome.result}" if outcome.is_error else outcome.result
        return ToolOutcome(
            truncate(result, self.max_result_chars), outcome.is_error, outcome.modified
        )

    # -- the tools ---------------------------------------------------------

    def read_file(self, args: dict[str, Any]) -> ToolOutcome:
        start = optional_int(args, "start_line", minimum=1) or 1
        end = optional_int(args, "end_line", minimum=1)
        if end is not None and end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        with locate(self.root, path_value(args)) as target:
            shown = target.shown
            status = target.lstat()
            if status is not None and stat.S_ISDIR(status.st_mode):
                raise ToolError(f"{shown} is a directory; use list_directory")
            _require_file(status, shown)
            fd, _ = target.open_file(os.O_RDONLY)
            return numbered_lines(fd, shown, start, end, self.max_result_chars)

    def write_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = path_value(args)
        content = string_argument(args, "content")
        data = encode(content, "content")
        with locate(self.root, path, make_parents=True) as target:
            shown = target.shown
            status = target.lstat()
            if status is not None and stat.S_ISDIR(status.st_mode):
                raise ToolError(f"{shown} is a directory; give a file path")
            if status is not None:
                check_regular(status, shown)
            fd, existed = open_for_writing(target)
            try:
                replace_content(fd, data)
            finally:
                os.close(fd)
        what = "replaced" if existed else "created"
        return ToolOutcome(
            f"{what} {shown}: {_plural(_line_count(content), 'line')}, "
            f"{_plural(len(data), 'byte')}",
            modified=shown,
        )

    def edit_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = path_value(args)
        old = string_argument(args, "old_str")
        new = string_argument(args, "new_str")
        if not old:
            raise ToolError("old_str is empty; give the exact text to replace")
        if old == new:
            raise ToolError("old_str and new_str are the same; nothing would change")
        with locate(self.root, path) as target:
            shown = target.shown
            status = _lstat_or_missing(target)
            if status is not None and stat.S_ISDIR(status.st_mode):
                raise ToolError(f"{shown} is a directory; give a file path")
            if status is None:
                raise ToolError(f"{shown} does not exist; use write_file to create it")
            check_regular(status, shown)
            writable = True
            try:
                fd, opened = target.open_file(os.O_RDWR)
            except PermissionError:
                # Readable but not writable: the match is still checked first, as
                # the model learns more from "not found" than from the permission.
                fd, opened = target.open_file(os.O_RDONLY)
                writable = False
            try:
                edited, line = edited_content(fd, opened.st_size, shown, old, new)
                if not writable:
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
                replace_content(fd, edited)
            finally:
                os.close(fd)
        return ToolOutcome(f"edited {shown}: replaced 1 match at line {line}", modified=shown)

    def list_directory(self, args: dict[str, Any]) -> ToolOutcome:
        if args.get("path") is None:
            args = {**args, "path": "."}
        with locate(self.root, path_value(args)) as target:
            shown = target.shown
            status = _lstat_or_missing(target)
            if status is None or not stat.S_ISDIR(status.st_mode):
                what = "does not exist" if status is None else "is not a directory"
                raise ToolError(f"{shown} {what}")
            fd = target.open_directory()
            try:
                with os.scandir(fd) as entries:
                    names = [entry.name + ("/" if _is_dir(entry) else "") for entry in entries]
            finally:
                os.close(fd)
        if not names:
            return ToolOutcome(f"({shown} is an empty directory)")
        return ToolOutcome("\n".join(sorted(names)))

    def _os_error(self, exc: OSError) -> str:
        """The error as the model should see it: paths relative to the project.

        `sandbox.locate` names its errors by the project-relative path; an
        absolute name is shown only when it is inside the project.
        """
        message = exc.strerror or str(exc)
        if isinstance(exc.filename, str) and exc.filename:
            name = Path(exc.filename)
            if not name.is_absolute():
                message += f": {exc.filename}"
            elif name.is_relative_to(self.root):
                message += f": {name.relative_to(self.root).as_posix()}"
        return message


def _require_file(status: os.stat_result | None, shown: str) -> None:
    """ToolError when the path is missing; PathError when it is not a plain file."""
    if status is None:
        raise ToolError(f"{shown} does not exist")
    check_regular(status, shown)


def _lstat_or_missing(target: Target) -> os.stat_result | None:
    """`target.lstat()`, with a file where a directory should be counted as missing
    (as `Path.exists()` does, which edit_file and list_directory answer by)."""
    try:
        return target.lstat()
    except NotADirectoryError:
        return None


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """A directory, not a symlink to one: the tools would refuse to follow it."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
