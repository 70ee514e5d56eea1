"""The four file tools the model may call, and their JSON schemas (pure, synchronous).

Every result is a string sent back to the model as a `role: tool` message.
A failing tool never raises: its error becomes the result (`error: ...`),
written so the model can correct itself (an `edit_file` whose `old_str` is
missing or ambiguous says so, the model reads the file again and retries).

- Paths go through `sandbox.locate` (`..`, absolute paths, symlinks and
  hard-linked files are refused). Each tool works on the file descriptors
  `locate` opens beneath the root, never on a path string resolved again,
  so nothing swapped in meanwhile is followed. Writes replace a file's
  content in place (truncate, then write, through the descriptor that
  passed the checks).
- Results longer than `max_result_chars` are cut, with a note saying how
  much was cut (a whole large file could fill the context window).
  `read_file` cuts at a line boundary and says which `start_line` reads
  on; it also takes an optional line range so the model can page. It
  streams the file: a line shows at most `MAX_LINE_CHARS` characters and
  the rest is counted in chunks, never held (`[line truncated: N more
  characters]`), so a multi-gigabyte minified line costs no memory.
- `edit_file` counts overlapping matches too (`aa` in `aaa` is ambiguous),
  names where the matches are, and matches an LF `old_str` against a CRLF
  file.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_driver.adapters.tool_loop.sandbox import PathError, Target, check_regular, locate

MAX_EDIT_BYTES = 10 * 1024 * 1024
"""edit_file holds the whole file in memory twice; larger files are refused."""
_BINARY_SNIFF_BYTES = 8192
_NOTE_RESERVE = 160
"""Room kept for a truncation note, so a cut result still fits its limit."""
_MAX_REPORTED_LINES = 10
MAX_LINE_CHARS = 4_000
"""read_file shows at most this many characters of one line (the rest is counted, not kept)."""
_READ_CHUNK = 64 * 1024
"""How much of an over-long line read_file holds at a time while counting the rest."""


@dataclass(frozen=True)
class ToolOutcome:
    result: str
    """What the model receives (already within the size limit)."""
    is_error: bool = False
    modified: str | None = None
    """The project-relative path of a file this call wrote, if any."""


class ToolError(Exception):
    """Raised inside a tool; becomes an error result for the model."""


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_PATH = {"type": "string", "description": "A path relative to the project root."}

TOOL_DEFINITIONS: list[dict[str, Any]] = [
    _function(
        "read_file",
        "Read a text file of the project. Returns its lines numbered (`   1<TAB>text`). "
        "Long files are cut; use start_line/end_line to read a range.",
        {
            "path": _PATH,
            "start_line": {"type": "integer", "description": "First line to show (1-based)."},
            "end_line": {"type": "integer", "description": "Last line to show (inclusive)."},
        },
        ["path"],
    ),
    _function(
        "write_file",
        "Write a complete file (a new file or a full rewrite); creates missing directories.",
        {"path": _PATH, "content": {"type": "string", "description": "The whole new content."}},
        ["path", "content"],
    ),
    _function(
        "edit_file",
        "Replace one exact piece of text in a file. old_str must occur exactly once: "
        "include enough surrounding lines to make it unique. No line numbers in old_str.",
        {
            "path": _PATH,
            "old_str": {"type": "string", "description": "The exact text to replace."},
            "new_str": {"type": "string", "description": "The text to put in its place."},
        },
        ["path", "old_str", "new_str"],
    ),
    _function(
        "list_directory",
        "List a directory's immediate children, sorted; directories end with `/`.",
        {"path": {**_PATH, "description": "A directory relative to the project root (. = root)."}},
        [],
    ),
]

TOOL_NAMES = tuple(d["function"]["name"] for d in TOOL_DEFINITIONS)


def truncate(text: str, limit: int) -> str:
    """`text` within `limit` characters: cut, with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - _NOTE_RESERVE)
    cut = len(text) - keep
    note = (
        f"\n[truncated: {cut} of {len(text)} characters not shown; "
        f"the tool result limit is {limit} characters]"
    )
    return text[:keep] + note


def parse_arguments(raw: str) -> dict[str, Any]:
    """The model's JSON argument string as an object; ToolError if it is not one."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ToolError(
            f"the arguments are not valid JSON ({exc}); send one JSON object, "
            'e.g. {"path": "README.md"}'
        ) from None
    if not isinstance(value, dict):
        raise ToolError(f"the arguments must be a JSON object, got {type(value).__name__}")
    return value


def path_argument(raw: str) -> str | None:
    """The `path` argument for display (a tool start's summary), if there is one."""
    try:
        value = parse_arguments(raw).get("path")
    except ToolError:
        return None
    return value if isinstance(value, str) else None


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
        start = _optional_int(args, "start_line", minimum=1) or 1
        end = _optional_int(args, "end_line", minimum=1)
        if end is not None and end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        with locate(self.root, _path(args)) as target:
            shown = target.shown
            status = target.lstat()
            if status is not None and stat.S_ISDIR(status.st_mode):
                raise ToolError(f"{shown} is a directory; use list_directory")
            _require_file(status, shown)
            fd, _ = target.open_file(os.O_RDONLY)
            with open(fd, "rb") as raw:
                head = raw.read(_BINARY_SNIFF_BYTES)
                if b"\x00" in head:
                    size = os.fstat(fd).st_size
                    raise ToolError(f"{shown} is a binary file ({size} bytes); it cannot be shown")
                raw.seek(0)
                with io.TextIOWrapper(
                    raw, encoding="utf-8", errors="replace", newline=None
                ) as text:
                    return self._numbered(text, shown, start, end)

    def _numbered(
        self, text: io.TextIOWrapper, shown: str, start: int, end: int | None
    ) -> ToolOutcome:
        budget = self.max_result_chars - _NOTE_RESERVE
        lines: list[str] = []
        used = 0
        total = 0
        stopped_at: int | None = None
        while True:
            number = total + 1
            wanted = start <= number and (end is None or number <= end) and stopped_at is None
            read = _read_line(text, MAX_LINE_CHARS if wanted else 0)
            if read is None:
                break
            total += 1
            if not wanted:
                continue
            content, dropped = read
            prefix = f"{total:>4}\t"
            numbered = prefix + content + _line_note(dropped)
            if used + len(numbered) + 1 > budget:
                if lines:
                    stopped_at = total
                    continue
                keep = max(0, budget - len(prefix) - len(_line_note(len(content) + dropped)))
                dropped += len(content) - keep
                numbered = prefix + content[:keep] + _line_note(dropped)
            lines.append(numbered)
            used += len(numbered) + 1
        if total == 0:
            return ToolOutcome(f"({shown} is empty)")
        if start > total:
            raise ToolError(f"{shown} has {total} lines; start_line {start} is past the end")
        if stopped_at is not None:
            lines.append(
                f"[truncated: lines {start}-{stopped_at - 1} of {total} shown (the tool result "
                f"limit is {self.max_result_chars} characters); read on with "
                f"start_line={stopped_at}]"
            )
        return ToolOutcome("\n".join(lines))

    def write_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = _path(args)
        content = _string(args, "content")
        data = _encode(content, "content")
        with locate(self.root, path, make_parents=True) as target:
            shown = target.shown
            status = target.lstat()
            if status is not None and stat.S_ISDIR(status.st_mode):
                raise ToolError(f"{shown} is a directory; give a file path")
            if status is not None:
                check_regular(status, shown)
            fd, existed = _open_for_writing(target)
            try:
                _replace_content(fd, data)
            finally:
                os.close(fd)
        what = "replaced" if existed else "created"
        return ToolOutcome(
            f"{what} {shown}: {_plural(_line_count(content), 'line')}, "
            f"{_plural(len(data), 'byte')}",
            modified=shown,
        )

    def edit_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = _path(args)
        old = _string(args, "old_str")
        new = _string(args, "new_str")
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
                edited, line = self._edited(fd, opened.st_size, shown, old, new)
                if not writable:
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
                _replace_content(fd, edited)
            finally:
                os.close(fd)
        return ToolOutcome(f"edited {shown}: replaced 1 match at line {line}", modified=shown)

    def _edited(self, fd: int, size: int, shown: str, old: str, new: str) -> tuple[bytes, int]:
        """The file's new content with `old` replaced, and the line of the match."""
        if size > MAX_EDIT_BYTES:
            raise ToolError(
                f"{shown} is {size} bytes, over the {MAX_EDIT_BYTES}-byte edit limit; "
                "use write_file"
            )
        try:
            text = _read_all(fd).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{shown} is not UTF-8 text; use write_file to replace it") from None
        starts = _occurrences(text, old)
        if not starts and "\r\n" in text and "\n" in old and "\r" not in old:
            # The model saw the file with LF line ends (read_file); the file has CRLF.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            starts = _occurrences(text, old)
        if not starts:
            raise ToolError(
                f"old_str was not found in {shown} (0 matches); it must match exactly, "
                "whitespace and indentation included, without line numbers. "
                "read_file it and retry"
            )
        if len(starts) > 1:
            lines = _match_lines(text, starts, _MAX_REPORTED_LINES + 1)
            where = ", ".join(str(n) for n in lines[:_MAX_REPORTED_LINES])
            more = ", ..." if len(lines) > _MAX_REPORTED_LINES else ""
            raise ToolError(
                f"old_str occurs {len(starts)} times in {shown} (at lines {where}{more}); "
                "it must occur exactly once: include more surrounding lines to make it unique"
            )
        at = starts[0]
        edited = _encode(text[:at] + new + text[at + len(old) :], "new_str")
        return edited, text.count("\n", 0, at) + 1

    def list_directory(self, args: dict[str, Any]) -> ToolOutcome:
        if args.get("path") is None:
            args = {**args, "path": "."}
        with locate(self.root, _path(args)) as target:
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


def _path(args: Mapping[str, Any]) -> object:
    if "path" not in args:
        raise ToolError("the path argument is missing")
    return args["path"]


def _string(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        what = "missing" if value is None else f"a {type(value).__name__}, not a string"
        raise ToolError(f"the {name} argument is {what}")
    return value


def _optional_int(args: Mapping[str, Any], name: str, *, minimum: int) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ToolError(f"{name} must be an integer of {minimum} or more, got {value!r}")
    return value


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


def _open_for_writing(target: Target) -> tuple[int, bool]:
    """The file opened for writing, and whether it existed; never truncated yet."""
    for _ in range(3):
        try:
            fd, _status = target.open_file(os.O_WRONLY)
        except FileNotFoundError:
            pass
        else:
            return fd, True
        try:
            fd, _status = target.create_file()
        except FileExistsError:
            continue  # made meanwhile: open it
        return fd, False
    raise ToolError(f"{target.shown} keeps appearing and disappearing; try again")


def _replace_content(fd: int, data: bytes) -> None:
    """Make `data` the whole content of the open file (in place, same file)."""
    os.ftruncate(fd, 0)
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        offset += os.pwrite(fd, view[offset:], offset)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _encode(text: str, argument: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            f"the {argument} argument holds a lone surrogate, which is not valid Unicode text"
        ) from None


def _occurrences(text: str, needle: str) -> list[int]:
    """Start of every match, overlapping ones included (`aa` is in `aaa` twice)."""
    starts = []
    at = text.find(needle)
    while at != -1:
        starts.append(at)
        at = text.find(needle, at + 1)
    return starts


def _match_lines(text: str, starts: list[int], limit: int) -> list[int]:
    """The first `limit` distinct line numbers of the sorted match `starts`, in order.

    Newlines are counted only between consecutive matches: one pass over the text.
    """
    lines: list[int] = []
    line, counted_to = 1, 0
    for start in starts:
        line += text.count("\n", counted_to, start)
        counted_to = start
        if not lines or lines[-1] != line:
            lines.append(line)
            if len(lines) >= limit:
                break
    return lines


def _read_line(text: io.TextIOWrapper, cap: int) -> tuple[str, int] | None:
    """The next line without its newline, cut at `cap` characters, and how many
    characters were cut; None at the end of the file.

    Never holds more than `cap` + `_READ_CHUNK` characters of the line: the rest
    is read on in chunks and only counted.
    """
    first = text.readline(cap) if cap > 0 else text.readline(_READ_CHUNK)
    if not first:
        return None
    if first.endswith("\n"):
        return (first[:-1], 0) if cap > 0 else ("", len(first) - 1)
    content, dropped = (first, 0) if cap > 0 else ("", len(first))
    while chunk := text.readline(_READ_CHUNK):
        if chunk.endswith("\n"):
            dropped += len(chunk) - 1
            break
        dropped += len(chunk)
    return content, dropped


def _line_note(dropped: int) -> str:
    return f" \u2026 [line truncated: {dropped} more characters]" if dropped else ""


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
