"""The four file tools the model may call, and their JSON schemas (pure, synchronous).

Every result is a string sent back to the model as a `role: tool` message.
A failing tool never raises: its error becomes the result (`error: ...`),
written so the model can correct itself (the seed's error recovery: an
`edit_file` whose `old_str` is missing or ambiguous says so, the model
reads the file again and retries).

Differences from the seed:

- Paths go through `sandbox.resolve_path` (absolute paths and symlinks out
  of the project are refused too, not only `..`).
- Results longer than `max_result_chars` are cut, with a note saying how
  much was cut (the seed sends everything, which can fill the context
  window). `read_file` cuts at a line boundary and says which `start_line`
  reads on; it also takes an optional line range so the model can page.
- `edit_file` counts overlapping matches too (`aa` in `aaa` is ambiguous),
  names where the matches are, and matches an LF `old_str` against a CRLF
  file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_driver.adapters.tool_loop.sandbox import PathError, display_path, resolve_path

MAX_EDIT_BYTES = 10 * 1024 * 1024
"""edit_file holds the whole file in memory twice; larger files are refused."""
_BINARY_SNIFF_BYTES = 8192
_NOTE_RESERVE = 160
"""Room kept for a truncation note, so a cut result still fits its limit."""
_MAX_REPORTED_LINES = 10


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
    """The `path` argument for display (the seed's args_summary), if there is one."""
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
        path, shown = self._path(args)
        start = _optional_int(args, "start_line", minimum=1) or 1
        end = _optional_int(args, "end_line", minimum=1)
        if end is not None and end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; use list_directory")
        _regular_file(path, shown, must_exist=True)
        with path.open("rb") as raw:
            head = raw.read(_BINARY_SNIFF_BYTES)
        if b"\x00" in head:
            size = path.stat().st_size
            raise ToolError(f"{shown} is a binary file ({size} bytes); it cannot be shown")
        budget = self.max_result_chars - _NOTE_RESERVE
        lines: list[str] = []
        used = 0
        total = 0
        stopped_at: int | None = None
        with path.open(encoding="utf-8", errors="replace", newline=None) as text:
            for total, line in enumerate(text, start=1):
                if total < start or (end is not None and total > end) or stopped_at:
                    continue
                content = line.removesuffix("\n")
                numbered = f"{total:>4}\t{content}"
                if used + len(numbered) + 1 > budget:
                    if lines:
                        stopped_at = total
                        continue
                    extra = len(numbered) - budget
                    numbered = numbered[:budget] + f" [... {extra} more characters on this line]"
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
        path, shown = self._path(args)
        content = _string(args, "content")
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; give a file path")
        existed = _regular_file(path, shown, must_exist=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _encode(content, "content")
        path.write_bytes(data)
        what = "replaced" if existed else "created"
        return ToolOutcome(
            f"{what} {shown}: {_plural(_line_count(content), 'line')}, "
            f"{_plural(len(data), 'byte')}",
            modified=shown,
        )

    def edit_file(self, args: dict[str, Any]) -> ToolOutcome:
        path, shown = self._path(args)
        old = _string(args, "old_str")
        new = _string(args, "new_str")
        if not old:
            raise ToolError("old_str is empty; give the exact text to replace")
        if old == new:
            raise ToolError("old_str and new_str are the same; nothing would change")
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; give a file path")
        if not path.exists():
            raise ToolError(f"{shown} does not exist; use write_file to create it")
        _regular_file(path, shown, must_exist=True)
        size = path.stat().st_size
        if size > MAX_EDIT_BYTES:
            raise ToolError(
                f"{shown} is {size} bytes, over the {MAX_EDIT_BYTES}-byte edit limit; "
                "use write_file"
            )
        try:
            text = path.read_bytes().decode("utf-8")
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
            lines = sorted({text.count("\n", 0, s) + 1 for s in starts})
            where = ", ".join(str(n) for n in lines[:_MAX_REPORTED_LINES])
            more = ", ..." if len(lines) > _MAX_REPORTED_LINES else ""
            raise ToolError(
                f"old_str occurs {len(starts)} times in {shown} (at lines {where}{more}); "
                "it must occur exactly once: include more surrounding lines to make it unique"
            )
        at = starts[0]
        path.write_bytes(_encode(text[:at] + new + text[at + len(old) :], "new_str"))
        line = text.count("\n", 0, at) + 1
        return ToolOutcome(f"edited {shown}: replaced 1 match at line {line}", modified=shown)

    def list_directory(self, args: dict[str, Any]) -> ToolOutcome:
        if args.get("path") is None:
            args = {**args, "path": "."}
        path, shown = self._path(args)
        if not path.is_dir():
            what = "does not exist" if not path.exists() else "is not a directory"
            raise ToolError(f"{shown} {what}")
        names = []
        with os.scandir(path) as entries:
            for entry in entries:
                names.append(entry.name + ("/" if _is_dir(entry) else ""))
        if not names:
            return ToolOutcome(f"({shown} is an empty directory)")
        return ToolOutcome("\n".join(sorted(names)))

    def _os_error(self, exc: OSError) -> str:
        """The error as the model should see it: paths relative to the project."""
        message = exc.strerror or str(exc)
        if isinstance(exc.filename, str):
            name = Path(exc.filename)
            shown = name.relative_to(self.root).as_posix() if name.is_relative_to(self.root) else ""
            if shown:
                message += f": {shown}"
        return message

    # -- argument helpers --------------------------------------------------

    def _path(self, args: Mapping[str, Any]) -> tuple[Path, str]:
        if "path" not in args:
            raise ToolError("the path argument is missing")
        path = resolve_path(self.root, args["path"])
        return path, display_path(self.root, path)


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


def _regular_file(path: Path, shown: str, *, must_exist: bool) -> bool:
    """Whether `path` exists; ToolError when it is missing (and must exist) or is
    something else than a plain file (a FIFO would block the tool forever)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if must_exist:
            raise ToolError(f"{shown} does not exist") from None
        return False
    if not stat.S_ISREG(mode):
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe)")
    return True


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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
