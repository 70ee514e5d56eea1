"""`make demo`: the driver end to end, offline, on the embedded default.

Starts the scripted model and a real Copilot CLI sidecar, then runs
`python -m copilot_driver` on a prompt whose script makes the runtime run a
real shell command. Prints the driver's log, the answer and where the
events file is. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from copilot_driver.sidecar import SidecarError
from copilot_driver.testing.environment import driver_environment, start_test_sidecar
from copilot_driver.testing.model_server import ScriptedModelServer
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

DEMO_PROMPT = "List the files of this workspace, then summarise what you found (demo)."
DEMO_SCRIPT = Script(
    rules=(
        Rule(
            "(demo)",
            (
                Reply(
                    text="Let me look at the workspace.",
                    tool_calls=(
                        ToolCall("bash", {"command": "ls -1", "description": "List the files"}),
                    ),
                ),
                Reply(text="The workspace holds README.md and notes.txt: two small text files."),
            ),
        ),
    )
)


def main() -> int:
    output = Path(os.environ.get("DEMO_OUTPUT", "demo-output")).resolve()
    state_dir = output / "session-state"
    workspace = output / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "README.md").write_text("# demo workspace\n")
    (workspace / "notes.txt").write_text("nothing to see\n")
    prompt_file = output / "prompt.md"
    prompt_file.write_text(DEMO_PROMPT + "\n")

    with (
        tempfile.TemporaryDirectory(prefix="copilot-driver-demo-") as scratch,
        ScriptedModelServer(DEMO_SCRIPT) as model,
    ):
        print(f"scripted model: {model.base_url}")
        try:
            sidecar = start_test_sidecar(Path(scratch), model_base_url=model.base_url)
        except SidecarError as error:
            print(f"demo: cannot start the Copilot CLI sidecar: {error}", file=sys.stderr)
            return 1
        try:
            print(f"sidecar: real Copilot CLI listening on {sidecar.uri}")
            print(f"prompt: {DEMO_PROMPT}\n--- driver log (stderr) ---", flush=True)
            env = driver_environment(
                prompt_file=prompt_file,
                sdk_uri=sidecar.uri,
                token=sidecar.token,
                model_base_url=model.base_url,
                state_dir=state_dir,
                workspace=workspace,
                COPILOT_DRIVER_LOG_FORMAT="text",
            )
            run = subprocess.run(
                [sys.executable, "-m", "copilot_driver"],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
                check=False,
                timeout=300,
            )
        finally:
            sidecar.stop()

    print("--- answer (stdout) ---")
    print(run.stdout.rstrip() or "(none)")
    print(f"--- exit status: {run.returncode} ---")
    events = sorted(state_dir.glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)
    if events:
        for line in events[-1].read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["type"] == "tool.execution_complete":
                data = event["data"]
                outcome = "succeeded" if data.get("success") else "failed"
                content = str((data.get("result") or {}).get("content", "")).split("<shellId")[0]
                print(f"tool call: {data.get('toolName')} {outcome}: {content.strip()!r}")
        print(f"events file: {events[-1]}")
        print(f"result file: {events[-1].with_name('result.json')}")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
