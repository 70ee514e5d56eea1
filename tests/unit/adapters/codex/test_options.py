"""The `codex` block: defaults, the spec's and the wire's spellings, the params it builds.

The params are also checked against the schema the real app-server 0.169
generated (ThreadStartParams / TurnStartParams in schema/ClientRequest.json),
and every key they carry must be a property that schema declares (the
schema itself allows unknown keys, which the server silently ignores).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

from copilot_driver.adapters.codex import CodexAdapter
from copilot_driver.adapters.codex.options import BLOCK, DEFAULT_COMMAND, CodexOptions
from copilot_driver.adapters.core.registry import adapter_spec
from copilot_driver.adapters.core.session import AdapterConfig
from copilot_driver.adapters.core.tools import DynamicTool, ToolOutput, ToolRegistry

if TYPE_CHECKING:
    from unit.adapters.codex.conftest import CodexSchemas

WORKSPACE = "/srv/work/issue-42"
PROMPT = "Fix the failing test; don't touch 'docs/'."
DEFAULT_POLICY = {"type": "workspaceWrite", "writableRoots": [WORKSPACE], "networkAccess": False}


async def _noop(arguments: Any) -> ToolOutput:
    return ToolOutput("ok")


TOOLS = ToolRegistry(
    [
        DynamicTool(
            "tracker_api",
            "Query the issue tracker.",
            _noop,
            {"type": "object", "properties": {"query": {"type": "string"}}},
        ),
        DynamicTool("noop", "Does nothing.", _noop),
    ]
)


def _declared(schemas: CodexSchemas, name: str) -> set[str]:
    definition = schemas.definition("ClientRequest.json", name)["definitions"][name]
    return set(definition["properties"])


def _check(schemas: CodexSchemas, name: str, params: Mapping[str, Any]) -> None:
    assert schemas.problems_with_definition("ClientRequest.json", name, params) == []
    assert set(params) <= _declared(schemas, name), "a key the app-server does not know"


# -- defaults and registration ----------------------------------------------------


def test_defaults() -> None:
    options = CodexOptions()
    assert options == CodexOptions.from_mapping(None) == CodexOptions.from_mapping({})
    assert (options.model, options.effort, options.personality) == (None, None, None)
    assert options.approval_policy == "never"
    assert options.thread_sandbox == "workspaceWrite"
    assert options.turn_sandbox_policy == {}
    assert options.skip_git_repo_check is False
    assert options.approvals == "workspace"
    assert options.interrupt_wait_ms == 5_000


def test_default_params() -> None:
    options = CodexOptions()
    assert options.thread_params(WORKSPACE) == {
        "cwd": WORKSPACE,
        "approvalPolicy": "never",
        "sandbox": "workspace-write",
    }
    assert options.turn_params("thr_1", PROMPT, WORKSPACE) == {
        "threadId": "thr_1",
        "input": [{"type": "text", "text": PROMPT, "text_elements": []}],
        "cwd": WORKSPACE,
        "sandboxPolicy": DEFAULT_POLICY,
    }


def test_the_codex_kind_is_registered_with_this_block() -> None:
    spec = adapter_spec("codex")
    assert spec.factory is CodexAdapter
    assert spec.requires_command is True
    assert spec.default_command == DEFAULT_COMMAND == "codex app-server"
    assert spec.options_block == BLOCK == "codex"
    assert spec.validate_options is not None
    assert spec.validate_options({"model": "o3"}) == CodexOptions(model="o3")
    with pytest.raises(ValueError, match=r"codex\.modle: unknown field"):
        spec.validate_options({"modle": "o3"})


def test_the_adapter_validates_its_block_when_built() -> None:
    with pytest.raises(ValueError, match="approval_policy"):
        CodexAdapter(AdapterConfig(options={"approval_policy": "always"}))
    adapter = CodexAdapter(AdapterConfig(command="  /opt/codex   app-server --x  "))
    assert (adapter.binary, adapter.arguments) == ("/opt/codex", ["app-server", "--x"])
    assert CodexAdapter().binary == "codex"


def test_the_spec_example_block_is_accepted() -> None:
    options = CodexOptions.from_mapping(
        {
            "model": "o3",
            "effort": "medium",
            "approval_policy": "never",
            "thread_sandbox": "workspaceWrite",
            "personality": "",
        }
    )
    assert options.thread_params(WORKSPACE) == {
        "cwd": WORKSPACE,
        "approvalPolicy": "never",
        "sandbox": "workspace-write",
        "model": "o3",
    }, "an empty personality is not sent"
    assert options.turn_params("t", PROMPT, WORKSPACE)["effort"] == "medium"


# -- spellings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("configured", "wire"),
    [
        ("never", "never"),
        ("onRequest", "on-request"),
        ("on-request", "on-request"),
        ("unlessTrusted", "untrusted"),
        ("untrusted", "untrusted"),
    ],
)
def test_approval_policy_spellings(configured: str, wire: str, codex_schemas: CodexSchemas) -> None:
    params = CodexOptions.from_mapping({"approval_policy": configured}).thread_params(WORKSPACE)
    assert params["approvalPolicy"] == wire
    _check(codex_schemas, "ThreadStartParams", params)


@pytest.mark.parametrize(
    ("configured", "wire"),
    [
        ("readOnly", "read-only"),
        ("read-only", "read-only"),
        ("workspaceWrite", "workspace-write"),
        ("workspace-write", "workspace-write"),
        ("dangerFullAccess", "danger-full-access"),
        ("danger-full-access", "danger-full-access"),
    ],
)
def test_thread_sandbox_spellings(configured: str, wire: str, codex_schemas: CodexSchemas) -> None:
    params = CodexOptions.from_mapping({"thread_sandbox": configured}).thread_params(WORKSPACE)
    assert params["sandbox"] == wire
    _check(codex_schemas, "ThreadStartParams", params)


def test_always_is_rejected_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="approval_policy") as raised:
        CodexOptions.from_mapping({"approval_policy": "always"})
    message = str(raised.value)
    assert message.startswith("codex: ")
    assert "'always'" in message
    assert "the app-server has no `always`" in message
    for allowed in ("never", "onRequest", "unlessTrusted", "on-request", "untrusted"):
        assert allowed in message


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"approval_policy": "sometimes"}, "approval_policy must be one of"),
        ({"approval_policy": "OnRequest"}, "approval_policy must be one of"),
        ({"thread_sandbox": "externalSandbox"}, "thread_sandbox must be one of"),
        ({"thread_sandbox": "workspace_write"}, "thread_sandbox must be one of"),
        ({"turn_sandbox_policy": {"type": "workspace-write"}}, "turn_sandbox_policy.type"),
        ({"turn_sandbox_policy": {"type": "bogus"}}, "turn_sandbox_policy.type"),
        ({"effort": ""}, "effort must not be empty"),
        ({"effort": "   "}, "effort must not be empty"),
        ({"interrupt_wait_ms": -1}, "interrupt_wait_ms must be 0 or more"),
        ({"approvals": "always"}, "codex.approvals: expected one of"),
        ({"model": 3}, "codex.model: expected a string or null, got integer"),
        ({"skip_git_repo_check": "yes"}, "codex.skip_git_repo_check: expected a boolean"),
        ({"turn_sandbox_policy": "none"}, "codex.turn_sandbox_policy: expected a mapping"),
        ({"interrupt_wait_ms": True}, "codex.interrupt_wait_ms: expected an integer"),
    ],
)
def test_bad_values_are_rejected(raw: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match="codex") as raised:
        CodexOptions.from_mapping(raw)
    assert fragment in str(raised.value)


def test_unknown_fields_are_rejected_all_at_once() -> None:
    with pytest.raises(ValueError, match="unknown field") as raised:
        CodexOptions.from_mapping({"modle": "o3", "sandbox": "readOnly", "model": "o3"})
    message = str(raised.value)
    assert "codex.modle: unknown field" in message
    assert "codex.sandbox: unknown field" in message
    assert "thread_sandbox" in message, "the known fields are listed"


def test_not_a_mapping_is_rejected() -> None:
    with pytest.raises(ValueError, match="codex: expected a mapping of options, got list"):
        CodexOptions.from_mapping(["model"])  # type: ignore[arg-type]


def test_an_unknown_personality_is_rejected_early() -> None:
    with pytest.raises(ValueError, match="personality"):
        CodexOptions.from_mapping({"personality": "concise"})


@pytest.mark.parametrize("personality", ["none", "friendly", "pragmatic"])
def test_known_personalities_are_sent(personality: str, codex_schemas: CodexSchemas) -> None:
    params = CodexOptions(personality=personality).thread_params(WORKSPACE)
    assert params["personality"] == personality
    _check(codex_schemas, "ThreadStartParams", params)


# -- the turn's sandbox policy -------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "policy"),
    [
        ({}, DEFAULT_POLICY),
        ({"networkAccess": True}, {**DEFAULT_POLICY, "networkAccess": True}),
        (
            {"type": "workspaceWrite", "writableRoots": ["/srv/cache"]},
            {**DEFAULT_POLICY, "writableRoots": ["/srv/cache"]},
        ),
        (
            {"excludeSlashTmp": True, "excludeTmpdirEnvVar": True},
            {**DEFAULT_POLICY, "excludeSlashTmp": True, "excludeTmpdirEnvVar": True},
        ),
        ({"type": "readOnly"}, {"type": "readOnly"}),
        ({"type": "readOnly", "networkAccess": True}, {"type": "readOnly", "networkAccess": True}),
        ({"type": "dangerFullAccess"}, {"type": "dangerFullAccess"}),
        (
            {"type": "externalSandbox", "networkAccess": "enabled"},
            {"type": "externalSandbox", "networkAccess": "enabled"},
        ),
    ],
    ids=[
        "default",
        "network-merged",
        "roots-replaced",
        "tmp-flags-merged",
        "read-only-replaces",
        "read-only-network",
        "danger-replaces",
        "external-replaces",
    ],
)
def test_turn_sandbox_policy(
    override: dict[str, Any], policy: dict[str, Any], codex_schemas: CodexSchemas
) -> None:
    options = CodexOptions.from_mapping({"turn_sandbox_policy": override})
    assert options.sandbox_policy(WORKSPACE) == policy
    params = options.turn_params("thr_1", PROMPT, WORKSPACE)
    assert params["sandboxPolicy"] == policy
    _check(codex_schemas, "TurnStartParams", params)
    assert (
        codex_schemas.problems_with_definition("ClientRequest.json", "SandboxPolicy", policy) == []
    )


def test_the_policy_is_built_fresh_each_time() -> None:
    options = CodexOptions.from_mapping({"turn_sandbox_policy": {"networkAccess": True}})
    first = options.sandbox_policy(WORKSPACE)
    first["writableRoots"].append("/elsewhere")
    first["type"] = "readOnly"
    assert options.sandbox_policy(WORKSPACE) == {**DEFAULT_POLICY, "networkAccess": True}
    assert options.turn_sandbox_policy == {"networkAccess": True}
    assert options.sandbox_policy("/other")["writableRoots"] == ["/other"]


# -- whole params ---------------------------------------------------------------------


def test_full_thread_params() -> None:
    options = CodexOptions.from_mapping(
        {
            "model": "gpt-5.5",
            "approval_policy": "onRequest",
            "thread_sandbox": "readOnly",
            "personality": "pragmatic",
            "effort": "high",
        }
    )
    assert options.thread_params(WORKSPACE) == {
        "cwd": WORKSPACE,
        "approvalPolicy": "on-request",
        "sandbox": "read-only",
        "model": "gpt-5.5",
        "personality": "pragmatic",
    }, "effort belongs to the turn"


def test_full_turn_params() -> None:
    options = CodexOptions.from_mapping({"model": "gpt-5.5", "effort": "high"})
    assert options.turn_params("thr_9", PROMPT, WORKSPACE) == {
        "threadId": "thr_9",
        "input": [{"type": "text", "text": PROMPT, "text_elements": []}],
        "cwd": WORKSPACE,
        "sandboxPolicy": DEFAULT_POLICY,
        "model": "gpt-5.5",
        "effort": "high",
    }


OPTION_SETS = [
    {},
    {"model": "o3", "effort": "low"},
    {"approval_policy": "unlessTrusted", "thread_sandbox": "dangerFullAccess"},
    {"approval_policy": "on-request", "thread_sandbox": "read-only", "personality": "none"},
    {"turn_sandbox_policy": {"type": "externalSandbox", "networkAccess": "restricted"}},
    {"turn_sandbox_policy": {"networkAccess": True, "writableRoots": ["/a", "/b"]}},
]


@pytest.mark.parametrize("raw", OPTION_SETS)
def test_thread_params_with_tools_match_the_generated_schema(
    raw: dict[str, Any], codex_schemas: CodexSchemas
) -> None:
    params = CodexOptions.from_mapping(raw).thread_params(WORKSPACE)
    params["dynamicTools"] = TOOLS.specs()
    _check(codex_schemas, "ThreadStartParams", params)
    request = {"jsonrpc": "2.0", "id": 3, "method": "thread/start", "params": params}
    assert codex_schemas.problems_with_client_message(request) == []


@pytest.mark.parametrize("raw", OPTION_SETS)
def test_turn_params_match_the_generated_schema(
    raw: dict[str, Any], codex_schemas: CodexSchemas
) -> None:
    params = CodexOptions.from_mapping(raw).turn_params("thr_1", PROMPT, WORKSPACE)
    _check(codex_schemas, "TurnStartParams", params)
    request = {"jsonrpc": "2.0", "id": 4, "method": "turn/start", "params": params}
    assert codex_schemas.problems_with_client_message(request) == []


def test_the_schema_check_catches_a_wrong_spelling(codex_schemas: CodexSchemas) -> None:
    """The check is not vacuous: the spec's camelCase is invalid on the wire."""
    bad = {"cwd": WORKSPACE, "approvalPolicy": "onRequest", "sandbox": "workspaceWrite"}
    problems = codex_schemas.problems_with_definition(
        "ClientRequest.json", "ThreadStartParams", bad
    )
    assert len(problems) == 2
    turn = {"threadId": "t", "input": [{"type": "text", "text": "x"}], "effort": ""}
    assert codex_schemas.problems_with_definition("ClientRequest.json", "TurnStartParams", turn)
