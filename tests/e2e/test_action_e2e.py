"""The composite action (action.yml) end to end: its own steps, run in order with real bash.

A stand-in runner (`helpers.actions_runner`) runs every `run:` step the way
the Actions runner does, with the runner's files and a step's `env:`
evaluated from the inputs. The `uses:` steps are the runner's to run: the
cache step is taken as a hit whose folder holds the provisioned Copilot CLI
(no download here), and the upload step is left out. The install step really
installs copilot-driver from the action's folder into a fresh virtualenv (a
wheel built by pip from the folder); to stay fast, its dependencies are
found already installed: a `.pth` file laid where the virtualenv's
site-packages will be points at this interpreter's, as on a warm runner.

The session runs on the real Copilot CLI sidecar with the scripted model as
its provider. What the policy did is read from what really ran: the file an
allowed command creates is there, the files denied commands would touch are
as they were. The sandbox is on, as by default; this host has bwrap and no
AppArmor user-namespace restriction, so the sandbox step must change nothing:
`apt-get`, `sudo` and `apparmor_parser` on its PATH are stand-ins that record
any call, and none may be made.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.environment import TEST_MODEL, TEST_PROVIDER_KEY, harness_environment
from copilot_driver.testing.github_api import DEFAULT_MODEL, TOKEN_VARIABLE, FakeGitHubCopilot
from helpers.actions_runner import ActionRun, FakeRunner, load_action

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ACTION = load_action(ROOT / "action.yml")
TOKEN_CANARY = "github_pat_canaryActionInput0000000000"
WORKING_DIRECTORY = "work space"
ALLOWED_TOOLS = """\
# The agent may create files, and read them.
- shell(touch:*)
- 'read'
"""
DENIED_TOOLS = """\
- "shell(touch forbidden.txt)"   # never, whatever the allow rules say
"""
ALLOWED_DOMAINS = """\
- pypi.org
- files.pythonhosted.org:443
"""
PASSED_VARIABLE = "ACTION_E2E_PASSED"
ANSWER = "Made the file.\nSecond line: = and <<EOF survive."
SCRIPT = Script(
    rules=(
        Rule(
            "MAKE",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "touch made.txt"}),)),
                Reply(text=ANSWER),
            ),
        ),
        Rule(
            "FORBIDDEN",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "touch forbidden.txt"}),)),
                Reply(tool_calls=(ToolCall("bash", {"command": "rm victim.txt"}),)),
                Reply(text="Neither was allowed."),
            ),
        ),
    )
)


class ActionHarness:
    """One job: a fake runner whose base environment reaches the scripted model, or,
    with `github`, a Copilot subscription: the fake GitHub on its real host names,
    through the runner's proxy (the token comes from the `copilot-token` input)."""

    def __init__(
        self,
        root: Path,
        model: ScriptedModelServer,
        copilot_cli: Path,
        cache: Path,
        github: FakeGitHubCopilot | None = None,
    ) -> None:
        env = harness_environment(
            root / "home",
            model_base_url=model.base_url,
            prompt_file=root / "unused-prompt.md",  # the action sets GH_AW_PROMPT
            workspace=root / "unused-workspace",  # the runner sets GITHUB_WORKSPACE
            state_dir=root / "unused-state",  # the action sets the state folder
            cache_home=cache,
        )
        if github is not None:
            for name in (
                "COPILOT_OFFLINE",
                "COPILOT_PROVIDER_BASE_URL",
                "COPILOT_PROVIDER_API_KEY",
            ):
                env.pop(name)
            route = github.https_sidecar_env()
            route.pop(TOKEN_VARIABLE)
            # The install step's pip reaches the package index direct, as a runner's
            # NO_PROXY would let it.
            env.update(route, NO_PROXY="pypi.org,files.pythonhosted.org")
        # Stand-ins for what the sandbox step would run to change the host: each records
        # its call and fails, so a call is both seen and harmless.
        self.host_changes = root / "host-changes.log"
        stand_ins = root / "host-tools"
        stand_ins.mkdir()
        for name in ("apt-get", "sudo", "apparmor_parser"):
            tool = stand_ins / name
            tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.host_changes}"\nexit 1\n')
            tool.chmod(0o755)
        env = {**env, "PATH": f"{stand_ins}{os.pathsep}{env['PATH']}"}
        self.runner = FakeRunner(root, action_path=ROOT, env=env)
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        site = self.runner.temp / "copilot-driver" / "venv" / "lib" / version / "site-packages"
        site.mkdir(parents=True)
        (site / "zz-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        self.cli_dir = self.runner.tool_cache / "copilot-driver" / "copilot-cli-1.0.102"
        binary = self.cli_dir / "node_modules" / "@github" / "copilot-linux-x64" / "copilot"
        binary.parent.mkdir(parents=True)
        binary.symlink_to(copilot_cli)
        self.work = self.runner.workspace / WORKING_DIRECTORY
        self.work.mkdir()
        (self.work / "victim.txt").write_text("still here\n")

    def cache_hit(self, with_values: Mapping[str, str]) -> dict[str, str]:
        assert Path(with_values["path"]) == self.cli_dir
        return {"cache-hit": "true"}

    def run(self, **inputs: str) -> ActionRun:
        base = {
            "model": TEST_MODEL,
            "allowed-tools": ALLOWED_TOOLS,
            "denied-tools": DENIED_TOOLS,
            "copilot-token": TOKEN_CANARY,
            "working-directory": WORKING_DIRECTORY,
            "timeout-minutes": "3",
            "python": sys.executable,
        }
        return self.runner.run(ACTION, {**base, **inputs}, uses={"cli-cache": self.cache_hit})

    def everything_written(self, run: ActionRun) -> str:
        files = [
            path.read_text(errors="replace")
            for folder in (self.runner.temp / "copilot-driver", self.runner.files)
            for path in folder.rglob("*")
            if path.is_file() and "venv" not in path.parts and not path.name.endswith(".sh")
        ]
        streams = [text for step in run.steps for text in (step.stdout, step.stderr)]
        return "\n".join(streams + files)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        server.script = SCRIPT
        yield server


@pytest.fixture(scope="module")
def allowed_run(
    tmp_path_factory: pytest.TempPathFactory,
    model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> tuple[ActionHarness, ActionRun]:
    job = ActionHarness(tmp_path_factory.mktemp("allowed"), model, copilot_cli, copilot_cache_home)
    return job, job.run(prompt="MAKE a file, please.\n")


@pytest.fixture(scope="module")
def denied_run(
    tmp_path_factory: pytest.TempPathFactory,
    model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> tuple[ActionHarness, ActionRun]:
    job = ActionHarness(tmp_path_factory.mktemp("denied"), model, copilot_cli, copilot_cache_home)
    prompts = job.runner.workspace / ".github" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "forbidden.md").write_text("Make the FORBIDDEN file, then clean up.\n")
    job.runner.job_env[PASSED_VARIABLE] = "passed on"
    return job, job.run(
        **{
            "prompt-file": ".github/prompts/forbidden.md",
            "allowed-domains": ALLOWED_DOMAINS,
            "pass-env": f"- {PASSED_VARIABLE}",
        }
    )


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHubCopilot]:
    with FakeGitHubCopilot(SCRIPT, https=True) as server:
        yield server


@pytest.fixture(scope="module")
def token_run(
    tmp_path_factory: pytest.TempPathFactory,
    model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
    github: FakeGitHubCopilot,
) -> tuple[ActionHarness, ActionRun]:
    root = tmp_path_factory.mktemp("token")
    job = ActionHarness(root, model, copilot_cli, copilot_cache_home, github)
    return job, job.run(
        prompt="MAKE a file, please.\n", model=DEFAULT_MODEL, **{"copilot-token": github.token}
    )


@pytest.fixture(scope="module")
def unsandboxed_run(
    tmp_path_factory: pytest.TempPathFactory,
    model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> tuple[ActionHarness, ActionRun]:
    job = ActionHarness(tmp_path_factory.mktemp("off"), model, copilot_cli, copilot_cache_home)
    return job, job.run(prompt="MAKE a file, please.\n", sandbox="false")


def describe(run: ActionRun) -> str:
    return "\n".join(
        f"--- {step.id}: {step.returncode} ({step.seconds:.1f} s)\n{step.stdout}{step.stderr}"
        for step in run.steps
    )


# -- what runs (independent of the harness's step outputs) ----------------------------


def test_every_run_step_ran_and_the_allowed_command_ran(
    allowed_run: tuple[ActionHarness, ActionRun],
) -> None:
    job, run = allowed_run
    assert run.failed is None, describe(run)
    ran = [step.id for step in run.steps if step.returncode is not None]
    assert ran == ["install", "read-inputs", "sandbox", "cli", "harness"]
    assert (job.work / "made.txt").is_file()  # in the working directory, not the workspace
    assert not (job.runner.workspace / "made.txt").exists()
    assert run.step("harness").outputs["exit-code"] == "0"  # written by the step itself
    assert run.outputs["exit-code"] == "0"


def test_the_denied_commands_never_ran(denied_run: tuple[ActionHarness, ActionRun]) -> None:
    job, run = denied_run
    assert run.failed is None, describe(run)
    assert not (job.work / "forbidden.txt").exists()  # denied-tools, over shell(touch:*)
    assert (job.work / "victim.txt").read_text() == "still here\n"  # no allow rule for rm
    assert run.outputs["exit-code"] == "0"  # 2 denials, under the guard's 5


def test_the_policy_is_the_one_the_lists_say(denied_run: tuple[ActionHarness, ActionRun]) -> None:
    _, run = denied_run
    policy = json.loads(run.step("read-inputs").outputs["permissions"])
    assert policy == {
        "allowAllTools": False,
        "allowedTools": ["shell(touch:*)", "read"],
        "deniedTools": ["shell(touch forbidden.txt)"],
    }
    harness_env = run.step("harness").env
    assert json.loads(harness_env["GH_AW_COPILOT_SDK_PERMISSIONS"]) == policy


def test_the_driver_runs_from_a_fresh_virtualenv_installed_from_the_action_path(
    allowed_run: tuple[ActionHarness, ActionRun],
) -> None:
    job, run = allowed_run
    install = run.step("install")
    venv = job.runner.temp / "copilot-driver" / "venv"
    assert install.outputs == {
        "python": str(venv / "bin" / "python"),
        "harness": str(venv / "bin" / "copilot-driver-harness"),
    }
    (site,) = venv.glob("lib/python3.*/site-packages")
    assert (site / "copilot_driver" / "github_action.py").is_file()
    assert list(site.glob("copilot_driver-*.dist-info"))
    # The SDK's lazy-loading cache, built and verified by the install step (or found
    # built: the SDK is this interpreter's, see above, and so is the cache folder).
    said = install.stdout
    assert "built and verified" in said or said.endswith(" is built\n"), install.stderr
    # In the user's cache folder, never in the package (uninstalling leaves nothing).
    caches = Path(install.env["XDG_CACHE_HOME"]) / "copilot-driver" / "sdk-loading"
    assert list(caches.glob("copilot-sdk-*.marshal")), install.stdout
    assert not (site / "copilot_driver" / "sdk_loading" / "_caches").exists()
    assert "::warning" not in install.stdout + install.stderr
    assert install.seconds < 60, f"the install took {install.seconds:.1f} s"


def test_on_a_copilot_token_the_action_runs_the_agent_in_the_sandbox(
    token_run: tuple[ActionHarness, ActionRun], github: FakeGitHubCopilot
) -> None:
    """The path most users take: the `copilot-token` input, no provider, the default
    sandbox, the runner behind a proxy. GitHub saw the token; nothing else did."""
    job, run = token_run
    assert run.failed is None, describe(run)
    assert run.outputs["exit-code"] == "0"
    assert run.outputs["error-kind"] == ""
    assert run.outputs["answer"] == ANSWER
    assert (job.work / "made.txt").is_file()  # the allowed command ran, in the sandbox
    assert len(github.requests_to("/responses", "POST")) == 2  # the tool turn, then the answer
    signed = {request.token for request in github.requests() if request.path != "/telemetry"}
    assert signed == {github.token}
    assert set(github.connected_hosts()) <= {"api.github.com", "api.individual.githubcopilot.com"}
    written = job.everything_written(run)
    assert github.token not in written
    # The step summary shows the hosts the sandbox let the run reach.
    assert "api.individual.githubcopilot.com:443" in job.runner.summary.read_text()


def test_the_token_input_is_never_written(allowed_run: tuple[ActionHarness, ActionRun]) -> None:
    job, run = allowed_run
    written = job.everything_written(run)
    assert TOKEN_CANARY not in written
    assert TEST_PROVIDER_KEY not in written


def test_an_unreadable_allowed_tools_fails_the_inputs_step_before_any_sidecar(
    tmp_path: Path,
    model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> None:
    job = ActionHarness(tmp_path, model, copilot_cli, copilot_cache_home)
    requests_before = len(model.requests)
    run = job.run(prompt="MAKE a file", **{"allowed-tools": "[shell(touch:*), read]"})

    failed = run.failed
    assert failed is not None
    assert failed.id == "read-inputs"
    assert failed.returncode == 2
    assert "allowed-tools, line 1" in failed.stderr
    assert "`- shell(git status:*)`" in failed.stderr  # a valid example
    assert "permissions" not in failed.outputs
    assert not run.ran("cli")
    assert not run.ran("harness")
    assert not (job.work / "made.txt").exists()
    (run_dir,) = (job.runner.temp / "copilot-driver").glob("run-*")
    assert not (run_dir / "session-state").exists()  # no sidecar, no session
    assert len(model.requests) == requests_before


# -- the sandbox ---------------------------------------------------------------------------


def test_the_sandbox_is_on_by_default_and_its_step_changes_nothing_here(
    allowed_run: tuple[ActionHarness, ActionRun],
) -> None:
    job, run = allowed_run
    assert run.failed is None, describe(run)
    assert run.step("read-inputs").outputs["sandbox"] == "true"
    assert run.step("harness").env["HARNESS_ARGS"] == "--sandbox\nworkspace"
    setup = run.step("sandbox")
    assert setup.returncode == 0
    assert not job.host_changes.exists(), job.host_changes.read_text()  # no apt-get, no sudo
    assert "Installing" not in setup.stdout
    assert "AppArmor" not in setup.stdout + setup.stderr
    assert setup.seconds < 5, f"the sandbox step took {setup.seconds:.1f} s"


def test_the_domains_and_variables_reach_the_harness_one_argument_each(
    denied_run: tuple[ActionHarness, ActionRun],
) -> None:
    _, run = denied_run
    assert run.failed is None, describe(run)
    assert run.step("harness").env["HARNESS_ARGS"].split("\n") == [
        "--sandbox",
        "workspace",
        "--allow-domain",
        "pypi.org",
        "--allow-domain",
        "files.pythonhosted.org:443",
        "--pass-env",
        PASSED_VARIABLE,
    ]


def test_sandbox_false_runs_the_agent_without_the_sandbox(
    unsandboxed_run: tuple[ActionHarness, ActionRun],
) -> None:
    job, run = unsandboxed_run
    assert run.failed is None, describe(run)
    assert run.step("read-inputs").outputs["sandbox"] == "false"
    assert run.step("harness").env["HARNESS_ARGS"] == "--sandbox\noff"
    assert "nothing to set up" in run.step("sandbox").stdout
    assert not job.host_changes.exists()
    assert (job.work / "made.txt").is_file()
    assert run.outputs["exit-code"] == "0"
    assert run.outputs["answer"] == ANSWER


def test_an_unreadable_sandbox_value_fails_the_inputs_step_on_one_line_before_any_sidecar(
    tmp_path: Path,
    model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> None:
    job = ActionHarness(tmp_path, model, copilot_cli, copilot_cache_home)
    requests_before = len(model.requests)
    run = job.run(prompt="MAKE a file", sandbox="no")

    failed = run.failed
    assert failed is not None
    assert (failed.id, failed.returncode) == ("read-inputs", 2)
    # One line, beside the same message as an annotation for the Actions UI.
    (line,) = [line for line in failed.stderr.splitlines() if not line.startswith("::")]
    assert line == (
        '[copilot-driver-action] error: sandbox must be true or false, not "no": true '
        "(the default) runs the agent's tools in the OS sandbox, false runs them without one"
    )
    assert "harness-args" not in failed.outputs
    assert not run.ran("sandbox")
    assert not run.ran("cli")
    assert not run.ran("harness")
    assert not job.host_changes.exists()
    (run_dir,) = (job.runner.temp / "copilot-driver").glob("run-*")
    assert not (run_dir / "session-state").exists()  # no sidecar, no session
    assert len(model.requests) == requests_before


# -- the step outputs (the harness writes them to $GITHUB_OUTPUT) -----------------------


def test_the_harness_outputs_are_the_actions_outputs(
    allowed_run: tuple[ActionHarness, ActionRun],
) -> None:
    job, run = allowed_run
    outputs = run.outputs
    assert outputs["answer"] == ANSWER
    assert outputs["error-kind"] == ""
    events = Path(outputs["events-file"])
    assert events.is_file()
    state = Path(run.step("read-inputs").outputs["run-dir"]) / "session-state"
    assert events.parent == state / outputs["session-id"]
    assert outputs["denials"] == "0"
    # The policy the driver enforced: the one the action's lists made.
    assert outputs["policy-mode"] == "scoped"
    assert outputs["policy"] == (
        "2 rules: shell(touch:*), read; 1 deny rule: shell(touch forbidden.txt) "
        "(from GH_AW_COPILOT_SDK_PERMISSIONS)"
    )
    assert outputs["premium-requests"] == "" or float(outputs["premium-requests"]) >= 0
    assert "made.txt" in job.runner.summary.read_text()  # the run's report


def test_the_denials_output_counts_the_denied_requests(
    denied_run: tuple[ActionHarness, ActionRun],
) -> None:
    _, run = denied_run
    assert run.outputs["denials"] == "2"
    assert run.outputs["answer"] == "Neither was allowed."
    assert run.outputs["error-kind"] == ""
