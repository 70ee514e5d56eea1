"""Every T-CSD requirement of the Copilot SDK Driver Specification, proven black-box.

Each test runs the driver under test as a process against a real Copilot CLI
sidecar and the kit's scripted model, and judges it only by what the spec
makes visible: exit status, stderr, stdout, the events file, and what the
runtime did (tools that ran, what the model was told).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from kitlib import (
    Kit,
    Run,
    custom_tool_provider,
    find_denials,
    find_marker,
    summary_of,
)

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall

Evidence = Callable[[str], None]
REJECTED = re.compile(r"not allowed.*permission", re.IGNORECASE | re.DOTALL)
DEFAULT_TIMEOUT_MS = 600_000


def args(*allow: str) -> str:
    """GH_AW_COPILOT_SDK_SERVER_ARGS allowing exactly `allow`."""
    flags: list[str] = ["--headless"]
    for tool in allow:
        flags += ["--allow-tool", tool]
    return json.dumps(flags)


def calls(*tool_calls: ToolCall, delay: float = 0.0, answer: str = "kit done") -> Script:
    """The model makes these calls (one round), then answers."""
    return Script(
        rules=(Rule("KIT", (Reply(tool_calls=tool_calls, delay_s=delay), Reply(text=answer))),)
    )


def bash(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": "kit command"})


def effective(run: Run, field: str) -> object:
    """The effective value of a setting, from the first log line that reports it."""
    for line in run.log:
        value = line.field_value(field)
        if value is not None:
            return value
    return None


def was_rejected(kit: Kit, since: int) -> bool:
    return any(REJECTED.search(result) for result in kit.tool_results(since))


# -- Level 1: configuration (spec 4) -----------------------------------------------


def _assert_fails_fast_naming(run: Run, variable: str, evidence: Evidence) -> None:
    assert run.exit_code != 0, "the driver must exit non-zero"
    assert run.seconds < 30, f"the driver must fail fast (took {run.seconds:.1f}s)"
    assert variable in run.stderr, f"stderr should name {variable}"
    evidence(f"exit {run.exit_code} after {run.seconds:.2f}s; stderr names {variable}")


def test_t_csd_001_missing_prompt_fails(kit: Kit, sidecar: TestSidecar, evidence: Evidence) -> None:
    """T-CSD-001: Missing GH_AW_PROMPT fails with non-zero exit."""
    _assert_fails_fast_naming(
        kit.run(sidecar, "hello", GH_AW_PROMPT=None), "GH_AW_PROMPT", evidence
    )
    unreadable = kit.run(sidecar, "hello", GH_AW_PROMPT="/nonexistent/kit/prompt.md")
    assert unreadable.exit_code != 0, "an unreadable prompt file must fail (spec 7.1)"


def test_t_csd_002_missing_sdk_uri_fails(
    kit: Kit, sidecar: TestSidecar, evidence: Evidence
) -> None:
    """T-CSD-002: Missing COPILOT_SDK_URI fails with non-zero exit."""
    _assert_fails_fast_naming(
        kit.run(sidecar, "hello", COPILOT_SDK_URI=None), "COPILOT_SDK_URI", evidence
    )


def test_t_csd_003_missing_connection_token_fails(
    kit: Kit, sidecar: TestSidecar, evidence: Evidence
) -> None:
    """T-CSD-003: Missing COPILOT_CONNECTION_TOKEN fails with non-zero exit."""
    _assert_fails_fast_naming(
        kit.run(sidecar, "hello", COPILOT_CONNECTION_TOKEN=None),
        "COPILOT_CONNECTION_TOKEN",
        evidence,
    )


def test_t_csd_004_invalid_log_level_falls_back_to_warning(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-004: Invalid log level falls back to warning.

    Proven from the effective level the driver reports when it starts (a
    `logLevel` field, JSON or text); a valid level must be honoured too, so a
    driver that ignores the variable fails."""
    kit_model.script = Script()
    invalid = kit.run(sidecar, "hello", COPILOT_SDK_LOG_LEVEL="verbose")
    valid = kit.run(sidecar, "hello", COPILOT_SDK_LOG_LEVEL="debug")
    assert invalid.exit_code == 0, invalid.stderr[-2000:]
    reported = effective(invalid, "logLevel")
    assert reported is not None, "the driver does not report its effective log level"
    assert reported == "warning", f"COPILOT_SDK_LOG_LEVEL=verbose gave {reported!r}"
    assert effective(valid, "logLevel") == "debug", "a valid level (debug) was not honoured"
    evidence(
        f"effective logLevel: verbose -> {reported}, debug -> debug "
        f"(log form: {'/'.join(sorted(invalid.forms()))})"
    )


def test_t_csd_005_unset_send_timeout_defaults_to_600000(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-005: Unset COPILOT_SDK_SEND_TIMEOUT_MS falls back to default 600000.

    The model takes 2.5 s: a run without the variable must wait for it; the
    start-up entry, when the driver reports one, must say 600000."""
    kit_model.script = Script(default=Reply(text="slow answer", delay_s=2.5))
    run = kit.run(sidecar, "be slow", COPILOT_SDK_SEND_TIMEOUT_MS=None)
    assert run.exit_code == 0, "the driver gave up on a 2.5 s answer without a timeout set"
    assert "slow answer" in run.stdout
    reported = effective(run, "sendTimeoutMs")
    if reported is not None:
        assert int(str(reported)) == DEFAULT_TIMEOUT_MS
    evidence(f"waited {run.seconds:.1f}s for a 2.5 s model; reported sendTimeoutMs: {reported}")


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_t_csd_006_invalid_send_timeout_falls_back(
    kit: Kit,
    sidecar: TestSidecar,
    kit_model: ScriptedModelServer,
    value: str,
    evidence: Evidence,
) -> None:
    """T-CSD-006: Non-numeric or non-positive COPILOT_SDK_SEND_TIMEOUT_MS falls back to
    default 600000.

    Control first: a valid 1000 ms must time out on a 3 s model (so a driver
    that ignores the variable fails); the invalid value must then wait."""
    kit_model.script = Script(default=Reply(text="slow answer", delay_s=3))
    control = kit.run(sidecar, "be slow", COPILOT_SDK_SEND_TIMEOUT_MS="1000")
    assert control.exit_code != 0, "COPILOT_SDK_SEND_TIMEOUT_MS=1000 was not applied"
    kit_model.script = Script(default=Reply(text="slow answer", delay_s=2.5))
    run = kit.run(sidecar, "be slow", COPILOT_SDK_SEND_TIMEOUT_MS=value)
    assert run.exit_code == 0, f"COPILOT_SDK_SEND_TIMEOUT_MS={value!r} did not fall back"
    reported = effective(run, "sendTimeoutMs")
    if reported is not None:
        assert int(str(reported)) == DEFAULT_TIMEOUT_MS
    evidence(
        f"1000 ms timed out (exit {control.exit_code}); {value!r} waited "
        f"{run.seconds:.1f}s; reported sendTimeoutMs: {reported}"
    )


RECORDER = textwrap.dedent(
    """
    import json, os, subprocess, sys
    parent = os.getppid()
    siblings = open(f"/proc/{parent}/task/{parent}/children").read().split()
    sidecar = [int(pid) for pid in siblings if int(pid) != os.getpid()][0]
    raw = open(f"/proc/{sidecar}/environ", "rb").read().split(b"\\0")
    sidecar_env = dict(i.decode().split("=", 1) for i in raw if b"=" in i)
    json.dump({"driver": os.environ.get("COPILOT_CONNECTION_TOKEN"),
               "sidecar": sidecar_env.get("COPILOT_CONNECTION_TOKEN")}, open(sys.argv[1], "w"))
    # Run the driver, keeping its raw output: the harness masks the token in what
    # it passes on, so only the raw output shows whether the driver logged it.
    run = subprocess.run(sys.argv[2:], capture_output=True, text=True)
    open(sys.argv[1] + ".out", "w").write(run.stdout + run.stderr)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    sys.exit(run.returncode)
    """
)


def test_t_csd_007_harness_and_driver_share_the_token_and_never_log_it(
    kit: Kit,
    kit_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
    tmp_path: Path,
    evidence: Evidence,
) -> None:
    """T-CSD-007: In SDK mode, harness and driver receive the same non-empty
    COPILOT_CONNECTION_TOKEN, and token values are not logged.

    Runs this project's harness with the driver under test after `--`,
    through a recorder that reads both processes' environments."""
    kit_model.script = Script()
    env, state, _ = kit.environment(None, "hello")
    for name in ("COPILOT_SDK_URI", "COPILOT_CONNECTION_TOKEN"):
        env.pop(name)  # the harness provides them
    home = tmp_path / "harness-home"
    env.update(
        HOME=str(home),
        COPILOT_HOME=str(home / ".copilot"),
        XDG_CACHE_HOME=str(copilot_cache_home),
        COPILOT_AUTO_UPDATE="false",
        COPILOT_OFFLINE="true",
    )
    recorder, record = tmp_path / "recorder.py", tmp_path / "tokens.json"
    recorder.write_text(RECORDER)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "copilot_driver.harness",
            "--copilot",
            str(copilot_cli),
            "--",
            sys.executable,
            str(recorder),
            str(record),
            *kit.command,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    tokens = json.loads(record.read_text())
    assert tokens["driver"], "the driver received no COPILOT_CONNECTION_TOKEN"
    assert tokens["driver"] == tokens["sidecar"], "sidecar and driver got different tokens"
    raw_driver_output = Path(str(record) + ".out").read_text()
    written = "\n".join(
        [
            raw_driver_output,
            completed.stdout,
            completed.stderr,
            *(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file()),
        ]
    )
    assert tokens["driver"] not in written, "the token value was logged or written"
    evidence(
        f"one {len(tokens['driver'])}-character token in both environments; "
        f"absent from {len(written)} bytes of raw driver output, harness output and files"
    )


CANARIES = {
    "GITHUB_TOKEN": "ghs_kitCanaryGITHUBTOKEN00000000000000",
    "GH_TOKEN": "gho_kitCanaryGHTOKEN000000000000000000",
    "COPILOT_GITHUB_TOKEN": "github_pat_kitCanaryCOPILOT0000000000",
}


def test_t_csd_008_platform_tokens_are_not_read_required_or_leaked(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-008: Driver does not read, require, or error on absence of GITHUB_TOKEN,
    COPILOT_GITHUB_TOKEN, or GH_TOKEN.

    Without them the run succeeds; with canary values it behaves the same and
    the canaries appear in no output, file, or model traffic."""
    kit_model.script = Script(default=Reply(text="kit answer"))
    absent = kit.run(sidecar, "hello", **{name: None for name in CANARIES})
    assert absent.exit_code == 0, "the driver failed without platform tokens"
    before = len(kit_model.requests)
    present = kit.run(sidecar, "hello", **CANARIES)
    assert present.exit_code == 0
    assert present.stdout == absent.stdout
    traffic = json.dumps([{"h": r.headers, "b": r.body} for r in kit_model.requests[before:]])
    seen = "\n".join([present.stdout, present.stderr, present.files_text(), traffic])
    leaked = [name for name, canary in CANARIES.items() if canary in seen]
    assert not leaked, f"canary values leaked: {leaked}"
    evidence(
        "same answer with and without platform tokens; no canary in output, files or model traffic"
    )


# -- Level 2: permissions (spec 5) ----------------------------------------------------


def test_t_csd_101_absent_config_defers_to_sdk_default(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-101: Absent permissionConfig defers to SDK default policy (approve)."""
    kit_model.script = calls(
        ToolCall("create", {"path": "made-by-kit.txt", "file_text": "x"}),
        bash("touch shell-by-kit.txt"),
    )
    run = kit.run(
        sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=None, GH_AW_COPILOT_SDK_PERMISSIONS=None
    )
    assert run.exit_code == 0
    assert (run.workspace / "made-by-kit.txt").exists(), "write was not approved"
    assert (run.workspace / "shell-by-kit.txt").exists(), "shell was not approved"
    evidence("no configuration: a write and a shell request both ran")


def test_t_csd_102_allow_all_approves_all(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-102: allowAllTools=true approves all requests (--allow-all-tools wins)."""
    kit_model.script = calls(
        bash("touch allowed-by-all.txt"),
        ToolCall("create", {"path": "written.txt", "file_text": "x"}),
    )
    run = kit.run(
        sidecar,
        "KIT",
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(["--allow-all-tools", "--allow-tool", "read"]),
    )
    assert run.exit_code == 0
    assert (run.workspace / "allowed-by-all.txt").exists()
    assert (run.workspace / "written.txt").exists()
    evidence("--allow-all-tools with a narrower --allow-tool: shell and write ran")


def _read_outside(
    kit: Kit, sidecar: TestSidecar, model: ScriptedModelServer, tmp: Path, allow: str
) -> tuple[Run, bool, bool]:
    outside = tmp / "outside-the-workspace.txt"
    outside.write_text("kit-secret-content-3141\n")
    model.script = calls(ToolCall("view", {"path": str(outside)}))
    before = len(model.requests)
    run = kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args(allow))
    content_seen = any("kit-secret-content-3141" in r for r in kit.tool_results(before))
    return run, content_seen, was_rejected(kit, before)


def test_t_csd_103_scoped_denies_read_by_default(
    kit: Kit,
    sidecar: TestSidecar,
    kit_model: ScriptedModelServer,
    tmp_path: Path,
    evidence: Evidence,
) -> None:
    """T-CSD-103: Scoped allowlist denies read by default when allowedTools does not
    include read."""
    run, content_seen, rejected = _read_outside(kit, sidecar, kit_model, tmp_path, "write")
    assert run.exit_code == 0
    assert not content_seen, "the file outside the workspace was read"
    assert rejected, "the model was not told the read was not allowed"
    evidence("allowedTools [write]: the read was rejected with feedback")


def test_t_csd_104_scoped_approves_read_when_listed(
    kit: Kit,
    sidecar: TestSidecar,
    kit_model: ScriptedModelServer,
    tmp_path: Path,
    evidence: Evidence,
) -> None:
    """T-CSD-104: Scoped allowlist approves read when allowedTools includes read."""
    run, content_seen, _ = _read_outside(kit, sidecar, kit_model, tmp_path, "read")
    assert run.exit_code == 0
    assert content_seen, "read was listed but the file was not read"
    evidence("allowedTools [read]: the runtime read the file")


def test_t_csd_105_write_only_with_write(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-105: Scoped allowlist approves write only when allowedTools includes write."""
    kit_model.script = calls(ToolCall("create", {"path": "kit-write.txt", "file_text": "x"}))
    allowed = kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("write"))
    before = len(kit_model.requests)
    denied = kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("read"))
    assert (allowed.workspace / "kit-write.txt").exists(), "write was listed but not approved"
    assert not (denied.workspace / "kit-write.txt").exists(), "write was approved unlisted"
    assert was_rejected(kit, before)
    evidence("create ran under [write], was rejected under [read]")


def test_t_csd_106_url_only_with_web_fetch(
    kit: Kit, online_sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-106: Scoped allowlist approves url only when allowedTools includes web_fetch."""
    kit_model.script = calls(ToolCall("web_fetch", {"url": "http://127.0.0.1:9/kit?x=1"}))
    before = len(kit_model.requests)
    kit.run(online_sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("web_fetch"))
    # Approved, the runtime goes on and blocks the loopback fetch itself.
    assert any("blocked address" in r for r in kit.tool_results(before)), "url not approved"
    before = len(kit_model.requests)
    kit.run(online_sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("read"))
    assert not any("blocked address" in r for r in kit.tool_results(before))
    assert was_rejected(kit, before), "the url request was not rejected"
    evidence("web_fetch reached the runtime's fetch under [web_fetch], rejected under [read]")


def test_t_csd_107_custom_tool_only_with_its_name(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-107: Scoped allowlist approves custom-tool only when allowedTools includes
    the requested tool name.

    The custom tool is defined by a second SDK client that joins the driver's
    session and never answers permission requests: the driver decides."""
    script = Script(
        rules=(
            Rule(
                "KIT",
                (
                    Reply(tool_calls=(ToolCall("kit_warm_up", {}),), delay_s=3),  # time to join
                    Reply(tool_calls=(ToolCall("kit_lookup", {}),)),
                    Reply(text="kit done"),
                ),
            ),
        )
    )
    results = {}
    for allow in ("kit_lookup", "kit_lookup_other"):
        kit_model.script = script
        before = len(kit_model.requests)
        with custom_tool_provider(sidecar, "kit_lookup") as tool_calls:
            kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args(allow, "read"))
        results[allow] = (len(tool_calls), was_rejected(kit, before))
    assert results["kit_lookup"][0] == 1, "the listed custom tool did not run"
    assert results["kit_lookup_other"] == (0, True), "an unlisted custom tool was approved"
    evidence("kit_lookup ran under [kit_lookup]; rejected under [kit_lookup_other]")


def test_t_csd_108_mcp_by_server_and_by_server_tool(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-108: Scoped allowlist approves mcp by server entry (<serverName>) and by
    server-tool entry (<serverName>(<toolName>))."""
    kit_model.script = calls(ToolCall("fake-add", {"a": 2, "b": 3}))
    outcomes = {}
    for allow in ("fake", "fake(add)", "fake(sub)", "other"):
        before = len(kit_model.requests)
        kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args(allow))
        outcomes[allow] = "5" in [r.strip() for r in kit.tool_results(before)]
    assert outcomes == {"fake": True, "fake(add)": True, "fake(sub)": False, "other": False}
    evidence("fake-add ran under [fake] and [fake(add)], not under [fake(sub)] or [other]")


def test_t_csd_109_shell_matching(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-109: Scoped allowlist enforces shell matching for shell, shell(<rule>), and
    exact full-command entries."""
    command = "touch kit-shell-ran.txt"
    kit_model.script = calls(bash(command))
    ran = {}
    for allow in (
        "shell",
        "shell(touch:*)",
        f"shell({command})",
        "shell(git:*)",
        "shell(touch kit-other.txt)",
    ):
        run = kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args(allow))
        ran[allow] = (run.workspace / "kit-shell-ran.txt").exists()
    kit_model.script = calls(bash("touch kit-ok.txt && touch kit-pwned.txt"))
    chained = kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("shell(touch kit-ok.txt)"))
    assert ran == {
        "shell": True,
        "shell(touch:*)": True,
        f"shell({command})": True,
        "shell(git:*)": False,
        "shell(touch kit-other.txt)": False,
    }
    assert not (chained.workspace / "kit-pwned.txt").exists(), "a chained command got through"
    evidence(
        "shell, shell(touch:*) and the exact command allowed it; shell(git:*) and "
        "another exact command did not; a chained command was rejected"
    )


def test_t_csd_110_unknown_kinds_are_rejected(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-110: Unknown request kinds are rejected.

    A repository hook in the workspace asks for confirmation before each tool
    call: the runtime sends a `hook` request, a kind no allowlist entry covers."""

    def with_hook(workspace: Path) -> None:
        hooks = workspace / ".github" / "hooks"
        hooks.mkdir(parents=True)
        script = hooks / "ask.sh"
        script.write_text(
            '#!/bin/sh\ncat >/dev/null\necho \'{"permissionDecision": "ask", '
            '"permissionDecisionReason": "kit hook asks"}\'\n'
        )
        script.chmod(0o755)
        (hooks / "kit.json").write_text(
            json.dumps(
                {
                    "version": 1,
                    "hooks": {
                        "preToolUse": [{"type": "command", "bash": str(script), "timeoutSec": 10}]
                    },
                }
            )
        )
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)

    kit_model.script = calls(bash("touch kit-hooked.txt"))
    control = kit.run(sidecar, "KIT", prepare=with_hook, GH_AW_COPILOT_SDK_SERVER_ARGS=None)
    assert (control.workspace / "kit-hooked.txt").exists(), "control: the hook was not approved"
    before = len(kit_model.requests)
    scoped = kit.run(
        sidecar, "KIT", prepare=with_hook, GH_AW_COPILOT_SDK_SERVER_ARGS=args("shell(touch:*)")
    )
    assert not (scoped.workspace / "kit-hooked.txt").exists(), "a hook request was approved"
    assert was_rejected(kit, before)
    evidence(
        "a `hook` request: approved with no configuration, rejected in scoped mode even "
        "though shell(touch:*) covered the command"
    )


def _denied_write(kit: Kit, sidecar: TestSidecar, model: ScriptedModelServer) -> tuple[Run, int]:
    model.script = calls(ToolCall("create", {"path": "kit-denied.txt", "file_text": "x"}))
    before = len(model.requests)
    return kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("read")), before


def test_t_csd_111_rejections_carry_feedback_and_denial_logs(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-111: Rejected requests include policy feedback and denial logs."""
    run, before = _denied_write(kit, sidecar, kit_model)
    assert was_rejected(kit, before), "the model was not told why (spec 5.5 feedback)"
    denials = find_denials(run.log)
    assert denials, "no denial log entry (spec 6.3)"
    evidence(f"feedback reached the model; {len(denials)} denial entry ({denials[0].form})")


# -- diagnostics (spec 6) ---------------------------------------------------------------


def test_t_csd_201_lifecycle_logs_and_events(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-201: Lifecycle logs include connection, session, prompt, completion, and
    failure markers (and, Level 3, the session's events as JSON Lines, spec 3.3)."""
    kit_model.script = Script()
    success = kit.run(sidecar, "hello")
    failure = kit.run(None, "hello")  # nobody listens at the kit's dead address
    found = {
        m: find_marker(success.log, m) for m in ("connection", "session", "prompt", "completion")
    }
    missing = [m for m, line in found.items() if line is None]
    assert not missing, f"lifecycle markers missing: {missing}"
    assert failure.exit_code != 0
    assert find_marker(failure.log, "failure") is not None, "no failure marker"
    events = success.events()
    assert events, "no events file (JSON Lines of non-ephemeral events)"
    assert all({"type", "timestamp", "data"} <= set(event) for event in events)
    assert "user.message" in [event["type"] for event in events]
    forms = {line.form for line in found.values() if line is not None}
    evidence(f"markers found in {'/'.join(sorted(forms))} form; {len(events)} events")


def test_t_csd_202_denial_logs_have_a_compact_summary(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-202: Permission denial logs include compact request summary."""
    run, _ = _denied_write(kit, sidecar, kit_model)
    denials = find_denials(run.log)
    assert denials, "no denial log entry"
    summary = summary_of(denials[0])
    assert re.search(r"write\([^)]*kit-denied\.txt\)", summary), f"summary: {summary!r}"
    evidence(f"{denials[0].form} denial entry with {summary!r}")
