"""Unit tests for `copilot_cli.mcp_file`: the `mcp_config` the Copilot CLI would refuse
once started, found before it starts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.adapters.copilot_cli.mcp_file import mcp_config_problem
from copilot_driver.adapters.copilot_cli.options import CopilotCliOptions
from copilot_driver.adapters.copilot_transcript.options import TranscriptOptions

VALID = '{"mcpServers": {"files": {"command": "npx", "args": ["server"]}}}'


def _problem(value: str | None, workspace: Path | None) -> str | None:
    return mcp_config_problem(CopilotCliOptions(mcp_config=value), workspace)


@pytest.mark.parametrize("value", [None, "", VALID, "  " + VALID])
def test_nothing_to_read_or_valid_inline_json_is_no_problem(value: str | None) -> None:
    assert _problem(value, Path("/nonexistent")) is None


def test_inline_json_that_does_not_parse_is_named() -> None:
    problem = _problem('{"mcpServers": ', None)
    assert problem is not None
    assert problem.startswith("copilot-cli.mcp_config: the inline JSON is not valid JSON (")
    assert problem.endswith("); the Copilot CLI would refuse it")


@pytest.mark.parametrize("value", ["mcp.json", "@mcp.json", "conf/../mcp.json", " @mcp.json"])
def test_a_relative_path_is_read_from_the_workspace(tmp_path: Path, value: str) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "mcp.json").write_text(VALID)
    assert _problem(value, tmp_path) is None


def test_an_absolute_path_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.json"
    path.write_text(VALID)
    assert _problem(f"@{path}", Path("/nonexistent")) is None


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("missing.json", None, "cannot read {path} (No such file or directory); give a readable"),
        ("folder", "dir", "cannot read {path} (Is a directory); give a readable"),
        ("latin1.json", b"\xff\xfe{}", "{path} is not UTF-8 text; give a readable"),
        ("bad.json", b"not json", "{path} is not valid JSON ("),
    ],
)
def test_a_file_the_cli_could_not_use_is_named_with_the_fix(
    tmp_path: Path, name: str, content: bytes | str | None, says: str
) -> None:
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    problem = _problem(name, tmp_path)
    assert problem is not None
    assert problem.startswith(f"copilot-cli.mcp_config: {says.format(path=path)}")


def test_on_an_ssh_host_only_inline_json_is_checked() -> None:
    assert _problem("/remote/only/mcp.json", None) is None
    assert _problem("{broken", None) is not None


def test_the_transcript_kind_names_its_own_block(tmp_path: Path) -> None:
    problem = mcp_config_problem(TranscriptOptions(mcp_config="nope.json"), tmp_path)
    assert problem is not None
    assert problem.startswith("copilot-transcript.mcp_config: cannot read ")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(value=st.dictionaries(st.text(), JSON, max_size=4))
def test_any_json_object_passes_inline_and_from_a_file(value: dict[str, object]) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert _problem(text, None) is None
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "mcp.json").write_text(text, encoding="utf-8")
        assert _problem("mcp.json", Path(folder)) is None
