"""actions/checkout's persisted token stays out of everything the harness and driver write.

The workspace's `.git/config` carries the extraheader actions/checkout writes
(`AUTHORIZATION: basic <base64 of x-access-token:TOKEN>`), the token in no
process's environment. With `--sandbox off` a tool reads it as it is (the
sandbox would show a copy without it): the real Copilot CLI runs `cat
.git/config`, `git config --get-regexp`, and prints the token decoded and
re-encoded at every byte alignment in both base64 alphabets; the scripted
model then answers with the header's base64, the raw token and those blobs.
The oracle: stdout, stderr and every file under the state folder hold none of
the token, the header's credential, or the token's base64 at any alignment.
What the CLI sends the model is not ours to mask, so it is the check that the
tools really read the secret.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from copilot_driver.redaction import base64_stable_parts
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from helpers import runtime_record
from helpers.harness_runs import HarnessHarness

pytestmark = pytest.mark.e2e

TOKEN = "ghs_" + "ChEcKoUt7cAnArY4x9" * 2
"""Shaped like the installation token actions/checkout persists; in no environment."""
CREDENTIAL = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode("ascii")
KEY = "http.https://github.com/.extraheader"
DECODE = f"git config --get {KEY} | sed 's/.*basic //' | base64 -d"
COMMANDS = {
    "cat": "cat .git/config",
    "list": "git config --get-regexp extraheader",
    # the token raw, then re-encoded with 0..3 bytes dropped, in both alphabets
    "decoded": f"{DECODE}; echo; for skip in 1 2 3 4; do {DECODE} | cut -c$skip- | base64 -w0;"
    " echo; done; " + DECODE + " | base64 -w0 | tr '+/' '-_'",
}


def _blob(data: bytes, urlsafe: bool = False) -> str:
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode("ascii")


ANSWER = (
    f"The header is AUTHORIZATION: basic {CREDENTIAL}\nthe token is {TOKEN}\n"
    f"in blobs: {_blob(b'a' + TOKEN.encode())} {_blob(b'ab' + TOKEN.encode(), urlsafe=True)} "
    f"{_blob(TOKEN.encode() + b'!')}\nDONE"
)


def _forbidden() -> set[str]:
    """The token and its header in every form a reader could use."""
    found = {TOKEN, CREDENTIAL, TOKEN.lower(), TOKEN.upper()}
    for data in (TOKEN.encode(), f"x-access-token:{TOKEN}".encode()):
        for part in base64_stable_parts(data):
            found |= {part, part.translate(str.maketrans("+/", "-_"))}
    return found


def test_the_checkouts_persisted_token_is_masked_in_everything_written(
    tmp_path: Path, scripted_model: ScriptedModelServer, copilot_cli: Path, copilot_cache_home: Path
) -> None:
    run = HarnessHarness(tmp_path, scripted_model, copilot_cli, copilot_cache_home)
    assert TOKEN not in json.dumps(run.env)
    subprocess.run(["git", "init", "-q", str(run.workspace)], check=True)
    header = f"AUTHORIZATION: basic {CREDENTIAL}"
    subprocess.run(["git", "-C", str(run.workspace), "config", "--local", KEY, header], check=True)
    calls = tuple(
        ToolCall("bash", {"command": command, "description": name}, call_id=name)
        for name, command in COMMANDS.items()
    )
    scripted_model.script = Script(
        rules=(Rule("CHECKOUT", (Reply(tool_calls=calls), Reply(text=ANSWER))),)
    )
    (tmp_path / "prompt.md").write_text("CHECKOUT: read the git configuration\n")
    run.env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(["--allow-all-tools"])

    completed = run.run("--sandbox", "off", timeout=180)

    assert completed.returncode == 0, completed.stderr[-3000:]
    # The tools read the secret: the model was told it encoded (the CLI masks a raw
    # token in tool output itself, not its base64).
    told = runtime_record.tool_results(scripted_model)
    assert CREDENTIAL in told["cat"]
    assert CREDENTIAL in told["list"]
    decoded = f"x-access-token:{TOKEN}\n".encode()
    for skip in range(4):
        assert _blob(decoded[skip:]) in told["decoded"]
    # What the harness and the driver wrote holds none of it.
    written = run.everything_written(completed.stdout, completed.stderr)
    assert [form for form in sorted(_forbidden()) if form in written] == []
    # It was written, masked: the answer and the events file's tool results.
    assert completed.stdout.startswith("The header is AUTHORIZATION: basic ***\nthe token is ***\n")
    assert completed.stdout.rstrip("\n").endswith("in blobs: *** *** ***\nDONE")
    (events,) = run.state.glob("*/events.jsonl")
    results = [
        json.loads(line)["data"]
        for line in events.read_text().splitlines()
        if json.loads(line)["type"] == "tool.execution_complete"
    ]
    assert len(results) == len(COMMANDS)
    assert "extraheader = AUTHORIZATION: basic ***" in events.read_text()
