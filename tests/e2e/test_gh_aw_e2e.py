"""The driver under gh-aw's engine, started as gh-aw starts a custom driver.

gh-aw's harness runs `python3 <workspace>/<driver file> <copilot binary>`
with the workspace as its folder, stdin closed, in its own process group,
with the tool contract, a provider catalog, a `copilot/`-prefixed model, the
denials threshold and a send timeout in its environment. Here the catalog's
only provider is a scripted model server of its own, apart from the one the
sidecar was started with, so which one the session used is visible.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.gh_aw import DEFAULT_PATH, write_driver_file
from copilot_driver.permissions.budget import OVERRUN_LIMIT, budget_feedback
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall
from copilot_driver.testing.environment import TEST_MODEL, driver_environment
from copilot_driver.testing.fixtures import parse_log
from copilot_driver.testing.rpc_proxy import RpcProxy

pytestmark = pytest.mark.e2e

RUN_TIMEOUT_S = 120
READ_ONLY = {
    "bash": False,
    "edit": False,
    "webFetch": False,
    "webSearch": False,
    "mcp": False,
    "cliProxy": False,
}


def tool_contract(*allowed: str, **capabilities: bool) -> str:
    return json.dumps(
        {
            "version": 1,
            "capabilities": {**READ_ONLY, **capabilities},
            "permissions": {"allowedTools": ["read", *allowed]},
        }
    )


@dataclass
class GhAwRun:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def log(self) -> list[dict[str, Any]]:
        return parse_log(self.stderr)


@pytest.fixture
def catalog_model() -> Iterator[ScriptedModelServer]:
    """The catalog's only provider (not the model the sidecar itself was given)."""
    with ScriptedModelServer() as server:
        yield server


class GhAw:
    def __init__(
        self,
        tmp_path: Path,
        sidecar: TestSidecar,
        copilot_cli: Path,
        catalog_model: ScriptedModelServer,
    ) -> None:
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        self.driver_file = self.workspace / DEFAULT_PATH
        write_driver_file(self.driver_file)
        self.copilot_cli = copilot_cli
        prompt = tmp_path / "prompt.txt"
        prompt.write_text("please RUN the task", encoding="utf-8")
        catalog = {
            "model": TEST_MODEL,
            "providers": [{"name": "copilot", "type": "openai", "baseUrl": catalog_model.base_url}],
            "models": [{"id": TEST_MODEL, "provider": "copilot"}],
        }
        self.env = driver_environment(
            prompt_file=prompt,
            sdk_uri=sidecar.uri,
            token=sidecar.token,
            model_base_url=None,
            state_dir=tmp_path / "state",
            workspace=self.workspace,
            COPILOT_MODEL=f"copilot/{TEST_MODEL}",
            GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON=json.dumps(catalog),
            GH_AW_COPILOT_SDK_TOOL_CONFIG=tool_contract(),
            GH_AW_MAX_TOOL_DENIALS="3",
            COPILOT_SDK_SEND_TIMEOUT_MS="60000",
            # gh-aw also names its proxy here for the sidecar's own use: left alone.
            COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:9/v1",
            COPILOT_PROVIDER_TYPE="openai",
        )

    def start(self, **overrides: str) -> subprocess.Popen[str]:
        """The driver as gh-aw's newer harness spawns it: stdin closed, its own group."""
        return subprocess.Popen(
            [sys.executable, str(self.driver_file), str(self.copilot_cli)],
            cwd=self.workspace,
            env={**self.env, **overrides},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run(self, **overrides: str) -> GhAwRun:
        completed = subprocess.run(
            [sys.executable, str(self.driver_file), str(self.copilot_cli)],
            cwd=self.workspace,
            env={**self.env, **overrides},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            start_new_session=True,
            check=False,
        )
        return GhAwRun(completed.returncode, completed.stdout, completed.stderr)


@pytest.fixture
def gh_aw(
    tmp_path: Path,
    copilot_sidecar: TestSidecar,
    copilot_cli: Path,
    catalog_model: ScriptedModelServer,
) -> GhAw:
    return GhAw(tmp_path, copilot_sidecar, copilot_cli, catalog_model)


def offered_tools(server: ScriptedModelServer) -> set[str]:
    (first, *_) = server.chat_requests()
    return {tool["function"]["name"] for tool in first.body.get("tools", [])}


def test_a_plain_turn_uses_the_catalog_provider_and_model(
    gh_aw: GhAw, catalog_model: ScriptedModelServer, scripted_model: ScriptedModelServer
) -> None:
    catalog_model.script = Script(rules=(Rule("RUN", (Reply(text="done by the catalog"),)),))
    run = gh_aw.run()

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "done by the catalog\n"
    assert catalog_model.chat_requests(), "the catalog's provider served the session"
    assert not scripted_model.requests, "the sidecar's own model was never asked"
    assert {request.body["model"] for request in catalog_model.chat_requests()} == {TEST_MODEL}
    (created,) = [entry for entry in run.log if entry["event"] == "session.created"]
    assert created["model"] == f"copilot/{TEST_MODEL}"
    (config,) = [entry for entry in run.log if entry["event"] == "permissions.config"]
    assert config["permissionSource"] == "GH_AW_COPILOT_SDK_TOOL_CONFIG"


def test_a_tool_the_contract_allows_runs(
    gh_aw: GhAw, catalog_model: ScriptedModelServer, tmp_path: Path
) -> None:
    marker = gh_aw.workspace / "marker.txt"
    catalog_model.script = Script(
        rules=(
            Rule(
                "RUN",
                (
                    Reply(tool_calls=(ToolCall("bash", {"command": f"touch {marker}"}),)),
                    Reply(text="touched"),
                ),
            ),
        )
    )
    run = gh_aw.run(GH_AW_COPILOT_SDK_TOOL_CONFIG=tool_contract("shell(touch:*)", bash=True))

    assert run.exit_code == 0, run.stderr
    assert marker.exists(), "bash ran the allowed command"
    assert "bash" in offered_tools(catalog_model)
    (events_file,) = (tmp_path / "state").rglob("events.jsonl")
    starts = [
        record["data"]
        for line in events_file.read_text(encoding="utf-8").splitlines()
        if (record := json.loads(line))["type"] == "tool.execution_start"
    ]
    assert [start["command"] for start in starts] == [f"touch {marker}"]
    assert starts[0]["input"] == {"command": f"touch {marker}"}


def test_a_tool_the_contract_hides_is_never_offered_to_the_model(
    gh_aw: GhAw, catalog_model: ScriptedModelServer
) -> None:
    catalog_model.script = Script(rules=(Rule("RUN", (Reply(text="read only"),)),))
    run = gh_aw.run()  # bash and edit off

    assert run.exit_code == 0, run.stderr
    offered = offered_tools(catalog_model)
    assert "view" in offered, offered
    hidden = {"bash", "read_bash", "write_bash", "create", "edit", "apply_patch", "web_fetch"}
    assert not offered & hidden, offered & hidden


@pytest.mark.parametrize(
    ("contract", "says"),
    [
        ('{"version": 1}', "needs a capabilities object"),
        (tool_contract("write"), "turns edit off but grants a write"),
        ('{"version": 2, "profile": "go-repository"}', "version 2 (the go-repository profile)"),
        (
            tool_contract("web_search", webSearch=True),
            "turns webSearch on: Copilot native web_search is unavailable in offline BYOK "
            "mode; configure an MCP search server instead",
        ),
    ],
)
def test_a_broken_contract_stops_the_run_before_any_prompt_is_sent(
    gh_aw: GhAw,
    catalog_model: ScriptedModelServer,
    scripted_model: ScriptedModelServer,
    contract: str,
    says: str,
) -> None:
    run = gh_aw.run(GH_AW_COPILOT_SDK_TOOL_CONFIG=contract)

    assert run.exit_code == 2
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith("[copilot-sdk-driver] error: GH_AW_COPILOT_SDK_TOOL_CONFIG ")
    assert says in line
    assert not catalog_model.requests
    assert not scripted_model.requests


def _events(tmp_path: Path) -> list[dict[str, Any]]:
    (events_file,) = (tmp_path / "state").rglob("events.jsonl")
    return [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]


def test_a_call_past_the_tool_call_budget_is_denied_and_the_model_answers(
    gh_aw: GhAw, catalog_model: ScriptedModelServer, tmp_path: Path
) -> None:
    """gh-aw's soft stop: the call past `maxToolCalls` does not run, the model is
    told why, answers from what it has, and the run succeeds (exit 0: nothing for
    gh-aw's harness to retry)."""
    first, second = gh_aw.workspace / "first.txt", gh_aw.workspace / "second.txt"
    catalog_model.script = Script(
        rules=(
            Rule(
                "RUN",
                (
                    Reply(tool_calls=(ToolCall("bash", {"command": f"touch {first}"}),)),
                    Reply(tool_calls=(ToolCall("bash", {"command": f"touch {second}"}),)),
                    Reply(text="done with what I had"),
                ),
            ),
        )
    )
    contract = json.loads(tool_contract("shell(touch:*)", bash=True))
    run = gh_aw.run(GH_AW_COPILOT_SDK_TOOL_CONFIG=json.dumps({**contract, "maxToolCalls": 1}))

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "done with what I had\n"
    assert first.exists(), "the call within the budget ran"
    assert not second.exists(), "the call past the budget never ran"
    requests = catalog_model.chat_requests()
    assert len(requests) == 3
    assert budget_feedback(1) in json.dumps(requests[-1].body), "the model was told why"
    debits = [e["data"] for e in _events(tmp_path) if e["type"] == "guard.tool_call_budget_debit"]
    assert [(d["toolName"], d["callCount"], d["limit"], d["exhausted"]) for d in debits] == [
        ("bash", 1, 1, False),
        ("bash", 2, 1, True),
    ]
    assert all(isinstance(d["sessionId"], str) for d in debits)
    denied = [entry for entry in run.log if entry["event"] == "tool_call_budget.denied"]
    assert len(denied) == 1


def test_a_model_that_keeps_calling_tools_past_the_budget_is_stopped(
    gh_aw: GhAw, catalog_model: ScriptedModelServer, tmp_path: Path
) -> None:
    """The driver's own bound: the OVERRUN_LIMIT-th call denied past the budget
    stops the turn (exit 6) long before the send timeout; only the call within
    the budget ran, and the model is not asked again."""
    made = gh_aw.workspace / "made"
    catalog_model.script = Script(
        default=Reply(tool_calls=(ToolCall("bash", {"command": f"touch {made}"}),))
    )
    contract = json.loads(tool_contract("shell(touch:*)", bash=True))
    run = gh_aw.run(GH_AW_COPILOT_SDK_TOOL_CONFIG=json.dumps({**contract, "maxToolCalls": 1}))

    assert run.exit_code == 6, run.stderr
    assert made.exists()
    assert len(catalog_model.chat_requests()) == 1 + OVERRUN_LIMIT, "not asked again"
    (error,) = [entry for entry in run.log if entry["event"] == "error"]
    assert error["errorKind"] == "tool_call_budget_exceeded"
    assert "kept calling tools past the budget of 1 calls" in error["message"]
    (stop,) = [
        e["data"] for e in _events(tmp_path) if e["type"] == "guard.tool_call_budget_exceeded"
    ]
    assert (stop["callCount"], stop["limit"]) == (1 + OVERRUN_LIMIT, 1)
    # gh-aw's harness counts these lines: three or more and it does not retry.
    assert len(re.findall(r"\bpermission denied\b", run.stderr, re.IGNORECASE)) >= 3


def _without_idle(message: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's `session.idle` events renamed, so the driver never sees one."""
    event = (message.get("params") or {}).get("event")
    if isinstance(event, dict) and event.get("type") == "session.idle":
        event["type"] = "test.idle_withheld"
    return message


def test_the_idle_watchdog_ends_an_answered_session_that_never_goes_idle(
    gh_aw: GhAw, catalog_model: ScriptedModelServer, copilot_sidecar: TestSidecar
) -> None:
    catalog_model.script = Script(rules=(Rule("RUN", (Reply(text="answered, not idle"),)),))
    with RpcProxy(int(copilot_sidecar.uri.rsplit(":", 1)[1]), rewrite=_without_idle) as proxy:
        started = time.monotonic()
        run = gh_aw.run(COPILOT_SDK_URI=proxy.address, GH_AW_SDK_IDLE_MS="1500")
        took = time.monotonic() - started

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "answered, not idle\n"
    assert any(entry["event"] == "session.idle_timeout" for entry in run.log)
    assert took < 30, "ended by the watchdog, long before the 60 s send timeout"


PERMISSION_DENIED = re.compile(r"\b(?:permission denied|permissions denied|EACCES|EPERM)\b", re.I)
"""gh-aw's harness: three matches on the driver's output classify the failure as
`permission_denied`, which it does not retry."""


def test_denials_stop_the_run_at_the_threshold_in_words_gh_aw_classifies(
    gh_aw: GhAw, catalog_model: ScriptedModelServer
) -> None:
    asks = Reply(tool_calls=(ToolCall("bash", {"command": "rm -rf ."}),))
    catalog_model.script = Script(rules=(Rule("RUN", (asks, asks, asks, asks)),))
    run = gh_aw.run(  # bash visible, but only `ls` allowed
        GH_AW_COPILOT_SDK_TOOL_CONFIG=tool_contract("shell(ls)", bash=True)
    )

    assert run.exit_code == 3, run.stderr
    assert len(PERMISSION_DENIED.findall(run.stderr)) >= 3
    assert len(catalog_model.chat_requests()) == 3, "inference stopped at the threshold"


HARNESS_KILL_GRACE_S = 5.0
"""gh-aw's newer harness cancels a run with SIGTERM to the driver's process group and
sends SIGKILL 5 s later: the driver must be gone by then, having said why."""


def test_sigterm_to_the_process_group_mid_turn_ends_the_run_before_the_kill(
    gh_aw: GhAw, catalog_model: ScriptedModelServer, tmp_path: Path
) -> None:
    catalog_model.script = Script(rules=(Rule("RUN", (Reply(text="too late", delay_s=60),)),))
    process = gh_aw.start()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not catalog_model.chat_requests() and process.poll() is None:
        assert time.monotonic() < deadline, "the prompt never reached the model"
        time.sleep(0.05)
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    took = time.monotonic() - sent

    assert took < HARNESS_KILL_GRACE_S, f"still running {took:.1f}s after SIGTERM"
    assert process.returncode == 128 + signal.SIGTERM, stderr[-2000:]
    assert stdout == ""
    (verdict,) = [entry for entry in parse_log(stderr) if entry["event"] == "error"]
    assert verdict["errorKind"] == "interrupted"
    assert "SIGTERM" in verdict["message"]
    events = _events(tmp_path)
    assert "user.message" in [event["type"] for event in events], "the events so far are kept"
    with pytest.raises(ProcessLookupError):  # nothing of the driver's is left in its group
        os.killpg(process.pid, 0)


def test_the_routing_effort_reaches_the_model(
    gh_aw: GhAw, catalog_model: ScriptedModelServer
) -> None:
    catalog_model.script = Script(rules=(Rule("RUN", (Reply(text="thought hard"),)),))
    run = gh_aw.run(GH_AW_MODEL_ROUTING="1", GH_AW_COPILOT_ROUTING_EFFORT="high")

    assert run.exit_code == 0, run.stderr
    efforts = {request.body.get("reasoning_effort") for request in catalog_model.chat_requests()}
    assert efforts == {"high"}
