"""One row of the environment table (`copilot_driver.env`), and how a soft setting
is read from it.

A soft setting (a count such as a timeout, or one of a few choices such as a log
level) never stops a run: a value that cannot be read means the row's default,
and the reader leaves a notice saying so (the driver logs it as
`config.fallback`), so an ignored value is visible rather than silent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

LogLevel = Literal["none", "error", "warning", "info", "debug", "all"]
LogFormat = Literal["json", "text"]
SdkLoadingMode = Literal["auto", "eager"]
LOG_LEVELS: tuple[LogLevel, ...] = ("none", "error", "warning", "info", "debug", "all")
DEFAULT_LOG_LEVEL: LogLevel = "warning"
ReasoningEffort = Literal["low", "medium", "high", "xhigh", "max"]
REASONING_EFFORTS: tuple[ReasoningEffort, ...] = ("low", "medium", "high", "xhigh", "max")

DEFAULT_SEND_TIMEOUT_MS = 600_000
MAX_SEND_TIMEOUT_MS = 2**31 - 1
"""Larger values are treated as absurd (the largest timer a Node driver can set)."""
DEFAULT_MAX_TOOL_DENIALS = 5
DEFAULT_IDLE_MS = 30_000

Kind = Literal["text", "count", "choice"]
_POSITIVE_INT = re.compile(r"[1-9][0-9]*")


@dataclass(frozen=True)
class Variable:
    name: str
    summary: str
    """One line for `--help`."""
    rule: str
    """The full rule, for the table in docs/configuration.md."""
    required: bool = False
    when_missing: str = ""
    """For a required variable: what to set it to, said after "NAME is not set: "."""
    secret: bool = False
    """Masked in every log, event, output and error; never echoed."""
    kind: Kind = "text"
    """How a soft setting is read: a whole number from 1 to `limit` (`count`) or one of
    `choices` in any case (`choice`); `text` is not a soft setting."""
    default: int | str | None = None
    limit: int = 0
    unit: str = ""
    """What a count counts, for its notice ("milliseconds")."""
    choices: tuple[str, ...] = ()
    fallback: str = ""
    """The notice's words for `default` when they are not the value itself."""
    unreadable: int | str | None = None
    """What a value that cannot be read means, when not `default` (the safe choice)."""

    def soft_value(
        self, raw: str | None, notices: list[str], quote: Callable[[str], str]
    ) -> int | str | None:
        """`raw` read as this soft setting. Unset or empty means `default`; anything
        else that is not a count up to `limit` or one of `choices` means `unreadable`
        (else `default`), with a notice echoing the value through `quote`."""
        if self.kind == "text":
            raise TypeError(f"{self.name} is not a soft setting")
        if raw is None or raw == "":
            return self.default
        if self.kind == "count":
            value = raw.strip().lstrip("0") or "0"  # `00042` is 42, as the reference reads it
            # The length check comes first: int() refuses strings of thousands of digits.
            digits_fit = len(value) <= len(str(self.limit))
            if digits_fit and _POSITIVE_INT.fullmatch(value) and int(value) <= self.limit:
                return int(value)
            unit = f" of {self.unit}" if self.unit else ""
            expected = f"a positive whole number{unit} up to {self.limit}"
        else:
            value = raw.strip().lower()
            for choice in self.choices:
                if value == choice:
                    return choice
            expected = (
                " or ".join(self.choices)
                if len(self.choices) == 2
                else f"one of {', '.join(self.choices)}"
            )
        meaning = self.default if self.unreadable is None else self.unreadable
        using = self.fallback or meaning
        notices.append(f"{self.name}={quote(raw)!r} is not {expected}; using {using}")
        return meaning
