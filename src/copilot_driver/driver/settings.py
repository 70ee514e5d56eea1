"""The driver's soft settings, read through the environment table.

Each one (send timeout, log level, log format, routing effort, idle watchdog,
tool-denials guard, SDK loading) is read by its table row (`Variable.soft_value`): a value
that cannot be used means the default and leaves a notice the driver logs at
start, so an ignored value is visible rather than silent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from copilot_driver.driver.quoting import Quote, shorten
from copilot_driver.env import (
    HARNESS_WATCHDOG_MS,
    IDLE_MS,
    LOG_FORMAT,
    LOG_LEVEL,
    MAX_TOOL_DENIALS,
    MODEL_ROUTING,
    ROUTING_EFFORT,
    SAFE_OUTPUTS,
    SDK_LOADING,
    SEND_TIMEOUT_MS,
    value_of,
)
from copilot_driver.variable import (
    LogFormat,
    LogLevel,
    ReasoningEffort,
    SdkLoadingMode,
    Variable,
)


@dataclass(frozen=True)
class SoftSettings:
    send_timeout_ms: int
    log_level: LogLevel
    log_format: LogFormat
    reasoning_effort: ReasoningEffort | None
    idle_ms: int
    max_tool_denials: int
    sdk_loading: SdkLoadingMode


def read_soft_settings(
    env: Mapping[str, str], notices: list[str], *, quote: Quote = shorten
) -> SoftSettings:
    """Every soft setting of `env`; a notice for each value that was ignored."""
    send_timeout_ms = parse_send_timeout_ms(env.get(SEND_TIMEOUT_MS.name), notices, quote=quote)
    log_level = LOG_LEVEL.soft_value(env.get(LOG_LEVEL.name), notices, quote)
    log_format = LOG_FORMAT.soft_value(env.get(LOG_FORMAT.name), notices, quote)
    return SoftSettings(
        send_timeout_ms=send_timeout_ms,
        log_level=cast(LogLevel, log_level),
        log_format=cast(LogFormat, log_format),
        reasoning_effort=parse_routing_effort(env, notices, quote=quote),
        idle_ms=_count(IDLE_MS, env.get(IDLE_MS.name), notices, quote),
        max_tool_denials=parse_max_tool_denials(
            env.get(MAX_TOOL_DENIALS.name), notices, quote=quote
        ),
        sdk_loading=cast(
            SdkLoadingMode, SDK_LOADING.soft_value(env.get(SDK_LOADING.name), notices, quote)
        ),
    )


def parse_send_timeout_ms(raw: str | None, notices: list[str], *, quote: Quote = shorten) -> int:
    """A positive integer number of milliseconds, else the default (spec 4.3)."""
    return _count(SEND_TIMEOUT_MS, raw, notices, quote)


def parse_max_tool_denials(raw: str | None, notices: list[str], *, quote: Quote = shorten) -> int:
    """A positive whole number, else the default 5 (with a notice)."""
    return _count(MAX_TOOL_DENIALS, raw, notices, quote)


def parse_routing_effort(
    env: Mapping[str, str], notices: list[str], *, quote: Quote = shorten
) -> ReasoningEffort | None:
    """gh-aw's routing effort, when routing is on and the SDK accepts the value."""
    if env.get(MODEL_ROUTING.name, "").strip() != "1":
        return None
    # Read stripped, so a blank value is unset and a notice echoes the value alone.
    effort = ROUTING_EFFORT.soft_value(value_of(env, ROUTING_EFFORT), notices, quote)
    return cast(ReasoningEffort | None, effort)


def _count(variable: Variable, raw: str | None, notices: list[str], quote: Quote) -> int:
    value = variable.soft_value(raw, notices, quote)
    assert isinstance(value, int)  # a count's value and its default are whole numbers
    return value


DEFAULT_WATCHDOG_MS = 120_000
"""gh-aw's post-result watchdog, unless the workflow sets it."""
WATCHDOG_RANGE_MS = (50, 600_000)
"""What gh-aw's harness clamps a set `GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS` to."""
BEATS_PER_WATCHDOG = 4
"""Entries per watchdog period of silence: a late or slow write still comes in time."""


def keep_alive_interval_s(env: Mapping[str, str]) -> float | None:
    """Seconds of silence after which the driver says it is still waiting; None when no
    harness watchdog can arm (no safe-outputs file is named). The watchdog's period is
    read as gh-aw's harness reads it: anything but a positive number means the default."""
    if value_of(env, SAFE_OUTPUTS) is None:
        return None
    try:
        watchdog_ms = float(value_of(env, HARNESS_WATCHDOG_MS) or "")
    except ValueError:
        watchdog_ms = DEFAULT_WATCHDOG_MS
    if not math.isfinite(watchdog_ms) or watchdog_ms <= 0:
        watchdog_ms = DEFAULT_WATCHDOG_MS
    low, high = WATCHDOG_RANGE_MS
    return min(high, max(low, watchdog_ms)) / BEATS_PER_WATCHDOG / 1000
