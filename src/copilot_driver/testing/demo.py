"""`make demo`: the main job end to end, offline, through the harness.

The harness starts a real Copilot CLI sidecar (with the scripted model as its
provider) and runs the driver under a policy from
GH_AW_COPILOT_SDK_SERVER_ARGS that allows `ls` and denies `rm`. The scripted
model asks for both; the demo prints the driver's log, the answer and the
run's timeline, then what to try next. `DEMO_ALLOW` (rules separated by
spaces, e.g. `shell(ls:*) shell(rm:*) read`) replaces the policy, to see the
same requests decided otherwise.

`DEMO_AUTH=token` runs it the way most users run it: on a GitHub token (a
Copilot subscription), no provider. The CLI then talks to GitHub's real host
names, served by a local fake of GitHub's API (`testing.github_api`) behind a
proxy with a throw-away certificate authority, and the demo also prints what
the CLI sent there, request by request. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from copilot_driver.report import load_timeline, render_text
from copilot_driver.testing.environment import harness_environment
from copilot_driver.testing.github_api import DEFAULT_MODEL, FakeGitHubCopilot
from copilot_driver.testing.model_server import ScriptedModelServer
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

DEMO_PROMPT = "Tidy up this workspace: list it, then delete notes.txt (demo)."
DEMO_POLICY = ["--allow-tool", "shell(ls:*)", "--allow-tool", "read"]
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


def demo_policy(allow: str | None) -> list[str]:
    """`--allow-tool` arguments: the demo's own, or one per rule of `DEMO_ALLOW`."""
    if allow is None or not allow.strip():
        return DEMO_POLICY
    return [argument for rule in allow.split() for argument in ("--allow-tool", rule)]


AUTH_CHOICES = ("provider", "token")
PROVIDER_ONLY = ("COPILOT_OFFLINE", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY")


def main() -> int:
    output = Path(os.environ.get("DEMO_OUTPUT", "demo-output")).resolve()
    auth = os.environ.get("DEMO_AUTH", "").strip().lower() or "provider"
    if auth not in AUTH_CHOICES:
        print(
            f"DEMO_AUTH={os.environ['DEMO_AUTH']!r}: give `provider` (the default: a scripted "
            "model as the provider) or `token` (a GitHub token, against a local fake of "
            "GitHub's API)",
            file=sys.stderr,
        )
        return 2
    policy = demo_policy(os.environ.get("DEMO_ALLOW"))
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
        if auth == "token":
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
        print("--- harness + driver log (stderr) ---", flush=True)
        run = subprocess.run(
            [sys.executable, "-m", "copilot_driver.harness"],
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
        print("--- timeline ---")
        print(render_text(load_timeline(events[-1])).rstrip())
        print(f"events file: {events[-1]}")
        print(f"notes.txt still there: {(workspace / 'notes.txt').exists()}")
        print(TRY_NEXT.format(session=events[-1].parent))
    return run.returncode


TRY_NEXT = """--- try next ---
- the run's report, as the step summary shows it:
    copilot-driver-report {session} --format markdown
- the same requests under another policy (here `rm` is allowed too):
    DEMO_ALLOW='shell(ls:*) shell(rm:*) read' make demo
- the same run on a GitHub token, as most users run it (a local fake of GitHub):
    DEMO_AUTH=token make demo
- your own prompt, policy and model: the README's Install and Tool permissions
  sections (a real model needs a token: see Tokens)"""


if __name__ == "__main__":
    sys.exit(main())
