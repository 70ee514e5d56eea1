"""The driver's inputs the harness checks before anything starts (`driver_inputs`): the
same rules as the driver's own readers, so the harness never refuses what the driver
takes, nor lets through what it refuses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_driver.driver.config import ConfigError, load_config
from copilot_driver.driver.prompt import PromptError, read_prompt
from copilot_driver.harness.driver_inputs import (
    model_problem,
    policy_problems,
    prompt_problem,
    workspace_problem,
)


def driver_refuses(path: Path) -> bool:
    try:
        read_prompt(path)
    except PromptError:
        return True
    return False


@given(st.binary(max_size=40))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_prompt_file_is_refused_exactly_when_the_driver_refuses_it(
    tmp_path: Path, content: bytes
) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_bytes(content)
    refused = prompt_problem({"GH_AW_PROMPT": str(prompt)}, None, tmp_path)
    assert (refused is not None) == driver_refuses(prompt), (content, refused)


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo", "unreadable"])
def test_what_is_not_a_readable_file_is_refused_as_the_driver_refuses_it(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "prompt.md"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "unreadable":
        path.write_text("Say hello.\n")
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads it all the same, as the driver would
            assert prompt_problem({}, str(path), tmp_path) is None
            assert not driver_refuses(path)
            return
    problem = prompt_problem({}, str(path), tmp_path)
    assert problem is not None
    assert problem.startswith(f"the prompt file {path} ")
    assert driver_refuses(path)


def test_the_prompt_is_named_as_it_was_given() -> None:
    here = Path("/nonexistent-folder")
    assert prompt_problem({}, "task.md", here) == (
        "the prompt file task.md does not exist (tried /nonexistent-folder/task.md): give "
        "the path of the prompt file"
    )
    assert prompt_problem({"GH_AW_PROMPT": "~/task.md"}, None, here) == (
        "GH_AW_PROMPT names ~/task.md, which does not exist (tried "
        "/nonexistent-folder/~/task.md) (only a shell expands `~`, in an unquoted word): set "
        "GH_AW_PROMPT to the path of the prompt file, or give it as PROMPT_FILE"
    )
    assert prompt_problem({"GH_AW_PROMPT": " "}, None, here) == (
        "no prompt: GH_AW_PROMPT is set but blank; give the prompt file as PROMPT_FILE "
        "(`copilot-driver-harness prompt.md`), or set GH_AW_PROMPT to its path"
    )


def driver_problems(env: dict[str, str], tmp_path: Path) -> list[str]:
    """What the driver's own configuration reader says of `env`, with everything else
    it needs given."""
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Say hello.\n")
    full = {
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "127.0.0.1:3002",
        "COPILOT_CONNECTION_TOKEN": "t" * 32,
        "COPILOT_MODEL": "gpt-5-mini",
        **env,
    }
    try:
        load_config(full, cwd=tmp_path)
    except ConfigError as error:
        return error.problems
    return []


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"COPILOT_MODEL": ""},
        {"COPILOT_MODEL": "  "},
        {"GH_AW_COPILOT_SDK_PERMISSIONS": '{"allowedTools": ["read"],}'},
        {"GH_AW_COPILOT_SDK_SERVER_ARGS": "['--allow-tool', 'read']"},
        {"GH_AW_COPILOT_SDK_TOOL_CONFIG": "{}"},
        {"GH_AW_COPILOT_SDK_PERMISSIONS": '{"allowedTools": ["read"]}'},
        {"GITHUB_WORKSPACE": "no-such-folder"},
        {"GITHUB_WORKSPACE": "."},
    ],
)
def test_the_model_the_policy_and_the_workspace_are_the_drivers_problems(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Each problem the harness finds is one the driver says, in the same words where
    the driver's reader is shared (the policy) or its sentence is (the model)."""
    found = [model_problem({"COPILOT_MODEL": "gpt-5-mini", **env})]
    found += policy_problems(env)
    found.append(workspace_problem(env, tmp_path))
    harness_said = [problem for problem in found if problem is not None]
    driver_said = driver_problems(env, tmp_path)
    assert len(harness_said) == len(driver_said)
    for said in harness_said:
        words = said.split(":", 1)[0]
        assert any(problem.startswith(words) for problem in driver_said), (said, driver_said)
    model = [problem for problem in driver_said if problem.startswith("COPILOT_MODEL")]
    assert model == [p for p in harness_said if p.startswith("COPILOT_MODEL")]
