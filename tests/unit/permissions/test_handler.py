"""Unit tests for `copilot_driver.permissions.handler`: the SDK glue, the denial
diagnostics (spec 5.5, 6.3), secondary loggers and the tool-denials guard.

Compliance tests carry their spec ids (T-CSD-111, T-CSD-202) in their names.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest
from copilot.rpc import PermissionDecisionApproveOnce, PermissionDecisionReject
from copilot.session import PermissionHandler
from copilot.session_events import (
    PermissionRequestCustomTool,
    PermissionRequestMemory,
    PermissionRequestRead,
)

from copilot_driver.logs import DriverLog, configure_logging
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.handler import (
    DecisionsInFlight,
    DenialGuard,
    github_actions_annotation,
    make_permission_handler,
)
from copilot_driver.permissions.policy import DENIAL_FEEDBACK, Decision, Policy
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import Denial
from copilot_driver.workflow_commands import escape_property
from helpers.permission_requests import mcp, read, shell, url, write

SECRET = "ghs_SeCrEt0123456789abcdefXYZ"
INVOCATION = {"session_id": "s-1", "managed_settings_enabled": False}
ANNOTATION_HEAD = (
    "::warning title=Copilot tool denied::Tool invocation denied by workflow tool permissions: "
)


class Sink:
    """A DriverLog writing JSON lines into memory."""

    def __init__(self, level: str = "warning", redactor: Redactor | None = None) -> None:
        self.stream = io.StringIO()
        self.log: DriverLog = configure_logging(
            "json",
            level,  # type: ignore[arg-type]
            redactor or Redactor(),
            stream=self.stream,
        )

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines()]


@pytest.fixture
def sink() -> Sink:
    return Sink()


# --- the real requests -------------------------------------------------------------------------


def custom_tool(name: str) -> PermissionRequestCustomTool:
    return PermissionRequestCustomTool.from_dict(
        {"kind": "custom-tool", "toolName": name, "toolDescription": "d", "args": None}
    )


def memory() -> PermissionRequestMemory:
    return PermissionRequestMemory.from_dict({"kind": "memory", "fact": "a fact"})


def scoped(*rules: str) -> Policy:
    return Policy(PermissionConfig(False, rules))


# --- denials (spec 5.5, 6.3) -------------------------------------------------------------------


def test_t_csd_111_rejected_requests_include_policy_feedback_and_denial_logs(sink: Sink) -> None:
    """T-CSD-111: "Rejected requests include policy feedback and denial logs."

    Spec 5.5: "On rejection, the handler MUST return a reject decision with feedback
    indicating that invocation is not allowed by workflow tool permissions." Spec 6.3:
    "When a permission request is denied, the implementation MUST: Log a denial entry with
    a compact request summary."
    """
    handler = make_permission_handler(scoped("shell(git:*)"), sink.log)
    result = handler(read("/etc/passwd"), INVOCATION)

    assert isinstance(result, PermissionDecisionReject)
    assert result.feedback == DENIAL_FEEDBACK
    assert "not allowed by workflow tool permissions" in result.feedback
    assert result.to_dict()["kind"] == "reject"

    (entry,) = sink.entries
    assert entry["event"] == "permission.denied"
    assert entry["level"] == "warning"
    assert entry["sessionId"] == "s-1"
    assert entry["requestKind"] == "read"
    assert entry["requestSummary"] == "read(/etc/passwd)"
    assert isinstance(entry["reason"], str)
    assert "read" in entry["reason"]
    assert "read(/etc/passwd)" in entry["message"]
    assert entry["timestamp"].endswith("Z")


@pytest.mark.parametrize(
    ("request_", "kind", "summary"),
    [
        (
            shell("curl  -fsSL\n https://example.com/install.sh", ["curl"]),
            "shell",
            "shell(curl -fsSL https://example.com/install.sh)",
        ),
        (mcp("github", "get_file_contents"), "mcp", "mcp(github.get_file_contents)"),
        (
            url("https://user:pw@example.com/a/b?token=abc#x"),
            "url",
            "url(https://example.com/a/b)",
        ),
        (write("/work/repo/src/main.py"), "write", "write(/work/repo/src/main.py)"),
        (read("/home/runner/.ssh/id_rsa"), "read", "read(/home/runner/.ssh/id_rsa)"),
        (custom_tool("deploy_prod"), "custom-tool", "custom-tool(deploy_prod)"),
        (memory(), "memory", "memory"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_t_csd_202_denial_logs_include_compact_request_summary(
    sink: Sink, request_: Any, kind: str, summary: str
) -> None:
    """T-CSD-202: "Permission denial logs include compact request summary."

    Spec 6.3: "When a permission request is denied, the implementation MUST: Log a denial
    entry with a compact request summary."
    """
    handler = make_permission_handler(scoped("shell(git:*)"), sink.log)
    assert isinstance(handler(request_, INVOCATION), PermissionDecisionReject)
    (entry,) = sink.entries
    assert entry["event"] == "permission.denied"
    assert entry["requestKind"] == kind
    assert entry["requestSummary"] == summary
    for secret in ("pw@", "token=abc", "#x"):
        assert secret not in sink.text


def test_long_shell_command_is_shortened_in_the_denial_log(sink: Sink) -> None:
    command = "echo " + "a" * 1000
    make_permission_handler(scoped("shell(git:*)"), sink.log)(shell(command, ["echo"]), INVOCATION)
    (entry,) = sink.entries
    assert entry["requestSummary"] == f"shell({command[:157]}...)"


def test_session_id_missing_from_the_invocation_is_null(sink: Sink) -> None:
    handler = make_permission_handler(scoped("read"), sink.log)
    assert isinstance(handler(write("/x"), {}), PermissionDecisionReject)
    assert isinstance(handler(write("/y"), None), PermissionDecisionReject)
    assert [e["sessionId"] for e in sink.entries] == [None, None]


# --- approvals ---------------------------------------------------------------------------------


def test_scoped_approval_returns_approve_once_and_logs_no_warning(sink: Sink) -> None:
    handler = make_permission_handler(scoped("shell(git:*)", "read", "fake(add)"), sink.log)
    for request in (shell("git status", ["git"]), read("/etc/hostname"), mcp("fake", "add")):
        result = handler(request, INVOCATION)
        assert isinstance(result, PermissionDecisionApproveOnce)
        assert result.to_dict()["kind"] == "approve-once"
    assert sink.text == ""


def test_scoped_approval_is_a_debug_entry_at_debug_level() -> None:
    sink = Sink("debug")
    handler = make_permission_handler(scoped("shell(git:*)"), sink.log)
    assert isinstance(
        handler(shell("git status", ["git"]), INVOCATION), PermissionDecisionApproveOnce
    )
    (entry,) = sink.entries
    assert entry["event"] == "permission.approved"
    assert entry["level"] == "debug"
    assert entry["requestKind"] == "shell"
    assert entry["requestSummary"] == "shell(git status)"


@pytest.mark.parametrize(
    "config",
    [PermissionConfig(), PermissionConfig(True), PermissionConfig(False, (), "explicit")],
)
def test_unrestricted_and_allow_all_return_the_sdk_approve_all_result(
    config: PermissionConfig,
) -> None:
    sink = Sink("debug")
    guard_calls: list[tuple[int, int]] = []
    guard = DenialGuard(1, lambda count, threshold: guard_calls.append((count, threshold)))
    seen: list[Denial] = []
    handler = make_permission_handler(
        Policy(config), sink.log, secondary=[seen.append], guard=guard
    )
    for request in (shell("rm -rf /", ["rm"]), memory(), read("/etc/shadow"), mcp()):
        result = handler(request, INVOCATION)
        assert isinstance(result, PermissionDecisionApproveOnce)
        expected = PermissionHandler.approve_all(request, INVOCATION)  # type: ignore[arg-type]
        assert type(result) is type(expected)
    assert sink.text == ""
    assert seen == []
    assert guard.count == 0
    assert guard_calls == []


def test_unrestricted_defers_even_for_requests_the_sdk_would_not_approve() -> None:
    """The SDK's approve-all, whatever it answers (here: no result for a request needing
    managed approval), is what "defer to the SDK default policy" returns."""
    request = PermissionRequestRead.from_dict(
        {"kind": "read", "intention": "r", "path": "/x", "managedApprovalRequired": True}
    )
    handler = make_permission_handler(Policy(PermissionConfig()), Sink().log)
    result = handler(request, INVOCATION)
    assert type(result) is type(PermissionHandler.approve_all(request, INVOCATION))  # type: ignore[arg-type]
    assert not isinstance(result, PermissionDecisionReject)


# --- secondary loggers -------------------------------------------------------------------------


def test_secondary_loggers_each_get_the_denial(sink: Sink) -> None:
    first: list[Denial] = []
    second: list[Denial] = []

    def broken(denial: Denial) -> None:
        raise RuntimeError("disk full")

    handler = make_permission_handler(
        scoped("shell(git:*)"), sink.log, secondary=[first.append, broken, second.append]
    )
    result = handler(shell("rm -rf /", ["rm"]), INVOCATION)

    assert isinstance(result, PermissionDecisionReject)
    assert result.feedback == DENIAL_FEEDBACK
    (denial,) = first
    assert second == [denial]
    assert denial.session_id == "s-1"
    assert denial.kind == "shell"
    assert denial.summary == "shell(rm -rf /)"
    assert "rm -rf /" in denial.reason
    assert [e["event"] for e in sink.entries] == ["permission.denied"]
    assert sink.entries[0]["reason"] == denial.reason


def test_a_failing_secondary_logger_is_a_debug_entry() -> None:
    sink = Sink("debug")

    def broken(denial: Denial) -> None:
        raise RuntimeError("disk full")

    handler = make_permission_handler(scoped("read"), sink.log, secondary=[broken])
    assert isinstance(handler(write("/x"), INVOCATION), PermissionDecisionReject)
    events = [(e["event"], e["level"]) for e in sink.entries]
    assert events == [("permission.denied", "warning"), ("permission.secondary_failed", "debug")]
    assert "disk full" in sink.entries[1]["message"]


def test_secondary_loggers_are_not_called_for_approvals(sink: Sink) -> None:
    seen: list[Denial] = []
    handler = make_permission_handler(scoped("read"), sink.log, secondary=[seen.append])
    assert isinstance(handler(read("/x"), INVOCATION), PermissionDecisionApproveOnce)
    assert seen == []


# --- the GitHub Actions annotation -------------------------------------------------------------


def test_github_actions_annotation_through_the_handler(sink: Sink) -> None:
    stream = io.StringIO()
    handler = make_permission_handler(
        scoped("shell(git:*)"),
        sink.log,
        secondary=[github_actions_annotation(Redactor(), stream=stream)],
    )
    handler(shell("rm -rf /", ["rm"]), INVOCATION)
    assert stream.getvalue() == ANNOTATION_HEAD + "shell(rm -rf /)\n"


def test_github_actions_annotation_escapes_the_data() -> None:
    stream = io.StringIO()
    log = github_actions_annotation(Redactor(), stream=stream)
    log(Denial("shell", "shell(printf '100%'\r\nrm -rf /)", "r", session_id="s-1"))
    assert stream.getvalue() == ANNOTATION_HEAD + "shell(printf '100%25'%0D%0Arm -rf /)\n"
    assert stream.getvalue().count("\n") == 1


def test_annotation_property_escaping() -> None:
    assert escape_property("a:b,c%d\re\nf") == "a%3Ab%2Cc%25d%0De%0Af"
    line = io.StringIO()
    github_actions_annotation(Redactor(), stream=line)(Denial("read", "read(/x)", "r"))
    title = line.getvalue().split("::")[1]
    assert title == "warning title=Copilot tool denied"


def test_github_actions_annotation_masks_secrets() -> None:
    stream = io.StringIO()
    log = github_actions_annotation(Redactor([SECRET]), stream=stream)
    log(Denial("shell", f"shell(curl -H 'Authorization: {SECRET}' x)", "r", session_id="s-1"))
    assert SECRET not in stream.getvalue()
    assert stream.getvalue() == ANNOTATION_HEAD + "shell(curl -H 'Authorization: ***' x)\n"


def test_github_actions_annotation_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    github_actions_annotation(Redactor())(Denial("write", "write(/x)", "r"))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ANNOTATION_HEAD + "write(/x)\n"


# --- the tool-denials guard --------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [1, 3])
async def test_denial_guard_trips_once_and_withholds_from_the_threshold_on(
    sink: Sink, threshold: int
) -> None:
    """Spec 4.5: the threshold stops inference. The denial that reaches it and every
    request after it get no decision until the turn is stopped (a delivered decision
    would let the runtime call the model again), and only denials count."""
    from copilot.session import PermissionNoResult

    trips: list[tuple[int, int]] = []
    guard = DenialGuard(threshold, lambda count, limit: trips.append((count, limit)))
    handler = make_permission_handler(scoped("read"), sink.log, guard=guard)

    for denied in range(1, threshold):
        # Approvals in between never count.
        assert isinstance(handler(read("/ok"), INVOCATION), PermissionDecisionApproveOnce)
        assert isinstance(handler(write(f"/x{denied}"), INVOCATION), PermissionDecisionReject)
        assert (guard.count, trips, guard.tripped) == (denied, [], False)
    tripping = asyncio.ensure_future(handler(write("/last"), INVOCATION))
    assert trips == [(threshold, threshold)]
    later = [asyncio.ensure_future(handler(r, INVOCATION)) for r in (write("/y"), read("/ok"))]
    await asyncio.sleep(0.01)
    assert not any(task.done() for task in (tripping, *later))  # nothing sent yet
    guard.turn_stopped()
    results = await asyncio.gather(tripping, *later)
    assert all(isinstance(result, PermissionNoResult) for result in results)
    events = [e["event"] for e in sink.entries]
    assert events.count("permission.denied") == threshold
    assert guard.count == threshold  # withheld requests are not denials


async def test_a_withheld_request_is_rejected_if_the_turn_is_never_stopped(sink: Sink) -> None:
    """The backstop: a decision, and never an approval, if the driver never stops the turn."""
    guard = DenialGuard(1, lambda *_: None, withhold_timeout=0.01)
    handler = make_permission_handler(scoped("read"), sink.log, guard=guard)
    tripping = await handler(write("/x"), INVOCATION)
    after = await handler(read("/ok"), INVOCATION)
    assert isinstance(tripping, PermissionDecisionReject)
    assert isinstance(after, PermissionDecisionReject)
    assert tripping.feedback == DENIAL_FEEDBACK


def test_denial_guard_trips_after_the_denial_is_logged(sink: Sink) -> None:
    logged_before_trip: list[int] = []
    guard = DenialGuard(1, lambda count, limit: logged_before_trip.append(len(sink.entries)))
    withheld = make_permission_handler(scoped("read"), sink.log, guard=guard)(
        write("/x"), INVOCATION
    )
    withheld.close()  # never awaited here
    assert logged_before_trip == [2], "the denial and its count, gh-aw's line"
    denied, counted = sink.entries
    assert denied["event"] == "permission.denied"
    assert counted["event"] == "tool.denial"
    assert counted["message"] == "tool denial 1/1: permission denied: write(/x)"
    assert (counted["denialCount"], counted["threshold"]) == (1, 1)


# --- fail closed -------------------------------------------------------------------------------


class _Raises:
    kind = "shell"

    def to_dict(self) -> dict[str, Any]:
        raise RuntimeError("cannot serialise")


class _NotADict:
    kind = "shell"

    def __init__(self, value: Any) -> None:
        self.value = value

    def to_dict(self) -> Any:
        return self.value


@pytest.mark.parametrize(
    "request_",
    [
        _Raises(),
        _NotADict(None),
        _NotADict(["kind", "shell"]),
        _NotADict("shell"),
        object(),
        {"kind": "shell", "fullCommandText": "ls"},
    ],
    ids=["raises", "none", "list", "str", "object", "plain-dict"],
)
def test_unreadable_requests_are_rejected_and_logged(sink: Sink, request_: Any) -> None:
    seen: list[Denial] = []
    guard = DenialGuard(2, lambda *_: None)
    handler = make_permission_handler(
        scoped("shell"),  # would allow any readable shell request
        sink.log,
        secondary=[seen.append],
        guard=guard,
    )
    result = handler(request_, INVOCATION)
    assert isinstance(result, PermissionDecisionReject)
    assert result.feedback == DENIAL_FEEDBACK
    entry, counted = sink.entries
    assert counted["event"] == "tool.denial"
    assert entry["event"] == "permission.denied"
    assert entry["level"] == "warning"
    assert entry["requestKind"] == "unknown"
    assert entry["reason"] == "the request could not be read"
    assert len(seen) == 1
    assert guard.count == 1  # an unreadable request is a denial like any other


def test_a_policy_that_raises_rejects(sink: Sink, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = scoped("shell", "read")

    def broken(request: Any) -> Decision:
        raise RuntimeError("bug")

    monkeypatch.setattr(policy, "decide", broken)
    handler = make_permission_handler(policy, sink.log)
    for request in (shell("ls", ["ls"]), read("/x")):
        result = handler(request, INVOCATION)
        assert isinstance(result, PermissionDecisionReject)
    assert [e["reason"] for e in sink.entries] == [
        "internal error while deciding (RuntimeError)"
    ] * 2
    assert [e["requestKind"] for e in sink.entries] == ["shell", "read"]


def test_a_policy_whose_class_decide_raises_rejects(
    sink: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Policy, request: Any) -> Decision:
        raise KeyError("bug")

    monkeypatch.setattr(Policy, "decide", broken)
    handler = make_permission_handler(scoped("web_fetch"), sink.log)
    assert isinstance(handler(url("https://example.com/"), INVOCATION), PermissionDecisionReject)
    (entry,) = sink.entries
    assert entry["reason"] == "internal error while deciding (KeyError)"


# --- secrets -----------------------------------------------------------------------------------


def test_a_secret_in_a_shell_command_never_reaches_the_log() -> None:
    sink = Sink("debug", Redactor([SECRET]))
    stream = io.StringIO()
    handler = make_permission_handler(
        scoped("shell(git:*)"),
        sink.log,
        secondary=[github_actions_annotation(Redactor([SECRET]), stream=stream)],
    )
    command = f"curl -H 'Authorization: Bearer {SECRET}' https://example.com"
    assert isinstance(handler(shell(command, ["curl"]), INVOCATION), PermissionDecisionReject)
    assert SECRET not in sink.text
    assert SECRET not in stream.getvalue()
    (entry,) = sink.entries
    assert (
        entry["requestSummary"] == "shell(curl -H 'Authorization: Bearer ***' https://example.com)"
    )
    assert "***" in entry["message"]
    assert "***" in entry["reason"]


def test_a_secret_cut_by_the_summary_limit_leaks_no_part() -> None:
    """The summary shortens to 160 chars *before* the log masks secrets, so a secret
    straddling the cut is no longer a whole secret and its head is written unmasked.
    (config.py masks before shortening "so no part leaks"; the denial log should too.)"""
    sink = Sink("warning", Redactor([SECRET]))
    stream = io.StringIO()
    # As the driver wires it: the policy masks with the run's redactor.
    policy = Policy(
        PermissionConfig(False, ("shell(git:*)",), "test"), mask=Redactor([SECRET]).text
    )
    handler = make_permission_handler(
        policy,
        sink.log,
        secondary=[github_actions_annotation(Redactor([SECRET]), stream=stream)],
    )
    command = "echo " + "a" * 145 + " " + SECRET  # the secret starts at index 151
    handler(shell(command, ["echo"]), INVOCATION)
    (entry,) = sink.entries
    assert SECRET[:6] not in entry["requestSummary"]
    assert SECRET[:6] not in stream.getvalue()


async def test_decisions_in_flight_are_awaited_until_the_sdk_task_has_replied() -> None:
    """The SDK sends a decision after the handler returns, in the handler's task."""
    in_flight = DecisionsInFlight()
    replied: list[str] = []
    release = asyncio.Event()

    async def sdk_responder(name: str) -> None:  # what the SDK's task does
        in_flight.track()  # the handler runs first, inside this task
        await release.wait()  # then the RPC carrying the decision
        replied.append(name)

    tasks = [asyncio.create_task(sdk_responder(name)) for name in ("a", "b")]
    await asyncio.sleep(0)
    asyncio.get_running_loop().call_later(0.05, release.set)
    await in_flight.delivered(timeout=5)
    assert replied == ["a", "b"]
    await asyncio.gather(*tasks)


async def test_decisions_in_flight_wait_is_bounded() -> None:
    in_flight = DecisionsInFlight()

    async def stuck() -> None:
        in_flight.track()
        await asyncio.sleep(60)

    task = asyncio.create_task(stuck())
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await in_flight.delivered(timeout=0.05)
    assert loop.time() - started < 5
    task.cancel()


def test_tracking_outside_an_event_loop_is_harmless() -> None:
    DecisionsInFlight().track()
