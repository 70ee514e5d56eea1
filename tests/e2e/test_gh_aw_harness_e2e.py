"""Our driver under gh-aw's real harness, beside gh-aw's own Node driver.

gh-aw decides what a driver's run meant from its exit code and its output
alone (the harness classifies, retries or gives up), and later steps read its
events.jsonl. So each case here runs both drivers under the same unchanged
harness (v0.82.10, `tests/data/gh-aw-harness`) on the same scripted model,
and holds our driver to gh-aw's verdict and to the events gh-aw's driver
writes. gh-aw's v0.82.10 driver predates the tool contract, so the two cases
about it (the tool-call budget, a malformed contract) hold ours to the
contract's semantics in newer gh-aw instead. Two cases run ours alone (the
`create-pull-request` grants of github/gh-aw#60364), and every run of ours is
checked against the failure patterns newer gh-aw's harness classifies by.

The rig (`tests/helpers/gh_aw_harness.py`) needs node and gh-aw's Node
SDK (`make setup`); without them these tests skip, except under CI.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.exit_codes import ExitCode
from copilot_driver.testing import Reply, Rule, Script, ToolCall
from copilot_driver.testing.fixtures import missing_component
from copilot_driver.testing.github_api import FakeGitHubCopilot
from copilot_driver.testing.rpc_proxy import RpcProxy
from helpers.gh_aw_harness import (
    CLASSIFYING_PATTERNS,
    PERMISSION_DENIED,
    SEND_TIMEOUT_MS,
    GhAwHarness,
    HarnessCase,
    HarnessRun,
    HarnessUnavailableError,
    free_port,
    tool_contract,
)

pytestmark = pytest.mark.e2e

MARKER = "QUOKKAWIDGET"
"""A word in every prompt that the model never repeats: it must not reach events.jsonl."""
PROMPT = f"please {MARKER} the task"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
BUDGET_REASON = (
    "The workflow aggregate tool-call budget is exhausted (2 calls). This tool was not "
    "executed; stop using tools and provide the best result from completed work."
)
IDLE_MS = 1500
SLOW_ANSWER = "a slow answer, still on its way after the result"
SLOW_REPLY_S = 23.0
"""Longer than the 20 s of silence v0.82.10's post-result watchdog allows."""
BOTH = ("ours", "gh-aw")
HARNESS = Path(__file__).resolve().parents[1] / "data" / "gh-aw-harness" / "js"


def _touch(name: str) -> Reply:
    return Reply(tool_calls=(ToolCall("bash", {"command": f"touch {name}"}),))


def _script(*replies: Reply) -> Script:
    return Script(rules=(Rule(MARKER, replies),))


def _without_idle(message: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's `session.idle` events renamed, so the driver never sees one."""
    event = (message.get("params") or {}).get("event")
    if isinstance(event, dict) and event.get("type") == "session.idle":
        event["type"] = "test.idle_withheld"
    return message


@dataclass(frozen=True)
class Case:
    """A harness case, and how a run of it is set up around the harness."""

    harness: HarnessCase
    without_idle: bool = False
    """Run the driver through an `RpcProxy` that withholds `session.idle`."""


GIT_GRANTS = tuple(
    f"shell(git {command}:*)"
    for command in ("checkout", "branch", "switch", "add", "rm", "commit", "merge")
)
"""What gh-aw adds to a workflow with the `create-pull-request` safe output (with `edit`),
the grants gh-aw's own newer driver denied in github/gh-aw#60364."""
BRANCH = "agent/notes"
GIT_IDENTITY = {
    f"GIT_{who}_{what}": value
    for who in ("AUTHOR", "COMMITTER")
    for what, value in (("NAME", "gh-aw agent"), ("EMAIL", "agent@example.invalid"))
}


def _bash(command: str) -> Reply:
    return Reply(tool_calls=(ToolCall("bash", {"command": command}),))


def _repository_with_a_remote(workspace: Path) -> None:
    """A checkout as gh-aw's job has one: a commit on main, an `origin` (a bare
    repository beside it) and an untracked file for the agent to commit."""
    remote = workspace.parent / "origin.git"
    git = ("git", "-c", "init.defaultBranch=main")
    subprocess.run([*git, "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run([*git, "init", "-q", str(workspace)], check=True)
    env = {**os.environ, **GIT_IDENTITY}
    for command in (
        ["commit", "-q", "--allow-empty", "-m", "start"],
        ["remote", "add", "origin", str(remote)],
        ["push", "-q", "origin", "main"],
    ):
        subprocess.run([*git, *command], cwd=workspace, env=env, check=True)
    (workspace / "notes.txt").write_text("notes the agent wrote\n", encoding="utf-8")


def _git(workspace: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", *arguments], cwd=workspace, capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


CASES: dict[str, Case] = {
    "plain": Case(HarnessCase(PROMPT, _script(Reply(text="done plainly")))),
    "allowed-tool": Case(
        HarnessCase(
            PROMPT,
            _script(_touch("a0"), Reply(text="touched")),
            tool_contract("shell(touch:*)", bash=True),
        )
    ),
    "denial-guard": Case(
        HarnessCase(
            PROMPT,
            _script(*[Reply(tool_calls=(ToolCall("bash", {"command": "rm victim.txt"}),))] * 5),
            tool_contract("shell(ls)", bash=True),  # bash visible, only `ls` allowed
            max_tool_denials=3,
        )
    ),
    "budget": Case(
        HarnessCase(
            PROMPT,
            _script(_touch("b0"), _touch("b1"), _touch("b2"), Reply(text="best result so far")),
            tool_contract("shell(touch:*)", bash=True, max_tool_calls=2),
        )
    ),
    "idle": Case(
        HarnessCase(
            PROMPT,
            _script(Reply(text="answered, not idle")),
            env={"GH_AW_SDK_IDLE_MS": str(IDLE_MS)},
        ),
        without_idle=True,
    ),
    "malformed-contract": Case(
        HarnessCase(PROMPT, _script(Reply(text="never asked")), '{"version": 1}')
    ),
    "create-pull-request": Case(
        HarnessCase(
            PROMPT,
            _script(
                _bash(f"git checkout -b {BRANCH}"),
                _bash("git add notes.txt"),
                _bash('git commit -m "Add the notes"'),
                _bash(f"git push origin {BRANCH}"),  # not granted: the safe output pushes
                Reply(text="committed on the branch; the push is the safe output's job"),
            ),
            tool_contract("write", *GIT_GRANTS, bash=True, edit=True),
            # As on a runner: the driver also writes a warning annotation per denial.
            env={**GIT_IDENTITY, "GITHUB_ACTIONS": "true"},
            workspace_setup=_repository_with_a_remote,
        )
    ),
    "create-pull-request-guard": Case(
        HarnessCase(
            PROMPT,
            _script(*[_bash(f"git push origin {BRANCH}")] * 6),
            tool_contract("write", *GIT_GRANTS, bash=True, edit=True),
            max_tool_denials=3,
            env=GIT_IDENTITY,
            workspace_setup=_repository_with_a_remote,
        )
    ),
    "slow-after-result": Case(
        HarnessCase(
            PROMPT,
            _script(Reply(text=SLOW_ANSWER, delay_s=SLOW_REPLY_S)),
            # A terminal safe output already there: the harness's watchdog arms at once.
            safe_outputs='{"type": "create_issue", "title": "found it"}\n',
            env={
                "COPILOT_SDK_SEND_TIMEOUT_MS": "90000",
                # Newer harnesses read it; v0.82.10's watchdog stays 20 s. Ours beats every 2 s.
                "GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS": "8000",
                # One attempt: a driver ended for silence would otherwise be retried, 23 s each.
                "GH_AW_HARNESS_MAX_RETRIES": "0",
            },
        )
    ),
}
OURS_ONLY = ("create-pull-request", "create-pull-request-guard")
"""Cases run with our driver alone: they hold it to what users of newer gh-aw need."""
COMPARED = ("plain", "allowed-tool", "denial-guard", "idle")
"""The cases gh-aw's v0.82.10 driver can show the right behaviour for."""
SAME_EVENTS = (*COMPARED, "budget")
"""The cases where both drivers run the same session, so write the same kinds of events.
(With the malformed contract ours rightly starts no session; gh-aw's ignores the contract.)"""


@dataclass
class Runs:
    """Each (case, driver) run once per module, on first use."""

    rig: GhAwHarness
    done: dict[tuple[str, str], HarnessRun] = field(default_factory=dict)

    def __call__(self, case_name: str, driver: str) -> HarnessRun:
        key = (case_name, driver)
        if key not in self.done:
            self.done[key] = run_case(self.rig, CASES[case_name], driver)
        return self.done[key]


def run_case(rig: GhAwHarness, case: Case, driver: str) -> HarnessRun:
    """One harness run; with `without_idle`, the driver reaches the harness's
    own sidecar through a proxy that withholds `session.idle`. The proxy may
    listen before the sidecar does: it only connects upstream when the driver
    connects, and the harness starts the driver once its sidecar is ready."""
    port = free_port()
    proxy: AbstractContextManager[RpcProxy | None] = (
        RpcProxy(port, rewrite=_without_idle) if case.without_idle else nullcontext()
    )
    with proxy as through:
        uri = f"http://{through.address}" if through is not None else None
        return rig.run(driver, case.harness, sidecar_port=port, driver_sdk_uri=uri)


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, copilot_cli: Path, copilot_cache_home: Path
) -> Runs:
    """One rig and one run per (case, driver) for the whole module: several
    tests read each run, and a harness run starts a real sidecar."""
    try:
        rig = GhAwHarness(
            tmp_path_factory.mktemp("gh-aw-harness"),
            copilot_cli=copilot_cli,
            cache_home=copilot_cache_home,
            source=HARNESS,
        )
    except HarnessUnavailableError as error:
        missing_component("gh-aw's harness (node and its Node SDK)", error)
    return Runs(rig)


def describe(run: HarnessRun) -> str:
    """The end of a run's output, for assertion messages."""
    return f"{run.driver}: verdict={run.verdict}\n" + run.output[-4000:]


# --- the harness's verdict, both drivers ---------------------------------------------


def _decision(run: HarnessRun) -> tuple[bool, int, tuple[str, ...], tuple[bool, ...]]:
    """What the harness made of a run: success, attempts, each one's class and retry."""
    return (
        run.done_exit_code == 0,
        len(run.attempts),
        tuple(run.failure_classes),
        tuple(attempt.retried for attempt in run.attempts),
    )


@pytest.mark.parametrize("case_name", COMPARED)
def test_the_harness_gives_both_drivers_the_same_verdict(runs: Runs, case_name: str) -> None:
    """The same decision for both drivers. The step's exit code differs only where
    ours is documented: 3 when the denials guard stops the run (gh-aw's driver: 1)."""
    ours, theirs = runs(case_name, "ours"), runs(case_name, "gh-aw")
    assert _decision(ours) == _decision(theirs), describe(ours) + "\n\n" + describe(theirs)
    if case_name == "denial-guard":
        assert (ours.done_exit_code, theirs.done_exit_code) == (ExitCode.TOOL_DENIALS, 1)
    else:
        assert ours.done_exit_code == theirs.done_exit_code


def test_a_plain_answer_succeeds_on_the_first_attempt(runs: Runs) -> None:
    run = runs("plain", "ours")
    assert run.verdict == (0, 1, ()), describe(run)
    assert run.success_on == 1
    assert "done plainly" in run.output
    assert len(run.model_calls()) == 1


def test_an_allowed_tool_runs_for_both_drivers(runs: Runs) -> None:
    for driver in BOTH:
        run = runs("allowed-tool", driver)
        assert run.verdict == (0, 1, ()), describe(run)
        assert (run.workspace / "a0").exists(), f"{driver}: bash ran the allowed touch"


def test_built_in_tool_events_name_no_mcp_server(runs: Runs) -> None:
    """gh-aw's driver writes `mcpServerName: ""` for a built-in tool; readers rely on the key."""
    run = runs("allowed-tool", "ours")
    tool_events = run.events_of("tool.execution_start") + run.events_of("tool.execution_complete")
    assert tool_events, describe(run)
    assert [event["data"].get("mcpServerName") for event in tool_events] == [""] * len(tool_events)


def test_the_denial_guard_is_classified_permission_denied_and_not_retried(runs: Runs) -> None:
    run = runs("denial-guard", "ours")
    assert run.failure_classes == ["permission_denied"], describe(run)
    assert len(run.attempts) == 1
    assert not run.attempts[0].retried
    assert run.permission_denied_count >= 3
    assert len(run.model_calls()) == 3, "inference stopped at the threshold"


def test_the_idle_watchdog_ends_an_answered_session_that_never_goes_idle(runs: Runs) -> None:
    run = runs("idle", "ours")
    assert run.verdict == (0, 1, ()), describe(run)
    assert "answered, not idle" in run.output
    assert '"session.idle_timeout"' in run.output, "ended by the idle watchdog"
    assert run.took_s < SEND_TIMEOUT_MS / 1000, "before the send timeout could end it"


# --- the tool contract: newer gh-aw's semantics ---------------------------------------


def test_the_tool_call_budget_is_a_soft_stop(runs: Runs) -> None:
    """Past `maxToolCalls` the call is refused with gh-aw's reason, the model
    answers from what it has, and the run succeeds at once (gh-aw's newer
    driver: a denial the model reads, not a failed run the harness retries)."""
    run = runs("budget", "ours")
    assert run.verdict == (0, 1, ()), describe(run)
    assert (run.workspace / "b0").exists()
    assert (run.workspace / "b1").exists()
    assert not (run.workspace / "b2").exists(), "the call past the budget never ran"
    calls = run.model_calls()
    assert len(calls) == 4, "asked once more after the refused call, for the answer"
    *_, refused_call, refusal = calls[-1].body["messages"]
    (b2_call,) = refused_call["tool_calls"]
    assert json.loads(b2_call["function"]["arguments"]) == {"command": "touch b2"}
    assert refusal["role"] == "tool"
    assert refusal["tool_call_id"] == b2_call["id"]
    assert BUDGET_REASON in refusal["content"], "the model was told why the call did not run"
    debits = run.events_of("guard.tool_call_budget_debit")
    assert [event["data"] for event in debits] == [
        {
            "toolName": "bash",
            "sessionId": debits[0]["data"].get("sessionId"),
            "callCount": count,
            "limit": 2,
            "exhausted": count > 2,
        }
        for count in (1, 2, 3)
    ]
    session_id = debits[0]["data"]["sessionId"]
    assert isinstance(session_id, str)
    assert session_id


def test_a_malformed_contract_fails_before_any_model_request(runs: Runs) -> None:
    """Our driver refuses a contract it cannot read (exit 2, with a message):
    the harness sees a failure with output and retries it like any other."""
    run = runs("malformed-contract", "ours")
    assert not run.model_calls(), "no prompt was sent"
    assert [attempt.exit_code for attempt in run.attempts] == [2, 2, 2, 2], describe(run)
    assert run.exhausted
    assert run.done_exit_code == 2
    assert "GH_AW_COPILOT_SDK_TOOL_CONFIG" in run.output


@pytest.mark.parametrize(
    ("case_name", "driver"),
    [
        (case, driver)
        for case in CASES
        for driver in BOTH
        if case not in OURS_ONLY or driver == "ours"
    ],
)
def test_the_harness_leaves_no_process_behind(runs: Runs, case_name: str, driver: str) -> None:
    """When the harness exits, its sidecar and every driver attempt are gone too."""
    assert runs(case_name, driver).survivors == []


# --- create-pull-request's grants (github/gh-aw#60364) ---------------------------------


def test_create_pull_requests_git_grants_branch_and_commit_and_the_push_is_refused(
    runs: Runs,
) -> None:
    """The grants gh-aw adds for `create-pull-request` let the agent branch and commit;
    `git push` is not among them, so the remote never gets the branch. One denial
    is not the guard's business: the run succeeds on its first attempt."""
    run = runs("create-pull-request", "ours")
    assert run.verdict == (0, 1, ()), describe(run)
    assert _git(run.workspace, "branch", "--show-current") == BRANCH
    assert _git(run.workspace, "log", "-1", "--format=%s") == "Add the notes"
    assert _git(run.workspace, "show", "--name-only", "--format=", "HEAD") == "notes.txt"
    remote = run.workspace.parent / "origin.git"
    assert _git(remote, "branch", "--list", BRANCH) == "", "the push never reached origin"
    assert _git(remote, "branch", "--list", "main") != ""
    assert "git push origin agent/notes" in run.output, "the refused push is named"
    assert "committed on the branch" in run.output


def test_a_guard_on_create_pull_request_grants_ends_the_run_at_once(runs: Runs) -> None:
    """The run of github/gh-aw#60364 that stalled after the guard until the job's
    timeout: here the guard ends it at the third denial, long before the send timeout,
    and the harness does not retry it (three permission-denied lines)."""
    run = runs("create-pull-request-guard", "ours")
    assert run.failure_classes == ["permission_denied"], describe(run)
    assert len(run.attempts) == 1
    assert run.done_exit_code == ExitCode.TOOL_DENIALS
    assert len(run.model_calls()) == 3, "inference stopped at the threshold"
    assert run.took_s < SEND_TIMEOUT_MS / 1000, f"ended after {run.took_s:.1f}s"
    remote = run.workspace.parent / "origin.git"
    assert _git(remote, "branch", "--list", BRANCH) == ""


# --- the post-result watchdog -------------------------------------------------------


def test_a_turn_still_working_after_a_result_is_not_ended_for_silence(runs: Runs) -> None:
    """With a terminal safe output already written, the harness ends a driver that
    stays silent (v0.82.10: 20 s; newer: GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS, 2 minutes
    unless set). gh-aw's driver says nothing while the model takes 23 s and is ended;
    ours says the turn is still in flight every 2 s, and the answer arrives."""
    ours, theirs = runs("slow-after-result", "ours"), runs("slow-after-result", "gh-aw")
    ended_for_silence = "post-result watchdog terminating idle process"
    assert ended_for_silence in theirs.output, "the control: a silent driver is ended"
    assert ended_for_silence not in ours.output, describe(ours)
    assert ours.verdict == (0, 1, ()), describe(ours)
    assert SLOW_ANSWER in ours.output
    waiting = [line for line in _driver_lines(ours) if "driver.waiting" in line]
    assert len(waiting) >= SLOW_REPLY_S // 2 - 2, describe(ours)


# --- output discipline: what newer gh-aw's harness reads in our output -------------

DENIAL_LINES = re.compile(
    r"permission denied by workflow tool permissions: "
    r"|tool denial \d+/\d+: permission denied: "
    r"|max tool denials threshold reached: permission denied "
    r"|permission denied by the tool-call budget: "
)
"""Our lines about a real denial, worded as gh-aw's own driver words them: the harness
is meant to count these."""


def _driver_lines(run: HarnessRun) -> list[str]:
    return [line for line in run.output.splitlines() if not line.startswith("[copilot-harness]")]


@pytest.mark.parametrize("case_name", list(CASES))
def test_nothing_we_print_matches_a_harness_pattern_by_accident(runs: Runs, case_name: str) -> None:
    """gh-aw's harness decides from patterns in a driver's output whether a failed
    attempt is retried (`400 Bad Request`, `Authentication failed`, permission denied,
    ...). In every case the only lines of ours that match one are about a real
    denial, so a run is never misjudged by our wording."""
    run = runs(case_name, "ours")
    accidental = [
        (name, line[:300])
        for line in _driver_lines(run)
        for name, pattern in CLASSIFYING_PATTERNS.items()
        if pattern.search(line) and not (name == "permission_denied" and DENIAL_LINES.search(line))
    ]
    assert not accidental, accidental


def test_one_denial_never_reads_as_the_harness_s_numerous_permission_denials(runs: Runs) -> None:
    """Three "permission denied" matches make the harness give up on a failed run
    without a retry. gh-aw's driver writes two lines per denial; ours, warning
    annotation included (GITHUB_ACTIONS=true), writes no more, so a run with one
    denial that later fails for a transient reason is still retried."""
    run = runs("create-pull-request", "ours")
    matching = [line[:200] for line in _driver_lines(run) if PERMISSION_DENIED.search(line)]
    assert len(matching) == 2, matching
    assert "::warning title=Copilot tool denied::" in run.output, "the annotation is there"


# --- events.jsonl -------------------------------------------------------------------


@pytest.mark.parametrize("case_name", SAME_EVENTS)
def test_our_events_cover_every_event_gh_aws_driver_writes(runs: Runs, case_name: str) -> None:
    ours, theirs = runs(case_name, "ours").event_fields(), runs(case_name, "gh-aw").event_fields()
    missing = {
        event_type: sorted(fields - ours.get(event_type, set()))
        for event_type, fields in theirs.items()
        if event_type not in ours or not fields <= ours[event_type]
    }
    assert not missing, f"missing event types or data fields: {missing}"


@pytest.mark.parametrize("case_name", list(CASES))
def test_our_timestamps_are_gh_aws_iso_format(runs: Runs, case_name: str) -> None:
    run = runs(case_name, "ours")
    stamps = [event.get("timestamp") for event in run.events]
    wrong = [stamp for stamp in stamps if not TIMESTAMP.match(str(stamp))]
    assert not wrong, f"{len(wrong)} of {len(stamps)} timestamps, e.g. {wrong[0]!r}"


@pytest.mark.parametrize("case_name", list(CASES))
def test_the_prompt_never_reaches_events_jsonl(runs: Runs, case_name: str) -> None:
    run = runs(case_name, "ours")
    leaked = [event.get("type") for event in run.events if MARKER in json.dumps(event)]
    assert not leaked, f"the prompt's text is in: {leaked}"


# --- a GitHub token in gh-aw's environment ----------------------------------------------


def test_a_github_token_signs_gh_aws_sidecar_in_and_never_reaches_our_driver(runs: Runs) -> None:
    """gh-aw gives its harness the workflow's COPILOT_GITHUB_TOKEN: the sidecar it starts
    (`--headless --no-auto-update --port N`, no `--no-auto-login`) signs in to GitHub
    with it, here the local fake, while the model is AWF's (the provider catalog). Our
    driver runs as usual and nothing it writes holds the token."""
    with FakeGitHubCopilot() as github:
        case = HarnessCase(
            PROMPT,
            _script(Reply(text="signed in and answered")),
            env={
                "COPILOT_GITHUB_TOKEN": github.token,
                "COPILOT_DEBUG_GITHUB_API_URL": github.github_api_url,
                "COPILOT_OFFLINE": "",
            },
        )
        run = run_case(runs.rig, Case(case), "ours")
        signed_in = [
            request
            for request in github.requests_to("/copilot_internal/user")
            if request.token == github.token
        ]
    assert run.done_exit_code == 0, describe(run)
    assert len(run.attempts) == 1, describe(run)
    assert signed_in, "gh-aw's sidecar never signed in with the token"
    assert run.model_calls(), "the model (AWF's catalog) was never called"
    written = run.output + json.dumps(run.events)
    written += "".join(
        path.read_text(errors="replace") for path in run.session_state.rglob("*") if path.is_file()
    )
    assert github.token not in written
