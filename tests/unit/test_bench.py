"""The benchmark's own logic (no timing asserted: speed lives in `make bench`)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from copilot_driver.testing.fixtures import DriverRunner

BENCH = Path(__file__).parents[2] / "benchmarks" / "bench.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module
    spec.loader.exec_module(module)
    return module


def test_phases_are_read_from_the_driver_log_relative_to_the_spawn() -> None:
    bench = _bench()
    spawned = 1_795_000_000.0
    log = "\n".join(
        [
            "not json",
            json.dumps({"event": "connection.start", "timestamp": "2026-11-18T11:06:40.070Z"}),
            json.dumps({"event": "client.started", "timestamp": "2026-11-18T11:06:40.800Z"}),
            json.dumps({"event": "session.completed", "timestamp": "2026-11-18T11:06:41.000Z"}),
        ]
    )
    phases = bench._phases(log, spawned)
    assert round(phases["connection.start"]) == 70
    assert round(phases["client.started"]) == 800
    assert round(phases["last entry"]) == 1000


def test_session_creation_is_read_per_run_and_a_failed_run_is_left_out() -> None:
    bench = _bench()

    def run(*stamps: tuple[str, str]) -> dict[str, Any]:
        log = "\n".join(json.dumps({"event": e, "timestamp": t}) for e, t in stamps)
        return {"stderr": log, "spawned_at": 1_795_000_000.0}

    creation = bench._session_creation_ms(
        [
            run(("client.started", "2026-11-18T11:06:40.800Z"),
                ("session.created", "2026-11-18T11:06:40.860Z")),
            run(("client.started", "2026-11-18T11:06:40.700Z"),
                ("session.created", "2026-11-18T11:06:40.800Z")),
            run(("client.started", "2026-11-18T11:06:40.700Z")),
        ]
    )  # fmt: skip
    assert creation["n"] == 2
    assert round(creation["median"]) == 80


@pytest.mark.e2e
def test_the_version_check_benchmark_asks_the_real_sidecar(
    driver: DriverRunner, tmp_path: Path
) -> None:
    env = driver.environment("say hello")
    result = _bench().bench_version_check(env, tmp_path, rounds=3)
    assert result["n"] == 3
    assert result["min"] > 0


def test_the_sink_benchmark_writes_every_event() -> None:
    result = _bench().bench_sink(2_000)
    assert result["written"] == 2_000
    assert result["events_per_s"] > 0


def test_the_policy_benchmark_decides() -> None:
    result = _bench().bench_policy(100)
    assert result["decisions_per_s"] > 0


def test_the_long_command_benchmark_builds_each_shape_to_size() -> None:
    bench = _bench()
    for shape in bench.LONG_COMMAND_SHAPES:
        command = bench.long_command(shape, 4)
        assert 4 * 1024 - 16 <= len(command) <= 4 * 1024 + 4, shape
    result = bench.bench_long_commands(rounds=1)
    assert set(result["ms"]) == set(bench.LONG_COMMAND_SHAPES)
    assert result["growth"] > 0
    assert result["oversized_ms"] > 0


def test_the_edit_file_benchmark_times_both_sizes_and_their_ratio() -> None:
    result = _bench().bench_edit_file_growth(rounds=1, sizes=(1_000, 8_000))
    assert set(result["ms"]) == {1_000, 8_000}
    assert result["growth"] > 0


def test_targets_are_checked_against_their_bounds() -> None:
    bench = _bench()

    def summary(value: float) -> dict[str, float]:
        return {"median": value, "min": value, "max": value, "n": 1}

    run: dict[str, Any] = {"wall_ms": summary(900), "rss_mb": summary(90), "failures": 0}
    results: dict[str, Any] = {
        "drivers": {bench.OURS: {"plain": run, "tool": run}},
        "after_import_ms": 150.0,
        "config_error_ms": summary(40),
        "sink": {"events_per_s": 60_000.0},
        "policy": {"decision_us": 60.0},
        "long_commands": {"slowest_64kib_ms": 8.0, "growth": 40.0, "oversized_ms": 2.0},
        "edit_file": {"growth": 8.4},
        "harness": {"whole_to_sequential": 0.93, "sandboxed_to_off": 1.04},
        "sidecar_memory": {"sandboxed_to_off": 1.12},
        "version_check": {"check_to_create": 1.2},
    }
    checked = bench._check_targets(results)
    assert checked["plain_wall_ms"]["met"]
    assert checked["after_import_ms"]["met"]
    assert not checked["peak_rss_mb"]["met"]
    assert checked["sink_events_per_s"]["met"]
    assert not checked["decision_us"]["met"]
    assert checked["long_command_ms"]["met"]
    assert not checked["long_command_growth"]["met"]
    assert not checked["oversized_command_ms"]["met"]
    assert checked["edit_file_growth"]["met"]
    results["edit_file"]["growth"] = 70.0
    assert not bench._check_targets(results)["edit_file_growth"]["met"]
    assert checked["harness_whole_to_sequential"]["met"]
    assert checked["harness_sandboxed_to_off"]["met"]
    assert not checked["sidecar_memory_sandboxed_to_off"]["met"]
    assert not checked["version_check_to_session_create"]["met"]
