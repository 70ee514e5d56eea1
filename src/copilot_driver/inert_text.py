"""Text from a run (the model's answer, a tool's output) made inert where it is shown. Pure.

Two readers act on what this project prints besides people:
- a terminal acts on control characters: ESC sequences move the cursor,
  rewrite earlier lines, set the clipboard (OSC 52) or hide a link (OSC 8);
  a lone CR overwrites the line it ends. Every C0 control but TAB and LF (and
  CR before LF) becomes its Unicode control picture (U+2400 + code: ESC is
  `␛`, BEL `␇`); DEL and the C1 controls, which have none, are spelled
  `\\u007f` ... `\\u009f`, as JSON escapes them (a JSON line keeps its value).
- the GitHub Actions runner reads a step's stdout and stderr for workflow
  commands (actions/runner `ActionCommand`): a line that starts with `::`
  after whitespace (`TryParseV2`, after `TrimStart`) or that holds `##[`
  anywhere (`TryParse`, the older form). Text made of many lines, such as
  the answer, is printed under Actions between `::stop-commands::TOKEN` and
  `::TOKEN::` when it holds such a line, with a fresh unguessable token that
  is not in the text (GitHub's way to print untrusted text): the runner shows
  every line and acts on none. Outside Actions nothing is added, so
  `answer=$(...)` captures the answer itself. A log line on stderr
  (`inert_line`, `inert_log`) has its `##[` spelled `##\\u005b` instead, and
  a record's line that would start with `::` starts with `\\::`.
"""

from __future__ import annotations

import re
import secrets

_CONTROLS = re.compile(r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_COMMAND_LINE = re.compile(r"^[^\S\n]*::|##\[", re.MULTILINE)
"""What the runner reads as a command: the runner splits lines at LF (and CRLF, and
a lone CR, which `visible_controls` removes first); `TrimStart` strips what
`str.isspace` calls whitespace (a few more here, which only wrap a little more)."""
_WRAPPED = re.compile(r"\A::stop-commands::([0-9a-f]{32})\n(.*)\n::\1::\n?\Z", re.DOTALL)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return chr(0x2400 + code) if code < 0x20 else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """`text` with every control character a terminal would act on made visible."""
    return _CONTROLS.sub(_visible, text)


def holds_workflow_command(text: str) -> bool:
    """Whether the Actions runner could read a line of `text` as a workflow command."""
    return _COMMAND_LINE.search(text) is not None


def inert(text: str, *, in_actions: bool) -> str:
    """`text` as printed for a terminal and, `in_actions`, for the runner (see above)."""
    shown = visible_controls(text)
    if not in_actions or not holds_workflow_command(shown):
        return shown
    token = secrets.token_hex(16)
    while token in shown:  # the text must not be able to resume commands
        token = secrets.token_hex(16)
    ending = "" if shown.endswith("\n") else "\n"
    return f"::stop-commands::{token}\n{shown}{ending}::{token}::\n"


def unwrapped(text: str) -> str:
    """`text` without the stop-commands wrapping `inert` put around it (the harness
    re-wraps the driver's answer itself, and keeps it plain in its step output)."""
    found = _WRAPPED.match(text)
    return found.group(2) + "\n" if found else text


def inert_line(line: str) -> str:
    """One line quoted on stderr: controls visible, and `##[` (which the runner finds
    anywhere in a line) spelled `##\\u005b`, so a JSON line decodes to the same value.
    A line starting with `::` is left to its writer: the driver's annotations are
    meant; a log line starts with its prefix or `{`."""
    return visible_controls(line).replace("##[", "##\\u005b")


_V2_START = re.compile(r"^([^\S\n]*)::", re.MULTILINE)


def inert_log(text: str) -> str:
    """A log record of one's own, of one line or several (a traceback), that may quote
    model or tool text: as `inert_line`, and a line that would start with `::` starts
    with `\\::` instead."""
    return _V2_START.sub(r"\1\\::", inert_line(text))
