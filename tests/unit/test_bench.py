"""The benchmark's own logic (no timing asserted: speed lives in `make bench`)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from copilot_driver.testing.fixtures import DriverRunner, missing_component

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
        "node_reference": {"ratio": 1.4, "note": "ours 630 ms / Node 450 ms"},
        "sdk_loading": {"import": {"lazy_to_eager": None, "note": "lazy loader not available"}},
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
    assert checked["plain_to_node_reference"]["met"]
    assert checked["plain_to_node_reference"]["note"] == "ours 630 ms / Node 450 ms"
    assert checked["import_lazy_to_eager"]["met"] is None
    results["node_reference"]["ratio"] = 1.6
    results["sdk_loading"]["import"]["lazy_to_eager"] = 0.55
    checked = bench._check_targets(results)
    assert not checked["plain_to_node_reference"]["met"]
    assert checked["import_lazy_to_eager"]["met"]


def test_a_target_not_measured_says_why_in_its_row() -> None:
    bench = _bench()
    row = bench._target_row(
        "plain_to_node_reference",
        {"value": None, "target": "<= 1.5", "met": None, "note": "node is not on PATH"},
    )
    assert row == "| plain_to_node_reference | not measured: node is not on PATH | <= 1.5 | - |"
    row = bench._target_row(
        "import_lazy_to_eager",
        {"value": 0.5, "target": "< 1", "met": True, "note": "lazy 400 ms / eager 800 ms"},
    )
    assert row == "| import_lazy_to_eager | 0.50 (lazy 400 ms / eager 800 ms) | < 1 | yes |"


# --- the Node reference --------------------------------------------------------------


def test_the_node_reference_gets_the_catalog_gh_aws_harness_builds() -> None:
    """The variables gh-aw's harness adds for its driver (seen in a real harness run):
    one `copilot` provider at the model's origin, the model as `copilot/<id>`."""
    bench = _bench()
    env = bench.node_reference_env(Path("/opt/node_modules"), "http://127.0.0.1:4321/v1")
    assert env["NODE_PATH"] == "/opt/node_modules"
    assert env["COPILOT_MODEL"] == "copilot/gpt-4.1"
    assert json.loads(env["GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON"]) == {
        "model": "gpt-4.1",
        "providers": [
            {
                "name": "copilot",
                "type": "openai",
                "baseUrl": "http://127.0.0.1:4321",
                "wireApi": "completions",
            }
        ],
        "models": [{"id": "gpt-4.1", "provider": "copilot"}],
    }


def test_a_missing_node_or_node_sdk_is_reported_with_its_fix(tmp_path: Path) -> None:
    bench = _bench()
    with pytest.raises(bench.NodeReferenceMissingError, match=r"node is not on PATH.*make setup"):
        bench.locate_node_reference({"PATH": str(tmp_path)})
    node = tmp_path / "bin" / "node"
    node.parent.mkdir()
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    environ = {"PATH": str(node.parent), "GH_AW_NODE_MODULES": str(tmp_path / "empty")}
    with pytest.raises(bench.NodeReferenceMissingError, match=r"copilot-sdk.*`make setup`"):
        bench.locate_node_reference(environ)
    package = tmp_path / "modules" / "@github" / "copilot-sdk" / "package.json"
    package.parent.mkdir(parents=True)
    package.write_text('{"version": "1.0.14"}')
    environ["GH_AW_NODE_MODULES"] = str(tmp_path / "modules")
    assert bench.locate_node_reference(environ) == (str(node), tmp_path / "modules")


def test_without_node_the_drivers_are_ours_and_the_reference_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _bench()
    monkeypatch.setenv("PATH", str(tmp_path))
    loader = bench.LoaderStatus(available=True, lazy=True, reason="cache verified")
    drivers, about = bench._drivers(["node ref/driver.cjs"], "http://127.0.0.1:1/v1", loader)
    assert list(drivers) == [bench.OURS, bench.OURS_EAGER, "node ref/driver.cjs"]
    assert drivers[bench.OURS_EAGER].env == {"COPILOT_DRIVER_SDK_LOADING": "eager"}
    assert drivers["node ref/driver.cjs"].argv == ["node", "ref/driver.cjs"]
    assert not drivers["node ref/driver.cjs"].checks_reply
    assert about["measured"] is False
    assert "node is not on PATH" in about["reason"]
    reference = bench._reference_entry(about, {})
    assert reference["ratio"] is None
    assert bench._reference_line(reference).startswith(
        f"Node reference (`{bench.NODE_REFERENCE}`) not measured: node is not on PATH"
    )
    absent = bench.LoaderStatus(available=False, lazy=False, reason="No module named x")
    drivers, _ = bench._drivers([], "http://127.0.0.1:1/v1", absent)
    assert list(drivers) == [bench.OURS]


def test_the_ratio_to_the_reference_is_of_medians_and_needs_a_successful_reference() -> None:
    bench = _bench()

    def turn(median: float, failures: int = 0) -> dict[str, Any]:
        return {"wall_ms": {"median": median, "n": 4}, "failures": failures}

    ratio, note = bench.reference_ratio(turn(900), turn(450))
    assert ratio == 2.0
    assert note == "ours 900 ms / Node 450 ms"
    ratio, note = bench.reference_ratio(turn(900), turn(450, failures=1))
    assert ratio == 2.0
    assert note.endswith("1 of its 4 runs failed")
    ratio, note = bench.reference_ratio(turn(900), turn(30, failures=4))
    assert ratio is None
    assert "every one" in note


def test_a_run_fails_on_its_exit_code_or_without_the_models_reply() -> None:
    bench = _bench()
    checked = bench.Driver(["node", "driver.cjs"], checks_reply=True)
    unchecked = bench.Driver(["my-driver"])
    node_log = '{"type":"assistant.message","data":{"content":"Hello from the scripted model."}}'
    good = {"exit_code": 0, "stdout": "", "stderr": node_log}
    silent = {"exit_code": 0, "stdout": "", "stderr": "session completed"}
    assert not bench.run_failed(good, checked, bench.PLAIN_REPLY)
    assert bench.run_failed(silent, checked, bench.PLAIN_REPLY)
    assert not bench.run_failed(silent, unchecked, bench.PLAIN_REPLY)
    assert bench.run_failed({**good, "exit_code": 1}, checked, bench.PLAIN_REPLY)
    assert bench.run_failed({**silent, "exit_code": 2}, unchecked, bench.PLAIN_REPLY)


@pytest.mark.e2e
def test_the_node_reference_runs_a_plain_turn_on_the_real_sidecar(driver: DriverRunner) -> None:
    bench = _bench()
    try:
        _, modules = bench.locate_node_reference(os.environ)
    except bench.NodeReferenceMissingError as error:
        missing_component("gh-aw's Node driver (node and its Node SDK)", error)
    driver.model.script = bench.SCRIPT
    reference, about = bench.node_reference(driver.model.base_url)
    assert reference is not None, about
    env = {**driver.environment("say hello"), **reference.env}
    result = bench._run(reference.argv, env)
    assert not bench.run_failed(result, reference, bench.PLAIN_REPLY), result["stderr"][-3000:]
    assert about["sdk"] == json.loads((modules / bench.NODE_SDK_PACKAGE).read_text())["version"]


# --- the lazy loader -------------------------------------------------------------------


def test_the_loader_status_names_why_the_import_is_not_lazy() -> None:
    bench = _bench()
    missing = bench.parse_loader_status(
        1, "", "Traceback ...\nModuleNotFoundError: No module named 'copilot_driver.sdk_loading'\n"
    )
    assert not missing.available
    assert missing.describe() == (
        "lazy loader not available: "
        "ModuleNotFoundError: No module named 'copilot_driver.sdk_loading'"
    )
    lazy = bench.parse_loader_status(0, '{"lazy": true, "reason": "cache verified"}\n', "")
    assert (lazy.available, lazy.lazy) == (True, True)
    no_cache = bench.parse_loader_status(0, '{"lazy": false, "reason": "no cache"}\n', "")
    assert (no_cache.available, no_cache.lazy) == (True, False)
    assert no_cache.describe() == (
        "lazy loader not lazy here: no cache "
        "(`python -m copilot_driver.sdk_loading build` builds its cache)"
    )
    told = bench.parse_loader_status(
        0, '{"lazy": false, "reason": "run `python -m copilot_driver.sdk_loading build`"}', ""
    )
    assert told.describe().endswith("run `python -m copilot_driver.sdk_loading build`")
    assert not bench.parse_loader_status(0, "garbage", "").available


def test_the_import_benchmark_without_the_loader_times_the_eager_import_only() -> None:
    bench = _bench()
    absent = bench.LoaderStatus(available=False, lazy=False, reason="No module named x")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    result = bench.bench_sdk_import(env, absent, runs=1, warmup=0)
    assert result["eager_ms"]["n"] == 1
    assert result["lazy_ms"] is None
    assert result["lazy_to_eager"] is None
    assert result["note"] == "lazy loader not available: No module named x"


def test_the_sdk_loading_each_run_logged_is_collected() -> None:
    bench = _bench()
    runs = [
        {"stderr": 'not json "sdkLoading"\n' + json.dumps({"sdkLoading": "lazy"})},
        {"stderr": json.dumps({"event": "x", "sdkLoading": {"lazy": False, "reason": "r"}})},
        {"stderr": json.dumps({"event": "connection.start"})},
    ]
    assert bench.logged_sdk_loading(runs) == ["lazy", '{"lazy": false, "reason": "r"}']
