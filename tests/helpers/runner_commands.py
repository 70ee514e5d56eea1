"""The workflow commands the GitHub Actions runner would act on in a step's output.

A port of actions/runner's reading (`ActionCommand.TryParseV2`, `TryParse`,
`ActionCommandManager.TryProcessCommand`): the output is split into lines as
.NET's `ReadLine` splits it (LF, CRLF, lone CR); a line is a V2 command when,
after `TrimStart`, it starts with `::`, its command info running to the next
`::`; a V1 command when it holds `##[`, its command info running to the next
`]`. The command info's first word must be a registered command (compared
ignoring case). `::stop-commands::TOKEN` stops all processing until a command
named TOKEN.

The runner's `StartsWith` and `IndexOf` on strings are culture-sensitive: with
ICU, characters such as U+200B or a control character weigh nothing and are
skipped while matching `::` or `##[` (its substrings are still cut at
ordinal offsets). `culture=True` models that, skipping `IGNORABLE`.
"""

from __future__ import annotations

import re
import unicodedata

REGISTERED = frozenset(
    {
        "stop-commands",
        "set-env",
        "set-output",
        "save-state",
        "add-mask",
        "add-path",
        "add-matcher",
        "remove-matcher",
        "debug",
        "warning",
        "error",
        "notice",
        "group",
        "endgroup",
        "echo",
    }
)
_DOTNET_WHITESPACE = "".join(
    chr(c) for c in range(0x110000) if chr(c).isspace() and not 0x1C <= c <= 0x1F
)
"""`Char.IsWhiteSpace`: Python's whitespace but the four separators U+001C-U+001F."""
IGNORABLE = "".join(
    chr(c)
    for c in range(0x110000)
    if unicodedata.category(chr(c)) in ("Cc", "Cf") and chr(c) not in _DOTNET_WHITESPACE
)
"""Controls and format characters: what ICU's collation skips (a superset is fine)."""
_IGN = f"[{re.escape(IGNORABLE)}]*"
_CULTURE_V2_START = re.compile(f"{_IGN}:{_IGN}:")
_CULTURE_V2_KEY = re.compile(f":{_IGN}:")
_CULTURE_V1_PREFIX = re.compile(rf"#{_IGN}#{_IGN}\[")


def dotnet_lines(output: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", output)


def _v2(line: str, registered: set[str], culture: bool) -> tuple[str, str] | None:
    message = line.lstrip(_DOTNET_WHITESPACE)
    if culture:
        if not _CULTURE_V2_START.match(message):
            return None
        key = _CULTURE_V2_KEY.search(message, 2)
        if key is None:
            return None
        end = key.start()
    else:
        if not message.startswith("::"):
            return None
        end = message.find("::", 2)
        if end < 0:
            return None
    name = message[2:end].split(" ", 1)[0].lower()
    return (name, message[end + 2 :]) if name in registered else None


def _v1(line: str, registered: set[str], culture: bool) -> tuple[str, str] | None:
    if culture:
        found = _CULTURE_V1_PREFIX.search(line)
        start = found.start() if found else -1
    else:
        start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name = line[start + 3 : end].split(" ", 1)[0].lower()
    return (name, line[end + 1 :]) if name in registered else None


def commands_run(output: str, *, culture: bool = False) -> list[tuple[str, str]]:
    """(command, data) for each command the runner would act on, stop-commands and
    its resume left out."""
    registered = set(REGISTERED)
    stopped_by: str | None = None
    acted: list[tuple[str, str]] = []
    for line in dotnet_lines(output):
        command = _v2(line, registered, culture) or _v1(line, registered, culture)
        if command is None:
            continue
        name, data = command
        if stopped_by is not None:
            if name == stopped_by:
                registered.discard(stopped_by)
                stopped_by = None
        elif name == "stop-commands":
            stopped_by = data.lower()
            registered.add(stopped_by)
        else:
            acted.append(command)
    return acted
