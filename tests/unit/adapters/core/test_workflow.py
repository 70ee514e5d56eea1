"""Unit tests for `copilot_driver.adapters.core.workflow`: WORKFLOW.md front matter and blocks."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.adapters.core.runner import RunnerLimits
from copilot_driver.adapters.core.workflow import (
    AgentBlock,
    WorkerBlock,
    WorkflowError,
    front_matter,
    load_workflow,
    parse_workflow,
)

KIND = "copilot-cli"


def _doc(yaml_text: str, body: str = "Fix the issue.\n") -> str:
    return "---\n" + textwrap.dedent(yaml_text).strip("\n") + "\n---\n" + body


# -- front_matter --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_doc("agent:\n  kind: copilot-cli\n"), {"agent": {"kind": "copilot-cli"}}),
        ("\ufeff" + _doc("a: 1"), {"a": 1}),
        ("---\r\na: 1\r\n---\r\nbody\r\n", {"a": 1}),
        ("---\na: 1\n...\nbody\n", {"a": 1}),
        ("--- \na: 1\n---   \n", {"a": 1}),
        ("---\n---\nbody\n", {}),
        ("---\n# only a comment\n---\n", {}),
        ("# Title\n\nNo front matter here.\n", {}),
        ("", {}),
        ("\n---\na: 1\n---\n", {}),  # front matter must start on the first line
        (_doc("a: 1", body="---\nb: 2\n---\n"), {"a": 1}),  # only the first block counts
    ],
    ids=[
        "plain",
        "bom",
        "crlf",
        "dots-end",
        "trailing-spaces",
        "empty",
        "comment-only",
        "no-front-matter",
        "empty-file",
        "not-on-line-1",
        "second-block-ignored",
    ],
)
def test_front_matter(text: str, expected: dict[str, Any]) -> None:
    assert front_matter(text) == expected


def test_front_matter_unterminated() -> None:
    with pytest.raises(WorkflowError, match=r"^W\.md: .*no closing ---"):
        front_matter("---\nagent:\n  kind: copilot-cli\n", source="W.md")


@pytest.mark.parametrize(
    "yaml_text",
    ["agent: [unclosed", "agent:\n  kind: a\n kind: b", "a: b: c", "\tagent: x"],
)
def test_front_matter_invalid_yaml(yaml_text: str) -> None:
    with pytest.raises(WorkflowError, match=r"^W\.md: the front matter is not valid YAML"):
        front_matter(f"---\n{yaml_text}\n---\n", source="W.md")


@pytest.mark.parametrize("yaml_text", ["- a\n- b", "just a string", "42"])
def test_front_matter_not_a_mapping(yaml_text: str) -> None:
    with pytest.raises(WorkflowError, match="must be a mapping"):
        front_matter(f"---\n{yaml_text}\n---\n")


# -- parse_workflow: the agent block -------------------------------------------


def test_defaults_are_the_specs() -> None:
    workflow = parse_workflow({"agent": {"kind": KIND}})
    agent = workflow.agent
    assert workflow.kind == KIND
    assert agent.command is None
    assert agent.max_turns == 20
    assert agent.turn_timeout_ms == 3_600_000
    assert agent.read_timeout_ms == 5_000
    assert agent.stall_timeout_ms == 300_000
    assert agent.max_concurrent_agents == 10
    assert agent.max_sessions == 0
    assert agent.max_retry_backoff_ms == 300_000
    assert workflow.worker == WorkerBlock()
    assert workflow.options == {}


def test_every_agent_field_is_read() -> None:
    block: dict[str, Any] = {
        "kind": KIND,
        "command": "/opt/copilot",
        "max_turns": 5,
        "max_sessions": 3,
        "max_concurrent_agents": 4,
        "turn_timeout_ms": 1000,
        "read_timeout_ms": 2000,
        "stall_timeout_ms": 0,
        "max_retry_backoff_ms": 0,
    }
    assert parse_workflow({"agent": block}).agent == AgentBlock(**block)


def test_limits() -> None:
    workflow = parse_workflow(
        {"agent": {"kind": KIND, "max_turns": 3, "turn_timeout_ms": 900, "stall_timeout_ms": -1}}
    )
    assert workflow.limits == RunnerLimits(max_turns=3, turn_timeout_ms=900, stall_timeout_ms=-1)


def test_unknown_agent_field_is_rejected_by_name() -> None:
    with pytest.raises(WorkflowError) as caught:
        parse_workflow({"agent": {"kind": KIND, "max_turn": 5}}, source="W.md")
    message = str(caught.value)
    assert message.startswith("W.md: ")
    assert "agent.max_turn: unknown field" in message
    assert "max_turns" in message  # the known names are listed


def test_every_bad_field_is_reported_at_once() -> None:
    with pytest.raises(WorkflowError) as caught:
        parse_workflow({"agent": {"kind": KIND, "typo": 1, "max_turns": "5"}})
    assert "agent.typo" in str(caught.value)
    assert "agent.max_turns" in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "got"),
    [
        ("max_turns", "5", "string"),
        ("max_turns", True, "boolean"),
        ("max_turns", 5.0, "number"),
        ("turn_timeout_ms", None, "null"),
        ("stall_timeout_ms", False, "boolean"),
        ("max_sessions", [1], "list"),
        ("command", 7, "integer"),
        ("kind", ["copilot-cli"], "list"),
    ],
)
def test_mistyped_agent_fields_are_rejected(field: str, value: Any, got: str) -> None:
    with pytest.raises(WorkflowError, match=rf"agent\.{field}: expected .*, got {got}"):
        parse_workflow({"agent": {"kind": KIND, field: value}}, kind=KIND)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_turns", 0, "max_turns must be 1 or more"),
        ("turn_timeout_ms", 0, "turn_timeout_ms must be 1 or more"),
        ("read_timeout_ms", -5, "read_timeout_ms must be 1 or more"),
        ("max_concurrent_agents", 0, "max_concurrent_agents must be 1 or more"),
        ("max_sessions", -1, "max_sessions must be 0 or more"),
        ("max_retry_backoff_ms", -1, "max_retry_backoff_ms must be 0 or more"),
        ("command", "  ", "command must not be empty"),
    ],
)
def test_out_of_range_agent_fields_are_rejected(field: str, value: Any, message: str) -> None:
    with pytest.raises(WorkflowError, match=message):
        parse_workflow({"agent": {"kind": KIND, field: value}})


@pytest.mark.parametrize("stall", [0, -1])
def test_stall_timeout_may_be_zero_or_negative(stall: int) -> None:
    assert parse_workflow({"agent": {"kind": KIND, "stall_timeout_ms": stall}}).limits == (
        RunnerLimits(stall_timeout_ms=stall)
    )


@pytest.mark.parametrize("agent", [5, "copilot-cli", ["kind"]])
def test_agent_block_must_be_a_mapping(agent: Any) -> None:
    with pytest.raises(WorkflowError, match="agent: expected a mapping"):
        parse_workflow({"agent": agent}, kind=KIND)


def test_every_problem_of_every_block_is_listed_once_at_once() -> None:
    data = {
        "agent": {"kind": KIND, "typo": 1, "read_timeout_ms": 0, "max_turns": 0},
        "worker": {"ssh_hosts": ["ok", "-oX=y"]},
        "copilot-cli": {"modle": "x"},
    }
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(data, source="W.md")
    assert caught.value.problems == (
        "W.md: agent.typo: unknown field (known: command, kind, max_concurrent_agents, "
        "max_retry_backoff_ms, max_sessions, max_turns, read_timeout_ms, stall_timeout_ms, "
        "turn_timeout_ms)",
        "W.md: agent: max_turns must be 1 or more",
        "W.md: agent: read_timeout_ms must be 1 or more",
        "W.md: worker: ssh_hosts: '-oX=y' is not a host name",
        "W.md: copilot-cli.modle: unknown field (known: agent, allowed_tools, "
        "available_tools, denied_tools, disable_builtin_mcps, excluded_tools, experimental, "
        "max_autopilot_continues, mcp_config, model, no_custom_instructions)",
    )
    assert str(caught.value) == "; ".join(caught.value.problems)


def test_a_mistyped_field_is_reported_without_the_range_checks_of_its_default() -> None:
    """`base_url: 5` is "expected a string", never also "base_url is required"."""
    data = {"agent": {"kind": "tool-loop"}, "tool-loop": {"base_url": 5, "model": "m"}}
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(data, source="W.md")
    assert caught.value.problems == ("W.md: tool-loop.base_url: expected a string, got integer 5",)


def test_ssh_hosts_for_a_kind_that_runs_in_this_process_is_refused() -> None:
    data = {
        "agent": {"kind": "tool-loop"},
        "tool-loop": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "worker": {"ssh_hosts": ["build-1"]},
    }
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(data, source="W.md")
    assert caught.value.problems == (
        "W.md: worker.ssh_hosts: the tool-loop agent runs in this process on local files, "
        "never on an SSH host; remove worker.ssh_hosts",
    )


# -- the kind ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        ({"agent": {"kind": KIND}}, None),
        ({}, KIND),
        ({"agent": None}, KIND),
        ({"agent": {"kind": KIND}}, KIND),
        ({"agent": {"kind": "copilot-transcript"}}, None),
    ],
    ids=["from-agent-kind", "from-argument", "null-agent-block", "both-agree", "transcript"],
)
def test_kind_from_the_block_or_the_argument(data: dict[str, Any], kind: str | None) -> None:
    expected = kind or data["agent"]["kind"]
    assert parse_workflow(data, kind=kind).kind == expected


def test_conflicting_kinds_are_rejected() -> None:
    with pytest.raises(
        WorkflowError, match=r"agent\.kind is 'copilot-cli' but 'copilot-transcript'"
    ):
        parse_workflow({"agent": {"kind": KIND}}, kind="copilot-transcript")


@pytest.mark.parametrize("data", [{}, {"agent": {}}, {"agent": {"kind": ""}}])
def test_missing_kind_is_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(WorkflowError, match="no agent kind given"):
        parse_workflow(data)


@pytest.mark.parametrize(("data", "kind"), [({"agent": {"kind": "claude-code"}}, None), ({}, "x")])
def test_unknown_kind_is_rejected_listing_the_known_ones(
    data: dict[str, Any], kind: str | None
) -> None:
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(data, kind=kind)
    assert "unknown agent kind" in str(caught.value)
    assert "known kinds: codex, copilot-cli, copilot-transcript, tool-loop" in str(caught.value)


# -- the adapter's own block ---------------------------------------------------


def test_copilot_cli_block_is_validated_and_kept() -> None:
    block = {"model": "gpt-4.1", "max_autopilot_continues": 100, "allowed_tools": ["shell"]}
    workflow = parse_workflow({"agent": {"kind": KIND}, "copilot-cli": block})
    assert workflow.options == block
    assert workflow.adapter_config().options == block


@pytest.mark.parametrize(
    ("block", "names"),
    [
        ({"max_autopilot_continue": 5}, "copilot-cli.max_autopilot_continue"),
        ({"model": 4}, "copilot-cli.model"),
        ({"disable_builtin_mcps": "yes"}, "copilot-cli.disable_builtin_mcps"),
        ({"max_autopilot_continues": -1}, "max_autopilot_continues must be 0 or more"),
        ("gpt-4.1", "copilot-cli: expected a mapping"),
    ],
)
def test_copilot_cli_block_errors_name_the_field(block: Any, names: str) -> None:
    with pytest.raises(WorkflowError, match=names.replace(".", r"\.")):
        parse_workflow({"agent": {"kind": KIND}, "copilot-cli": block})


def test_copilot_cli_block_may_be_empty() -> None:
    assert parse_workflow({"agent": {"kind": KIND}, "copilot-cli": None}).options == {}


def test_other_adapters_blocks_and_other_top_level_blocks_are_ignored() -> None:
    workflow = parse_workflow(
        {
            "agent": {"kind": KIND},
            "tracker": {"kind": "github", "anything": [1, 2]},
            "polling": {"interval_ms": 5},
            "copilot-transcript": {"no such": "field"},
        }
    )
    assert workflow.kind == KIND
    assert workflow.options == {}


# -- the worker block ----------------------------------------------------------


def test_ssh_hosts_reach_the_adapter_config() -> None:
    workflow = parse_workflow(
        {
            "agent": {"kind": KIND, "command": "copilot", "read_timeout_ms": 1234},
            "worker": {
                "ssh_hosts": ["build-1", "user@build-2"],
                "ssh_strict_host_key_checking": "yes",
            },
        }
    )
    config = workflow.adapter_config({"PATH": "/bin"})
    assert config.ssh is not None
    assert config.ssh.hosts == ("build-1", "user@build-2")
    assert config.ssh.strict_host_key_checking == "yes"
    assert config.command == "copilot"
    assert config.read_timeout_ms == 1234
    assert config.environment == {"PATH": "/bin"}


def test_no_ssh_hosts_means_local() -> None:
    config = parse_workflow({"agent": {"kind": KIND}, "worker": {"ssh_hosts": []}}).adapter_config()
    assert config.ssh is None
    assert config.environment is None


def test_host_key_checking_defaults_to_accept_new() -> None:
    workflow = parse_workflow({"agent": {"kind": KIND}, "worker": {"ssh_hosts": ["h"]}})
    config = workflow.adapter_config()
    assert config.ssh is not None
    assert config.ssh.strict_host_key_checking == "accept-new"


@pytest.mark.parametrize(
    "host", ["", "  ", "-oProxyCommand=touch /tmp/x", "two words", "tab\there"]
)
def test_invalid_host_names_are_rejected(host: str) -> None:
    with pytest.raises(WorkflowError, match="is not a host name"):
        parse_workflow({"agent": {"kind": KIND}, "worker": {"ssh_hosts": ["ok", host]}})


def test_a_host_name_with_a_nul_byte_is_rejected() -> None:
    """BUG (minor): NUL passes the host check; spawning ssh then raises ValueError."""
    with pytest.raises(WorkflowError, match="is not a host name"):
        parse_workflow({"agent": {"kind": KIND}, "worker": {"ssh_hosts": ["build\x00-1"]}})


@pytest.mark.parametrize(
    ("worker", "names"),
    [
        ({"ssh_hosts": "build-1"}, "worker.ssh_hosts: expected a list of a string"),
        ({"ssh_hosts": ["a", 3]}, "worker.ssh_hosts"),
        ({"ssh_strict_host_key_checking": "maybe"}, "worker.ssh_strict_host_key_checking"),
        ({"ssh_host": ["a"]}, "worker.ssh_host: unknown field"),
    ],
)
def test_worker_block_errors_name_the_field(worker: dict[str, Any], names: str) -> None:
    with pytest.raises(WorkflowError, match=names.replace(".", r"\.")):
        parse_workflow({"agent": {"kind": KIND}, "worker": worker})


# -- load_workflow -------------------------------------------------------------


def test_load_workflow(tmp_path: Path) -> None:
    path = tmp_path / "WORKFLOW.md"
    path.write_text(
        _doc(
            """
            agent:
              kind: copilot-cli
              max_turns: 5
              stall_timeout_ms: 500
            copilot-cli:
              model: gpt-4.1
            tracker:
              kind: github
            """,
            body="Fix {{ issue.title }}\n",
        ),
        encoding="utf-8",
    )
    workflow = load_workflow(path)
    assert workflow.kind == KIND
    assert workflow.limits == RunnerLimits(max_turns=5, stall_timeout_ms=500)
    assert workflow.options == {"model": "gpt-4.1"}


def test_load_workflow_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "WORKFLOW.md"
    path.write_text(_doc("agent:\n  kind: copilot-cli\n  max_turns: many\n"), encoding="utf-8")
    with pytest.raises(WorkflowError, match=rf"^{path}: agent\.max_turns"):
        load_workflow(path)


def test_load_workflow_without_front_matter_needs_a_kind(tmp_path: Path) -> None:
    path = tmp_path / "WORKFLOW.md"
    path.write_text("Just a prompt.\n", encoding="utf-8")
    assert load_workflow(path, kind=KIND).agent == AgentBlock()
    with pytest.raises(WorkflowError, match="no agent kind given"):
        load_workflow(path)


@pytest.mark.parametrize("name", ["missing.md", "a-directory"])
def test_load_workflow_unreadable(tmp_path: Path, name: str) -> None:
    (tmp_path / "a-directory").mkdir()
    with pytest.raises(WorkflowError, match="cannot read the workflow file"):
        load_workflow(tmp_path / name)


def test_load_workflow_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "WORKFLOW.md"
    path.write_bytes(b"---\nagent:\n  kind: copilot-cli\n  command: \xff\xfe\n---\n")
    with pytest.raises(WorkflowError, match="cannot read the workflow file"):
        load_workflow(path)


def test_workflow_error_is_a_value_error() -> None:
    assert issubclass(WorkflowError, ValueError)
