"""`make demo`: the main job end to end, offline, through the harness.

The harness starts a real Copilot CLI sidecar (with the scripted model as its
provider) and runs the driver under a policy from
GH_AW_COPILOT_SDK_SERVER_ARGS that allows `ls` and denies `rm`. The scripted
model asks for both; the demo prints the driver's log, the answer and the
run's timeline, then what to try next, as commands that work when pasted.

Settings (`demo_settings`): `DEMO_ALLOW`, a JSON array of rules that replaces the
policy (`DEMO_ALLOW='["shell(ls:*)", "shell(rm notes.txt)", "read"]'`), to see the
same requests decided otherwise; `DEMO_SANDBOX=off` runs the harness without its
OS sandbox (no bubblewrap needed; the log and the report say so); `DEMO_OUTPUT`,
the folder of the run's files (default `demo-output`).

`DEMO_AUTH=token` runs it the way most users run it: on a GitHub token (a
Copilot subscription), no provider. The CLI then talks to GitHub's real host
names, served by a local fake of GitHub's API (`testing.github_api`) behind a
proxy with a throw-away certificate authority (made with `openssl`), and the demo
also prints what the CLI sent there, request by request. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from copilot_driver.command_line import refuse
from copilot_driver.report import Timeline, load_timeline, render_text
from copilot_driver.testing.demo_settings import (
    COMMAND,
    DEMO_RULES,
    DemoSettings,
    allow_value,
    demo_command,
    read_settings,
    report_command,
    server_args,
)
from copilot_driver.testing.environment import harness_environment
from copilot_driver.testing.github_api import DEFAULT_MODEL, FakeGitHubCopilot
from copilot_driver.testing.model_server import ScriptedModelServer
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

DEMO_PROMPT = "Tidy up this workspace: list it, then delete notes.txt (demo)."
DEMO_SCRIPT = Script(
    rules=(
        Rule(
            "(demo)",
            (
                Reply(
                    text="Let me look at the workspace.",
                    tool_calls=(ToolCall("bash", {"command": "ls -1", "description": "List"}),),
                ),
                Reply(
                    tool_calls=(
                        ToolCall("bash", {"command": "rm notes.txt", "description": "Delete"}),
                    )
                ),
                Reply(
                    text="The workspace holds README.md and notes.txt. I asked to delete "
                    "notes.txt; the log above says whether the policy let me."
                ),
            ),
        ),
    )
)


PROVIDER_ONLY = ("COPILOT_OFFLINE", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY")


def main() -> int:
    settings, problems = read_settings(os.environ)
    if settings is None:
        for problem in problems:
            refuse(COMMAND, problem)
        return 2
    output = settings.output
    policy = server_args(settings.rules)
    state_dir = output / "session-state"
    workspace = output / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "README.md").write_text("# demo workspace\n")
    (workspace / "notes.txt").write_text("nothing to see\n")
    prompt_file = output / "prompt.md"
    prompt_file.write_text(DEMO_PROMPT + "\n")

    with contextlib.ExitStack() as stack:
        home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="copilot-driver-demo-")))
        model = stack.enter_context(ScriptedModelServer(DEMO_SCRIPT))
        # The scripted model, for the sidecar (offline) and the session alike.
        env = harness_environment(
            home,
            model_base_url=model.base_url,
            prompt_file=prompt_file,
            workspace=workspace,
            state_dir=state_dir,
            GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(policy),
            COPILOT_DRIVER_LOG_FORMAT="text",
        )
        if "COPILOT_CLI_PATH" in os.environ:  # the pinned CLI `make` provisioned
            env["COPILOT_CLI_PATH"] = os.environ["COPILOT_CLI_PATH"]
        github = None
        if settings.auth == "token":
            github = stack.enter_context(FakeGitHubCopilot(DEMO_SCRIPT, https=True))
            for name in PROVIDER_ONLY:
                env.pop(name)
            env.update(github.https_sidecar_env(), COPILOT_MODEL=DEFAULT_MODEL)
            print(f"GitHub: a local fake on the real host names, through {github.proxy_url}")
            print(f"token: COPILOT_GITHUB_TOKEN (a made-up one), model {DEFAULT_MODEL}")
        else:
            print(f"scripted model: {model.base_url}")
        print(f"prompt: {DEMO_PROMPT}")
        print(f"policy: GH_AW_COPILOT_SDK_SERVER_ARGS={json.dumps(policy)}")
        print(f"sandbox: {settings.sandbox}")
        print("--- harness + driver log (stderr) ---", flush=True)
        run = subprocess.run(
            [sys.executable, "-m", "copilot_driver.harness", "--sandbox", settings.sandbox],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            check=False,
            timeout=300,
        )
        if github is not None:
            print("--- what the Copilot CLI sent to GitHub (the fake's record) ---")
            for request in github.requests():
                print(
                    f"{request.method:6} https://{request.host}{request.path} -> {request.status}"
                )

    print("--- answer (stdout) ---")
    print(run.stdout.rstrip() or "(none)")
    print(f"--- exit status: {run.returncode} ---")
    events = sorted(state_dir.glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)
    if events:
        timeline = load_timeline(events[-1])
        print("--- timeline ---")
        print(render_text(timeline).rstrip())
        print(f"events file: {events[-1]}")
        print(f"notes.txt still there: {(workspace / 'notes.txt').exists()}")
        print(try_next(settings, events[-1].parent, timeline))
    return run.returncode


def try_next(settings: DemoSettings, session: Path, timeline: Timeline) -> str:
    """What to try next, each a command that works pasted into a fresh shell here."""
    cwd = Path.cwd()
    suggested = [
        permission.policy.allow_rule
        for permission in timeline.permissions
        if permission.policy is not None and permission.policy.allow_rule is not None
    ]
    widened = list(dict.fromkeys([*settings.rules, *suggested]))
    # What this run was given beyond the defaults goes on with every suggestion.
    carried = {"DEMO_AUTH": "token"} if settings.auth == "token" else {}
    if settings.sandbox == "off":
        carried["DEMO_SANDBOX"] = "off"
    lines = [
        "--- try next ---",
        "- the run's report, as the step summary shows it:",
        f"    {report_command(session, cwd)}",
    ]
    if widened != list(settings.rules):
        lines += [
            "- the same requests, with the rule the log suggested added (DEMO_ALLOW is a JSON",
            "  array of rules):",
            f"    {demo_command(cwd, os.environ, DEMO_ALLOW=allow_value(widened), **carried)}",
        ]
    elif tuple(settings.rules) != DEMO_RULES:
        lines += [
            "- the demo's own policy again, which denies the `rm`:",
            f"    {demo_command(cwd, os.environ, **carried)}",
        ]
    if settings.auth != "token":
        lines += [
            "- the same run on a GitHub token, as most users run it (a local fake of GitHub):",
            f"    {demo_command(cwd, os.environ, **carried, DEMO_AUTH='token')}",
        ]
    lines += [
        "- your own prompt, policy and model: the README's Install and Tool permissions",
        "  sections (a real model needs a token: see Tokens)",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
