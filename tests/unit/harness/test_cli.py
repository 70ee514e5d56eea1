"""The harness's command line (`harness.cli`): the prompt file as its argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_driver.harness.cli import _with_prompt, main


def test_no_prompt_file_leaves_the_environment_as_it_is() -> None:
    env = {"GH_AW_PROMPT": "elsewhere.md"}
    assert _with_prompt(env, None) is env


def test_the_prompt_file_becomes_an_absolute_gh_aw_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prompt.md").write_text("Say hello.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    env = _with_prompt({"GH_AW_PROMPT": "elsewhere.md", "HOME": "/home/u"}, "prompt.md")
    assert env == {"GH_AW_PROMPT": str(tmp_path / "prompt.md"), "HOME": "/home/u"}


def test_a_folder_is_not_a_prompt_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"the prompt file {tmp_path} is not a file$"):
        _with_prompt({}, str(tmp_path))


def test_a_missing_prompt_file_is_a_usage_error_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--copilot", str(tmp_path / "no-such-copilot"), "task.md"]) == 2
    _, err = capsys.readouterr()
    assert err == (
        "copilot-driver-harness: error: the prompt file task.md does not exist "
        f"(tried {tmp_path / 'task.md'})\n"
    )
