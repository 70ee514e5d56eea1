"""Every T-CSD requirement of the Copilot SDK Driver Specification, proven black-box.

Each test runs the driver under test as a process against a real Copilot CLI
sidecar and the kit's scripted model, and judges it only by what the spec
makes visible: exit status, stderr, stdout, the events file, and what the
runtime did (tools that ran, what the model was told).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall
from copilot_driver.testing.github_api import DEFAULT_MODEL, FakeGitHubCopilot
from copilot_driver.testing.rpc_proxy import RpcProxy, permission_request_of

# Top-level for pytest (conftest.py puts this folder on sys.path); by path for mypy.
if TYPE_CHECKING:
    from compliance.kitlib import (
        Kit,
        Run,
        custom_tool_provider,
        find_denials,
        find_marker,
        summary_of,
    )
else:
    from kitlib import Kit, Run, custom_tool_provider, find_denials, find_marker, summary_of

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


def _port(sidecar: TestSidecar) -> int:
    return int(sidecar.uri.rsplit(":", 1)[1].strip("/"))


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
    def children(pid):
        found = []
        for task in os.listdir(f"/proc/{pid}/task"):
            found += open(f"/proc/{pid}/task/{task}/children").read().split()
        return [int(child) for child in found]
    def headless(pid):
        return b"--headless" in open(f"/proc/{pid}/cmdline", "rb").read()
    parent = os.getppid()
    sidecar = [pid for pid in children(parent) if pid != os.getpid()][0]
    # In the harness's sandbox the CLI runs below bubblewrap and its helper.
    while below := [pid for pid in children(sidecar) if headless(pid)]:
        sidecar = below[0]
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


@pytest.mark.parametrize("auth", ["provider", "github-token"])
def test_t_csd_007_harness_and_driver_share_the_token_and_never_log_it(
    kit: Kit,
    kit_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
    tmp_path: Path,
    evidence: Evidence,
    auth: str,
) -> None:
    """T-CSD-007: In SDK mode, harness and driver receive the same non-empty
    COPILOT_CONNECTION_TOKEN, and token values are not logged.

    Runs this project's harness with the driver under test after `--`, through a
    recorder that reads both processes' environments: once with the scripted model as
    a provider, once as most users run it, on a GitHub token (a Copilot subscription)
    against a local fake of GitHub on its real host names, where neither token's
    value may appear in anything written."""
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
    )
    with contextlib.ExitStack() as stack:
        github_token = None
        if auth == "provider":
            env["COPILOT_OFFLINE"] = "true"
        else:
            github = stack.enter_context(FakeGitHubCopilot(Script(), https=True))
            for name in ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE"):
                env.pop(name, None)
            env.pop("COPILOT_PROVIDER_API_KEY", None)
            env.update(github.https_sidecar_env(), COPILOT_MODEL=DEFAULT_MODEL)
            github_token = github.token
        completed, tokens, raw_driver_output = _run_recorded_harness(
            kit, env, copilot_cli, tmp_path
        )
        if github_token is not None:
            assert github.requests_to("/responses", "POST"), "no model call reached GitHub"
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert tokens["driver"], "the driver received no COPILOT_CONNECTION_TOKEN"
    assert tokens["driver"] == tokens["sidecar"], "sidecar and driver got different tokens"
    written = "\n".join(
        [
            raw_driver_output,
            completed.stdout,
            completed.stderr,
            *(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file()),
        ]
    )
    assert tokens["driver"] not in written, "the token value was logged or written"
    if github_token is not None:
        assert github_token not in written, "the GitHub token was logged or written"
    evidence(
        f"{auth}: one {len(tokens['driver'])}-character token in both environments; "
        f"absent from {len(written)} bytes of raw driver output, harness output and files"
    )


def _run_recorded_harness(
    kit: Kit, env: dict[str, str], copilot_cli: Path, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    """The harness with the driver under test behind the recorder: (the run, the two
    tokens, the driver's raw output)."""
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
    assert record.exists(), completed.stderr[-2000:]
    tokens: dict[str, str] = json.loads(record.read_text())
    return completed, tokens, Path(str(record) + ".out").read_text()


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
    # Cast: mypy matches a `**` dict against `timeout` and `prepare` too, not just the overrides.
    absent = kit.run(sidecar, "hello", **cast("dict[str, Any]", {name: None for name in CANARIES}))
    assert absent.exit_code == 0, "the driver failed without platform tokens"
    before = len(kit_model.requests)
    present = kit.run(sidecar, "hello", **cast("dict[str, Any]", CANARIES))
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


# -- 1.0.3: subcommand-scoped shell authorization (spec 5.4) -------------------------------


def _identifiers(form: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A proxy rewrite giving each shell request's SDK identifiers one `form`: the
    executable only, the complete command of each segment, or no entries."""

    def rewrite(message: dict[str, Any]) -> dict[str, Any]:
        request = permission_request_of(message)
        if request is None or request.get("kind") != "shell":
            return message
        segments = request.get("commandSegments") or []
        texts = [str(s.get("fullCommandText", "")) for s in segments] or [
            str(request.get("fullCommandText"))
        ]
        if form == "absent":
            request["commands"] = []
            request.pop("commandSegments", None)
            return message
        names = [
            text.split()[0] if form == "executable" and text.split() else text for text in texts
        ]
        request["commands"] = [{"identifier": name, "readOnly": False} for name in names]
        request["commandSegments"] = [
            {**segment, "identifier": name} for segment, name in zip(segments, names, strict=False)
        ]
        return message

    return rewrite


def _git_repo_with_one_commit(workspace: Path) -> None:
    git = ["git", "-C", str(workspace), "-c", "user.name=kit", "-c", "user.email=kit@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "kit113"], check=True)


@pytest.mark.parametrize("form", ["executable", "complete", "absent"])
def test_t_csd_112_subcommand_grants_whatever_the_sdk_identifiers(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence, form: str
) -> None:
    """T-CSD-112: Subcommand-scoped grants approve the same permitted commands with
    executable-only, full-command, and absent SDK identifiers.

    Spec 1.0.3 5.4: "Subcommand-scoped matching MUST use full command text whether SDK
    identifiers contain an executable name, the complete command, or no entries." A
    proxy between driver and sidecar rewrites the identifiers of every shell request;
    what runs is the runtime's own command. Literal revisions (`HEAD@{0}`, `HEAD~0`,
    5.4: "MUST NOT be rejected as shell expansions") are permitted commands too."""
    kit_model.script = calls(
        bash("git init -q kit-112-a"),
        bash("git init -q kit-112-b && git init -q kit-112-c"),
        bash("git log -1 --format=kit-rev-%s HEAD@{0}"),
        bash("git log -1 --format=kit-tilde-%s HEAD~0"),
    )
    before = len(kit_model.requests)
    with RpcProxy(_port(sidecar), rewrite=_identifiers(form)) as proxy:
        run = kit.run(
            sidecar,
            "KIT",
            prepare=_git_repo_with_one_commit,
            COPILOT_SDK_URI=proxy.address,
            GH_AW_COPILOT_SDK_SERVER_ARGS=args("shell(git init:*)", "shell(git log:*)"),
        )
    assert run.exit_code == 0, run.stderr[-2000:]
    for made in ("kit-112-a", "kit-112-b", "kit-112-c"):
        assert (run.workspace / made / ".git").is_dir(), f"{made} was not created"
    told = "\n".join(kit.tool_results(before))
    assert "kit-rev-kit113" in told, "git log HEAD@{0} did not run"
    assert "kit-tilde-kit113" in told, "git log HEAD~0 did not run"
    evidence(f"identifiers {form}: git init (alone and chained) and git log HEAD@{{0}}/HEAD~0 ran")


def test_t_csd_113_boundaries_repeats_and_syntax_never_authorize(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer, evidence: Evidence
) -> None:
    """T-CSD-113: Subcommand boundaries, repeated executables in chains, and unsupported
    syntax cannot authorize an ungranted command.

    Spec 1.0.3 5.4: "git checkout:* MUST NOT authorize git checkout-other"; "every
    command segment MUST match an applicable grant. Repeated executable names MUST NOT be
    deduplicated"; "Unsupported or malformed shell syntax MUST NOT authorize a request
    through a subcommand-scoped grant". Also in 5.4, and checked here because it is the
    same boundary seen from an exact grant: "Rules containing spaces but not ending with
    :* MUST remain exact full-command matches, not implicit argument wildcards or grants
    for individual chain segments." `git init-db` is git's own alias of `git init`."""
    kit_model.script = calls(
        bash("git init-db kit-113-x"),
        bash("git init -q kit-113-a && git clone -q kit-113-a kit-113-b"),
        bash('git init -q "$(touch kit-113-pwned)"'),
        bash("git init -q kit-113-s`touch kit-113-tick`"),
    )
    scoped = kit.run(sidecar, "KIT", GH_AW_COPILOT_SDK_SERVER_ARGS=args("shell(git init:*)"))
    kit_model.script = calls(
        bash("git init -q kit-113-e && ls"),
        bash("git init -q kit-113-f && git init -q kit-113-f2"),
        bash("git init -q kit-113-g"),
    )
    exact = kit.run(
        sidecar,
        "KIT",
        GH_AW_COPILOT_SDK_SERVER_ARGS=args(
            "shell(git init -q kit-113-e)",
            "shell(ls)",
            "shell(git init -q kit-113-f)",
            "shell(git init -q kit-113-g)",
        ),
    )
    ran = sorted(p.name for p in scoped.workspace.iterdir())
    assert ran == [], f"under shell(git init:*) these ran: {ran}"
    assert sorted(p.name for p in exact.workspace.iterdir()) == ["kit-113-g"]
    evidence(
        "git init-db, a chained git clone, $(...) and backticks ran nothing under "
        "shell(git init:*); exact rules granted no segment of a chain, only their own command"
    )


# -- 1.0.3: the bounded denial guard (spec 4.5, 7.3) -------------------------------------------

GUARD_THRESHOLD = 3
GUARD_BOUND_S = 25.0
"""From the threshold's permission request to the driver's exit. Spec 7.3: the
reference allows 5 s for each of its three sequential cleanup operations (15 s);
the rest is process start and exit."""
UNHANDLED = re.compile(
    r"Traceback|Task exception was never retrieved|was never awaited|"
    r"UnhandledPromiseRejection|Unhandled (promise )?rejection",
    re.IGNORECASE,
)


@dataclass
class GuardRun:
    run: Run
    requests: int
    """Chat requests the model received during the run."""
    settle_s: float
    """From the threshold's permission request to the driver's exit."""

    def guard_records(self) -> list[dict[str, Any]]:
        return [e for e in self.run.events() if e.get("type") == "guard.tool_denials_exceeded"]


_GUARD_RUNS: dict[tuple[str, str], GuardRun] = {}


@pytest.fixture
def guard_run(
    kit: Kit, sidecar: TestSidecar, kit_model: ScriptedModelServer
) -> Callable[[str], GuardRun]:
    """One run per proxy mode (and driver), shared by T-CSD-114..116: a model that asks
    for a denied write in every reply, GH_AW_MAX_TOOL_DENIALS=3, and a proxy that
    passes everything (`pass`), or stops answering (`stall`) or rejects every call
    (`reject`) once the third permission request has reached the driver."""

    def run_in(mode: str) -> GuardRun:
        key = (" ".join(kit.command), mode)
        if key not in _GUARD_RUNS:
            # Writes, not shell commands: the guard's tests do not depend on shell matching.
            writes = (
                ToolCall("create", {"path": f"kit-denied-{n}", "file_text": "x"})
                for n in range(GUARD_THRESHOLD * 2)
            )
            replies = tuple(Reply(tool_calls=(write,)) for write in writes)
            kit_model.script = Script(rules=(Rule("KIT", (*replies, Reply(text="gave up"))),))
            before = len(kit_model.chat_requests())
            with RpcProxy(_port(sidecar)) as proxy:
                proxy.after_permissions(GUARD_THRESHOLD, mode)  # type: ignore[arg-type]
                run = kit.run(
                    sidecar,
                    "KIT",
                    timeout=90,
                    COPILOT_SDK_URI=proxy.address,
                    # A driver that waits for the turn ends by the send timeout.
                    COPILOT_SDK_SEND_TIMEOUT_MS="30000",
                    GH_AW_MAX_TOOL_DENIALS=str(GUARD_THRESHOLD),
                    GH_AW_COPILOT_SDK_SERVER_ARGS=args("read"),
                )
                ended = time.monotonic()
                tripped = proxy.tripped_at
            settle = ended - tripped if tripped is not None else float("nan")
            requests = len(kit_model.chat_requests()) - before
            _GUARD_RUNS[key] = GuardRun(run, requests, settle)
        return _GUARD_RUNS[key]

    return run_in


def test_t_csd_114_the_threshold_stops_inference_once_with_a_failure(
    guard_run: Callable[[str], GuardRun], evidence: Evidence
) -> None:
    """T-CSD-114: Reaching the denial threshold produces one guard event and a non-zero
    driver result even if sendAndWait remains pending.

    Spec 4.5: "MUST stop inference once the configured threshold is reached";
    "Reaching the threshold MUST settle the driver with a non-zero result independently
    of the in-flight SDK request"; "The guard MUST fire at most once per session." The
    model asks for a denied write in every reply: it must be sent exactly three
    requests (the third denial's feedback never reaches it). `stall`: the sidecar stops
    answering at the threshold, so sendAndWait can never settle."""
    notes = []
    for mode in ("pass", "stall"):
        guard = guard_run(mode)
        run = guard.run
        assert run.exit_code != 0, f"{mode}: the guard's run exited 0"
        (record,) = guard.guard_records()
        assert record["data"]["denialCount"] == GUARD_THRESHOLD
        assert record["data"]["threshold"] == GUARD_THRESHOLD
        assert isinstance(record["data"]["reason"], str)
        assert record["data"]["reason"]
        denials = find_denials(run.log)
        assert len(denials) == GUARD_THRESHOLD, f"{mode}: {len(denials)} denial entries"
        assert guard.requests == GUARD_THRESHOLD, (
            f"{mode}: the model received {guard.requests} requests (inference went on)"
        )
        assert guard.settle_s < GUARD_BOUND_S, f"{mode}: settled after {guard.settle_s:.1f}s"
        assert not list(run.workspace.glob("kit-denied-*"))
        notes.append(
            f"{mode}: exit {run.exit_code}, {len(denials)} denials, {guard.requests} model "
            f"requests, settled {guard.settle_s:.1f}s after the threshold"
        )
    evidence("; ".join(notes))


def test_t_csd_115_stalled_or_rejected_cleanup_stays_bounded_and_failed(
    guard_run: Callable[[str], GuardRun], evidence: Evidence
) -> None:
    """T-CSD-115: Stalled or rejected cleanup operations complete within their deadlines
    without masking the guard failure or causing unhandled late rejections.

    Spec 7.3: "A stalled or rejected cleanup operation MUST NOT prevent the remaining
    cleanup operations or replace the original guard failure." After the threshold the
    proxy either answers nothing (`stall`) or answers every call with an error
    (`reject`); the result must be the same failure as an undisturbed guard run."""
    plain = guard_run("pass").run.exit_code
    notes = []
    for mode in ("stall", "reject"):
        guard = guard_run(mode)
        run = guard.run
        assert run.exit_code == plain != 0, f"{mode}: exit {run.exit_code}, not {plain}"
        assert len(guard.guard_records()) == 1, f"{mode}: the guard record is missing"
        assert guard.settle_s < GUARD_BOUND_S, f"{mode}: settled after {guard.settle_s:.1f}s"
        noise = UNHANDLED.search(run.stderr)
        assert noise is None, f"{mode}: unhandled error in stderr: {noise.group()!r}"
        notes.append(
            f"{mode}: exit {run.exit_code} after {guard.settle_s:.1f}s, no unhandled error"
        )
    evidence("; ".join(notes))


def test_t_csd_116_the_driver_exits_within_budget_keeping_the_guard_event(
    guard_run: Callable[[str], GuardRun], evidence: Evidence
) -> None:
    """T-CSD-116: The standalone driver exits non-zero within the cleanup budget and
    preserves the guard event in session logs.

    Spec 4.5: "The driver MUST preserve the guard.tool_denials_exceeded event and its
    denialCount, threshold, and reason fields". The sidecar stops answering at the
    threshold; the events file must still hold the record, as whole JSON lines."""
    guard = guard_run("stall")
    run = guard.run
    assert run.exit_code != 0
    assert guard.settle_s < GUARD_BOUND_S, f"settled after {guard.settle_s:.1f}s"
    files = sorted(run.state_dir.glob("*/events.jsonl"))
    assert files, "no events file"
    text = files[-1].read_text()
    assert text.endswith("\n"), "the events file ends mid-line"
    (record,) = guard.guard_records()
    assert set(record["data"]) >= {"denialCount", "threshold", "reason"}
    evidence(f"exit {run.exit_code} {guard.settle_s:.1f}s after the threshold; guard record kept")


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
