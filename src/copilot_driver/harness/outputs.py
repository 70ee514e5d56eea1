"""A finished run's account, given on every exit: its cause and fix, the files
beside the events file, the step outputs and summary, and the answer.

Stdout carries only the answer (the last try's stdout); everything else goes
to stderr, where the account ends with the tool policy the run enforced (read
back from result.json) and, for a failure, its cause and fix. Beside the events
file go the sidecar's log (sidecar.log) and the sandbox's record (sandbox.json).
Under GitHub Actions a failure is also an `::error` annotation with its fix, the
step outputs go to `$GITHUB_OUTPUT` and the report to `$GITHUB_STEP_SUMMARY`.
Nothing here changes the run's exit status: a step file that cannot be written
is said, a session file is skipped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from copilot_driver import workflow_commands
from copilot_driver.env_commands import GITHUB_OUTPUT, GITHUB_STEP_SUMMARY
from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.console import Console
from copilot_driver.harness.credentials import tokens_of
from copilot_driver.harness.outcome import brief_cause, explain, refusal_title
from copilot_driver.harness.progress import Progress
from copilot_driver.harness.sandbox import Sandbox, SandboxSettings
from copilot_driver.inert_text import inert
from copilot_driver.records import POLICY_IN_FORCE, event_data, event_type, parse_line
from copilot_driver.report import (
    SANDBOX_FILE,
    Attempt,
    RunOutcome,
    SandboxSummary,
    Timeline,
    load_timeline,
    render_step_summary,
    sandbox_record,
)
from copilot_driver.runner_reads import runner_may_read
from copilot_driver.vocabulary import (
    EVENTS_FILE_NAME,
    SIDECAR_LOG_NAME,
    PolicyInForce,
    read_result,
)

_ERROR = "error: "
_FIX = "how to fix: "
_FIRST_RECORD_BYTES = 1 << 20
"""The most of the events file read for its first record."""


@dataclass(frozen=True)
class Ending:
    """How the run ended: the exit status, its kind and the cause in words."""

    exit_code: int
    error_kind: str | None = None
    message: str | None = None
    shown: bool = False
    """The message is the driver's own lines, already on stderr: only the fix is added."""
    refused: bool = False
    """The harness refused to start the run: each line of the message is one problem and
    its fix, said as an error line of its own (no separate fix)."""


@dataclass(frozen=True)
class FinishedRun:
    """What a run leaves for its account."""

    ending: Ending
    answer: str
    """The last try's stdout."""
    attempts: tuple[Attempt, ...]
    progress: Progress
    """The last try's."""
    state_base: Path | None
    """The session state folder, once known."""
    wall_started: float
    """When the run started (`time.time()`): older events files are not its own."""
    sidecar_log: Path | None
    sandbox_settings: SandboxSettings
    sandbox: Sandbox | None


class Outputs:
    """Where a finished run is told: the harness's stderr, stdout, the files."""

    def __init__(self, env: Mapping[str, str], *, console: Console, stdout: IO[str]) -> None:
        self.env = env
        self.console = console
        self.stdout = stdout

    def report(self, run: FinishedRun) -> None:
        """The run's account: log line, annotation, outputs, summary, answer."""
        self.console.status.stop()
        events = run.progress.events_file
        if events is None and run.state_base is not None:
            events = _newest_events_file(run.state_base, run.wall_started)
        if events is not None and run.sidecar_log is not None and run.sidecar_log.exists():
            with contextlib.suppress(OSError):
                run.sidecar_log.replace(events.with_name(SIDECAR_LOG_NAME))
        sandbox = sandbox_summary(run.sandbox_settings, run.sandbox, self.env)
        if events is not None:
            with contextlib.suppress(OSError):
                record = json.dumps(sandbox_record(sandbox), indent=2)
                events.with_name(SANDBOX_FILE).write_text(record + "\n", encoding="utf-8")
        for where, count in sandbox.egress_denied:
            self.console.say(f"sandbox: egress to {where} refused {count} time(s)")
        policy = policy_in_force(events)
        if policy is not None:
            self.console.say(f"tool policy in force: {policy.summary or policy.mode}")
        outcome = self._outcome(run, sandbox)
        if outcome.message:
            self._tell_failure(outcome, run.ending)
        timeline = _load_timeline(events)
        outputs_file = self.env.get(GITHUB_OUTPUT.name)
        if outputs_file:
            self._write_outputs(Path(outputs_file), run, events, timeline, policy)
        summary_file = self.env.get(GITHUB_STEP_SUMMARY.name)
        if summary_file:
            self._append_step_summary(Path(summary_file), outcome, timeline)
        if run.answer:
            answer = self.console.redactor.text(run.answer)
            read = runner_may_read(self.stdout, in_actions=self.console.in_actions)
            self.stdout.write(inert(answer, in_actions=read))
            self.stdout.flush()

    def _tell_failure(self, outcome: RunOutcome, ending: Ending) -> None:
        """The cause and the fix as log lines, and in Actions an annotation."""
        lines = (outcome.message or "").splitlines()
        if ending.shown and not self.console.in_actions:
            # The driver's lines are just above (in Actions they are folded in its log
            # group, so they are said again there).
            lines = [line for line in lines if line.startswith(_FIX)]
        for line in lines:
            if line.startswith(_ERROR):
                self.console.error(line.removeprefix(_ERROR))
            else:
                self.console.say(line)
        if outcome.title:
            self.console.annotate("error", outcome.title, outcome.message or "")

    def _outcome(self, run: FinishedRun, sandbox: SandboxSummary) -> RunOutcome:
        ending = run.ending
        title = message = None
        attempts = tuple(
            dataclasses.replace(attempt, message=brief_cause(attempt.message))
            if attempt.message
            else attempt
            for attempt in run.attempts
        )
        if ending.exit_code != ExitCode.OK:
            said = brief_cause(ending.message) if ending.message else None
            cause = self.console.redactor.text(said or f"exit status {ending.exit_code}")
            explanation = explain(
                ending.exit_code,
                ending.error_kind,
                said,
                tokens=tokens_of(self.env),
                egress_denied=sandbox.egress_denied,
            )
            title = explanation.title
            if ending.refused:  # each line a problem of its own
                message = "\n".join(f"{_ERROR}{line}" for line in cause.splitlines())
                title = refusal_title(explanation.title, len(cause.splitlines()))
            else:  # one cause, its lines after the first what it quotes (a CLI's output)
                message = f"{_ERROR}{cause}"
                if explanation.fix:
                    message += f"\n{_FIX}{explanation.fix}"
        return RunOutcome(ending.exit_code, ending.error_kind, title, message, attempts, sandbox)

    def _write_outputs(
        self,
        path: Path,
        run: FinishedRun,
        events: Path | None,
        timeline: Timeline | None,
        policy: PolicyInForce | None,
    ) -> None:
        progress = run.progress
        premium = timeline.usage.premium_requests if timeline and timeline.usage else None
        outputs = {
            "answer": run.answer.rstrip("\n"),
            "exit-code": str(run.ending.exit_code),
            "error-kind": run.ending.error_kind or "",
            "session-id": progress.session_id or "",
            "events-file": str(events or ""),
            "denials": str(progress.denials),
            "premium-requests": "" if premium is None else f"{premium:g}",
            "policy-mode": policy.mode if policy else "",
            "policy": policy.summary if policy else "",
        }
        text = self.console.redactor.text(workflow_commands.outputs_block(outputs))
        try:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            self.console.error(
                f"cannot write the step outputs to {path}: {error.strerror}; {GITHUB_OUTPUT.name} "
                "must name a file this user can append to (the runner sets it)"
            )

    def _append_step_summary(
        self, path: Path, outcome: RunOutcome, timeline: Timeline | None
    ) -> None:
        try:
            report = render_step_summary(outcome, timeline)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(self.console.redactor.text(report).rstrip("\n") + "\n\n")
        except Exception as error:  # a report must never change the run's outcome
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.console.error(
                f"could not write the step summary to {path}: {reason}; {GITHUB_STEP_SUMMARY.name} "
                "must name a file this user can append to (the runner sets it)"
            )


def sandbox_summary(
    settings: SandboxSettings, sandbox: Sandbox | None, env: Mapping[str, str]
) -> SandboxSummary:
    """The sandbox as the report shows it: its mode, allowed hosts, the connections let
    through and refused, passed names, the git control files put away after the run."""
    return SandboxSummary(
        mode=settings.mode,
        allowed_hosts=sandbox.allowlist.hosts() if sandbox else (),
        egress_denied=tuple(sandbox.denied_per_host()) if sandbox else (),
        passed_env=tuple(name for name in settings.pass_env if name in env),
        egress_allowed=tuple(sandbox.allowed_per_host()) if sandbox else (),
        git_neutralised=tuple(sandbox.git_neutralised) if sandbox else (),
    )


def policy_in_force(events: Path | None) -> PolicyInForce | None:
    """The tool policy the run enforced, as the driver wrote it down: result.json's
    `policy`, else the events file's first record (`policy.in_force`); None when the
    driver stopped before it read one, or wrote neither (another driver)."""
    if events is None:
        return None
    result = read_result(events)
    if result is not None and result.policy is not None:
        return result.policy
    with contextlib.suppress(OSError):
        with events.open("rb") as handle:
            record = parse_line(handle.readline(_FIRST_RECORD_BYTES))
        if record is not None and event_type(record) == POLICY_IN_FORCE:
            return PolicyInForce.from_json(event_data(record))
    return None


def _load_timeline(events: Path | None) -> Timeline | None:
    if events is None:
        return None
    try:
        return load_timeline(events)
    except Exception:  # a report must never change the run's outcome
        return None


def _newest_events_file(base: Path, since: float) -> Path | None:
    """For drivers whose log does not name the events file: the newest one."""
    candidates = []
    with contextlib.suppress(OSError):
        for path in base.glob(f"*/{EVENTS_FILE_NAME}"):
            with contextlib.suppress(OSError):
                mtime = path.stat().st_mtime
                if mtime >= since - 1:
                    candidates.append((mtime, path))
    return max(candidates)[1] if candidates else None
