"""The model failing under the driver and the adapters: every run ends by itself.

The scripted model (real HTTP on 127.0.0.1) breaks the way a provider does:
it is not there, answers an error on every attempt, resets the connection
halfway through a body, sends headers and then nothing forever, or asks
for a tool with arguments that are not JSON. Each case checks the exit
code, the line that names the cause, the events written before the fault,
that no secret (sidecar token, provider keys, planted platform tokens)
reached any output or file, and that no process was left behind.

Measured first on the real runtimes (2 CPUs, Copilot CLI 1.0.102, Codex
0.169.0), which is what the bounds rest on:

- The Copilot runtime sends its BYOK provider non-streamed chat requests
  and retries a failed model call 5 times: ~14 s of back-off for HTTP 500
  without `Retry-After`, ~55 s for 429 without it, 1 s per retry when the
  server sends `Retry-After` (0 or 1) and for a reset connection; a
  provider port that refuses connections is given up after ~23 s. Then the
  session fails (`session.error`) and the driver exits 1 with its text.
- The session uses the provider the driver passes to `create_session`
  (`COPILOT_PROVIDER_BASE_URL` of the driver), not the sidecar's own.
- A response that never ends (headers only, or headers and part of the
  body) is not given up by the runtime (still waiting after 150 s, with
  one request and no retry): only the send timeout ends the turn (exit
  124), about 1 s after it expires.
- Tool arguments that are not JSON are refused by the runtime itself ("not
  valid JSON ... The arguments have been cleared"), reported to the model
  as the tool's result, and never reach the permission handler.

Driver cases (a real sidecar per case, the driver as a subprocess):

| case | exit | bound |
|---|---|---|
| provider port closed | 1 | `UNREACHABLE_BOUND_S` 60 s (measured ~25 s) |
| HTTP 500 on every attempt, no `Retry-After` | 1 | `HTTP_500_BOUND_S` 45 s (~18 s) |
| HTTP 429 on every attempt, `Retry-After: 1` | 1 | `FAST_RETRY_BOUND_S` 30 s (~9 s) |
| body cut mid-way by a reset | 1 | `FAST_RETRY_BOUND_S` 30 s (~8 s) |
| a response that never ends | 124 | `NEVER_ENDS_BOUND_S`: send timeout + 6 s after the model call |
| tool arguments not JSON | 0 | `INVALID_ARGUMENTS_BOUND_S` 30 s (~2 s) |

Adapter cases (`python -m copilot_driver.adapters run`, exit codes of
`adapters/cli.py`: 1 a turn failed, 124 a turn hit its timeout or stall
limit):

- tool-loop (its own httpx client, no retries): 500, 429, stream cut (exit
  1), a response that never ends under its stall limit or its turn limit
  (124) or its own `request_timeout_ms` (1), tool arguments not JSON (0);
  `TOOL_LOOP_BOUND_S` 20 s each (~1-3 s measured).
- copilot-cli (`copilot -p`, the runtime's 5 retries, 1 s apart): 500 with
  `Retry-After: 0` and a body cut (1), never ending under the stall limit
  (124); `COPILOT_CLI_BOUND_S` 45 s (~7 s measured).
- codex (app-server; the test config turns Codex's retries off): 500 and a
  stream cut (1), never ending under the stall limit (124); `CODEX_BOUND_S`
  30 s (~2-4 s measured).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall
from copilot_driver.testing.codex import PROVIDER_KEY as CODEX_PROVIDER_KEY
from copilot_driver.testing.codex import codex_environment
from copilot_driver.testing.environment import TEST_PROVIDER_KEY, prompt_mode_environment
from copilot_driver.testing.faults import PLATFORM_TOKENS, Ended, FaultCase
from copilot_driver.testing.fixtures import DriverRunner, parse_log
from helpers.workspaces import workspace_fixture

pytestmark = pytest.mark.e2e

UNREACHABLE_BOUND_S = 60.0
"""The runtime gives a refused provider port up after ~23 s of retries."""
HTTP_500_BOUND_S = 45.0
"""Five retries with the runtime's own back-off (~14 s measured) plus start-up."""
FAST_RETRY_BOUND_S = 30.0
"""Five retries 1 s apart (a `Retry-After`, or a reset connection) plus start-up."""
SEND_TIMEOUT_MS = 3000
NEVER_ENDS_BOUND_S = SEND_TIMEOUT_MS / 1000 + 6.0
"""Counted from the model call: the send timeout, then the driver's bounded
abort (2 s) and cleanup; measured ~1 s past the timeout."""
INVALID_ARGUMENTS_BOUND_S = 30.0
"""Three quick model calls; generous for a loaded machine."""
WAIT_FOR_MODEL_S = 30.0
"""Start-up of the driver (the SDK import) and the session, on a loaded machine."""
RUNTIME_ATTEMPTS = 6
"""The Copilot runtime's first model call plus its 5 retries (measured)."""

LONG_TEXT = "partial answer " * 200
CUT_AT = 1000
"""Inside the reply's text on every API: mid-event in a stream, mid-string in a JSON body."""


def _wait_for_model(model: ScriptedModelServer, timeout: float = WAIT_FOR_MODEL_S) -> None:
    deadline = time.monotonic() + timeout
    while not model.requests:
        assert time.monotonic() < deadline, "the run never reached the model"
        time.sleep(0.05)


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [record["type"] for record in events]


def _kept_the_turn(events: list[dict[str, Any]]) -> None:
    """The events from before the fault are all in the file."""
    types = _types(events)
    for expected in ("session.start", "user.message", "assistant.turn_start"):
        assert expected in types, f"{expected} missing from the events file: {types}"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A 127.0.0.1 port that refuses connections: bound (so nobody else takes
    it while the case runs) but never listening."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


# -- the driver on a real sidecar ------------------------------------------------------


def test_an_unreachable_model_ends_the_run_naming_the_provider(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    closed_port: int,
) -> None:
    """The sidecar's own provider is the (working) scripted model; the driver's
    points at a closed port. The session uses the driver's, so the model is
    never called and the run fails naming the closed address."""
    fault.secrets.append(copilot_sidecar.token)
    unreachable = f"http://127.0.0.1:{closed_port}/v1"
    env = driver.environment("hello", COPILOT_PROVIDER_BASE_URL=unreachable)
    ended = fault.run(env, bound_s=UNREACHABLE_BOUND_S)

    events = fault.check(
        ended,
        exit_code=1,
        error_kind="session_error",
        mentions=[unreachable, "Could not connect"],
        state_dir=driver.tmp_path / "state",
    )
    assert not scripted_model.requests, "the session used the sidecar's provider"
    _kept_the_turn(events)
    assert "session.error" in _types(events)


@pytest.mark.parametrize(
    ("reply", "mentions", "bound_s"),
    [
        pytest.param(
            Reply(http_status=500),
            ["500", "Internal Server Error", "retried 5 times"],
            HTTP_500_BOUND_S,
            id="http-500",
        ),
        pytest.param(
            Reply(http_status=429, text="scripted rate limit", retry_after_s=1),
            ["429", "scripted rate limit", "retried 5 times"],
            FAST_RETRY_BOUND_S,
            id="http-429",
        ),
        pytest.param(
            Reply(text=LONG_TEXT, cut_after_bytes=CUT_AT),
            ["ECONNRESET", "retried 5 times"],
            FAST_RETRY_BOUND_S,
            id="body-cut",
        ),
    ],
)
def test_a_model_failing_every_attempt_ends_the_run_with_its_cause(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    reply: Reply,
    mentions: list[str],
    bound_s: float,
) -> None:
    """The runtime retries, gives up, and the driver reports its verdict: exit
    1 with the status (or the reset) in the error line, whatever the send
    timeout (the default 10 minutes here)."""
    fault.secrets.append(copilot_sidecar.token)
    scripted_model.script = Script(default=reply)
    ended = fault.run(driver.environment("hello"), bound_s=bound_s)

    events = fault.check(
        ended,
        exit_code=1,
        error_kind="session_error",
        mentions=mentions,
        state_dir=driver.tmp_path / "state",
    )
    assert len(scripted_model.chat_requests()) == RUNTIME_ATTEMPTS
    _kept_the_turn(events)
    (error,) = [record for record in events if record["type"] == "session.error"]
    if reply.http_status is not None:
        assert error["data"]["statusCode"] == reply.http_status
    assert ended.stdout == ""


def test_a_model_response_that_never_ends_is_ended_by_the_send_timeout(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    """Headers and the first part of the body, then silence: the runtime would
    wait forever, so the send timeout must end the run (124), promptly."""
    fault.secrets.append(copilot_sidecar.token)
    scripted_model.script = Script(
        default=Reply(text=LONG_TEXT, cut_after_bytes=CUT_AT, never_ends=True)
    )
    env = driver.environment("hello", COPILOT_SDK_SEND_TIMEOUT_MS=str(SEND_TIMEOUT_MS))
    process = fault.start(env)
    _wait_for_model(scripted_model)
    process.mark_fault()
    ended = process.end(bound_s=NEVER_ENDS_BOUND_S)

    events = fault.check(
        ended,
        exit_code=124,
        error_kind="send_timeout",
        mentions=[f"{SEND_TIMEOUT_MS} ms", "COPILOT_SDK_SEND_TIMEOUT_MS"],
        state_dir=driver.tmp_path / "state",
    )
    _kept_the_turn(events)
    assert "abort" in _types(events), "the turn was not aborted"
    assert len(scripted_model.chat_requests()) == 1, "the runtime retried a held response"


BAD_ARGUMENTS = '{"command": "touch PWNED", "description": "missing brace"'
"""Repairable by a lenient parser, which would run it: the runtime must not."""


def test_tool_arguments_that_are_not_json_are_refused_before_any_permission(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    """A policy that allows `touch`: the call with broken arguments must still
    run nothing and never reach the permission handler, while a valid call
    after it goes through the handler and runs (so the absence means
    something). The model is told about the bad call and the turn finishes."""
    fault.secrets.append(copilot_sidecar.token)
    workspace = driver.tmp_path / "workspace"
    scripted_model.script = Script(
        rules=(
            Rule(
                "BADARGS",
                (
                    Reply(tool_calls=(ToolCall("bash", BAD_ARGUMENTS),)),
                    Reply(
                        tool_calls=(
                            ToolCall("bash", {"command": "touch VALID", "description": "valid"}),
                        )
                    ),
                    Reply(text="Recovered from the bad call."),
                ),
            ),
        )
    )
    env = driver.environment(
        "BADARGS please",
        GH_AW_COPILOT_SDK_SERVER_ARGS='["--allow-tool", "shell(touch:*)"]',
        COPILOT_SDK_LOG_LEVEL="debug",  # approvals are logged at debug
    )
    ended = fault.run(env, bound_s=INVALID_ARGUMENTS_BOUND_S)

    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")
    assert ended.stdout == "Recovered from the bad call.\n"
    assert not (workspace / "PWNED").exists(), "the broken call ran"
    assert (workspace / "VALID").exists(), "the valid call did not run"
    entries = parse_log(ended.stderr)
    decisions = [e for e in entries if str(e.get("event", "")).startswith("permission.")]
    assert [e["event"] for e in decisions] == ["permission.approved"]
    assert "touch VALID" in decisions[0]["requestSummary"]
    completions = [r["data"] for r in events if r["type"] == "tool.execution_complete"]
    assert [c["success"] for c in completions] == [False, True]
    assert "JSON" in completions[0]["error"]["message"]
    told = scripted_model.chat_requests()[1].body
    assert isinstance(told, dict)
    (tool_message,) = [m for m in told["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in tool_message["content"]


# -- the adapters' command line --------------------------------------------------------

TOOL_LOOP_BOUND_S = 20.0
"""No retries: one request, plus the 1.5 s limits and the interpreter's start."""
LIMIT_MS = 1500
"""The stall, turn and request limits of the never-ending tool-loop cases."""
COPILOT_CLI_BOUND_S = 45.0
"""The CLI's start and its 5 retries 1 s apart, ~7 s measured."""
CODEX_BOUND_S = 30.0
"""Codex starts in ~0.2 s and is configured without retries."""
STALL_MS = 4000
"""The stall limit of the never-ending copilot-cli and codex cases: longer than
the agent's start-up (~1 s), so the limit trips on the held response."""


def _adapters(
    fault: FaultCase,
    env: dict[str, str],
    workspace: Path,
    workflow: str,
    prompt: str,
    *,
    bound_s: float,
    without: tuple[str, ...] = (),
) -> Ended:
    """`python -m copilot_driver.adapters run` as `run_adapters` runs it, under the
    fault harness (planted tokens, bound, orphan and secret checks); `without`
    names variables to take out of the planted environment."""
    workflow_file = workspace.parent / "WORKFLOW.md"
    workflow_file.write_text(f"---\n{workflow}---\nNot read by the adapters.\n")
    unset = [word for name in without for word in ("-u", name)]
    command = [
        *(["env", *unset] if unset else []),
        sys.executable,
        "-m",
        "copilot_driver.adapters",
        "run",
        "--workspace",
        str(workspace),
        "--workflow",
        str(workflow_file),
        "--prompt",
        prompt,
    ]
    env = {**env, "PYTHONPATH": os.pathsep.join(sys.path)}
    return fault.run(env, bound_s=bound_s, command=command)


def _check_adapter_run(
    fault: FaultCase,
    ended: Ended,
    *,
    exit_code: int,
    last_event: str,
    error_kind: str,
    mentions: list[str],
) -> list[dict[str, Any]]:
    """Exit code, events (every stdout line JSON, the turn's end last), the
    cause named in the final event and in the log, and no secret or orphan."""
    assert ended.exit_code == exit_code, (
        f"exit {ended.exit_code}, expected {exit_code}; stderr: {ended.stderr[-3000:]}"
    )
    assert ended.stdout.endswith("\n"), "the last event line is cut"
    events = [json.loads(line) for line in ended.stdout.splitlines()]
    assert events[0]["type"] == "session_started", "the events from before the fault are lost"
    final = events[-1]
    assert (final["type"], final.get("error_kind")) == (last_event, error_kind), final
    for word in mentions:
        assert word in final.get("message", ""), f"{word!r} not in {final}"
    summary = [line for line in ended.stderr.splitlines() if "turn 1 of session" in line]
    assert len(summary) == 1, ended.stderr[-3000:]
    for word in mentions:
        assert word in summary[0], f"{word!r} not in the log line: {summary[0]}"
    fault.check_clean(ended)
    return events


workspace = workspace_fixture()


@pytest.fixture
def tool_loop_env() -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG", "TMPDIR") if key in os.environ}
    env["OPENAI_API_KEY"] = TEST_PROVIDER_KEY
    return env


def _tool_loop_workflow(model: ScriptedModelServer, agent: str = "", **options: Any) -> str:
    lines = [f"agent:\n  kind: tool-loop\n{agent}", "tool-loop:"]
    lines += [f"  base_url: {model.base_url}", "  model: scripted-gpt"]
    lines += [f"  {key}: {value}" for key, value in options.items()]
    return "\n".join(lines) + "\n"


ENDLESS = Reply(text=LONG_TEXT, cut_after_bytes=CUT_AT, never_ends=True)


@pytest.mark.parametrize(
    ("reply", "agent", "options", "exit_code", "last_event", "error_kind", "mentions"),
    [
        pytest.param(
            Reply(http_status=500),
            "",
            {},
            1,
            "turn_failed",
            "response_error",
            ["500"],
            id="http-500",
        ),
        pytest.param(
            Reply(http_status=429, text="scripted rate limit", retry_after_s=30),
            "",
            {},
            1,
            "turn_failed",
            "response_error",
            ["429"],
            id="http-429",
        ),
        pytest.param(
            Reply(text=LONG_TEXT, cut_after_bytes=CUT_AT),
            "",
            {},
            1,
            "turn_failed",
            "port_exit",
            ["connection to the model server"],
            id="stream-cut",
        ),
        pytest.param(
            ENDLESS,
            f"  stall_timeout_ms: {LIMIT_MS}\n",
            {},
            124,
            "turn_cancelled",
            "turn_cancelled",
            ["stalled"],
            id="never-ends-stall-limit",
        ),
        pytest.param(
            ENDLESS,
            f"  stall_timeout_ms: 0\n  turn_timeout_ms: {LIMIT_MS}\n",
            {},
            124,
            "turn_cancelled",
            "turn_cancelled",
            ["turn timeout"],
            id="never-ends-turn-limit",
        ),
        pytest.param(
            ENDLESS,
            "",
            {"request_timeout_ms": LIMIT_MS},
            1,
            "turn_failed",
            "response_timeout",
            ["request_timeout_ms"],
            id="never-ends-request-timeout",
        ),
    ],
)
def test_tool_loop_model_faults(
    fault: FaultCase,
    scripted_model: ScriptedModelServer,
    workspace: Path,
    tool_loop_env: dict[str, str],
    reply: Reply,
    agent: str,
    options: dict[str, Any],
    exit_code: int,
    last_event: str,
    error_kind: str,
    mentions: list[str],
) -> None:
    """The tool loop's own HTTP client: a failed call fails the turn at once (no
    retries, a `Retry-After` is not waited for); a response that never ends
    is ended by whichever limit is set."""
    scripted_model.script = Script(default=reply)
    workflow = _tool_loop_workflow(scripted_model, agent, **options)
    ended = _adapters(fault, tool_loop_env, workspace, workflow, "hello", bound_s=TOOL_LOOP_BOUND_S)
    _check_adapter_run(
        fault,
        ended,
        exit_code=exit_code,
        last_event=last_event,
        error_kind=error_kind,
        mentions=mentions,
    )
    assert len(scripted_model.chat_requests()) == 1


def test_tool_loop_tool_arguments_that_are_not_json_go_back_to_the_model(
    fault: FaultCase,
    scripted_model: ScriptedModelServer,
    workspace: Path,
    tool_loop_env: dict[str, str],
) -> None:
    """A write with broken arguments writes nothing; the model is told and finishes."""
    broken = '{"path": "PWNED.txt", "content": "x"'
    scripted_model.script = Script(
        default=Reply(text="Recovered."),
        rules=(
            Rule(
                "BADARGS",
                (Reply(tool_calls=(ToolCall("write_file", broken),)), Reply(text="Recovered.")),
            ),
        ),
    )
    workflow = _tool_loop_workflow(scripted_model)
    ended = _adapters(
        fault, tool_loop_env, workspace, workflow, "BADARGS please", bound_s=TOOL_LOOP_BOUND_S
    )
    assert ended.exit_code == 0, ended.stderr[-3000:]
    events = [json.loads(line) for line in ended.stdout.splitlines()]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["tool_error"] is True
    assert events[-1]["type"] == "turn_completed"
    assert not list(workspace.iterdir()), "the broken call wrote something"
    told = scripted_model.chat_requests()[1].body
    assert isinstance(told, dict)
    (tool_message,) = [m for m in told["messages"] if m["role"] == "tool"]
    assert "JSON" in tool_message["content"]
    fault.check_clean(ended)


def _done(text: str) -> Reply:
    """What ends a copilot-cli autopilot turn."""
    return Reply(text=text, tool_calls=(ToolCall("task_complete", {"summary": "done"}),))


@pytest.mark.parametrize(
    ("reply", "exit_code", "last_event", "error_kind", "mentions"),
    [
        pytest.param(
            Reply(http_status=500, retry_after_s=0),
            1,
            "turn_failed",
            "turn_failed",
            ["500"],
            id="http-500",
        ),
        pytest.param(
            Reply(text=LONG_TEXT, cut_after_bytes=CUT_AT),
            1,
            "turn_failed",
            "turn_failed",
            ["ECONNRESET"],
            id="body-cut",
        ),
        pytest.param(
            ENDLESS, 124, "turn_cancelled", "turn_cancelled", ["stalled"], id="never-ends"
        ),
    ],
)
def test_copilot_cli_model_faults(
    fault: FaultCase,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
    tmp_path: Path,
    workspace: Path,
    reply: Reply,
    exit_code: int,
    last_event: str,
    error_kind: str,
    mentions: list[str],
) -> None:
    """`copilot -p` retries the model itself, then reports the failure in its
    result line; a response that never ends is ended by the stall limit and
    the CLI's whole process group goes with it.

    The planted GitHub tokens are taken out of the agent's environment: the
    CLI passes every variable on, and it refuses the planted classic `ghp_`
    token before any model call, even offline (measured: exit 1, "Classic
    Personal Access Tokens (ghp_) are not supported"). The offline provider
    needs no credential."""
    scripted_model.script = Script(default=reply)
    env = prompt_mode_environment(
        tmp_path / "home",
        model_base_url=scripted_model.base_url,
        binary=copilot_cli,
        cache_home=copilot_cache_home,
    )
    workflow = (
        f"agent:\n  kind: copilot-cli\n  stall_timeout_ms: {STALL_MS}\n"
        "copilot-cli:\n  max_autopilot_continues: 2\n"
    )
    ended = _adapters(
        fault,
        env,
        workspace,
        workflow,
        "hello",
        bound_s=COPILOT_CLI_BOUND_S,
        without=tuple(PLATFORM_TOKENS),
    )
    assert scripted_model.chat_requests(), "the CLI never reached the model"
    _check_adapter_run(
        fault,
        ended,
        exit_code=exit_code,
        last_event=last_event,
        error_kind=error_kind,
        mentions=mentions,
    )


@pytest.mark.parametrize(
    ("reply", "exit_code", "last_event", "error_kind", "mentions"),
    [
        pytest.param(
            Reply(http_status=500),
            1,
            "turn_failed",
            "turn_failed",
            ["internalServerError"],
            id="http-500",
        ),
        pytest.param(
            Reply(text=LONG_TEXT, cut_after_bytes=CUT_AT),
            1,
            "turn_failed",
            "turn_failed",
            ["stream disconnected before completion"],
            id="stream-cut",
        ),
        pytest.param(
            ENDLESS, 124, "turn_cancelled", "turn_cancelled", ["stalled"], id="never-ends"
        ),
    ],
)
def test_codex_model_faults(
    fault: FaultCase,
    scripted_model: ScriptedModelServer,
    codex_cli: Path,
    tmp_path: Path,
    workspace: Path,
    reply: Reply,
    exit_code: int,
    last_event: str,
    error_kind: str,
    mentions: list[str],
) -> None:
    """Codex (Responses API, streamed) with retries off: a failed or cut
    stream fails the turn; one that never ends is ended by the stall limit."""
    fault.secrets.append(CODEX_PROVIDER_KEY)
    scripted_model.script = Script(default=reply)
    env = codex_environment(
        tmp_path / "home", model_base_url=scripted_model.base_url, binary=codex_cli
    )
    workflow = (
        f"agent:\n  kind: codex\n  read_timeout_ms: 30000\n  stall_timeout_ms: {STALL_MS}\n"
        "codex:\n  approval_policy: never\n"
    )
    ended = _adapters(fault, env, workspace, workflow, "hello", bound_s=CODEX_BOUND_S)
    _check_adapter_run(
        fault,
        ended,
        exit_code=exit_code,
        last_event=last_event,
        error_kind=error_kind,
        mentions=mentions,
    )
    assert scripted_model.responses_requests()
