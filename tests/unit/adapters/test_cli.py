"""Unit tests for `python -m copilot_driver.adapters run`: arguments, exit codes, output.

Every case runs the real module in a subprocess with a controlled environment.
Full runs use a fake `copilot` (a small Python script on PATH) that answers
`--version`, logs its argv, and then replays a real transcript, hangs, or fails.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from copilot_driver.adapters.core.agent_events import EventType

if TYPE_CHECKING:
    from unit.adapters.conftest import Pids

SECRET = "sekret-gh-token-value-42"
ERROR = "[copilot-driver-adapters] error: "
TRANSCRIPT = Path(__file__).parents[2] / "data" / "copilot-cli" / "plain-prompt.jsonl"
TRANSCRIPT_SESSION_ID = "d28a6049-3cdb-4b9e-8a01-29d7c44bffe8"
EVENT_TYPES = {t.value for t in EventType}

FAKE_COPILOT = """\
#!{python}
import json, os, sys, time

args = sys.argv[1:]
if args == ["--version"]:
    if os.environ.get("FAKE_VERSION_FAILS"):
        print("node: command not found", file=sys.stderr)
        sys.exit(1)
    print("GitHub Copilot CLI 1.0.102")
    sys.exit(0)
with open(os.environ["FAKE_ARGV_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
mode = os.environ.get("FAKE_MODE", "ok")
if mode == "hang":
    pid_file = os.environ["FAKE_PID_FILE"]
    with open(pid_file + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    time.sleep(3600)
if mode == "fail":
    print("Error: boom", file=sys.stderr)
    sys.exit(1)
if mode == "leak":
    token = os.environ["GH_TOKEN"]
    info = {{"type": "session.info", "data": {{"message": "your token is " + token}}}}
    print(json.dumps(info), flush=True)
    print("debug: using token " + token, file=sys.stderr, flush=True)
with open({transcript!r}) as transcript:
    sys.stdout.write(transcript.read())
sys.exit(0)
"""


@dataclass
class Cli:
    """Runs the CLI with a fake `copilot` on PATH and a known environment."""

    tmp_path: Path
    bin_dir: Path
    workspace: Path
    argv_log: Path
    pid_file: Path
    env: dict[str, str]

    def run(
        self, *args: str | Path, timeout: float = 30, env: dict[str, str] | None = None
    ) -> Result:
        completed = subprocess.run(
            [sys.executable, "-m", "copilot_driver.adapters", *map(str, args)],
            env={**self.env, **(env or {})},
            cwd=self.tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return Result(completed.returncode, completed.stdout, completed.stderr)

    def popen(self, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "copilot_driver.adapters", *map(str, args)],
            env={**self.env, **(env or {})},
            cwd=self.tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def turn(
        self, *prompts: str, extra: tuple[str | Path, ...] = (), env: dict[str, str] | None = None
    ) -> Result:
        prompt_args = [a for p in prompts for a in ("--prompt", p)]
        return self.run(
            "run", "--kind", "copilot-cli", "--workspace", self.workspace,
            *prompt_args, *extra, env=env,
        )  # fmt: skip

    def workflow(self, text: str) -> Path:
        path = self.tmp_path / "WORKFLOW.md"
        path.write_text(text, encoding="utf-8")
        return path

    def invocations(self) -> list[list[str]]:
        if not self.argv_log.exists():
            return []
        return [json.loads(line) for line in self.argv_log.read_text().splitlines()]

    def fake_pid(self, timeout_s: float = 10) -> int:
        deadline = time.monotonic() + timeout_s
        while not self.pid_file.exists():
            assert time.monotonic() < deadline, "the fake copilot never started"
            time.sleep(0.02)
        return int(self.pid_file.read_text())


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines()]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "copilot"
    fake.write_text(FAKE_COPILOT.format(python=sys.executable, transcript=str(TRANSCRIPT)))
    fake.chmod(0o755)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    argv_log = tmp_path / "argv.jsonl"
    pid_file = tmp_path / "copilot.pid"
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "GH_TOKEN": SECRET,
        "FAKE_ARGV_LOG": str(argv_log),
        "FAKE_PID_FILE": str(pid_file),
    }
    return Cli(tmp_path, bin_dir, workspace, argv_log, pid_file, env)


def _assert_no_secret(result: Result) -> None:
    assert SECRET not in result.stdout
    assert SECRET not in result.stderr


# -- bad usage: exit 2 ---------------------------------------------------------


def test_no_arguments(cli: Cli) -> None:
    result = cli.run()
    assert result.code == 2
    assert result.stderr == (
        f"{ERROR}the following arguments are required: run "
        "(`python -m copilot_driver.adapters --help` lists the options)\n"
    )
    assert result.stdout == ""


def test_help_lists_the_exit_codes(cli: Cli) -> None:
    result = cli.run("--help")
    assert result.code == 0
    for line in ("124  a turn hit", "4    the session could not start", "2    bad usage"):
        assert line in result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--prompt", "hi"], "--workspace"),
        (["run", "--workspace", "/tmp"], "one of the arguments --prompt --prompt-file"),
        (["run", "--workspace", "/tmp", "--prompt", "hi"], "give --kind"),
        (["run", "--kind", "nope", "--workspace", "/tmp", "--prompt", "hi"], "unknown agent kind"),
        (
            ["run", "--kind", "copilot-cli", "--workspace", "/tmp", "--prompt", "a",
             "--prompt-file", "p.txt"],
            "not allowed with argument",
        ),
        (
            ["run", "--kind", "copilot-cli", "--workspace", "/tmp", "--prompt", "a",
             "--log-level", "loud"],
            "invalid choice",
        ),
        (["run", "--kind", "copilot-cli", "--workspace", "/tmp", "--prompt", " \n"], "empty"),
        (
            ["run", "--kind", "copilot-cli", "--workspace", "/tmp", "--prompt", "ok",
             "--prompt", ""],
            "the prompt is empty",
        ),
    ],
    ids=[
        "no-workspace",
        "no-prompt",
        "no-kind-no-workflow",
        "unknown-kind",
        "prompt-and-prompt-file",
        "bad-log-level",
        "blank-prompt",
        "second-prompt-empty",
    ],
)  # fmt: skip
def test_usage_errors(cli: Cli, args: list[str], expected: str) -> None:
    result = cli.run(*args)
    assert result.code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(ERROR)
    assert expected in line
    assert result.stdout == ""
    assert cli.invocations() == []


def test_unknown_kind_lists_the_known_kinds(cli: Cli) -> None:
    result = cli.run("run", "--kind", "nope", "--workspace", cli.workspace, "--prompt", "hi")
    assert result.code == 2
    assert "known kinds: codex, copilot-cli, copilot-transcript, tool-loop" in result.stderr


@pytest.mark.parametrize(
    ("front_matter", "named"),
    [
        ("agent:\n  kind: copilot-cli\n  max_turn: 5\n", "agent.max_turn"),
        ("agent:\n  kind: copilot-cli\n  max_turns: '5'\n", "agent.max_turns"),
        ("agent:\n  kind: copilot-cli\ncopilot-cli:\n  modle: x\n", "copilot-cli.modle"),
        ("agent:\n  kind: copilot-cli\nworker:\n  ssh_hosts: ['-oX=y']\n", "ssh_hosts"),
        ("agent: [unclosed\n", "not valid YAML"),
        ("agent:\n  kind: claude-code\n", "unknown agent kind 'claude-code'"),
    ],
)
def test_invalid_workflow(cli: Cli, front_matter: str, named: str) -> None:
    path = cli.workflow(f"---\n{front_matter}---\nprompt\n")
    result = cli.run("run", "--workflow", path, "--workspace", cli.workspace, "--prompt", "hi")
    assert result.code == 2
    assert named in result.stderr
    assert str(path) in result.stderr
    assert result.stdout == ""


def test_workflow_kind_conflicting_with_kind_argument(cli: Cli) -> None:
    path = cli.workflow("---\nagent:\n  kind: copilot-cli\n---\n")
    result = cli.run(
        "run", "--kind", "copilot-transcript", "--workflow", path,
        "--workspace", cli.workspace, "--prompt", "hi",
    )  # fmt: skip
    assert result.code == 2
    assert "agent.kind is 'copilot-cli'" in result.stderr


def test_missing_workflow_file(cli: Cli) -> None:
    missing = cli.tmp_path / "NOPE.md"
    result = cli.run("run", "--workflow", missing, "--workspace", cli.workspace, "--prompt", "x")
    assert result.code == 2
    assert "cannot read the workflow file" in result.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read the prompt file"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
        (b"before\x00after", "NUL byte"),
        (b"  \n\t\n", "the prompt is empty"),
    ],
    ids=["missing", "not-utf8", "nul", "blank"],
)
def test_bad_prompt_file(cli: Cli, content: bytes | None, expected: str) -> None:
    prompt_file = cli.tmp_path / "prompt.txt"
    if content is not None:
        prompt_file.write_bytes(content)
    result = cli.run(
        "run", "--kind", "copilot-cli", "--workspace", cli.workspace, "--prompt-file", prompt_file
    )
    assert result.code == 2
    assert expected in result.stderr
    assert cli.invocations() == []


# -- the session cannot start: exit 4 ------------------------------------------


@pytest.mark.parametrize("workspace", ["missing", "file"])
def test_invalid_workspace(cli: Cli, workspace: str) -> None:
    (cli.tmp_path / "file").write_text("not a directory")
    path = cli.tmp_path / {"missing": "nope", "file": "file"}[workspace]
    result = cli.run("run", "--kind", "copilot-cli", "--workspace", path, "--prompt", "hi")
    assert result.code == 4
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{ERROR}the session could not start: invalid_workspace_cwd: ")
    assert line.endswith("; give --workspace an existing directory")
    assert result.stdout == ""
    assert cli.invocations() == []


def test_secret_in_the_workspace_path_is_masked(cli: Cli) -> None:
    path = cli.tmp_path / f"ws-{SECRET}"
    result = cli.run("run", "--kind", "copilot-cli", "--workspace", path, "--prompt", "hi")
    assert result.code == 4
    assert "invalid_workspace_cwd" in result.stderr
    assert "ws-***" in result.stderr
    _assert_no_secret(result)


def test_agent_command_not_found(cli: Cli) -> None:
    path = cli.workflow("---\nagent:\n  kind: copilot-cli\n  command: /nonexistent/copilot\n---\n")
    result = cli.run("run", "--workflow", path, "--workspace", cli.workspace, "--prompt", "hi")
    assert result.code == 4
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{ERROR}the session could not start: agent_not_found: ")
    assert "/nonexistent/copilot" in line


def test_copilot_not_on_path(cli: Cli) -> None:
    result = cli.turn("hi", env={"PATH": str(cli.tmp_path / "empty-bin")})
    assert result.code == 4
    assert "agent_not_found" in result.stderr


def test_broken_copilot_fails_the_canary(cli: Cli) -> None:
    result = cli.turn("hi", env={"FAKE_VERSION_FAILS": "1"})
    assert result.code == 4
    assert f"{ERROR}the session could not start: agent_not_found: " in result.stderr
    assert "--version failed" in result.stderr
    assert cli.invocations() == []


def test_no_github_credential(cli: Cli) -> None:
    result = cli.turn("hi", env={"GH_TOKEN": ""})
    assert result.code == 4
    assert "agent_not_found" in result.stderr
    assert "GH_TOKEN" in result.stderr
    assert cli.invocations() == []


# -- full runs against the fake copilot ----------------------------------------


def test_a_completed_turn(cli: Cli) -> None:
    result = cli.turn("say hi")
    assert result.code == 0, result.stderr
    events = result.events()
    assert events, "no event was printed"
    assert all(event["type"] in EVENT_TYPES for event in events)
    assert all(event["timestamp"].endswith("Z") for event in events)
    assert events[0]["type"] == "session_started"
    assert events[-1]["type"] == "turn_completed"
    assert events[-1]["session_id"] == TRANSCRIPT_SESSION_ID
    assert {"notification", "tool_result", "token_usage"} <= {e["type"] for e in events}
    [argv] = cli.invocations()
    assert argv[:2] == ["-p", "say hi"]
    assert "--resume" not in argv
    assert "--continue" not in argv
    _assert_no_secret(result)


def test_two_prompts_run_two_turns_of_one_session(cli: Cli) -> None:
    result = cli.turn("first", "second")
    assert result.code == 0, result.stderr
    types = [event["type"] for event in result.events()]
    assert types.count("session_started") == 2
    assert types.count("turn_completed") == 2
    assert types[-1] == "turn_completed"
    first, second = cli.invocations()
    assert first[:2] == ["-p", "first"]
    assert "--resume" not in first
    assert second[:2] == ["-p", "second"]
    assert second[second.index("--resume") + 1] == TRANSCRIPT_SESSION_ID


def test_resume_option_resumes_from_the_first_turn(cli: Cli) -> None:
    result = cli.turn("go on", extra=("--resume", "earlier-session"))
    assert result.code == 0, result.stderr
    [argv] = cli.invocations()
    assert argv[argv.index("--resume") + 1] == "earlier-session"


def test_more_prompts_than_max_turns_is_refused_before_any_turn(cli: Cli) -> None:
    path = cli.workflow("---\nagent:\n  kind: copilot-cli\n  max_turns: 1\n---\n")
    result = cli.run(
        "run", "--workflow", path, "--workspace", cli.workspace,
        "--prompt", "one", "--prompt", "two",
    )  # fmt: skip
    assert result.code == 2
    assert result.stderr == (
        f"{ERROR}2 prompts, one turn each, but agent.max_turns is 1 ({path}); "
        "give at most 1 --prompt, or raise agent.max_turns\n"
    )
    assert cli.invocations() == []


def test_a_failing_copilot(cli: Cli) -> None:
    result = cli.turn("hi", env={"FAKE_MODE": "fail"})
    assert result.code == 1
    [line] = [line for line in result.stderr.splitlines() if line.startswith(ERROR)]
    assert line.startswith(f"{ERROR}turn 1 of session ")
    assert "port_exit: " in line
    assert "Error: boom" in line
    events = result.events()
    assert events[-1]["type"] == "turn_failed"
    assert events[-1]["error_kind"] == "port_exit"


@pytest.mark.parametrize(
    ("agent_limits", "reason"),
    [
        ("stall_timeout_ms: 500", "stalled: no event for 0.5 s"),
        ("turn_timeout_ms: 700\n  stall_timeout_ms: 0", "turn timeout"),
    ],
    ids=["stall", "turn-timeout"],
)
def test_a_hanging_copilot_times_out_and_is_stopped(
    cli: Cli, pids: Pids, agent_limits: str, reason: str
) -> None:
    path = cli.workflow(f"---\nagent:\n  kind: copilot-cli\n  {agent_limits}\n---\n")
    started = time.monotonic()
    result = cli.run(
        "run", "--workflow", path, "--workspace", cli.workspace, "--prompt", "hi",
        env={"FAKE_MODE": "hang"}, timeout=20,
    )  # fmt: skip
    assert result.code == 124, result.stderr
    assert time.monotonic() - started < 8
    assert reason in result.stderr
    assert pids.gone(cli.fake_pid())
    events = result.events()
    assert events[-1]["type"] == "turn_cancelled"
    assert events[-1]["message"].startswith(reason)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["term", "int"]
)
def test_a_signal_stops_the_run_and_the_agent(
    cli: Cli, pids: Pids, signum: signal.Signals, code: int
) -> None:
    process = cli.popen(
        "run", "--kind", "copilot-cli", "--workspace", cli.workspace, "--prompt", "hi",
        env={"FAKE_MODE": "hang"},
    )  # fmt: skip
    try:
        pid = cli.fake_pid()
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, stderr
    assert stderr.endswith(f"{ERROR}stopped by {signum.name}\n")
    assert pids.gone(pid)
    assert json.loads(stdout.splitlines()[-1])["type"] == "turn_cancelled"


def test_secrets_never_reach_stdout_or_stderr(cli: Cli) -> None:
    result = cli.turn(
        f"the token is {SECRET}", extra=("--log-level", "debug"), env={"FAKE_MODE": "leak"}
    )
    assert result.code == 0, result.stderr
    _assert_no_secret(result)
    messages = [event.get("message", "") for event in result.events()]
    assert "your token is ***" in messages
    assert "using token ***" in result.stderr  # the agent's stderr, logged at debug level


# -- every problem before anything starts, at once -------------------------------


def _errors(result: Result) -> list[str]:
    lines = result.stderr.splitlines()
    assert all(line.startswith(ERROR) for line in lines), result.stderr
    return [line.removeprefix(ERROR) for line in lines]


def test_every_problem_is_reported_at_once_before_anything_starts(cli: Cli) -> None:
    path = cli.workflow(
        "---\nagent:\n  kind: copilot-cli\n  max_turn: 5\ncopilot-cli:\n  modle: x\n---\n"
    )
    result = cli.run(
        "run", "--workflow", path, "--workspace", cli.tmp_path / "nope",
        "--prompt", "", "--prompt", " \n", "--resume", "",
    )  # fmt: skip
    assert result.code == 2
    errors = _errors(result)
    assert [line.split(":")[0] for line in errors] == [
        str(path),
        str(path),
        "the prompt is empty (--prompt number 1); give it the task to do",
        "the prompt is empty (--prompt number 2); give it the task to do",
        "--resume is empty; give the session_id an earlier run printed on its events, or "
        "leave --resume out",
        "the session could not start",
    ]
    assert "agent.max_turn: unknown field" in errors[0]
    assert "copilot-cli.modle: unknown field" in errors[1]
    assert "the workspace " in errors[5]
    assert "does not exist; give --workspace an existing directory" in errors[5]
    assert result.stdout == ""
    assert cli.invocations() == []


def test_start_problems_alone_exit_4_and_are_all_reported(cli: Cli) -> None:
    result = cli.run(
        "run", "--kind", "copilot-cli", "--workspace", cli.tmp_path / "nope", "--prompt", "hi",
        env={"PATH": str(cli.tmp_path / "empty-bin")},
    )  # fmt: skip
    assert result.code == 4
    errors = _errors(result)
    assert len(errors) == 2
    assert errors[0].startswith("the session could not start: invalid_workspace_cwd: ")
    assert errors[1].startswith("the session could not start: agent_not_found: ")


@pytest.mark.parametrize("relative", ["workspace", "./workspace", "workspace/../workspace"])
def test_a_relative_workspace_is_taken_from_the_current_directory(cli: Cli, relative: str) -> None:
    result = cli.run("run", "--kind", "copilot-cli", "--workspace", relative, "--prompt", "hi")
    assert result.code == 0, result.stderr
    started = result.events()[0]["message"]
    assert started.startswith(f"copilot started in {cli.tmp_path / relative} (pid ")
    assert len(cli.invocations()) == 1


@pytest.mark.parametrize(
    ("argument", "says"),
    [
        ("--workspace=", "--workspace is empty; give the directory the agent works in"),
        ("--workspace=~/nope", "--workspace '~/nope' starts with ~, which the shell expands"),
    ],
    ids=["empty", "tilde-after-equals"],
)
def test_an_unusable_workspace_argument_is_a_usage_error(
    cli: Cli, argument: str, says: str
) -> None:
    result = cli.run("run", "--kind", "copilot-cli", argument, "--prompt", "hi")
    assert result.code == 2
    [error] = _errors(result)
    assert error.startswith(says)
    assert cli.invocations() == []


def test_a_relative_workspace_on_an_ssh_host_is_a_usage_error(cli: Cli) -> None:
    path = cli.workflow("---\nagent:\n  kind: copilot-cli\nworker:\n  ssh_hosts: [build-1]\n---\n")
    result = cli.run("run", "--workflow", path, "--workspace", "workspace", "--prompt", "hi")
    assert result.code == 2
    assert _errors(result)[0] == (
        "--workspace 'workspace' is relative, but with worker.ssh_hosts the workspace is on "
        "the SSH host; give its absolute path there"
    )


@pytest.mark.parametrize(
    ("mcp_config", "says"),
    [
        ("missing.json", "copilot-cli.mcp_config: cannot read {ws}/missing.json (No such file"),
        ("'@bad.json'", "copilot-cli.mcp_config: {ws}/bad.json is not valid JSON"),
        ("'{\"mcpServers\": '", "copilot-cli.mcp_config: the inline JSON is not valid JSON"),
    ],
    ids=["missing-file", "file-not-json", "inline-not-json"],
)
def test_an_mcp_config_the_cli_would_refuse_is_found_before_it_starts(
    cli: Cli, mcp_config: str, says: str
) -> None:
    (cli.workspace / "bad.json").write_text("not json")
    path = cli.workflow(
        f"---\nagent:\n  kind: copilot-cli\ncopilot-cli:\n  mcp_config: {mcp_config}\n---\n"
    )
    result = cli.run("run", "--workflow", path, "--workspace", cli.workspace, "--prompt", "hi")
    assert result.code == 2
    [error] = _errors(result)
    assert error.startswith(f"{path}: {says.format(ws=cli.workspace)}")
    assert cli.invocations() == []


def test_an_mcp_config_file_in_the_workspace_is_passed_on(cli: Cli) -> None:
    (cli.workspace / "mcp.json").write_text('{"mcpServers": {}}')
    path = cli.workflow(
        "---\nagent:\n  kind: copilot-cli\ncopilot-cli:\n  mcp_config: mcp.json\n---\n"
    )
    result = cli.run("run", "--workflow", path, "--workspace", cli.workspace, "--prompt", "hi")
    assert result.code == 0, result.stderr
    [argv] = cli.invocations()
    assert argv[argv.index("--additional-mcp-config") + 1] == "@mcp.json"


@pytest.mark.parametrize("resume", ["-x", "two words", "a\tb"])
def test_a_resume_value_that_is_no_session_id_is_a_usage_error(cli: Cli, resume: str) -> None:
    result = cli.turn("hi", extra=(f"--resume={resume}",))
    assert result.code == 2
    [error] = _errors(result)
    assert error.startswith(f"--resume {resume!r} is not a session id; give the session_id")
    assert cli.invocations() == []


def test_the_tool_loop_on_ssh_hosts_is_a_workflow_error(cli: Cli) -> None:
    path = cli.workflow(
        "---\nagent:\n  kind: tool-loop\ntool-loop:\n  base_url: http://127.0.0.1:9/v1\n"
        "  model: m\nworker:\n  ssh_hosts: [build-1]\n---\n"
    )
    result = cli.run("run", "--workflow", path, "--workspace", cli.workspace, "--prompt", "hi")
    assert result.code == 2
    assert _errors(result) == [
        f"{path}: worker.ssh_hosts: the tool-loop agent runs in this process on local files, "
        "never on an SSH host; remove worker.ssh_hosts"
    ]


def test_the_log_level_takes_any_case(cli: Cli) -> None:
    result = cli.turn("hi", extra=("--log-level", "WARNING"))
    assert result.code == 0, result.stderr
    assert "INFO" not in result.stderr


def test_without_the_extra_the_refusal_takes_the_shared_form(cli: Cli) -> None:
    """-S: no site-packages, so the adapters' extra (PyYAML, httpx-sse) is missing."""
    src = Path(__file__).parents[3] / "src"
    result = subprocess.run(
        [sys.executable, "-S", "-m", "copilot_driver.adapters", "run", "--kind", "copilot-cli",
         "--workspace", str(cli.workspace), "--prompt", "hi"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        f"{ERROR}the adapters need PyYAML, httpx-sse, which the driver alone does not "
        "install; pip install 'copilot-driver[adapters]'\n"
    )
