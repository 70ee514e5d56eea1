"""Secrets the driver was never given stay out of everything it writes, on the real runtime.

A tool's output and the model's answer may carry a GitHub token the driver
never saw (the runtime passes `GH_TOKEN` on to shell commands; a model
repeats what it read), or the value of a secret-looking variable of the
driver's environment. The scripted model makes the real Copilot CLI run a
shell command that prints such values, then answers with them: the events
file, the log, result.json and stdout hold none of them.
"""

from __future__ import annotations

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.fixtures import DriverRunner

pytestmark = pytest.mark.e2e

GITHUB_TOKEN_SHAPED = "ghp_" + "Zq7Xk2Lm9Np4Rs8Tv1Wy3Ab5Cd6Ef0Gh2Jk4"
"""Shaped like a classic personal access token; the driver is never given it."""
NPM_SECRET = "npm-Secret-value-0f9e8d"
"""The value of a secret-looking variable of the driver's environment (`NPM_TOKEN`)."""


def test_tokens_a_tool_prints_and_the_model_repeats_are_masked_everywhere(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    command = f"echo token={GITHUB_TOKEN_SHAPED} npm={NPM_SECRET}"
    scripted_model.script = Script(
        rules=(
            Rule(
                "LEAK",
                (
                    Reply(tool_calls=(ToolCall("bash", {"command": command, "description": "x"}),)),
                    Reply(text=f"The token is {GITHUB_TOKEN_SHAPED} and npm is {NPM_SECRET}."),
                ),
            ),
        )
    )
    run = driver.run(
        "LEAK the tokens",
        NPM_TOKEN=NPM_SECRET,
        GH_AW_COPILOT_SDK_SERVER_ARGS='["--allow-tool", "shell(echo:*)"]',
    )

    assert run.exit_code == 0, run.stderr[-2000:]
    # The tool really ran and its output reached the model: the oracle is what was sent.
    sent = [
        str(message.get("content"))
        for request in scripted_model.chat_requests()
        for message in request.body["messages"]
        if message.get("role") == "tool"
    ]
    assert any("token=" in text for text in sent), sent
    written = run.everything_written()
    assert GITHUB_TOKEN_SHAPED not in written
    assert NPM_SECRET not in written
    assert "The token is *** and npm is ***." in run.stdout
    events = "\n".join(str(event) for event in run.events())
    assert "token=***" in events


TOKEN_SHAPED_CONFIG = {
    "GH_AW_PROMPT": "ghp_" + "Yt6Rb2Nc8Vm4Qx1Lk7Hj3Gf9Ds5Ap0Wz2Ue8",
    "COPILOT_SDK_URI": "sk-proj-Wq4Er7Ty1Ui9Op3As6Df2Gh8Jk5Lz0Xc",
    "COPILOT_SDK_SEND_TIMEOUT_MS": "sk-live-Mn5Bv8Cx2Za6Sd9Fg3Hj7Kl1Qw4Er0Ty",
    "COPILOT_MODEL": "github_pat_11ABCDEFG0aBcDeFgHiJkLmNoPqRsTuVwXyZ",
}
URL_KEY = "url-key-Pq8Rs2Tu6Vw0"
"""A provider key given in the base URL's userinfo, not as COPILOT_PROVIDER_API_KEY."""


def test_a_secret_in_the_wrong_variable_or_in_the_provider_url_is_never_echoed(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    # (a) Pasted into the wrong variables: exit 2, each shown at most by its first 4 characters.
    for name, value in TOKEN_SHAPED_CONFIG.items():
        env = driver.environment("Say hi", **{name: value})
        run = driver.run("", env=env)
        if name != "COPILOT_SDK_SEND_TIMEOUT_MS":  # a soft setting: its default is used
            assert run.exit_code == 2, (name, run.stderr[-2000:])
            assert f"[copilot-sdk-driver] error: {name}" in run.stderr
        else:
            assert f"{value[:4]}… ({len(value)} characters)" in run.stderr
        assert value[4:] not in run.stdout + run.stderr, name
        assert value[4:12] not in run.stdout + run.stderr, name
    # (b) A key in the provider URL's userinfo: the run works, the key is never written.
    scripted_model.script = Script(rules=(Rule("HI", (Reply(text="hi there"),)),))
    base_url = scripted_model.base_url.replace("://", f"://user:{URL_KEY}@", 1)
    run = driver.run("HI please", COPILOT_PROVIDER_BASE_URL=base_url, COPILOT_SDK_LOG_LEVEL="info")
    (start,) = run.entries("connection.start")
    assert start["provider"] == scripted_model.base_url.replace("://", "://***@", 1)
    assert URL_KEY not in run.everything_written()
    assert run.exit_code == 0, run.stderr[-2000:]
