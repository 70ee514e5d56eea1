"""The fake GitHub is faithful: the real Copilot CLI, signed in with a GitHub
token, works against it as it does against GitHub, in both modes, and its
switches reach the SDK as the measured failures of CLI 1.0.102 do.

One plain fake and one sidecar serve most tests; each test signs its
session in with a fresh token (`create_session(github_token=...)`), so it
reads its own requests from the shared records and the CLI's user cache
never answers for it.
"""

from __future__ import annotations

import itertools
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.driver.connection import release_transport
from copilot_driver.testing.environment import TestSidecar
from copilot_driver.testing.fixtures import missing_component
from copilot_driver.testing.github_api import (
    FakeGitHubCopilot,
    RateLimit,
    Switches,
    new_token,
    start_subscription_sidecar,
)
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

pytestmark = pytest.mark.e2e

GREETING = "Hello from the scripted model."
SCRIPT = Script(
    rules=(
        Rule(
            "RUNTOOL",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "echo hi", "description": "hi"}),)),
                Reply(text="The shell said hi."),
            ),
        ),
        Rule(
            "ASKGITHUB",
            (
                Reply(
                    tool_calls=(
                        ToolCall("github-mcp-server-search_repositories", {"query": "hello"}),
                    )
                ),
                Reply(text="Found one."),
            ),
        ),
    )
)


@dataclass
class Turn:
    """One session's single turn: the answer or the error, what it emitted."""

    answer: str | None = None
    error: Exception | None = None
    events: list[Any] = field(default_factory=list)
    permissions: list[Any] = field(default_factory=list)

    def of(self, kind: str) -> list[Any]:
        return [event.data for event in self.events if event.type.value == kind]


async def run_turn(
    sidecar: TestSidecar,
    prompt: str,
    *,
    model: str = "gpt-5-mini",
    github_token: str | None = None,
    workdir: Path | None = None,
) -> Turn:
    """Create a session on `sidecar` and send `prompt` once; session.create
    errors propagate, a failed turn is kept in `Turn.error`."""
    from copilot import CopilotClient, PermissionHandler, RuntimeConnection

    turn = Turn()

    def approve(request: Any, invocation: Any) -> Any:
        turn.permissions.append(request)
        return PermissionHandler.approve_all(request, invocation)

    client = CopilotClient(
        connection=RuntimeConnection.for_uri(sidecar.uri, connection_token=sidecar.token)
    )
    await client.start()
    try:
        session = await client.create_session(
            model=model,
            on_permission_request=approve,
            github_token=github_token,
            working_directory=str(workdir) if workdir else None,
        )
        session.on(turn.events.append)
        try:
            message = await session.send_and_wait(prompt, timeout=60)
            data: Any = message.data if message else None
            turn.answer = data.content if data is not None else None
        except Exception as error:  # the turn's failure is what some tests look at
            turn.error = error
        await session.disconnect()
    finally:
        release_transport(client)  # else stop() waits a second for the SDK's reader
        await client.stop()
    return turn


def in_order(seen: Sequence[str], expected: Sequence[str]) -> bool:
    """Whether `expected` occurs in `seen` in this order (others may come between)."""
    rest = iter(seen)
    return all(any(item == wanted for item in rest) for wanted in expected)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeGitHubCopilot]:
    with FakeGitHubCopilot(SCRIPT) as running:
        yield running


@pytest.fixture(scope="module")
def sidecar(
    fake: FakeGitHubCopilot,
    copilot_cli: Path,
    copilot_cache_home: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[TestSidecar]:
    workdir = tmp_path_factory.mktemp("subscription")
    started = start_subscription_sidecar(
        workdir, fake, binary=copilot_cli, cache_home=copilot_cache_home
    )
    yield started
    started.stop()


@pytest.fixture(autouse=True)
def _healthy(fake: FakeGitHubCopilot) -> Iterator[None]:
    fake.switches = Switches()
    yield
    fake.switches = Switches()


async def test_plain_mode_answers_after_the_measured_sequence(
    fake: FakeGitHubCopilot, sidecar: TestSidecar
) -> None:
    turn = await run_turn(sidecar, "say hello")  # the sidecar's own token

    assert turn.answer == GREETING
    paths = fake.paths(fake.token)
    assert paths[0] == "GET /copilot_internal/user"  # at start-up
    assert in_order(
        paths,
        [
            "GET /models",
            "GET /copilot_internal/team_customizations",
            "POST /mcp/readonly",
            "POST /mcp/readonly",
            "POST /responses",
        ],
    ), paths
    discover, initialize = fake.requests_to("/mcp/readonly", "POST", fake.token)[:2]
    assert discover.body["method"] == "server/discover"
    assert discover.headers["mcp-method"] == "server/discover"
    assert initialize.body["params"]["protocolVersion"] == "2025-11-25"
    assert initialize.headers["x-mcp-host"] == "copilot-cli"
    (answered,) = fake.requests_to("/responses", token=fake.token)
    assert not answered.body.get("stream")
    assert answered.body["store"] is False
    assert answered.headers["copilot-integration-id"] == "copilot-developer-cli"
    assert answered.headers["editor-version"].startswith("copilot/")
    tools = {tool["name"] for tool in answered.body["tools"]}
    assert "bash" in tools
    assert {
        "github-mcp-server-get_file_contents",
        "github-mcp-server-search_repositories",
    } <= tools
    assert fake.requests_to("/chat/completions") == []


async def test_a_tool_turn_on_the_responses_path(
    fake: FakeGitHubCopilot, sidecar: TestSidecar, tmp_path: Path
) -> None:
    token = fake.new_token()
    turn = await run_turn(sidecar, "RUNTOOL now", github_token=token, workdir=tmp_path)

    assert turn.answer == "The shell said hi."
    assert [request.kind for request in turn.permissions] == ["shell"]
    first, second = fake.requests_to("/responses", token=token)
    assert not any(item.get("type") == "function_call_output" for item in first.body["input"])
    (call,) = [item for item in second.body["input"] if item.get("type") == "function_call"]
    (output,) = [i for i in second.body["input"] if i.get("type") == "function_call_output"]
    assert call["name"] == "bash"
    assert output["call_id"] == call["call_id"]
    assert output["output"].startswith("hi\n")


@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "no-hints"])
async def test_the_github_mcp_tools_are_called_asking_only_without_read_only_hints(
    fake: FakeGitHubCopilot, sidecar: TestSidecar, read_only: bool
) -> None:
    fake.switch(mcp_read_only=read_only)
    token = fake.new_token()
    turn = await run_turn(sidecar, "ASKGITHUB please", github_token=token)

    assert turn.answer == "Found one."
    asked = [request.to_dict() for request in turn.permissions]
    if read_only:
        assert asked == []
    else:
        (permission,) = asked
        assert permission["kind"] == "mcp"
        assert permission["serverName"] == "github-mcp-server"
        assert permission["toolName"] == "github-mcp-server-search_repositories"
    calls = [r.body for r in fake.requests_to("/mcp/readonly", "POST", token)]
    (tool_call,) = [body for body in calls if body.get("method") == "tools/call"]
    assert tool_call["params"]["name"] == "search_repositories"
    assert tool_call["params"]["arguments"] == {"query": "hello"}
    last = fake.requests_to("/responses", token=token)[-1]
    (output,) = [i for i in last.body["input"] if i.get("type") == "function_call_output"]
    assert "octocat/Hello-World" in output["output"]


async def test_https_mode_reaches_the_real_hosts_through_the_proxy(
    copilot_cli: Path, copilot_cache_home: Path, tmp_path: Path
) -> None:
    if shutil.which("openssl") is None:
        missing_component("openssl", FileNotFoundError("the `openssl` command is not on PATH"))
    with FakeGitHubCopilot(https=True) as secure:
        started = start_subscription_sidecar(
            tmp_path, secure, https=True, binary=copilot_cli, cache_home=copilot_cache_home
        )
        try:
            turn = await run_turn(started, "say hello")
        finally:
            started.stop()
        telemetry = secure.wait_for("/telemetry", timeout=10)  # sent at shutdown

    assert turn.answer == GREETING
    hosts = {r.path: r.host for r in secure.requests()}
    assert hosts["/copilot_internal/user"] == "api.github.com"
    assert hosts["/models"] == "api.individual.githubcopilot.com"
    assert hosts["/responses"] == "api.individual.githubcopilot.com"
    assert hosts["/telemetry"] == "telemetry.individual.githubcopilot.com"
    assert all(r.secure for r in secure.requests())
    connected = secure.connected_hosts()
    assert connected[0] == "api.github.com"
    assert connected.count("api.github.com") >= 2  # a probe CONNECT, then the real one
    assert "api.individual.githubcopilot.com" in connected
    assert secure.refused_hosts() == []
    events = telemetry[0].body
    assert "authorization" not in telemetry[0].headers
    assert all(event["name"].startswith("copilot-cli/") for event in events)


async def test_a_refused_session_token_fails_session_create(
    fake: FakeGitHubCopilot, sidecar: TestSidecar
) -> None:
    token = new_token()  # never accepted
    with pytest.raises(Exception, match="GitHub token validation failed") as raised:
        await run_turn(sidecar, "say hello", github_token=token)

    assert '401 Unauthorized: {"message":"Bad credentials"}' in str(raised.value)
    assert fake.paths(token) == ["GET /copilot_internal/user"]


@pytest.mark.parametrize(
    ("switches", "message"),
    [
        (Switches(token_refused=True), "(401): GitHub returned: Bad credentials"),
        (
            Switches(copilot_access=False),
            "(403): GitHub returned: Resource not accessible by personal access token",
        ),
    ],
    ids=["401", "403"],
)
async def test_a_sidecar_token_github_refuses_fails_session_create(
    copilot_cli: Path, copilot_cache_home: Path, tmp_path: Path, switches: Switches, message: str
) -> None:
    with FakeGitHubCopilot(switches=switches) as refusing:
        started = start_subscription_sidecar(
            tmp_path, refusing, binary=copilot_cli, cache_home=copilot_cache_home
        )
        try:
            with pytest.raises(Exception, match="Failed to validate SDK token") as raised:
                await run_turn(started, "say hello")
        finally:
            started.stop()
        paths = refusing.paths(refusing.token)

    assert f"Authentication failed: Failed to validate SDK token {message}" in str(raised.value)
    assert set(paths) == {"GET /copilot_internal/user"}  # asked again and again, nothing else
    assert len(paths) >= 2


async def test_an_endless_rate_limit_reaches_the_sdk_after_six_attempts(
    fake: FakeGitHubCopilot, sidecar: TestSidecar
) -> None:
    fake.switch(rate_limit=RateLimit(retry_after_s=1))
    token = fake.new_token()
    turn = await run_turn(sidecar, "say hello", github_token=token)

    assert turn.answer is None
    (error,) = turn.of("session.error")
    assert (error.error_type, error.error_code, error.status_code) == (
        "rate_limit",
        "rate_limited",
        429,
    )
    assert error.eligible_for_auto_switch is True
    assert error.message.startswith("You've hit your rate limit.")
    attempts = fake.requests_to("/responses", token=token)
    assert [r.status for r in attempts] == [429] * 6
    gaps = [later.time - earlier.time for earlier, later in itertools.pairwise(attempts)]
    assert min(gaps) >= 0.9  # Retry-After: 1 honoured


async def test_a_short_rate_limit_is_retried_through(
    fake: FakeGitHubCopilot, sidecar: TestSidecar
) -> None:
    fake.switch(rate_limit=RateLimit(times=1, retry_after_s=1))
    token = fake.new_token()
    turn = await run_turn(sidecar, "say hello", github_token=token)

    assert turn.answer == GREETING
    assert [r.status for r in fake.requests_to("/responses", token=token)] == [429, 200]


async def test_an_exhausted_quota_fails_the_turn_at_once(
    fake: FakeGitHubCopilot, sidecar: TestSidecar
) -> None:
    fake.switch(quota_exhausted=True)
    token = fake.new_token()
    turn = await run_turn(sidecar, "say hello", github_token=token)

    (error,) = turn.of("session.error")
    assert (error.error_type, error.error_code, error.status_code) == (
        "quota",
        "quota_exceeded",
        402,
    )
    assert [r.status for r in fake.requests_to("/responses", token=token)] == [402]


async def test_the_cli_hides_some_catalog_models(sidecar: TestSidecar) -> None:
    from copilot import CopilotClient, RuntimeConnection

    client = CopilotClient(
        connection=RuntimeConnection.for_uri(sidecar.uri, connection_token=sidecar.token)
    )
    await client.start()
    try:
        listed = [model.id for model in await client.list_models()]
    finally:
        release_transport(client)
        await client.stop()
    assert listed == ["auto", "gpt-5-mini", "gpt-5.2", "claude-sonnet-4.5"]  # no gpt-4.1
    with pytest.raises(Exception, match=re.escape('Model "gpt-4.1" is not available')):
        await run_turn(sidecar, "say hello", model="gpt-4.1")


async def test_auto_mode_chooses_the_switched_model(
    fake: FakeGitHubCopilot, sidecar: TestSidecar
) -> None:
    fake.switch(auto_model="claude-sonnet-4.5")
    token = fake.new_token()
    turn = await run_turn(sidecar, "say hello", model="auto", github_token=token)

    assert turn.answer == GREETING
    (resolved,) = turn.of("session.auto_mode_resolved")
    assert resolved.chosen_model == "claude-sonnet-4.5"
    (asked,) = fake.requests_to("/auto", token=token)
    assert asked.body["prompt"] == "say hello"
    (answered,) = fake.requests_to("/responses", token=token)
    assert answered.body["model"] == "claude-sonnet-4.5"
    assert answered.headers["copilot-session-token"]
