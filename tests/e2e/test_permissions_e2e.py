"""Permissions end to end: real requests of every kind from the real runtime.

The scripted model calls a tool; the real Copilot CLI asks for permission;
the project's own handler (policy, denial log, feedback) answers; the tool
runs, or the model is told it was not allowed.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.logs import configure_logging
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.handler import DenialGuard, make_permission_handler
from copilot_driver.permissions.policy import DENIAL_FEEDBACK, Policy
from copilot_driver.redaction import Redactor
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.environment import TEST_MODEL, TestSidecar, start_test_sidecar
from copilot_driver.testing.fixtures import DriverRunner

pytestmark = pytest.mark.e2e

MCP_SERVER = {
    "type": "local",
    "command": sys.executable,
    "args": ["-m", "copilot_driver.testing.mcp_server"],
    "tools": ["*"],
}


@dataclass(frozen=True)
class Kind:
    """How to make the runtime ask for one kind of permission, and what it did."""

    name: str
    rule: str
    call: Callable[[Path], ToolCall]
    ran: Callable[[Path, str], bool]
    """Given the folder and the tool's result text: did the tool really run?"""


KINDS = [
    Kind(
        "shell",
        "shell(echo:*)",
        lambda _: ToolCall("bash", {"command": "echo perm-e2e-ran", "description": "echo"}),
        lambda _, result: "perm-e2e-ran" in result,
    ),
    Kind(
        "write",
        "write",
        lambda root: ToolCall("create", {"path": str(root / "ws" / "new.txt"), "file_text": "x"}),
        lambda root, _: (root / "ws" / "new.txt").exists(),
    ),
    Kind(
        "read",
        "read",
        lambda root: ToolCall("view", {"path": str(root / "outside" / "notes.txt")}),
        lambda _, result: "outside-content-17" in result,
    ),
    Kind(
        "url",
        "web_fetch",
        lambda _: ToolCall("web_fetch", {"url": "http://127.0.0.1:9/page?token=abc"}),
        # Approved, the runtime goes on to fetch and blocks the loopback address itself.
        lambda _, result: "blocked address" in result,
    ),
    Kind(
        "custom-tool",
        "lookup_answer",
        lambda _: ToolCall("lookup_answer", {"question": "life"}),
        lambda _, result: "the answer is 42" in result,
    ),
    Kind(
        "mcp",
        "fake(add)",
        lambda _: ToolCall("fake-add", {"a": 2, "b": 3}),
        lambda _, result: result.strip() == "5",
    ),
]
UNRELATED_RULE = {"shell": "read"}  # a scoped policy that does not cover the kind


@dataclass
class Outcome:
    decisions: list[str]
    requests: list[dict[str, Any]]
    """The permission requests as the runtime sent them (wire form)."""
    log_entries: list[dict[str, Any]]
    tool_result: str


@pytest.fixture
def kind_sidecar(
    request: pytest.FixtureRequest,
    copilot_cli: Path,
    copilot_cache_home: Path,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> Iterator[TestSidecar]:
    # web_fetch is only offered when the CLI is not in offline mode. Checked
    # with `ss` during such a run: the sidecar still talks to 127.0.0.1 only.
    offline = "false" if request.param == "url" else "true"
    sidecar = start_test_sidecar(
        tmp_path,
        model_base_url=scripted_model.base_url,
        binary=copilot_cli,
        cache_home=copilot_cache_home,
        extra_env={"COPILOT_OFFLINE": offline},
    )
    try:
        yield sidecar
    finally:
        sidecar.stop()


async def run_one_call(
    sidecar: TestSidecar,
    model: ScriptedModelServer,
    root: Path,
    rules: tuple[str, ...],
    call: ToolCall,
) -> Outcome:
    from copilot import CopilotClient, RuntimeConnection
    from copilot.tools import Tool, ToolResult

    (root / "ws").mkdir()
    (root / "outside").mkdir()
    (root / "outside" / "notes.txt").write_text("outside-content-17\n")
    model.script = Script(rules=(Rule("CALL", (Reply(tool_calls=(call,)), Reply(text="done"))),))
    stream = io.StringIO()
    log = configure_logging("json", "warning", Redactor([sidecar.token]), stream=stream)
    handler = make_permission_handler(
        Policy(PermissionConfig(False, rules, "test")), log, guard=DenialGuard(99, print)
    )
    decisions: list[str] = []
    requests: list[dict[str, Any]] = []

    def recording_handler(request: Any, invocation: Any) -> Any:
        requests.append(request.to_dict())
        decision = handler(request, invocation)
        decisions.append(f"{request.kind}:{decision.kind}")
        return decision

    async def lookup(_: Any) -> ToolResult:
        return ToolResult(text_result_for_llm="the answer is 42")

    client = CopilotClient(
        connection=RuntimeConnection.for_uri(sidecar.uri, connection_token=sidecar.token)
    )
    await client.start()
    try:
        session = await client.create_session(
            model=TEST_MODEL,
            working_directory=str(root / "ws"),
            on_permission_request=recording_handler,
            tools=[
                Tool(
                    name="lookup_answer",
                    description="Look up an answer",
                    handler=lookup,
                    parameters={"type": "object", "properties": {"question": {"type": "string"}}},
                )
            ],
            mcp_servers={"fake": MCP_SERVER},  # type: ignore[dict-item]
            provider={"type": "openai", "base_url": model.base_url, "api_key": "k" * 24},
        )
        await session.send_and_wait("please CALL the tool", timeout=90)
        await session.disconnect()
    finally:
        await client.stop()
    (last,) = model.chat_requests()[-1:]
    results = [str(m["content"]) for m in last.body["messages"] if m.get("role") == "tool"]
    entries = [json.loads(line) for line in stream.getvalue().splitlines()]
    return Outcome(decisions, requests, entries, results[-1] if results else "")


@pytest.mark.parametrize("kind_sidecar", [k.name for k in KINDS], indirect=True)
@pytest.mark.parametrize("allowed", [True, False], ids=["allowed", "denied"])
async def test_each_kind_is_approved_by_its_rule_and_denied_without_it(
    kind_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    allowed: bool,
) -> None:
    kind = next(k for k in KINDS if k.name == request.node.callspec.params["kind_sidecar"])
    rules = (kind.rule,) if allowed else (UNRELATED_RULE.get(kind.name, "shell(git:*)"),)
    outcome = await run_one_call(kind_sidecar, scripted_model, tmp_path, rules, kind.call(tmp_path))

    expected = "approve-once" if allowed else "reject"
    assert outcome.decisions == [f"{kind.name}:{expected}"]
    denials = [e for e in outcome.log_entries if e["event"] == "permission.denied"]
    if allowed:
        assert denials == []
        assert kind.ran(tmp_path, outcome.tool_result), outcome.tool_result
    else:
        (denial,) = denials
        assert denial["requestKind"] == kind.name
        assert denial["requestSummary"].startswith(f"{kind.name}(")
        assert denial["level"] == "warning"
        assert "token=abc" not in denial["requestSummary"]
        # The model is told why, and the tool did not run.
        assert DENIAL_FEEDBACK in outcome.tool_result
        assert not kind.ran(tmp_path, outcome.tool_result)


@pytest.mark.parametrize("kind_sidecar", ["mcp"], indirect=True)
@pytest.mark.parametrize(
    ("rule", "allowed"), [("fake(add)", True), ("fake(fake-add)", False), ("fake", True)]
)
async def test_an_mcp_grant_names_the_raw_tool_as_the_server_defines_it(
    kind_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
    rule: str,
    allowed: bool,
) -> None:
    """Spec 1.0.3 5.3: `<serverName>(<rawMCPToolName>)`. The runtime calls tool `add` of
    server `fake` `fake-add`; that name, as a grant, is a different (raw) tool."""
    call = ToolCall("fake-add", {"a": 2, "b": 3})
    outcome = await run_one_call(kind_sidecar, scripted_model, tmp_path, (rule,), call)

    (request,) = outcome.requests
    assert (request["serverName"], request["toolName"], request["toolTitle"]) == (
        "fake",
        "fake-add",
        "add",
    )
    assert outcome.decisions == [f"mcp:{'approve-once' if allowed else 'reject'}"]
    assert (outcome.tool_result.strip() == "5") is allowed


# -- the driver itself ---------------------------------------------------------

RM_SCRIPT = Script(
    rules=(
        Rule(
            "CLEANUP",
            (
                Reply(
                    tool_calls=(
                        ToolCall("bash", {"command": "rm victim.txt", "description": "remove"}),
                    )
                ),
                Reply(
                    tool_calls=(
                        ToolCall("bash", {"command": "git --version", "description": "version"}),
                    )
                ),
                Reply(text="I was not allowed to remove it."),
            ),
        ),
        Rule(
            "INSIST",
            (
                *(
                    Reply(
                        tool_calls=(
                            ToolCall(
                                "bash", {"command": f"rm file{n}.txt", "description": "remove"}
                            ),
                        )
                    )
                    for n in range(6)
                ),
                Reply(text="I gave up."),  # reached only if the guard never trips
            ),
        ),
    )
)
GIT_ONLY = json.dumps(["--headless", "--allow-tool", "shell(git:*)"])


def test_driver_denies_rm_under_git_rule_and_tells_the_model(
    driver: DriverRunner, scripted_model: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_model.script = RM_SCRIPT
    env = driver.environment("CLEANUP please", GH_AW_COPILOT_SDK_SERVER_ARGS=GIT_ONLY)
    victim = Path(env["GITHUB_WORKSPACE"]) / "victim.txt"
    victim.write_text("still here\n")
    run = driver.run("", env=env)

    assert run.exit_code == 0, run.stderr
    assert victim.read_text() == "still here\n"
    (config,) = run.entries("permissions.config")
    assert config["message"] == (
        "tool permissions: 1 rule: shell(git:*) (from GH_AW_COPILOT_SDK_SERVER_ARGS)"
    )
    (denial,) = run.entries("permission.denied")
    assert denial["requestKind"] == "shell"
    assert denial["requestSummary"] == "shell(rm victim.txt)"
    assert denial["sessionId"] == run.entries("session.created")[0]["sessionId"]
    messages = [
        str(m["content"])
        for r in scripted_model.chat_requests()
        for m in r.body["messages"]
        if m.get("role") == "tool"
    ]
    assert any(DENIAL_FEEDBACK in m for m in messages)
    assert any("git version" in m for m in messages)  # the allowed command really ran
    assert "::warning" not in run.stderr  # annotations only under GitHub Actions


def test_guard_stops_inference_at_the_denial_threshold(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    """Spec 4.5: "MUST stop inference once the configured threshold is reached". The
    model asks for a denied command in every reply; at the third denial it is asked
    nothing more (the scripted model's request log), and the run fails with exit 3."""
    scripted_model.script = RM_SCRIPT
    before = len(scripted_model.chat_requests())
    run = driver.run(
        "INSIST on it", GH_AW_COPILOT_SDK_SERVER_ARGS=GIT_ONLY, GH_AW_MAX_TOOL_DENIALS="3"
    )

    assert run.exit_code == 3, run.stderr
    denials = run.entries("permission.denied")
    assert [d["requestSummary"] for d in denials] == [f"shell(rm file{n}.txt)" for n in range(3)]
    requests = scripted_model.chat_requests()[before:]
    assert len(requests) == 3  # the prompt, then the first two denials' feedback
    told = [str(m["content"]) for m in requests[-1].body["messages"] if m.get("role") == "tool"]
    assert len(told) == 2
    assert all(DENIAL_FEEDBACK in text for text in told)
    (error,) = run.entries("error")
    assert error["errorKind"] == "tool_denials_exceeded"
    events = run.events()
    (guard,) = [e for e in events if e["type"] == "guard.tool_denials_exceeded"]
    assert guard["data"]["denialCount"] == 3
    assert guard["data"]["threshold"] == 3
    assert "GH_AW_MAX_TOOL_DENIALS" in guard["data"]["reason"]
    assert run.result()["exitCode"] == 3
    assert run.stdout == ""


def test_a_deny_rule_is_enforced_even_under_allow_all(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    """`--deny-tool` (the Copilot CLI's own flag) wins over `--allow-all-tools`, and the
    denial log names the deny rule."""
    scripted_model.script = RM_SCRIPT
    args = json.dumps(["--allow-all-tools", "--deny-tool", "shell(rm)"])
    env = driver.environment("CLEANUP please", GH_AW_COPILOT_SDK_SERVER_ARGS=args)
    victim = Path(env["GITHUB_WORKSPACE"]) / "victim.txt"
    victim.write_text("still here\n")
    run = driver.run("", env=env)

    assert run.exit_code == 0, run.stderr
    assert victim.read_text() == "still here\n"
    (denial,) = run.entries("permission.denied")
    assert denial["requestSummary"] == "shell(rm victim.txt)"
    assert "--deny-tool shell(rm)" in denial["reason"]
    told = [
        str(m["content"])
        for r in scripted_model.chat_requests()
        for m in r.body["messages"]
        if m.get("role") == "tool"
    ]
    assert any("git version" in m for m in told)  # allow-all still allows the rest


def test_an_exact_rule_never_grants_one_segment_of_a_chain(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    """Spec 1.0.3 5.4: with `shell(touch chain.txt)` and `shell(ls)`, the line
    `touch chain.txt && ls` is denied (none of it runs), while an exact rule's own
    command runs."""
    scripted_model.script = Script(
        rules=(
            Rule(
                "CHAIN",
                (
                    Reply(tool_calls=(ToolCall("bash", {"command": "touch chain.txt && ls"}),)),
                    Reply(tool_calls=(ToolCall("bash", {"command": "touch made.txt"}),)),
                    Reply(text="done"),
                ),
            ),
        )
    )
    rules = ("shell(touch chain.txt)", "shell(ls)", "shell(touch made.txt)")
    args = json.dumps([flag for rule in rules for flag in ("--allow-tool", rule)])
    env = driver.environment("CHAIN it", GH_AW_COPILOT_SDK_SERVER_ARGS=args)
    workspace = Path(env["GITHUB_WORKSPACE"])
    run = driver.run("", env=env)

    assert run.exit_code == 0, run.stderr
    (denial,) = run.entries("permission.denied")
    assert denial["requestSummary"] == "shell(touch chain.txt && ls)"
    assert "exact rule allows only the whole command line" in denial["reason"]
    assert not (workspace / "chain.txt").exists()
    assert (workspace / "made.txt").exists()


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        (
            "GH_AW_COPILOT_SDK_SERVER_ARGS",
            json.dumps(["--allow-tool", ""]),
            "gives --allow-tool a blank rule",
        ),
        ("GH_AW_COPILOT_SDK_SERVER_ARGS", json.dumps(["--allow-tool="]), "a blank rule"),
        ("GH_AW_COPILOT_SDK_SERVER_ARGS", json.dumps(["--allow-tool", " "]), "a blank rule"),
        (
            "GH_AW_COPILOT_SDK_PERMISSIONS",
            json.dumps({"allowedTools": ["", "  "]}),
            "allowedTools holds a blank rule",
        ),
        (
            "GH_AW_COPILOT_SDK_PERMISSIONS",
            '{"allowedTools": ["read"], "allowedTools": []}',
            'has the key "allowedTools" twice',
        ),
        (
            "GH_AW_COPILOT_SDK_PERMISSIONS",
            '{"allowAllTools": false, "allowAllTools": true}',
            'has the key "allowAllTools" twice',
        ),
        (
            "GH_AW_COPILOT_SDK_PERMISSIONS",
            '{"allowAllTools": ' + "1" * 5000 + "}",
            "holds a number of 5000 digits",
        ),
        ("COPILOT_SDK_READY_FD", "7" * 5000, "not a file descriptor number"),
    ],
    ids=[
        "blank-allow-tool",
        "blank-allow-tool-equals",
        "space-allow-tool",
        "blank-allowed-tools",
        "allowed-tools-twice",
        "allow-all-twice",
        "5000-digits",
        "ready-fd-5000-digits",
    ],
)
def test_inputs_that_once_approved_everything_stop_the_run_before_any_tool(
    driver: DriverRunner,
    scripted_model: ScriptedModelServer,
    variable: str,
    value: str,
    said: str,
) -> None:
    """Each of these values once meant "no rule" (every tool approved: the model's `touch`
    ran) or a traceback. Now: exit 2 before the session, one line naming the variable and
    the fix, no model request, no tool."""
    marker = "blank-rule-ran"
    scripted_model.script = Script(
        rules=(
            Rule(
                "TOUCH",
                (
                    Reply(
                        tool_calls=(
                            ToolCall("bash", {"command": f"touch {marker}", "description": "t"}),
                        )
                    ),
                    Reply(text="done"),
                ),
            ),
        )
    )
    env = driver.environment("TOUCH the marker", **{variable: value})
    workspace = Path(env["GITHUB_WORKSPACE"])
    run = driver.run("", env=env)

    assert run.exit_code == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, run.stderr
    assert variable in errors[0]
    assert said in errors[0]
    assert "Traceback" not in run.stderr
    assert len(errors[0]) < 600
    assert scripted_model.chat_requests() == []
    assert not (workspace / marker).exists()
