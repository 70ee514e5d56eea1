"""The path most users take: the harness on a GitHub token (a Copilot subscription),
end to end on the real Copilot CLI, against the local fake of GitHub's API.

No provider, no `COPILOT_OFFLINE`: the CLI signs in to "GitHub" with the token,
reads the account and its model catalog, and calls the Copilot API's Responses
endpoint, exactly as in production. The fake answers as GitHub does on the real
host names (api.github.com, api.individual.githubcopilot.com, over TLS with a
throw-away authority behind a proxy, as a runner behind a TLS-intercepting proxy
sees them), or, in plain mode, on `COPILOT_DEBUG_GITHUB_API_URL`. What the CLI
sent is read from the fake's records; what the tools did from the workspace.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ToolCall
from copilot_driver.testing.github_api import (
    FakeGitHubCopilot,
    RateLimit,
    catalog_without,
)
from helpers.actions_runner import read_file_commands
from helpers.token_runs import TokenHarness, TokenRun

pytestmark = pytest.mark.e2e

ANSWER = "Hello from the subscription path."
SCRIPT = Script(
    rules=(
        Rule(
            "TOOLS",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "echo token-path-ok"}),)),
                Reply(tool_calls=(ToolCall("bash", {"command": "rm victim.txt"}),)),
                Reply(text="Echoed; removing was not allowed."),
            ),
        ),
    ),
    default=Reply(text=ANSWER),
)
POLICY = json.dumps({"allowedTools": ["shell(echo:*)", "read"]})
CLASSIC = "ghp_" + "Tq8Wd3Lx6Np1Rz5Kc7Vb2Hm4Js9Gf0Ye3Ua6"


@pytest.fixture
def fake() -> Iterator[FakeGitHubCopilot]:
    with FakeGitHubCopilot(SCRIPT, https=True) as server:
        yield server


@pytest.fixture
def runs(
    tmp_path: Path, fake: FakeGitHubCopilot, copilot_cli: Path, copilot_cache_home: Path
) -> TokenHarness:
    return TokenHarness(tmp_path, fake, copilot_cli, copilot_cache_home)


def model_calls(fake: FakeGitHubCopilot) -> int:
    return len(fake.requests_to("/responses", "POST"))


def error_kind(run: TokenRun) -> str:
    """The `error-kind` step output the harness wrote (GitHub Actions)."""
    return read_file_commands(run.outputs())["error-kind"]


def report(run: TokenRun, form: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver.report", str(run.session()), "--format", form],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout + completed.stderr


@pytest.mark.parametrize(
    ("sandbox", "https"),
    [("workspace", True), ("off", True), ("workspace", False), ("off", False)],
    ids=[
        "sandbox-real-hosts",
        "no-sandbox-real-hosts",
        "sandbox-debug-url",
        "no-sandbox-debug-url",
    ],
)
def test_a_run_on_a_github_token_answers_and_leaves_no_trace_of_it(
    runs: TokenHarness, fake: FakeGitHubCopilot, sandbox: str, https: bool
) -> None:
    run = runs.run("Say hello", "--sandbox", sandbox, https=https, actions=True)

    assert run.returncode == 0, run.completed.stderr
    assert run.completed.stdout == ANSWER + "\n"
    # What the CLI did on the token: the account, the catalog, then one model call,
    # each carrying the token as given (no exchange).
    paths = fake.paths()
    assert paths[0] == "GET /copilot_internal/user"
    assert paths.index("GET /models") < paths.index("POST /responses")
    assert model_calls(fake) == 1
    signed = [request for request in fake.requests() if request.path != "/telemetry"]
    assert {request.token for request in signed} == {fake.token}  # the pre-warm sent nothing
    (checked,) = run.log("account.checked")
    assert checked["login"] == "octocat"
    assert checked["model"] == "gpt-5-mini"
    if https:
        assert set(fake.connected_hosts()) <= {
            "api.github.com",
            "api.individual.githubcopilot.com",
            "telemetry.individual.githubcopilot.com",
        }
        assert fake.refused_hosts() == []
    sandbox_record = run.sandbox()
    assert sandbox_record["mode"] == sandbox
    if sandbox == "workspace":
        reached = sandbox_record.get("egressAllowed", {})
        github = "api.github.com:443" if https else f"127.0.0.1:{fake.port}"
        assert reached.get(github, 0) >= 1, sandbox_record
        assert sandbox_record["egressDenied"] == {}
    # The token's value is nowhere: output, log, events, result, sidecar.log,
    # sandbox.json, step outputs and summary, and both reports.
    written = run.everything_written() + report(run, "text") + report(run, "markdown")
    assert fake.token not in written
    assert (run.session() / "sidecar.log").is_file()


def test_a_tool_turn_on_the_responses_path_runs_what_the_policy_allows_only(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    (runs.workspace / "victim.txt").write_text("still here\n")
    run = runs.run("TOOLS please", GH_AW_COPILOT_SDK_PERMISSIONS=POLICY)

    assert run.returncode == 0, run.completed.stderr
    assert run.completed.stdout == "Echoed; removing was not allowed.\n"
    calls = fake.requests_to("/responses", "POST")
    assert len(calls) == 3
    # The allowed command really ran: its output reached the model in the next turn.
    outputs = [
        item for item in calls[1].body["input"] if item.get("type") == "function_call_output"
    ]
    assert any("token-path-ok" in json.dumps(item) for item in outputs), outputs
    # The forbidden one did not: the file is there, and the model was told.
    assert (runs.workspace / "victim.txt").read_text() == "still here\n"
    refused = [
        item for item in calls[2].body["input"] if item.get("type") == "function_call_output"
    ]
    assert any("rejected" in json.dumps(item).lower() for item in refused), refused
    (denied,) = run.log("permission.denied")
    assert denied["requestSummary"] == "shell(rm victim.txt)"


def test_a_classic_token_is_refused_before_anything_starts(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    run = runs.run("Say hello", token=CLASSIC, actions=True)

    assert run.returncode == 2, run.completed.stderr
    assert error_kind(run) == "unsupported_token"
    assert "COPILOT_GITHUB_TOKEN holds a classic personal access token" in run.completed.stderr
    assert fake.requests() == []
    assert fake.connected_hosts() == []
    assert not list(run.state.glob("**/sidecar*.log"))
    assert CLASSIC not in run.everything_written()


@pytest.mark.parametrize(
    ("switches", "kind", "says"),
    [
        ({"token_refused": True}, "token_refused", "GitHub refused the sidecar's token"),
        ({"copilot_access": False}, "no_copilot_access", "has no Copilot access"),
        ({"chat_enabled": False}, "no_copilot_access", "has no Copilot access"),
    ],
    ids=["refused-401", "no-access-403", "chat-disabled"],
)
def test_a_token_without_copilot_stops_the_run_before_any_model_call(
    runs: TokenHarness,
    fake: FakeGitHubCopilot,
    switches: dict[str, bool],
    kind: str,
    says: str,
) -> None:
    fake.switch(**switches)
    run = runs.run("Say hello", actions=True)

    assert run.returncode == 2, run.completed.stderr
    assert error_kind(run) == kind
    (error,) = run.log("error")
    assert says in error["message"]
    assert model_calls(fake) == 0
    assert len(run.log("client.started")) == 1  # one try: another would fail the same way
    fixes = [line for line in run.completed.stderr.splitlines() if "how to fix:" in line]
    assert fixes, run.completed.stderr
    assert "COPILOT_GITHUB_TOKEN" in fixes[-1]
    assert fake.token not in run.everything_written()


@pytest.mark.parametrize(
    ("model", "catalog_change"),
    [("gpt-4.1", None), ("claude-sonnet-4.5", "claude-sonnet-4.5")],
    ids=["hidden-by-the-cli", "not-in-the-catalog"],
)
def test_a_model_the_account_cannot_use_is_named_with_those_it_can(
    runs: TokenHarness, fake: FakeGitHubCopilot, model: str, catalog_change: str | None
) -> None:
    if catalog_change is not None:
        fake.switch(catalog=catalog_without(catalog_change))
    run = runs.run("Say hello", actions=True, COPILOT_MODEL=model)

    assert run.returncode == 2, run.completed.stderr
    assert error_kind(run) == "model_unavailable"
    (error,) = run.log("error")
    assert f"COPILOT_MODEL={model}" in error["message"]
    assert "gpt-5-mini" in error["message"]
    # No model call, and no silent switch to another model ("auto").
    assert model_calls(fake) == 0
    assert fake.requests_to("/auto") == []
    assert fake.requests_to("/models/session") == []


def test_auto_is_used_only_when_asked_for(runs: TokenHarness, fake: FakeGitHubCopilot) -> None:
    fake.switch(auto_model="gpt-5-mini")
    run = runs.run("Say hello", COPILOT_MODEL="auto")

    assert run.returncode == 0, run.completed.stderr
    assert run.completed.stdout == ANSWER + "\n"
    (call,) = fake.requests_to("/responses", "POST")
    assert call.body["model"] == "gpt-5-mini", call.body["model"]


def test_a_rate_limit_is_retried_a_bounded_number_of_times_then_said(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    fake.switch(rate_limit=RateLimit(retry_after_s=1))
    run = runs.run("Say hello", "--retries", "1", "--retry-delay", "1", actions=True)

    assert run.returncode == 1, run.completed.stderr
    assert error_kind(run) == "rate_limited"
    # The CLI's own attempts (6, honouring Retry-After) in each of the harness's 2 tries.
    assert model_calls(fake) == 12
    assert len(run.log("client.started")) == 2
    (last_error, *_) = reversed(run.log("error"))
    assert "rate-limited the account (HTTP 429, rate_limited)" in last_error["message"]
    assert "reset on" in last_error["message"]  # the account's quotas and their reset date


def test_a_premium_model_without_premium_requests_left_is_refused_before_any_call(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    fake.switch(quota_exhausted=True)
    run = runs.run("Say hello", actions=True, COPILOT_MODEL="gpt-5.2")

    assert run.returncode == 1, run.completed.stderr
    assert error_kind(run) == "quota_exceeded"
    (error,) = run.log("error")
    assert "premium requests: 0 of 50 left" in error["message"]
    assert "gpt-5-mini" in error["message"]  # what the plan still includes
    assert model_calls(fake) == 0


def test_an_exhausted_quota_mid_run_is_said_once_and_not_retried(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    fake.switch(quota_exhausted=True)
    run = runs.run("Say hello", actions=True)  # gpt-5-mini: included, passes the check

    assert run.returncode == 1, run.completed.stderr
    assert error_kind(run) == "quota_exceeded"
    assert model_calls(fake) == 1
    assert len(run.log("client.started")) == 1
    (error,) = run.log("error")
    assert "quota is used up" in error["message"]
    assert "reset on" in error["message"]


def test_github_out_of_reach_names_the_host_and_the_way_there(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    """A GitHub Enterprise host the runner's proxy does not carry: the sandbox allows it
    (GH_HOST), its egress proxy asks the upstream proxy, which refuses."""
    run = runs.run("Say hello", actions=True, GH_HOST="acme.ghe.com")

    assert run.returncode == 1, run.completed.stderr
    assert error_kind(run) == "github_unreachable"
    (error,) = run.log("error")
    assert "could not reach GitHub at api.acme.ghe.com" in error["message"]
    assert "proxy or firewall" in error["message"]
    assert "api.acme.ghe.com" in fake.refused_hosts()
    assert model_calls(fake) == 0
    # No session exists, so no session folder: the harness's log and the step summary
    # name the refusal.
    assert "sandbox: egress to api.acme.ghe.com:443 refused" in run.completed.stderr
    assert "api.acme.ghe.com:443" in run.files["GITHUB_STEP_SUMMARY"].read_text()


def test_github_enterprise_hosts_are_allowed_by_the_sandbox(
    tmp_path: Path, copilot_cli: Path, copilot_cache_home: Path
) -> None:
    with FakeGitHubCopilot(SCRIPT, https=True, ghe_host="acme.ghe.com") as fake:
        runs = TokenHarness(tmp_path, fake, copilot_cli, copilot_cache_home)
        run = runs.run("Say hello", GH_HOST="acme.ghe.com")

        assert run.returncode == 0, run.completed.stderr
        assert run.completed.stdout == ANSWER + "\n"
        hosts = set(fake.connected_hosts())
        assert hosts, run.completed.stderr
        assert all(host.endswith(".acme.ghe.com") for host in hosts), hosts
        assert "acme.ghe.com" in run.sandbox()["allowedHosts"]
        assert fake.refused_hosts() == []


def test_a_failing_copilot_api_is_retried_then_said_with_its_status(
    runs: TokenHarness, fake: FakeGitHubCopilot
) -> None:
    fake.switch(failures={"/models": 503})
    run = runs.run("Say hello", "--retries", "1", "--retry-delay", "0.5", actions=True)

    assert run.returncode == 1, run.completed.stderr
    assert error_kind(run) == "copilot_api_error"
    assert len(run.log("client.started")) == 2  # transient: tried again, once
    (last_error, *_) = reversed(run.log("error"))
    assert "https://api.individual.githubcopilot.com" in last_error["message"]
    assert "HTTP 503" in last_error["message"]
    assert model_calls(fake) == 0
