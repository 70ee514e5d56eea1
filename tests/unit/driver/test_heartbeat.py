"""The keep-alive under gh-aw's harness: when it beats, and how often."""

from __future__ import annotations

import asyncio
import time

import pytest

from copilot_driver.driver.heartbeat import Heartbeat
from copilot_driver.driver.settings import keep_alive_interval_s

SAFE_OUTPUTS = {"GH_AW_SAFE_OUTPUTS": "/tmp/gh-aw/safeoutputs/outputs.jsonl"}


def test_without_a_safe_outputs_file_no_watchdog_can_arm_and_nothing_beats() -> None:
    assert keep_alive_interval_s({}) is None
    assert keep_alive_interval_s({"GH_AW_SAFE_OUTPUTS": "  "}) is None
    assert keep_alive_interval_s({"GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS": "8000"}) is None


@pytest.mark.parametrize(
    ("watchdog", "interval_s"),
    [
        (None, 30.0),  # gh-aw's default watchdog: 2 minutes
        ("8000", 2.0),
        (" 8000 ", 2.0),
        ("1e4", 2.5),
        ("20", 0.0125),  # kept at gh-aw's 50 ms floor
        ("99999999", 150.0),  # and at its 10-minute ceiling
        ("0", 30.0),
        ("-5", 30.0),
        ("abc", 30.0),
        ("inf", 30.0),
        ("nan", 30.0),
        ("", 30.0),
    ],
)
def test_a_quarter_of_the_watchdog_as_gh_aws_harness_reads_it(
    watchdog: str | None, interval_s: float
) -> None:
    env = dict(SAFE_OUTPUTS)
    if watchdog is not None:
        env["GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS"] = watchdog
    assert keep_alive_interval_s(env) == interval_s


async def test_a_silent_log_gets_a_beat_each_interval() -> None:
    beats: list[float] = []
    two = asyncio.Event()
    last_entry = time.monotonic()

    def beat(silent_s: float) -> None:
        nonlocal last_entry
        beats.append(silent_s)
        last_entry = time.monotonic()  # the beat is itself an entry
        if len(beats) == 2:
            two.set()

    heartbeat = Heartbeat(0.05, lambda: last_entry, beat)
    heartbeat.start()
    await asyncio.wait_for(two.wait(), timeout=5)
    await heartbeat.stop()
    assert all(silent >= 0.05 for silent in beats)


async def test_a_talking_log_gets_no_beat() -> None:
    beats: list[float] = []
    heartbeat = Heartbeat(0.2, time.monotonic, beats.append)  # an entry "just now", always
    heartbeat.start()
    for _ in range(10):
        await asyncio.sleep(0.05)
    await heartbeat.stop()
    assert beats == []


async def test_a_beat_that_writes_nothing_or_fails_never_spins_or_ends_the_loop() -> None:
    calls: list[float] = []
    third = asyncio.Event()

    def failing(silent_s: float) -> None:
        calls.append(silent_s)
        if len(calls) == 3:
            third.set()
        raise OSError("stderr is closed")

    heartbeat = Heartbeat(0.05, lambda: 0.0, failing)  # the log never advances
    heartbeat.start()
    await asyncio.wait_for(third.wait(), timeout=5)
    await heartbeat.stop()
    assert len(calls) <= 4, "one call per interval, not a busy loop"
