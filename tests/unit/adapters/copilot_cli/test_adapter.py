"""The copilot-cli adapter end to end on fake processes (spec: "Copilot CLI adapter").

Most tests fake the CLI with pytest-subprocess (`fp`): the canary, `gh auth
status` and every turn are registered fake processes, and a turn's stdout is
the exact stdout of a real CLI run (tests/data/copilot-cli). A fake process
cannot write a file while it runs, really overlap with another one, or be
stopped (pytest-subprocess only closes a fake's stdout when it has no
callback and no `wait`), so the tests that need that run `FAKE_CLI`, a small
Python script installed as `copilot`, instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pytest_subprocess import FakeProcess

from copilot_driver.adapters.copilot_cli import CopilotCliAdapter, CopilotCliSession, preflight
from copilot_driver.adapters.copilot_transcript import TranscriptSession
from copilot_driver.adapters.core import registry
from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import (
    Adapter,
    AdapterConfig,
    ExitReason,
    Session,
    TurnResult,
)
from copilot_driver.adapters.core.ssh import SshSettings
from copilot_driver.vocabulary import AdapterErrorKind
from helpers.fake_processes import recorded_argvs

if TYPE_CHECKING:
    from unit.adapters.conftest import FakeCopilot

DATA = Path(__file__).resolve().parents[3] / "data" / "copilot-cli"
PLAIN_SESSION_ID = "d28a6049-3cdb-4b9e-8a01-29d7c44bffe8"
"""The session id in plain-prompt, resume-by-session-id and continue-most-recent."""
TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
FINE_GRAINED_TOKEN = "github_pat_11AAAAAAA0_fake"
TERMINAL_TYPES = {EventType.TURN_COMPLETED, EventType.TURN_FAILED, EventType.TURN_CANCELLED}
CLI_FLAGS = [
    "--output-format", "json", "-s", "--autopilot", "--no-ask-user",
    "--allow-all", "--max-autopilot-continues", "50",
]  # fmt: skip
"""What follows `-p PROMPT` on a first turn with default options (no usage file)."""
SSH_OPTIONS = [
    "-o", "StrictHostKeyChecking=accept-new",
    "-o", "BatchMode=yes",
    "-o", "ConnectTimeout=30",
    "-o", "ServerAliveInterval=15",
    "-o", "ServerAliveCountMax=3",
]  # fmt: skip
TURN_TIMEOUT_S = 30.0

FAKE_CLI = """\
#!@PYTHON@
import json, os, sys, time
from pathlib import Path

scenario = Path(os.environ["FAKE_CLI_DIR"])
args = sys.argv[1:]
if args == ["--version"]:
    print("GitHub Copilot CLI 1.0.102.")
    sys.exit(0)
prompt = args[args.index("-p") + 1]
usage_file = args[args.index("--usage-output-file") + 1] if "--usage-output-file" in args else None
with open(scenario / "calls.jsonl", "a") as log:
    log.write(json.dumps({
        "argv": sys.argv, "cwd": os.getcwd(), "pid": os.getpid(),
        "usage_file_existed": usage_file is not None and os.path.exists(usage_file),
    }) + "\\n")
barrier = scenario / "barrier"
if barrier.is_dir():  # both turns must be running at the same time
    (barrier / str(os.getpid())).touch()
    deadline = time.monotonic() + 10
    while len(list(barrier.iterdir())) < 2:
        if time.monotonic() > deadline:
            sys.exit(99)
        time.sleep(0.01)
report = scenario / (prompt + ".usage.json")
if usage_file and report.exists():
    Path(usage_file).write_text(report.read_text())
stdout = scenario / (prompt + ".jsonl")
if stdout.exists():
    sys.stdout.write(stdout.read_text())
    sys.stdout.flush()
if (scenario / (prompt + ".hang")).exists():
    time.sleep(60)
"""


# -- helpers -------------------------------------------------------------------


def transcript(name: str) -> list[str]:
    """The exact stdout lines of one real CLI 1.0.102 run."""
    return (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def meta(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"{name}.meta.json").read_text(encoding="utf-8"))
    return loaded


def result_line(session_id: str, exit_code: int = 0, api_ms: int = 12) -> str:
    return json.dumps(
        {
            "type": "result",
            "timestamp": "2026-11-21T06:21:48.870Z",
            "sessionId": session_id,
            "exitCode": exit_code,
            "usage": {"premiumRequests": 0, "totalApiDurationMs": api_ms},
        }
    )


def message_line(content: str, output_tokens: int | None = None) -> str:
    data: dict[str, Any] = {"content": content, "toolRequests": []}
    if output_tokens is not None:
        data["outputTokens"] = output_tokens
    return json.dumps({"type": "assistant.message", "data": data})


def usage_report(input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
    """The shape of the CLI's `--usage-output-file` JSON (see the .usage.json fixture)."""
    usage = {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "cacheReadTokens": cached,
        "cacheWriteTokens": 0,
    }
    return {"totalUserRequests": 1, "modelMetrics": {"gpt-4.1": {"usage": usage}}}


def event_types(events: Sequence[AgentEvent]) -> list[EventType]:
    return [event.type for event in events]


def remote_head(workspace: str) -> list[str]:
    """The words of a remote command up to the prompt, as the remote shell splits them."""
    return ["cd", workspace, "&&", "copilot", "-p"]


def fp_never_ran(fp: FakeProcess, binary: Path) -> bool:
    return all(argv[0] != str(binary) for argv in recorded_argvs(fp))


def flag_value(argv: Sequence[str], flag: str) -> str:
    assert list(argv).count(flag) == 1, argv
    return argv[list(argv).index(flag) + 1]


async def run(
    adapter: Adapter, session: Session, prompt: str = "say hi"
) -> tuple[TurnResult, list[AgentEvent]]:
    events: list[AgentEvent] = []
    result = await asyncio.wait_for(
        adapter.run_turn(session, prompt, on_event=events.append), TURN_TIMEOUT_S
    )
    return result, events


@dataclass
class ScriptCli:
    """`FAKE_CLI` installed as `copilot`: a real process, scripted per prompt."""

    scenario: Path
    binary: Path
    workspace: Path

    def adapter(self) -> CopilotCliAdapter:
        env = {
            "PATH": str(self.binary.parent),
            "FAKE_CLI_DIR": str(self.scenario),
            "GH_TOKEN": FINE_GRAINED_TOKEN,
        }
        return CopilotCliAdapter(AdapterConfig(command="copilot", environment=env))

    def script(
        self,
        prompt: str,
        stdout: Sequence[str],
        *,
        usage: Mapping[str, Any] | None = None,
        hang: bool = False,
    ) -> None:
        (self.scenario / f"{prompt}.jsonl").write_text("".join(f"{line}\n" for line in stdout))
        if usage is not None:
            (self.scenario / f"{prompt}.usage.json").write_text(json.dumps(usage))
        if hang:
            (self.scenario / f"{prompt}.hang").touch()

    def calls(self) -> list[dict[str, Any]]:
        log = self.scenario / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture
def script_cli(tmp_path: Path, executable: Callable[..., Path]) -> ScriptCli:
    scenario = tmp_path / "scenario"
    scenario.mkdir()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    text = FAKE_CLI.replace("@PYTHON@", sys.executable)
    return ScriptCli(scenario, executable(tmp_path / "bin", "copilot", text), workspace)


def ssh_adapter(
    bin_dir: Path,
    hosts: tuple[str, ...] = ("host-a", "host-b"),
    *,
    checking: str = "accept-new",
) -> CopilotCliAdapter:
    settings = SshSettings(hosts, checking)  # type: ignore[arg-type]
    return CopilotCliAdapter(AdapterConfig(ssh=settings, environment={"PATH": str(bin_dir)}))


@pytest.fixture
def ssh_binary(tmp_path: Path, executable: Callable[..., Path]) -> Path:
    return executable(tmp_path / "ssh-bin", "ssh")


# -- start_session: the workspace ----------------------------------------------


@pytest.mark.parametrize(
    ("make_workspace", "fragment"),
    [
        pytest.param(lambda tmp: "", "empty", id="empty"),
        pytest.param(lambda tmp: "   ", "empty", id="blank"),
        pytest.param(lambda tmp: "relative/dir", "must be absolute", id="relative"),
        pytest.param(lambda tmp: str(tmp / "missing"), "does not exist", id="missing"),
        pytest.param(lambda tmp: str(tmp / "bin" / "copilot"), "not a directory", id="file"),
    ],
)
async def test_start_session_rejects_a_bad_workspace_before_running_anything(
    fake_copilot: FakeCopilot, tmp_path: Path, make_workspace: Callable[[Path], str], fragment: str
) -> None:
    adapter = fake_copilot.adapter()

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(make_workspace(tmp_path))

    assert caught.value.kind is AdapterErrorKind.INVALID_WORKSPACE_CWD
    assert fragment in caught.value.message
    assert caught.value.retryable is False
    assert list(fake_copilot.fp.calls) == []


async def test_start_session_checks_the_workspace_before_the_binary(tmp_path: Path) -> None:
    adapter = CopilotCliAdapter(
        AdapterConfig(command="copilot", environment={"PATH": str(tmp_path / "empty")})
    )

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(str(tmp_path / "missing"))

    assert caught.value.kind is AdapterErrorKind.INVALID_WORKSPACE_CWD


# -- start_session: the binary and the canary ------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("copilot", id="name-not-on-path"),
        pytest.param("/nonexistent/bin/copilot", id="absolute-path-missing"),
    ],
)
async def test_start_session_without_the_binary_is_agent_not_found(
    fp: FakeProcess, tmp_path: Path, command: str
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": str(empty), "GH_TOKEN": FINE_GRAINED_TOKEN}
    adapter = CopilotCliAdapter(AdapterConfig(command=command, environment=env))

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(tmp_path)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert repr(command) in caught.value.message
    assert "PATH" in caught.value.message
    assert list(fp.calls) == []


async def test_a_binary_that_is_not_executable_is_not_found(fake_copilot: FakeCopilot) -> None:
    fake_copilot.binary.chmod(0o644)
    adapter = fake_copilot.adapter()

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(fake_copilot.workspace)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert list(fake_copilot.fp.calls) == []


async def test_start_session_runs_the_canary_with_the_configured_environment(
    fake_copilot: FakeCopilot,
) -> None:
    env = fake_copilot.env(GITHUB_TOKEN=FINE_GRAINED_TOKEN)
    canary = fake_copilot.canary()

    session = await fake_copilot.adapter(env=env).start_session(fake_copilot.workspace)

    assert [list(call) for call in fake_copilot.fp.calls] == [
        [str(fake_copilot.binary), "--version"]
    ]
    assert canary.calls[0].kwargs is not None
    assert canary.calls[0].kwargs["env"] == env
    assert session.binary == str(fake_copilot.binary)
    assert session.workspace == fake_copilot.workspace
    assert session.id == ""
    assert session.ssh_host is None


@pytest.mark.parametrize(
    ("output", "returncode"),
    [
        pytest.param("/usr/bin/env: 'node': No such file or directory", 127, id="no-node"),
        pytest.param(
            "file:///x/index.js:1\nSyntaxError: Unexpected token '??='", 1, id="node-too-old"
        ),
    ],
)
async def test_a_failing_canary_is_agent_not_found_mentioning_node(
    fake_copilot: FakeCopilot, output: str, returncode: int
) -> None:
    fake_copilot.canary(stdout=output, returncode=returncode)
    # No credential at all: the canary fails first, so its message is the one raised.
    adapter = fake_copilot.adapter(env=fake_copilot.env())

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(fake_copilot.workspace)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "Node.js" in caught.value.message
    assert f"status {returncode}" in caught.value.message
    assert output.splitlines()[-1] in caught.value.message
    assert fake_copilot.argvs() == []


async def test_a_canary_that_does_not_answer_times_out_and_is_killed(
    fake_copilot: FakeCopilot,
) -> None:
    canary = fake_copilot.canary(wait=1.0)
    adapter = fake_copilot.adapter(read_timeout_ms=100)

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(fake_copilot.workspace)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "did not answer within 0.1 s" in caught.value.message
    assert "Node.js" in caught.value.message
    assert signal.SIGKILL in canary.calls[0].received_signals()


async def test_a_binary_that_cannot_be_executed_fails_the_canary(
    tmp_path: Path, executable: Callable[..., Path]
) -> None:
    binary = executable(tmp_path / "bin", "copilot", "this is not a program\n")
    env = {"PATH": str(binary.parent), "GH_TOKEN": FINE_GRAINED_TOKEN}
    adapter = CopilotCliAdapter(AdapterConfig(command="copilot", environment=env))

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(tmp_path)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "cannot be started" in caught.value.message


# -- start_session: the credential -----------------------------------------------


@pytest.mark.parametrize(
    ("variables", "source"),
    [
        pytest.param(dict.fromkeys(TOKEN_VARIABLES, "t"), "COPILOT_GITHUB_TOKEN", id="all-three"),
        pytest.param({"GH_TOKEN": "t", "GITHUB_TOKEN": "t"}, "GH_TOKEN", id="gh-over-github"),
        pytest.param({"GITHUB_TOKEN": "t"}, "GITHUB_TOKEN", id="github-only"),
        pytest.param(
            {"COPILOT_GITHUB_TOKEN": "  ", "GITHUB_TOKEN": "t"}, "GITHUB_TOKEN", id="blank-skipped"
        ),
    ],
)
async def test_token_variables_are_checked_in_order(
    fake_copilot: FakeCopilot,
    executable: Callable[..., Path],
    variables: dict[str, str],
    source: str,
) -> None:
    gh = executable(
        fake_copilot.bin_dir, "gh"
    )  # on PATH but never registered: calling it would raise

    found = await preflight.check_authentication(fake_copilot.env(**variables))

    assert found == source
    assert fp_never_ran(fake_copilot.fp, gh)


@pytest.mark.parametrize("variable", TOKEN_VARIABLES)
async def test_any_one_token_variable_starts_a_session_without_asking_gh(
    fake_copilot: FakeCopilot,
    executable: Callable[..., Path],
    variable: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gh = executable(fake_copilot.bin_dir, "gh")
    adapter = fake_copilot.adapter(env=fake_copilot.env(**{variable: FINE_GRAINED_TOKEN}))

    with caplog.at_level(logging.INFO, logger="copilot_driver.adapters.copilot_cli"):
        session = await fake_copilot.start(adapter)

    assert session.workspace == fake_copilot.workspace
    assert fp_never_ran(fake_copilot.fp, gh)
    assert f"credential from {variable}" in caplog.text
    assert FINE_GRAINED_TOKEN not in caplog.text


async def test_without_a_token_a_logged_in_gh_is_accepted_with_a_warning(
    fake_copilot: FakeCopilot, caplog: pytest.LogCaptureFixture
) -> None:
    gh = fake_copilot.gh(returncode=0, stdout="Logged in to github.com account octocat")
    adapter = fake_copilot.adapter(env=fake_copilot.env())

    with caplog.at_level(logging.WARNING, logger="copilot_driver.adapters.copilot_cli"):
        session = await fake_copilot.start(adapter)

    assert session.workspace == fake_copilot.workspace
    assert [str(gh), "auth", "status"] in [list(call) for call in fake_copilot.fp.calls]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("gh auth status" in r.getMessage() for r in warnings)


@pytest.mark.parametrize("logged_out_gh", [True, False], ids=["logged-out-gh", "no-gh"])
async def test_without_a_token_and_without_a_logged_in_gh_is_agent_not_found(
    fake_copilot: FakeCopilot, logged_out_gh: bool
) -> None:
    if logged_out_gh:
        fake_copilot.gh(returncode=1, stdout="You are not logged into any GitHub hosts.")
    adapter = fake_copilot.adapter(env=fake_copilot.env())

    with pytest.raises(AgentError) as caught:
        await fake_copilot.start(adapter)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    for variable in TOKEN_VARIABLES:
        assert variable in caught.value.message
    assert "gh auth login" in caught.value.message
    assert fake_copilot.argvs() == []


async def test_a_gh_that_hangs_counts_as_not_logged_in(fake_copilot: FakeCopilot) -> None:
    fake_copilot.gh(wait=0.5)

    with pytest.raises(AgentError) as caught:
        await preflight.check_authentication(fake_copilot.env(), timeout_s=0.05)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND


async def test_a_classic_token_passes_with_a_warning(
    fake_copilot: FakeCopilot, caplog: pytest.LogCaptureFixture
) -> None:
    classic = "ghp_0123456789abcdefABCDEF0123456789abcd"
    adapter = fake_copilot.adapter(env=fake_copilot.env(GH_TOKEN=classic))

    with caplog.at_level(logging.WARNING, logger="copilot_driver.adapters.copilot_cli"):
        await fake_copilot.start(adapter)

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("GH_TOKEN" in w and "classic" in w and "github_pat_" in w for w in warnings)
    assert classic not in caplog.text


@pytest.mark.parametrize("offline", ["true", "TRUE", " true "])
async def test_an_offline_provider_needs_no_token_and_no_gh(
    fake_copilot: FakeCopilot, executable: Callable[..., Path], offline: str
) -> None:
    gh = executable(fake_copilot.bin_dir, "gh")
    env = fake_copilot.env(
        COPILOT_OFFLINE=offline, COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:9/v1"
    )

    session = await fake_copilot.start(fake_copilot.adapter(env=env))

    assert session.workspace == fake_copilot.workspace
    assert fp_never_ran(fake_copilot.fp, gh)


@pytest.mark.parametrize(
    "variables",
    [
        pytest.param({"COPILOT_OFFLINE": "true"}, id="offline-without-url"),
        pytest.param(
            {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": "  "}, id="blank-url"
        ),
        pytest.param(
            {"COPILOT_OFFLINE": "false", "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1"},
            id="url-without-offline",
        ),
    ],
)
async def test_an_incomplete_offline_setup_is_no_credential(
    fake_copilot: FakeCopilot, variables: dict[str, str]
) -> None:
    with pytest.raises(AgentError) as caught:
        await fake_copilot.start(fake_copilot.adapter(env=fake_copilot.env(**variables)))

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "COPILOT_PROVIDER_BASE_URL" in caught.value.message


# -- run_turn: a turn, its events and its argv -------------------------------------


async def test_a_plain_turn_relays_the_real_transcript(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(transcript("plain-prompt"))

    result, events = await run(adapter, session)

    types = event_types(events)
    assert types[0] is EventType.SESSION_STARTED
    assert str(fake_copilot.workspace) in events[0].message
    assert types[-1] is EventType.TURN_COMPLETED
    assert EventType.MALFORMED not in types
    assert [t for t in types if t in TERMINAL_TYPES] == [EventType.TURN_COMPLETED]
    tool_results = [e for e in events if e.type is EventType.TOOL_RESULT]
    assert [(e.tool_name, e.tool_error) for e in tool_results] == [("task_complete", False)]
    assert events[-1].session_id == PLAIN_SESSION_ID
    assert events[-1].api_duration_ms == 17
    assert result.ok
    assert result.error is None
    assert result.session_id == PLAIN_SESSION_ID
    assert result.reply == "hello from fake model"
    assert session.id == PLAIN_SESSION_ID


async def test_a_first_turn_runs_the_exact_argv_in_the_workspace(fake_copilot: FakeCopilot) -> None:
    env = fake_copilot.env(GH_TOKEN=FINE_GRAINED_TOKEN)
    adapter = fake_copilot.adapter(env=env)
    session = await fake_copilot.start(adapter)
    recorder = fake_copilot.turn(transcript("plain-prompt"))

    await run(adapter, session, "say hi")

    (argv,) = fake_copilot.argvs()
    usage_file = flag_value(argv, "--usage-output-file")
    binary = str(fake_copilot.binary)
    assert argv == [binary, "-p", "say hi", *CLI_FLAGS, "--usage-output-file", usage_file]
    kwargs = recorder.calls[0].kwargs
    assert kwargs is not None
    assert Path(kwargs["cwd"]) == fake_copilot.workspace
    assert kwargs["env"] == env
    assert kwargs["start_new_session"] is True


async def test_the_second_turn_resumes_the_session_id_from_the_first(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(transcript("plain-prompt"))
    fake_copilot.turn(transcript("resume-by-session-id"))

    await run(adapter, session, "say hi")
    second, _ = await run(adapter, session, "and again")

    first_argv, second_argv = fake_copilot.argvs()
    assert "--resume" not in first_argv
    assert "--continue" not in first_argv
    assert flag_value(second_argv, "--resume") == PLAIN_SESSION_ID
    assert "--continue" not in second_argv
    assert second.ok
    assert second.session_id == PLAIN_SESSION_ID


async def test_a_session_started_with_a_resume_id_resumes_it_on_the_first_turn(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter, resume_session_id=PLAIN_SESSION_ID)
    fake_copilot.turn(transcript("resume-by-session-id"))

    result, events = await run(adapter, session)

    (argv,) = fake_copilot.argvs()
    assert flag_value(argv, "--resume") == PLAIN_SESSION_ID
    assert "--continue" not in argv
    assert session.id == PLAIN_SESSION_ID
    assert events[0].session_id == PLAIN_SESSION_ID
    assert result.ok


async def test_a_turn_without_a_result_line_is_followed_by_continue_then_resume(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn([message_line("done without a result line")])
    fake_copilot.turn(transcript("continue-most-recent"))
    fake_copilot.turn([result_line(PLAIN_SESSION_ID)])

    first, _ = await run(adapter, session, "one")
    assert first.ok
    assert first.session_id == ""
    await run(adapter, session, "two")
    await run(adapter, session, "three")

    argvs = fake_copilot.argvs()
    assert ["--continue" in argv for argv in argvs] == [False, True, False]
    assert ["--resume" in argv for argv in argvs] == [False, False, True]
    assert flag_value(argvs[2], "--resume") == PLAIN_SESSION_ID


EXIT_ROWS = [
    pytest.param(
        [message_line("done")], 0, None,
        EventType.TURN_COMPLETED, None, ExitReason.COMPLETED, "turn completed",
        id="exit-0-no-result",
    ),
    pytest.param(
        transcript("plain-prompt"), 0, None,
        EventType.TURN_COMPLETED, None, ExitReason.COMPLETED, "turn completed",
        id="exit-0-result-0",
    ),
    pytest.param(
        [result_line("sid-1", exit_code=1)], 0, None,
        EventType.TURN_FAILED, AdapterErrorKind.TURN_FAILED, ExitReason.FAILED,
        "reported exit code 1",
        id="exit-0-result-1",
    ),
    pytest.param(
        transcript("model-http-500"), 1, None,
        EventType.TURN_FAILED, AdapterErrorKind.TURN_FAILED, ExitReason.FAILED,
        "Last error: 500 fake upstream failure",
        id="exit-1-result-1-session-error",
    ),
    pytest.param(
        [], 127, "sh: 1: copilot: not found",
        EventType.TURN_FAILED, AdapterErrorKind.AGENT_NOT_FOUND, ExitReason.FAILED,
        "not found on PATH (exit 127)",
        id="exit-127",
    ),
    pytest.param(
        transcript("no-auth"), 1, meta("no-auth")["stderr"],
        EventType.TURN_FAILED, AdapterErrorKind.PORT_EXIT, ExitReason.FAILED,
        "status 1 before reporting a result: Error: No authentication information found.",
        id="exit-1-no-result-no-auth",
    ),
    pytest.param(
        transcript("offline-without-provider"), 1, meta("offline-without-provider")["stderr"],
        EventType.TURN_FAILED, AdapterErrorKind.PORT_EXIT, ExitReason.FAILED,
        "Offline mode requires a local model provider.",
        id="exit-1-no-result-offline",
    ),
    pytest.param(
        [message_line("partial")], -15, None,
        EventType.TURN_CANCELLED, AdapterErrorKind.TURN_CANCELLED, ExitReason.CANCELLED,
        "stopped by SIGTERM",
        id="sigterm",
    ),
    pytest.param(
        [], -9, None,
        EventType.TURN_CANCELLED, AdapterErrorKind.TURN_CANCELLED, ExitReason.CANCELLED,
        "stopped by SIGKILL",
        id="sigkill",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("stdout", "returncode", "stderr", "last_type", "kind", "reason", "fragment"), EXIT_ROWS
)
async def test_the_exit_status_maps_to_the_turn_outcome(
    fake_copilot: FakeCopilot,
    stdout: list[str],
    returncode: int,
    stderr: str | None,
    last_type: EventType,
    kind: AdapterErrorKind | None,
    reason: ExitReason,
    fragment: str,
) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(stdout, returncode=returncode, stderr=stderr)

    result, events = await run(adapter, session)

    assert events[0].type is EventType.SESSION_STARTED
    assert [e.type for e in events if e.type in TERMINAL_TYPES] == [last_type]
    assert events[-1].type is last_type
    assert events[-1].error_kind is kind
    assert fragment in events[-1].message
    assert result.exit_reason is reason
    if kind is None:
        assert result.error is None
    else:
        assert result.error is not None
        assert result.error.kind is kind
        assert fragment in result.error.message


@pytest.mark.parametrize("returncode", [0, 1, -15])
async def test_the_usage_file_is_a_fresh_temp_file_deleted_after_the_turn(
    fake_copilot: FakeCopilot, returncode: int
) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn([message_line("hi")], returncode=returncode)
    fake_copilot.turn([message_line("hi")], returncode=returncode)

    await run(adapter, session)
    await run(adapter, session)

    paths = [Path(flag_value(argv, "--usage-output-file")) for argv in fake_copilot.argvs()]
    assert paths[0] != paths[1]
    for path in paths:
        assert path.parent == Path(tempfile.gettempdir())
        assert path.name.startswith("copilot-usage-")
        assert not path.exists()


async def test_output_tokens_accumulate_over_messages_and_turns_without_a_report(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn([message_line("a", 3), message_line("b", 4), result_line("sid-1")])
    fake_copilot.turn([message_line("c", 5), result_line("sid-1")])

    first, events = await run(adapter, session)
    second, _ = await run(adapter, session)

    usages = [e.usage.output_tokens for e in events if e.type is EventType.TOKEN_USAGE and e.usage]
    assert usages == [3, 7]
    assert first.usage == TokenUsage(output_tokens=7)
    assert second.usage == TokenUsage(output_tokens=12)
    assert session.usage == TokenUsage(output_tokens=12)


@pytest.mark.parametrize(
    ("field", "values", "flag"),
    [
        ("allowed_tools", ["shell(git:*)", "write"], "--allow-tool"),
        ("denied_tools", "shell(rm)", "--deny-tool"),
        ("available_tools", ["view"], "--available-tools"),
        ("excluded_tools", ["web_fetch"], "--excluded-tools"),
    ],
)
async def test_tool_scoping_drops_allow_all_from_the_real_argv(
    fake_copilot: FakeCopilot, field: str, values: str | list[str], flag: str
) -> None:
    adapter = fake_copilot.adapter(options={field: values, "model": "gpt-4.1"})
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(transcript("plain-prompt"))

    await run(adapter, session)

    (argv,) = fake_copilot.argvs()
    expected = [values] if isinstance(values, str) else values
    assert "--allow-all" not in argv
    assert [a for a in argv if a.startswith(f"{flag}=")] == [f"{flag}={v}" for v in expected]
    assert flag_value(argv, "--model") == "gpt-4.1"
    assert {"--autopilot", "--no-ask-user"} <= set(argv)


def test_unknown_options_are_rejected_when_the_adapter_is_built() -> None:
    with pytest.raises(ValueError, match=r"copilot-cli\.max_autopilot_continue: unknown field"):
        CopilotCliAdapter(AdapterConfig(options={"max_autopilot_continue": 5}))


async def test_run_turn_rejects_a_foreign_session(
    fake_copilot: FakeCopilot, tmp_path: Path
) -> None:
    adapter = fake_copilot.adapter()
    foreign = [Session(workspace=tmp_path), TranscriptSession(workspace=tmp_path)]

    for session in foreign:
        with pytest.raises(TypeError, match="not a copilot-cli session"):
            await adapter.run_turn(session, "hi", on_event=lambda event: None)

    assert list(fake_copilot.fp.calls) == []


async def test_stop_session_without_a_running_turn_does_nothing(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.adapter()
    session = await fake_copilot.start(adapter)

    await adapter.stop_session(session)
    await adapter.stop_session(Session(workspace=fake_copilot.workspace))

    assert session.process is None


# -- run_turn on a real process (FAKE_CLI) ----------------------------------------


async def test_the_usage_report_sets_the_final_token_usage(script_cli: ScriptCli) -> None:
    name = "plain-prompt-with-usage-output-file"
    report = json.loads((DATA / f"{name}.usage.json").read_text())
    script_cli.script("say hi", transcript(name), usage=report)
    adapter = script_cli.adapter()
    session = await adapter.start_session(script_cli.workspace)

    result, events = await run(adapter, session, "say hi")

    expected = TokenUsage(input_tokens=10, output_tokens=5, cached_input_tokens=0, model="gpt-4.1")
    assert result.ok
    assert result.usage == expected
    assert session.usage == expected
    token_events = [e for e in events if e.type is EventType.TOKEN_USAGE]
    assert token_events[-1].usage == expected
    assert events[-1].type is EventType.TURN_COMPLETED
    assert events[-1].usage == expected
    (call,) = script_cli.calls()
    usage_file = Path(flag_value(call["argv"], "--usage-output-file"))
    assert call["usage_file_existed"] is True
    assert not usage_file.exists()


async def test_a_resumed_turns_report_replaces_the_session_totals(script_cli: ScriptCli) -> None:
    script_cli.script("one", [result_line("sid-1")], usage=usage_report(10, 5, cached=2))
    # After --resume the CLI reports the whole session's totals, not the turn's.
    script_cli.script("two", [result_line("sid-1")], usage=usage_report(25, 12, cached=6))
    adapter = script_cli.adapter()
    session = await adapter.start_session(script_cli.workspace)

    first, _ = await run(adapter, session, "one")
    second, _ = await run(adapter, session, "two")

    assert first.usage == TokenUsage(10, 5, 2, "gpt-4.1")
    assert second.usage == TokenUsage(25, 12, 6, "gpt-4.1")
    assert flag_value(script_cli.calls()[1]["argv"], "--resume") == "sid-1"


async def test_the_cli_process_runs_in_the_workspace(script_cli: ScriptCli) -> None:
    script_cli.script("say hi", [result_line("sid-1")])
    adapter = script_cli.adapter()
    session = await adapter.start_session(script_cli.workspace)

    await run(adapter, session, "say hi")

    (call,) = script_cli.calls()
    assert Path(call["cwd"]).resolve() == script_cli.workspace.resolve()


async def test_two_sessions_run_turns_at_the_same_time_and_stay_separate(
    script_cli: ScriptCli, tmp_path: Path
) -> None:
    (script_cli.scenario / "barrier").mkdir()  # each process waits until both are running
    script_cli.script(
        "alpha", [message_line("alpha reply"), result_line("sid-alpha")], usage=usage_report(100, 7)
    )
    script_cli.script(
        "beta", [message_line("beta reply"), result_line("sid-beta")], usage=usage_report(200, 9)
    )
    adapter = script_cli.adapter()
    other = tmp_path / "other-workspace"
    other.mkdir()
    first = await adapter.start_session(script_cli.workspace)
    second = await adapter.start_session(other)

    (alpha, alpha_events), (beta, beta_events) = await asyncio.gather(
        run(adapter, first, "alpha"), run(adapter, second, "beta")
    )

    assert (alpha.exit_reason, beta.exit_reason) == (ExitReason.COMPLETED, ExitReason.COMPLETED)
    assert (first.id, second.id) == ("sid-alpha", "sid-beta")
    assert (alpha.reply, beta.reply) == ("alpha reply", "beta reply")
    assert first.usage == TokenUsage(100, 7, 0, "gpt-4.1")
    assert second.usage == TokenUsage(200, 9, 0, "gpt-4.1")
    assert alpha_events[-1].session_id == "sid-alpha"
    assert beta_events[-1].session_id == "sid-beta"
    cwds = {c["argv"][2]: Path(c["cwd"]).resolve() for c in script_cli.calls()}
    assert cwds == {"alpha": script_cli.workspace.resolve(), "beta": other.resolve()}


async def _start_a_hanging_turn(
    script_cli: ScriptCli,
) -> tuple[CopilotCliAdapter, CopilotCliSession, asyncio.Task[TurnResult], list[AgentEvent]]:
    script_cli.script("wait", [json.dumps({"type": "assistant.turn_start", "data": {}})], hang=True)
    adapter = script_cli.adapter()
    session = await adapter.start_session(script_cli.workspace)
    events: list[AgentEvent] = []
    running = asyncio.Event()

    def on_event(event: AgentEvent) -> None:
        events.append(event)
        if event.type is EventType.NOTIFICATION:
            running.set()

    task = asyncio.create_task(adapter.run_turn(session, "wait", on_event=on_event))
    await asyncio.wait_for(running.wait(), TURN_TIMEOUT_S)
    return adapter, session, task, events


def _process_is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_stop_session_ends_a_running_turn_as_cancelled(script_cli: ScriptCli) -> None:
    adapter, session, task, events = await _start_a_hanging_turn(script_cli)

    await adapter.stop_session(session)
    result = await asyncio.wait_for(task, TURN_TIMEOUT_S)

    assert result.exit_reason is ExitReason.CANCELLED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_CANCELLED
    assert "SIGTERM" in result.error.message
    assert events[-1].type is EventType.TURN_CANCELLED
    assert session.process is None
    assert _process_is_gone(script_cli.calls()[0]["pid"])


async def test_cancelling_a_turn_stops_the_process_and_reports_turn_cancelled(
    script_cli: ScriptCli,
) -> None:
    _adapter, session, task, events = await _start_a_hanging_turn(script_cli)

    task.cancel("turn timeout")
    with pytest.raises(asyncio.CancelledError):
        await task

    assert events[-1].type is EventType.TURN_CANCELLED
    assert events[-1].error_kind is AdapterErrorKind.TURN_CANCELLED
    assert events[-1].message == "turn timeout"
    assert session.process is None
    assert _process_is_gone(script_cli.calls()[0]["pid"])


async def test_a_binary_removed_after_start_fails_the_turn_as_not_found(
    script_cli: ScriptCli,
) -> None:
    adapter = script_cli.adapter()
    session = await adapter.start_session(script_cli.workspace)
    script_cli.binary.unlink()

    result, events = await run(adapter, session)

    assert event_types(events) == [EventType.TURN_FAILED]
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert str(script_cli.binary) in result.error.message


async def test_a_prompt_the_os_cannot_pass_fails_the_turn_without_leaking_the_usage_file(
    script_cli: ScriptCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    adapter = script_cli.adapter()
    session = await adapter.start_session(script_cli.workspace)
    events: list[AgentEvent] = []

    try:
        result = await adapter.run_turn(session, "a\x00b", on_event=events.append)
    finally:
        leaked = sorted(p.name for p in private_tmp.iterdir())

    assert leaked == []
    assert result.exit_reason is ExitReason.FAILED
    assert events[-1].type is EventType.TURN_FAILED
    assert script_cli.calls() == []


# -- SSH mode ------------------------------------------------------------------


async def test_ssh_start_session_runs_no_canary_and_no_auth_check(
    fp: FakeProcess, ssh_binary: Path
) -> None:
    adapter = ssh_adapter(ssh_binary.parent)  # no token anywhere, no gh, nothing registered

    session = await adapter.start_session("/srv/not/a/local/dir")

    assert list(fp.calls) == []
    assert session.ssh_host == "host-a"
    assert session.binary == str(ssh_binary)
    assert session.workspace == Path("/srv/not/a/local/dir")


async def test_ssh_start_session_without_ssh_is_agent_not_found(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()

    with pytest.raises(AgentError) as caught:
        await ssh_adapter(empty).start_session("/srv/ws")

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "ssh" in caught.value.message


async def test_ssh_workspace_must_still_be_absolute(ssh_binary: Path) -> None:
    with pytest.raises(AgentError) as caught:
        await ssh_adapter(ssh_binary.parent).start_session("srv/ws")

    assert caught.value.kind is AdapterErrorKind.INVALID_WORKSPACE_CWD


async def test_ssh_turns_run_the_exact_argv_without_a_usage_file_and_resume(
    fp: FakeProcess, ssh_binary: Path
) -> None:
    adapter = ssh_adapter(ssh_binary.parent)
    session = await adapter.start_session("/srv/ws")
    recorder = fp.register([str(ssh_binary), fp.any()], stdout=transcript("plain-prompt"))
    fp.register([str(ssh_binary), fp.any()], stdout=transcript("resume-by-session-id"))

    first, events = await run(adapter, session, "say hi")
    await run(adapter, session, "again")

    first_argv, second_argv = ([str(a) for a in call] for call in fp.calls)
    remote = "cd '/srv/ws' && 'copilot' '-p' 'say hi' " + " ".join(f"'{f}'" for f in CLI_FLAGS)
    assert first_argv == [str(ssh_binary), *SSH_OPTIONS, "--", "host-a", remote]
    resumed = [*CLI_FLAGS[:5], "--resume", PLAIN_SESSION_ID, *CLI_FLAGS[5:]]
    assert shlex.split(second_argv[-1]) == [*remote_head("/srv/ws"), "again", *resumed]
    assert second_argv[:-1] == first_argv[:-1]
    kwargs = recorder.calls[0].kwargs
    assert kwargs is not None
    assert kwargs["cwd"] is None
    assert first.ok
    assert "on host-a" in events[0].message


NASTY_WORKSPACE = "/srv/it's a $HOME; rm -rf ~\nnext line"
NASTY_PROMPT = "fix `it`'s \"bug\"; echo $HOME && $(touch pwned)\nsecond line\\n '' end"


async def test_ssh_quotes_the_workspace_and_prompt_for_the_remote_shell(
    fp: FakeProcess, ssh_binary: Path
) -> None:
    adapter = ssh_adapter(ssh_binary.parent)
    session = await adapter.start_session(NASTY_WORKSPACE)
    fp.register([str(ssh_binary), fp.any()], stdout=transcript("plain-prompt"))

    await run(adapter, session, NASTY_PROMPT)

    (call,) = recorded_argvs(fp)
    remote = call[-1]
    assert shlex.split(remote) == [*remote_head(NASTY_WORKSPACE), NASTY_PROMPT, *CLI_FLAGS]


async def test_the_ssh_remote_command_is_literal_in_a_real_posix_shell(
    fp: FakeProcess, ssh_binary: Path, tmp_path: Path, executable: Callable[..., Path]
) -> None:
    workspace = tmp_path / "it's a $HOME; dir\nwith a newline"
    workspace.mkdir()
    remote_bin = tmp_path / "remote-bin"
    report = tmp_path / "argv.json"
    executable(
        remote_bin,
        "copilot",
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(report)!r}, 'w').write(json.dumps([os.getcwd(), sys.argv[1:]]))\n",
    )
    adapter = ssh_adapter(ssh_binary.parent)
    session = await adapter.start_session(workspace)
    fp.register([str(ssh_binary), fp.any()], stdout=transcript("plain-prompt"))
    await run(adapter, session, NASTY_PROMPT)
    remote = recorded_argvs(fp)[0][-1]

    fp.pass_command(["/bin/sh", "-c", fp.any()])
    done = subprocess.run(
        ["/bin/sh", "-c", remote],
        env={"PATH": f"{remote_bin}:/usr/bin:/bin", "HOME": "/home/nobody"},
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    cwd, argv = json.loads(report.read_text())
    assert Path(cwd) == workspace
    assert argv == ["-p", NASTY_PROMPT, *CLI_FLAGS]
    assert not (workspace / "pwned").exists()
    assert not (tmp_path / "pwned").exists()


async def test_ssh_sessions_take_the_hosts_in_turn(fp: FakeProcess, ssh_binary: Path) -> None:
    adapter = ssh_adapter(ssh_binary.parent)
    sessions = [await adapter.start_session("/srv/ws") for _ in range(3)]
    for _ in range(2):
        fp.register([str(ssh_binary), fp.any()], stdout=transcript("plain-prompt"))

    for session in sessions[:2]:
        await run(adapter, session)

    assert [s.ssh_host for s in sessions] == ["host-a", "host-b", "host-a"]
    assert [call[-2] for call in recorded_argvs(fp)] == ["host-a", "host-b"]


@pytest.mark.parametrize("checking", ["no", "yes"])
async def test_strict_host_key_checking_reaches_the_ssh_options(
    fp: FakeProcess, ssh_binary: Path, checking: str
) -> None:
    adapter = ssh_adapter(ssh_binary.parent, checking=checking)
    session = await adapter.start_session("/srv/ws")
    fp.register([str(ssh_binary), fp.any()], stdout=transcript("plain-prompt"))

    await run(adapter, session)

    argv = [str(a) for a in fp.calls[0]]
    assert argv[1:3] == ["-o", f"StrictHostKeyChecking={checking}"]
    assert "StrictHostKeyChecking=accept-new" not in argv


@pytest.mark.parametrize(
    ("hosts", "checking", "fragment"),
    [
        pytest.param(("host-a",), "ask", "accept-new, yes, no", id="bad-checking"),
        pytest.param((), "accept-new", "at least one host", id="no-hosts"),
    ],
)
def test_invalid_ssh_settings_are_rejected(
    hosts: tuple[str, ...], checking: str, fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        SshSettings(hosts, checking)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("returncode", "stderr", "kind", "fragment"),
    [
        pytest.param(
            255, "ssh: connect to host host-a port 22: Connection refused",
            AdapterErrorKind.PORT_EXIT,
            "ssh to host-a failed (exit 255): ssh: connect to host host-a port 22",
            id="connection-failed",
        ),
        pytest.param(
            127, "bash: line 1: copilot: command not found",
            AdapterErrorKind.AGENT_NOT_FOUND, "copilot not found on host-a (exit 127)",
            id="copilot-missing-remotely",
        ),
    ],
)  # fmt: skip
async def test_ssh_exit_statuses_name_the_host(
    fp: FakeProcess,
    ssh_binary: Path,
    returncode: int,
    stderr: str,
    kind: AdapterErrorKind,
    fragment: str,
) -> None:
    adapter = ssh_adapter(ssh_binary.parent)
    session = await adapter.start_session("/srv/ws")
    fp.register([str(ssh_binary), fp.any()], returncode=returncode, stderr=stderr)

    result, events = await run(adapter, session)

    assert result.error is not None
    assert result.error.kind is kind
    assert fragment in result.error.message
    assert events[-1].type is EventType.TURN_FAILED
    assert events[-1].error_kind is kind


# -- the registry --------------------------------------------------------------


def test_get_adapter_builds_a_copilot_cli_adapter_with_its_options() -> None:
    adapter = registry.get_adapter("copilot-cli", AdapterConfig(options={"model": "gpt-4.1"}))

    assert isinstance(adapter, CopilotCliAdapter)
    assert adapter.kind == "copilot-cli"
    assert adapter.options.model == "gpt-4.1"
    assert adapter.command == "copilot"


def test_get_adapter_rejects_an_unknown_kind_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown agent kind 'claude-code'") as caught:
        registry.get_adapter("claude-code")

    assert "copilot-cli" in str(caught.value)
    assert "copilot-transcript" in str(caught.value)


def test_the_copilot_cli_spec_requires_a_command() -> None:
    spec = registry.adapter_spec("copilot-cli")

    assert spec.requires_command is True
    assert spec.default_command == "copilot"
    assert spec.options_block == "copilot-cli"


def test_registry_preflight_fails_fast_on_a_missing_command(
    fp: FakeProcess, tmp_path: Path
) -> None:
    config = AdapterConfig(command="copilot", environment={"PATH": str(tmp_path)})

    with pytest.raises(AgentError) as caught:
        registry.preflight("copilot-cli", config)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "'copilot'" in caught.value.message
    assert list(fp.calls) == []


def test_registry_preflight_accepts_a_command_on_the_configured_path(
    fp: FakeProcess, tmp_path: Path, executable: Callable[..., Path]
) -> None:
    executable(tmp_path, "copilot")

    registry.preflight("copilot-cli", AdapterConfig(environment={"PATH": str(tmp_path)}))

    assert list(fp.calls) == []


async def test_registry_preflight_and_start_session_agree_on_ssh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, executable: Callable[..., Path]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    # ssh is on this process's PATH, but not on the PATH the agent is configured with.
    monkeypatch.setenv("PATH", str(executable(tmp_path / "host-bin", "ssh").parent))
    config = AdapterConfig(ssh=SshSettings(("host-a",)), environment={"PATH": str(empty)})
    with pytest.raises(AgentError):
        await CopilotCliAdapter(config).start_session("/srv/ws")

    with pytest.raises(AgentError) as caught:
        registry.preflight("copilot-cli", config)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
