"""The demo's settings and the commands it prints (`testing.demo_settings`)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.testing.demo_settings import (
    DEMO_RULES,
    allow_rules,
    allow_value,
    demo_command,
    read_settings,
    report_command,
    server_args,
)

RULES = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1).filter(str.strip),
    min_size=1,
    max_size=5,
)


@given(RULES)
def test_any_rules_survive_the_json_form_and_a_shell_quoting(rules: list[str]) -> None:
    """What the demo prints as `DEMO_ALLOW=...` reads back as the same rules."""
    printed = f"DEMO_ALLOW={shlex.quote(allow_value(rules))}"
    (assignment,) = shlex.split(printed)
    assert allow_rules(assignment.removeprefix("DEMO_ALLOW=")) == tuple(rules)


def test_a_rule_with_spaces_is_one_rule() -> None:
    assert allow_rules('["shell(ls:*)", "shell(rm notes.txt)", "read"]') == (
        "shell(ls:*)",
        "shell(rm notes.txt)",
        "read",
    )
    assert server_args(["shell(rm notes.txt)"]) == ["--allow-tool", "shell(rm notes.txt)"]


@pytest.mark.parametrize(
    "text", ["shell(ls:*) read", "[]", '"read"', '["read", ""]', '["read", 1]', "{}", "[read]"]
)
def test_anything_but_a_json_array_of_rules_is_refused(text: str) -> None:
    assert allow_rules(text) is None


def test_unset_settings_are_the_defaults(tmp_path: Path) -> None:
    settings, problems = read_settings({"DEMO_OUTPUT": str(tmp_path), "DEMO_ALLOW": " "})
    assert problems == []
    assert settings is not None
    assert (settings.rules, settings.auth, settings.sandbox) == (
        DEMO_RULES,
        "provider",
        "workspace",
    )
    assert settings.output == tmp_path


def test_the_report_command_names_the_program_by_its_path(tmp_path: Path) -> None:
    venv_bin = Path(sys.executable).parent
    inside = report_command(tmp_path / "s", venv_bin.parent)
    assert inside.startswith(f"{venv_bin.name}/copilot-driver-report ")
    assert inside.endswith(f" {tmp_path / 's'} --format markdown")
    outside = report_command(tmp_path / "s", tmp_path)
    assert outside.startswith(f"{venv_bin}/copilot-driver-report ")
    assert report_command(tmp_path / "a b", tmp_path).endswith(" 'a b' --format markdown")


def test_the_demo_command_is_make_only_under_make(tmp_path: Path) -> None:
    assert demo_command(tmp_path, {"MAKELEVEL": "1"}, DEMO_AUTH="token") == (
        "DEMO_AUTH=token make demo"
    )
    direct = demo_command(tmp_path, {})
    assert direct == f"{sys.executable} -m copilot_driver.testing.demo"
