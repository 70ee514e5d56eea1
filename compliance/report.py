"""The compliance report: the spec's checklist with a status per row, and a verdict for
each specification version (1.0.2, and 1.0.3, which adds T-CSD-112..116)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

VERSIONS = ("1.0.2", "1.0.3")
"""Each version's requirements are those of the versions before it and its own."""

# Spec section 8's checklist: requirement, ids, level, the version that introduced it.
CHECKLIST = [
    ("Required standalone variables enforced", ("001", "002", "003"), 1, "1.0.2"),
    ("Connection token generation and propagation", ("007",), 1, "1.0.2"),
    ("Token isolation (no GitHub platform tokens)", ("008",), 1, "1.0.2"),
    ("Log-level and timeout fallback behavior", ("004", "005", "006"), 1, "1.0.2"),
    ("Default permission delegation", ("101",), 2, "1.0.2"),
    ("Allow-all permission behavior", ("102",), 2, "1.0.2"),
    ("Scoped read default-deny and explicit allow", ("103", "104"), 2, "1.0.2"),
    ("Scoped write/url/custom-tool enforcement", ("105", "106", "107"), 2, "1.0.2"),
    ("Scoped MCP/shell enforcement", ("108", "109"), 2, "1.0.2"),
    ("Unknown-kind rejection", ("110",), 2, "1.0.2"),
    ("Permission denial diagnostics", ("111", "202"), 2, "1.0.2"),
    ("Subcommand-scoped shell authorization", ("112", "113"), 2, "1.0.3"),
    ("Bounded denial-guard termination", ("114", "115", "116"), 1, "1.0.3"),
    ("Lifecycle logging coverage", ("201",), 3, "1.0.2"),
]
ALL_IDS = tuple(i for _, ids, _, _ in CHECKLIST for i in ids)
SINCE = {i: version for _, ids, _, version in CHECKLIST for i in ids}
"""The specification version each id comes from."""
SECTION_6_DIAGNOSTICS = frozenset({"201", "202"})
"""What a partially conforming driver may omit (spec 2.1: "optional diagnostics in Section 6")."""


@dataclass
class Outcome:
    test: str
    status: str  # passed | failed | skipped
    evidence: list[str] = field(default_factory=list)


class ComplianceReport:
    def __init__(self, driver_command: list[str]) -> None:
        self.driver_command = driver_command
        self.outcomes: dict[str, list[Outcome]] = {}

    def record(self, test_id: str, test: str, status: str, evidence: list[str]) -> None:
        self.outcomes.setdefault(test_id, []).append(Outcome(test, status, evidence))

    def status(self, test_id: str) -> str:
        outcomes = self.outcomes.get(test_id, [])
        if not outcomes:
            return "Not run"
        if any(o.status == "failed" for o in outcomes):
            return "Fail"
        if all(o.status == "passed" for o in outcomes):
            return "Pass"
        return "Skipped"

    def failing_ids(self, version: str = VERSIONS[-1]) -> list[str]:
        """The ids of `version` (and the versions before it) that did not pass."""
        wanted = VERSIONS[: VERSIONS.index(version) + 1]
        return [i for i in ALL_IDS if SINCE[i] in wanted and self.status(i) != "Pass"]

    def verdict(self, version: str = VERSIONS[-1]) -> str:
        failing = set(self.failing_ids(version))
        if not failing:
            return "conforming"
        if failing <= SECTION_6_DIAGNOSTICS:
            return "partially conforming (spec 2.1: sections 4, 5, 7 met; section 6 not)"
        return "not conforming"

    def versions(self) -> dict[str, str]:
        found = {"driver command": " ".join(self.driver_command)}
        found["driver"] = _first_line([*self.driver_command, "--version"])
        try:
            found["github-copilot-sdk"] = version("github-copilot-sdk")
        except PackageNotFoundError:
            found["github-copilot-sdk"] = "not installed"
        try:
            from copilot_driver.harness.sidecar import locate_copilot_cli

            found["copilot CLI"] = _first_line([str(locate_copilot_cli()), "--version"])
        except Exception as error:  # the report still says what it could not find
            found["copilot CLI"] = f"unknown ({error})"
        return found

    def to_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict(),
            "verdicts": {version: self.verdict(version) for version in VERSIONS},
            "versions": self.versions(),
            "rows": self.rows(),
            "tests": {
                f"T-CSD-{i}": [
                    {"test": o.test, "status": o.status, "evidence": o.evidence, "since": SINCE[i]}
                    for o in self.outcomes.get(i, [])
                ]
                for i in ALL_IDS
            },
            "failing": [f"T-CSD-{i}" for i in self.failing_ids()],
        }

    def rows(self) -> list[dict[str, Any]]:
        """One row per requirement of the checklist: its ids, level, version and status."""
        return [
            {
                "requirement": requirement,
                "ids": [f"T-CSD-{i}" for i in ids],
                "level": level,
                "since": since,
                "status": _row_status([self.status(i) for i in ids]),
                "tests": {f"T-CSD-{i}": self.status(i) for i in ids},
            }
            for requirement, ids, level, since in CHECKLIST
        ]

    def to_markdown(self) -> str:
        lines = [
            "# Copilot SDK driver compliance report",
            "",
            *(f"**Specification {v}: {self.verdict(v)}**  " for v in VERSIONS),
            "",
            "| | |",
            "|---|---|",
        ]
        lines += [f"| {k} | `{v}` |" for k, v in self.versions().items()]
        lines += [
            "",
            "| Requirement | Test IDs | Level | Since | Status |",
            "|---|---|---|---|---|",
        ]
        for row in self.rows():
            detail = ", ".join(f"{t}: {s}" for t, s in row["tests"].items())
            lines.append(
                f"| {row['requirement']} | {detail} | {row['level']} | {row['since']} "
                f"| {row['status']} |"
            )
        lines += ["", "## Evidence", ""]
        for test_id in ALL_IDS:
            for outcome in self.outcomes.get(test_id, []):
                notes = "; ".join(outcome.evidence) or "-"
                lines.append(
                    f"- **T-CSD-{test_id}** ({SINCE[test_id]}) `{outcome.test}`: {outcome.status}. "
                    f"{notes.replace(chr(10), ' ')}"
                )
        return "\n".join(lines) + "\n"

    def write(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "compliance-report.json").write_text(json.dumps(self.to_dict(), indent=2))
        (directory / "compliance-report.md").write_text(self.to_markdown())


def _row_status(statuses: list[str]) -> str:
    if all(s == "Pass" for s in statuses):
        return "Pass"
    return "Fail" if "Fail" in statuses else "Incomplete"


def _first_line(command: list[str]) -> str:
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({error})"
    text = (completed.stdout or completed.stderr).strip().splitlines()
    return text[0] if completed.returncode == 0 and text else "unknown (no --version)"
