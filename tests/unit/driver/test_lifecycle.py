"""The lifecycle's control flow with a fake SDK client: racing, bounds, cleanup order."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import inspect
import io
import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from copilot.session_events import PermissionRequestShell

from copilot_driver.driver import lifecycle as driver_module
from copilot_driver.driver.config import DriverConfig
from copilot_driver.driver.lifecycle import Lifecycle
from copilot_driver.driver.provider import ProviderConfig
from copilot_driver.driver.stop import StopRequests
from copilot_driver.driver.tasks import run_to_the_end
from copilot_driver.logs import configure_logging
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.redaction import Redactor

TOKEN = "tok-unit-driver-5b1e0c77d2a94f"


# -- Lifecycle with a fake client ----------------------------------------------


class FakeReply:
    def __init__(self, content: str) -> None:
        self.data = type("Data", (), {"content": content})()


class FakeSession:
    def __init__(self, calls: list[str], behaviour: dict[str, Any]) -> None:
        self.session_id = "session-1"
        self.calls = calls
        self.behaviour = behaviour

    async def send_and_wait(self, prompt: str, *, timeout: float) -> Any:
        self.calls.append(f"send:{timeout:g}")
        outcome = self.behaviour.get("send", FakeReply("the answer"))
        if outcome == "insist":
            await self._insist_on_denied_tools()
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome == "hang":
            await asyncio.sleep(3600)
        return outcome

    async def _insist_on_denied_tools(self) -> None:
        """The runtime with a model that asks for a denied tool in every reply: each
        decision delivered makes it ask the model again; a withheld one holds the turn."""
        handler = self.behaviour["handler"]()
        for call in range(100):
            self.calls.append(f"model:{call}")
            request = PermissionRequestShell.from_dict(
                {
                    "kind": "shell",
                    "fullCommandText": f"touch m{call}",
                    "commands": [{"identifier": f"touch m{call}", "readOnly": False}],
                    "canOfferSessionApproval": False,
                    "hasWriteFileRedirection": False,
                    "intention": "make a file",
                    "possiblePaths": [],
                    "possibleUrls": [],
                }
            )
            decision = handler(request, {"session_id": self.session_id})
            if inspect.isawaitable(decision):
                self.behaviour["withheld"] = asyncio.ensure_future(decision)
                await asyncio.sleep(3600)  # the turn waits for that decision
        raise AssertionError("the guard never stopped the turn")

    async def abort(self) -> None:
        self.calls.append("abort")
        await self._maybe_stall("abort")

    async def _maybe_stall(self, step: str) -> None:
        """`stall`: a call the sidecar never answers, and that ignores its cancellation."""
        if self.behaviour.get(step) != "stall":
            return
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue

    async def disconnect(self) -> None:
        self.calls.append("disconnect")
        await self._maybe_stall("disconnect")
        if self.behaviour.get("disconnect") == "hang":
            await asyncio.sleep(3600)
        if self.behaviour.get("disconnect") == "raise":
            raise RuntimeError("detach failed")


SIGNED_IN = {
    "authInfo": {
        "type": "token",
        "host": "https://github.com",
        "copilotUser": {"login": "octocat", "copilot_plan": "individual", "chat_enabled": True},
    }
}


class FakeRpc:
    """The SDK's JSON-RPC client, for the account check's `account.getCurrentAuth`."""

    def __init__(self, behaviour: dict[str, Any]) -> None:
        self.behaviour = behaviour

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.behaviour.setdefault("account_calls", []).append(method)
        return self.behaviour.get("sign_in", SIGNED_IN)


class FakeModel:
    def __init__(self, model_id: str, multiplier: float | None = 0.0) -> None:
        self.id = model_id
        self.billing = type("Billing", (), {"multiplier": multiplier})()


class FakeClient:
    def __init__(self, calls: list[str], behaviour: dict[str, Any]) -> None:
        self.calls = calls
        self.behaviour = behaviour
        self.session_options: dict[str, Any] = {}
        self._client = FakeRpc(behaviour)

    async def list_models(self) -> list[FakeModel]:
        """The account's catalog (on a GitHub token the driver checks the model in it)."""
        self.behaviour.setdefault("account_calls", []).append("models.list")
        return list(self.behaviour.get("models", [FakeModel("auto"), FakeModel("gpt-4.1")]))

    async def start(self) -> None:
        self.calls.append("start")
        failure = self.behaviour.get("start")
        if isinstance(failure, BaseException):
            raise failure

    async def ping(self) -> None:
        """The sidecar watchdog's ping: this fake sidecar is always alive."""

    async def create_session(self, **options: Any) -> FakeSession:
        self.calls.append("create_session")
        self.session_options = options
        self.behaviour["handler"] = lambda: options["on_permission_request"]
        self.session = FakeSession(self.calls, self.behaviour)
        return self.session

    async def stop(self) -> None:
        self.calls.append("stop")
        await self.session._maybe_stall("stop")


@pytest.fixture
def config(tmp_path: Path) -> DriverConfig:
    return DriverConfig(
        prompt_path=tmp_path / "prompt.md",
        prompt="do it",
        sdk_uri="127.0.0.1:3002",
        connection_token=TOKEN,
        model="gpt-4.1",
        send_timeout_ms=2000,
        log_level="warning",
        log_format="json",
        working_directory=tmp_path,
        session_state_base_dir=tmp_path / "state",
    )


def run_lifecycle(
    config: DriverConfig,
    monkeypatch: pytest.MonkeyPatch,
    behaviour: dict[str, Any],
    *,
    signal_after: float | None = None,
) -> tuple[Any, list[str], list[dict[str, Any]]]:
    calls: list[str] = []
    client = FakeClient(calls, behaviour)
    monkeypatch.setattr(driver_module, "create_client", lambda *_: client)
    stream = io.StringIO()
    redactor = Redactor(config.secrets)
    log = configure_logging("json", "warning", redactor, stream=stream)

    async def main() -> Any:
        stop = StopRequests()
        if signal_after is not None:
            asyncio.get_running_loop().call_later(signal_after, stop.request, signal.SIGTERM)
        return await Lifecycle(config, log, redactor, stop).run()

    result = run_to_the_end(main(), driver_module.SHUTDOWN_TIMEOUT_S)
    entries = [json.loads(line) for line in stream.getvalue().splitlines()]
    return result, calls, entries


def test_success_maps_to_exit_0_and_cleans_up_in_order(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls, entries = run_lifecycle(config, monkeypatch, {})

    assert result.exit_code == 0
    assert result.output == "the answer"
    # The SDK takes seconds: 2000 ms -> 2 s.
    assert calls == ["start", "create_session", "send:2", "disconnect", "stop"]
    assert [e["event"] for e in entries][-1] == "session.completed"
    written = json.loads((config.session_state_base_dir / "session-1" / "result.json").read_text())
    assert written["exitCode"] == 0
    assert written["sessionId"] == "session-1"


def test_a_permission_handler_is_always_registered(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    client = FakeClient(calls, {})
    monkeypatch.setattr(driver_module, "create_client", lambda *_: client)
    log = configure_logging("json", "warning", Redactor(), stream=io.StringIO())

    async def main() -> Any:
        return await Lifecycle(config, log, Redactor(), StopRequests()).run()

    asyncio.run(main())
    assert callable(client.session_options["on_permission_request"])
    assert client.session_options["model"] == "gpt-4.1"
    assert client.session_options["working_directory"] == str(config.working_directory)
    assert "provider" not in client.session_options


def test_send_timeout_maps_to_124_and_aborts_before_disconnecting(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls, entries = run_lifecycle(
        config, monkeypatch, {"send": TimeoutError("Timeout after 2s")}
    )

    assert result.exit_code == 124
    assert calls[-4:] == ["send:2", "abort", "disconnect", "stop"]
    (error,) = [e for e in entries if e["event"] == "error"]
    assert error["errorKind"] == "send_timeout"


def test_signal_mid_turn_maps_to_128_plus_signal_with_the_same_cleanup(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls, entries = run_lifecycle(config, monkeypatch, {"send": "hang"}, signal_after=0.1)

    assert result.exit_code == 128 + signal.SIGTERM
    assert calls[-3:] == ["abort", "disconnect", "stop"]
    assert entries[-1]["errorKind"] == "interrupted"


def test_a_session_error_maps_to_1_with_a_clear_message(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls, entries = run_lifecycle(
        config, monkeypatch, {"send": Exception("Session error: Execution failed: no model")}
    )

    assert result.exit_code == 1
    assert entries[-1]["errorKind"] == "session_error"
    assert "no model" in entries[-1]["message"]
    assert "abort" not in calls  # the turn is over: nothing to abort


def test_on_a_github_token_the_account_is_checked_before_the_session(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    behaviour: dict[str, Any] = {}
    result, _, entries = run_lifecycle(config, monkeypatch, behaviour)

    assert result.exit_code == 0
    assert behaviour["account_calls"] == ["account.getCurrentAuth", "models.list"]
    (checked,) = [e for e in entries if e["event"] == "account.checked"]
    assert checked["login"] == "octocat"
    assert checked["models"] == ["auto", "gpt-4.1"]


@pytest.mark.parametrize(
    ("behaviour", "exit_code", "kind"),
    [
        (
            {
                "sign_in": {
                    "authErrors": [
                        "Failed to validate SDK token (401): GitHub returned: Bad credentials"
                    ]
                }
            },
            2,
            "token_refused",
        ),
        ({"sign_in": {}}, 2, "not_signed_in"),
        ({"models": [FakeModel("auto"), FakeModel("gpt-5-mini")]}, 2, "model_unavailable"),
    ],
)
def test_an_account_that_cannot_serve_the_run_stops_it_before_any_session(
    config: DriverConfig,
    monkeypatch: pytest.MonkeyPatch,
    behaviour: dict[str, Any],
    exit_code: int,
    kind: str,
) -> None:
    result, calls, entries = run_lifecycle(config, monkeypatch, behaviour)

    assert result.exit_code == exit_code
    assert calls == ["start", "stop"]
    assert entries[-1]["errorKind"] == kind


def test_with_a_provider_no_account_is_checked(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = ProviderConfig(base_url="http://127.0.0.1:9/v1", type="openai")
    behaviour: dict[str, Any] = {"sign_in": {}}
    result, _, _ = run_lifecycle(
        dataclasses.replace(config, provider=provider), monkeypatch, behaviour
    )

    assert result.exit_code == 0
    assert "account_calls" not in behaviour


def test_a_connection_failure_never_creates_a_session_or_result_file(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = RuntimeError("Failed to connect to CLI server at 127.0.0.1:3002: Connection refused")
    result, calls, entries = run_lifecycle(config, monkeypatch, {"start": refused})

    assert result.exit_code == 1
    assert calls == ["start", "stop"]
    assert entries[-1]["errorKind"] == "sidecar_unreachable"
    assert not config.session_state_base_dir.exists()


GUARDED = {
    "permissions": PermissionConfig(False, ("shell(echo:*)",), "test"),
    "max_tool_denials": 3,
}


def test_the_guard_stops_inference_at_the_threshold(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec 4.5: at the third denial the model is asked nothing more; exactly three
    denials, one guard record, exit 3, and the withheld decision ends with the turn."""
    behaviour: dict[str, Any] = {"send": "insist"}
    guarded = DriverConfig(**{**vars(config), **GUARDED})
    result, calls, entries = run_lifecycle(guarded, monkeypatch, behaviour)

    assert result.exit_code == 3
    assert result.output == ""
    assert [c for c in calls if c.startswith("model:")] == ["model:0", "model:1", "model:2"]
    assert calls[-3:] == ["abort", "disconnect", "stop"]
    assert [e["event"] for e in entries].count("permission.denied") == 3
    assert entries[-1]["errorKind"] == "tool_denials_exceeded"
    assert behaviour["withheld"].done()  # released by the cleanup, not left hanging
    events = (config.session_state_base_dir / "session-1" / "events.jsonl").read_text()
    policy, *denials, guard = [json.loads(line) for line in events.splitlines()]
    assert policy["type"] == "policy.in_force"
    assert policy["data"] == guarded.permissions.in_force().to_json()
    assert [d["type"] for d in denials] == ["policy.denial"] * 3
    assert all(d["data"]["reason"] and "allowRule" in d["data"] for d in denials)
    assert guard["type"] == "guard.tool_denials_exceeded"
    assert guard["data"]["denialCount"] == 3
    assert guard["data"]["threshold"] == 3


def test_the_guard_settles_the_run_when_every_cleanup_step_stalls(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spec 7.3 / T-CSD-115: abort, disconnect and stop never answer and ignore their
    cancellation (a sidecar that stopped answering after the threshold). Each is
    abandoned at its deadline; the guard's failure is the result; nothing is reported
    as unhandled."""
    for name in ("ABORT_TIMEOUT_S", "DISCONNECT_TIMEOUT_S", "STOP_TIMEOUT_S"):
        monkeypatch.setattr(driver_module, name, 0.1)
    monkeypatch.setattr(driver_module, "SHUTDOWN_TIMEOUT_S", 0.1)
    behaviour = {"send": "insist", "abort": "stall", "disconnect": "stall", "stop": "stall"}
    guarded = DriverConfig(**{**vars(config), **GUARDED})
    started = time.monotonic()
    result, calls, entries = run_lifecycle(guarded, monkeypatch, behaviour)
    elapsed = time.monotonic() - started

    assert result.exit_code == 3
    assert calls[-3:] == ["abort", "disconnect", "stop"]
    timeouts = [e["message"] for e in entries if e["event"] == "cleanup.timeout"]
    assert timeouts == [
        "could not abort the turn within 0.1s",
        "could not disconnect the session within 0.1s",
        "could not stop the client within 0.1s",
    ]
    assert entries[-1]["errorKind"] == "tool_denials_exceeded"
    assert elapsed < 5, f"the run took {elapsed:.1f}s to settle"
    gc.collect()  # abandoned tasks are dropped without a word
    assert capsys.readouterr().err == ""


def test_rules_that_match_nothing_are_reported_with_the_rule_meant(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Logged at start with the suggestion, and annotated under GitHub Actions."""
    rules = ("bash(git:*)", "shell(ls)", "Read")
    annotated = DriverConfig(
        **{
            **vars(config),
            "permissions": PermissionConfig(False, rules, "GH_AW_COPILOT_SDK_SERVER_ARGS"),
            "github_actions": True,
        }
    )
    _, _, entries = run_lifecycle(annotated, monkeypatch, {})

    reported = [e for e in entries if e["event"] == "permissions.unusable_rule"]
    assert [(e["rule"], e["suggestion"]) for e in reported] == [
        ("bash(git:*)", "shell(git:*)"),
        ("Read", "read"),
    ]
    assert reported[0]["level"] == "warning"
    annotations = [line for line in capsys.readouterr().err.splitlines() if line.startswith("::")]
    assert annotations == [
        "::warning title=Copilot tool permission rule matches no request::the rule bash(git:*) "
        "(--allow-tool) matches no request: `bash(...)` is not a rule kind; shell commands are "
        "`shell(...)`; did you mean shell(git:*)?",
        "::warning title=Copilot tool permission rule matches no request::the rule Read "
        "(--allow-tool) matches no request: permission names are lower case; did you mean read?",
    ]


def test_rules_that_grant_running_code_are_said_once_at_start(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Logged at start, and a notice under GitHub Actions; plain programs are not."""
    rules = ("shell(python:*)", "shell(ls)", "shell(npm test)", "shell(git status:*)", "read")
    annotated = DriverConfig(
        **{
            **vars(config),
            "permissions": PermissionConfig(False, rules, "test"),
            "github_actions": True,
        }
    )
    _, _, entries = run_lifecycle(annotated, monkeypatch, {})

    said = [e for e in entries if e["event"] == "permissions.grants_code_execution"]
    assert [(e["rule"], e["program"]) for e in said] == [
        ("shell(python:*)", "python"),
        ("shell(npm test)", "npm"),
        ("shell(git status:*)", "git"),
    ]
    assert {e["level"] for e in said} == {"info"}
    assert "the harness's sandbox" in str(said[0]["message"])
    notices = [
        line
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("::notice title=Copilot tool permission rule grants running code::")
    ]
    assert len(notices) == 3
    assert "shell(python:*) grants running code: `python` is an interpreter" in notices[0]


def test_cleanup_is_bounded_even_when_disconnect_hangs(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(driver_module, "DISCONNECT_TIMEOUT_S", 0.1)
    result, calls, entries = run_lifecycle(config, monkeypatch, {"disconnect": "hang"})

    assert result.exit_code == 0  # the outcome was known before cleanup
    assert calls[-2:] == ["disconnect", "stop"]  # the later steps still ran
    assert any(e["event"] == "cleanup.timeout" for e in entries)


def test_a_failing_cleanup_step_does_not_stop_the_others(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls, _ = run_lifecycle(config, monkeypatch, {"disconnect": "raise"})

    assert result.exit_code == 0
    assert calls[-2:] == ["disconnect", "stop"]


def test_the_token_in_an_sdk_error_never_reaches_the_log(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaky = RuntimeError(f"handshake failed for token {TOKEN}")
    result, _, entries = run_lifecycle(config, monkeypatch, {"start": leaky})

    assert result.exit_code == 1
    assert TOKEN not in json.dumps(entries)
    assert "***" in entries[-1]["message"]


def test_a_key_in_the_provider_url_never_reaches_the_start_log(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-proj-Ab3dE5gH7jK9mN1pQ3"
    provider = ProviderConfig(base_url=f"https://user:{key}@models.example:8443/v1")
    config = dataclasses.replace(config, provider=provider)
    calls: list[str] = []
    leaky = RuntimeError(f"cannot reach https://user:{key}@models.example:8443/v1")
    monkeypatch.setattr(
        driver_module, "create_client", lambda *_: FakeClient(calls, {"start": leaky})
    )
    stream = io.StringIO()
    redactor = Redactor(config.secrets)
    log = configure_logging("json", "info", redactor, stream=stream)

    result = run_to_the_end(
        Lifecycle(config, log, redactor, StopRequests()).run(), driver_module.SHUTDOWN_TIMEOUT_S
    )

    entries = [json.loads(line) for line in stream.getvalue().splitlines()]
    start = next(e for e in entries if e["event"] == "connection.start")
    assert start["provider"] == "https://***@models.example:8443/v1"
    assert result.exit_code == 1
    assert key not in stream.getvalue()
    assert "***" in entries[-1]["message"]
    assert key not in repr(provider)


def test_an_unwritable_events_folder_is_a_clear_failure(
    config: DriverConfig, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder should be")
    unwritable = DriverConfig(**{**vars(config), "session_state_base_dir": blocker})
    result, calls, entries = run_lifecycle(unwritable, monkeypatch, {})

    assert result.exit_code == 1
    assert entries[-1]["errorKind"] == "events_unwritable"
    assert "GH_AW_SESSION_STATE_BASE_DIR" in entries[-1]["message"]
    assert "send:2" not in calls  # no turn runs without its audit trail
    assert calls[-2:] == ["disconnect", "stop"]


def test_the_policy_masks_secrets_before_shortening_summaries(config: DriverConfig) -> None:
    redactor = Redactor(config.secrets)
    log = configure_logging("json", "warning", redactor, stream=io.StringIO())
    lifecycle = Lifecycle(config, log, redactor, StopRequests())
    command = "echo " + "a" * 145 + " " + TOKEN  # the token straddles the summary's cut
    decision = lifecycle.policy.decide({"kind": "shell", "fullCommandText": command})
    assert TOKEN[:8] not in decision.summary
