"""The compliance kit can fail: each broken driver fails exactly the ids it breaks.

The drivers whose verdicts are checked run the whole kit (every other id passes); the
others run only the ids they break, which the kit must fail. That every id passes for a
correct driver is shown by the kit's own run against this project's driver
(`compliance/` is among `make test`'s test paths)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "compliance" / "broken_drivers"
EXPECTED = {
    "accepts_missing_token": ["T-CSD-003"],
    "ignores_log_level": ["T-CSD-004"],
    "ignores_send_timeout": ["T-CSD-006"],
    "logs_token": ["T-CSD-007"],
    "leaks_github_token": ["T-CSD-008"],
    "approves_every_shell": ["T-CSD-109", "T-CSD-113"],
    # 1.0.3 keeps the guard's event in the events file (spec 4.5): 114..116 need it too.
    "never_writes_events": ["T-CSD-114", "T-CSD-115", "T-CSD-116", "T-CSD-201"],
    "matches_exact_rules_per_segment": ["T-CSD-113"],
    # Its sidecar watchdog still ends a stalled run in time: T-CSD-116 holds.
    "guard_waits_for_send": ["T-CSD-114", "T-CSD-115"],
}
WHOLE_KIT = {"never_writes_events", "matches_exact_rules_per_segment", "guard_waits_for_send"}
"""The drivers whose verdicts (per spec version) the tests below check."""


def _only_the_broken_ids(name: str) -> list[str]:
    """pytest's `-k` for the kit's tests of the ids `name` breaks (`test_t_csd_003_...`)."""
    if name in WHOLE_KIT:
        return []
    ids = [test_id.replace("T-CSD-", "t_csd_") for test_id in EXPECTED[name]]
    return ["-k", " or ".join(ids)]


def _kit_with_driver(
    driver: str, reports: Path, *options: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The kit, as a user runs it, against `driver`, writing its report into `reports`."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "compliance"),
            "-q",
            "-p",
            "no:cacheprovider",
            "--driver",
            driver,
            "--report-dir",
            str(reports),
            *options,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_kit(name: str, reports: Path) -> dict[str, object]:
    out = reports / name
    broken = f"{sys.executable} {BROKEN / (name + '.py')}"
    completed = _kit_with_driver(broken, out, *_only_the_broken_ids(name), timeout=1200)
    report_file = out / "compliance-report.json"
    assert report_file.exists(), completed.stdout[-3000:] + completed.stderr[-3000:]
    report: dict[str, object] = json.loads(report_file.read_text())
    report["pytest_exit"] = completed.returncode
    return report


@pytest.fixture(scope="module")
def reports(
    tmp_path_factory: pytest.TempPathFactory, copilot_cli: Path
) -> dict[str, dict[str, Any]]:
    """One kit run per broken driver, three at a time (they mostly wait on processes)."""
    directory = tmp_path_factory.mktemp("kit-reports")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(run_kit, name, directory) for name in EXPECTED}
        return {name: future.result() for name, future in futures.items()}


def test_every_broken_driver_has_an_expectation() -> None:
    drivers = sorted(p.stem for p in BROKEN.glob("*.py") if not p.name.startswith("_"))
    assert drivers == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_kit_fails_exactly_the_ids_a_broken_driver_breaks(
    reports: dict[str, dict[str, Any]], name: str
) -> None:
    report = reports[name]
    ran = [test_id for test_id, outcomes in report["tests"].items() if outcomes]
    if name not in WHOLE_KIT:
        assert ran == EXPECTED[name]
    failing = [test_id for test_id in report["failing"] if test_id in ran]
    assert failing == EXPECTED[name], json.dumps(report["tests"], indent=1)[:4000]
    # Failed, not skipped: the kit saw the defect.
    assert all(
        any(outcome["status"] == "failed" for outcome in report["tests"][test_id])
        for test_id in EXPECTED[name]
    ), json.dumps({i: report["tests"][i] for i in EXPECTED[name]}, indent=1)[:4000]
    if name in WHOLE_KIT:
        assert report["failing"] == EXPECTED[name]
    assert report["verdict"] == "not conforming"
    assert report["pytest_exit"] != 0


def test_a_driver_without_an_events_file_is_partially_conforming_to_1_0_2_only(
    reports: dict[str, dict[str, Any]],
) -> None:
    verdicts = reports["never_writes_events"]["verdicts"]
    assert verdicts["1.0.2"].startswith("partially conforming")
    assert verdicts["1.0.3"] == "not conforming"


@pytest.mark.parametrize("name", ["matches_exact_rules_per_segment", "guard_waits_for_send"])
def test_a_driver_breaking_only_1_0_3_still_conforms_to_1_0_2(
    reports: dict[str, dict[str, Any]], name: str
) -> None:
    assert reports[name]["verdicts"] == {"1.0.2": "conforming", "1.0.3": "not conforming"}


@pytest.mark.parametrize(
    ("driver", "said"),
    [
        ("/nonexistent", "/nonexistent does not exist; give the driver's command"),
        ("{readme}", "is not executable (`chmod +x "),
        (f"{sys.executable} /nonexistent/driver.py", "/nonexistent/driver.py does not exist"),
        ("no-such-driver-program --x", "`no-such-driver-program` is not on PATH"),
        ("'unclosed", "cannot be read as a command (No closing quotation)"),
    ],
)
def test_a_driver_that_cannot_start_is_one_usage_error_and_no_verdict(
    tmp_path: Path, driver: str, said: str
) -> None:
    """Not 30 tracebacks and a "not conforming" verdict: pytest's usage status (4)."""
    done = _kit_with_driver(driver.format(readme=ROOT / "README.md"), tmp_path)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("ERROR: --driver ")
    assert said in lines[0]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "compliance-report.json").exists()
